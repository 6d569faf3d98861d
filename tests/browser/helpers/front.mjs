/**
 * front.mjs — a forwarding server on 127.0.0.1 in front of another, so a test sees and shapes
 * what a page asks for by the server, the same way in every engine (no browser's request
 * interception needed):
 *
 *   const front = await startFront(site.base, { noStore: ['/filters/passwords.bgf'] });
 *                                  // those paths' answers are sent with Cache-Control: no-store
 *                                  //   (no validators), so each page load asks again
 *   front.requests                 // every request path (with its query), in order
 *   front.faults.set('/filters/passwords.bgf', 'corrupt');   // the body's last byte flipped
 *   front.faults.set('/filters/passwords.bgf', 'network');   // the connection dropped unanswered
 *   front.faults.clear();
 *   await front.close();           // the page's server is gone: its requests are refused
 */
import { createServer } from 'node:http';

import { listenLocal } from './listen.mjs';

/** Forward to `target` (an origin); record and optionally break requests (see the top of this file). */
export function startFront(target, { noStore = [] } = {}) {
  const requests = [];
  const faults = new Map();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    requests.push(url.pathname + url.search);
    const fault = faults.get(url.pathname);
    if (fault === 'network') {
      req.socket.destroy();
      return;
    }
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const uncached = fault !== undefined || noStore.includes(url.pathname);
      const headers = { ...req.headers };
      for (const name of ['host', 'connection', ...(uncached ? ['if-none-match', 'if-modified-since'] : [])]) delete headers[name];
      const answer = await fetch(new URL(req.url, target), {
        method: req.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
        redirect: 'manual',
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (fault === 'corrupt' && body.length > 0) body[body.length - 1] ^= 0xff;
      const out = {};
      const dropped = ['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive',
        ...(uncached ? ['cache-control', 'etag', 'last-modified', 'expires'] : [])];
      answer.headers.forEach((value, name) => {
        if (!dropped.includes(name)) out[name] = value;
      });
      if (uncached) out['cache-control'] = 'no-store';
      res.writeHead(answer.status, out).end(body);
    } catch (error) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`front: ${error.message}`);
    }
  });
  return listenLocal(server, { requests, faults });
}
