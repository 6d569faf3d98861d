/**
 * A stand-in for the public breached-password range service, written from its
 * documented protocol: GET /range/{5 hex} answers `SUFFIX:COUNT` lines with
 * CRLF; with `Add-Padding: true` it adds count-0 rows until the reply holds
 * 800-1,000 rows, as the public service does. It has no bloomgate manifest
 * (GET /range/manifest.json is a 400, like any non-hex prefix). Every request
 * is recorded so tests can assert what left the client. `mode` injects failures.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

export function sha1Hex(text) {
  return createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();
}

export async function startRangeService(breached = new Map()) {
  const byPrefix = new Map();
  for (const [password, count] of breached) {
    const hex = sha1Hex(password);
    const prefix = hex.slice(0, 5);
    if (!byPrefix.has(prefix)) byPrefix.set(prefix, []);
    byPrefix.get(prefix).push([hex.slice(5), count]);
  }
  const service = { requests: [], mode: 'ok', url: '', close: null };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      service.requests.push({ method: req.method, url: req.url, headers: { ...req.headers }, body });
      const match = /^\/range\/([0-9A-F]{5})$/.exec(req.url);
      if (service.mode === 'slow') return; // never answers
      if (service.mode === '5xx') return res.writeHead(503).end('unavailable');
      if (!match) return res.writeHead(400, { 'content-type': 'text/plain' }).end('bad prefix');
      const rows = (byPrefix.get(match[1]) ?? []).map(([suffix, count]) => `${suffix}:${count}`);
      if (req.headers['add-padding'] === 'true' && service.mode !== 'short-padding') {
        const target = 800 + (Number.parseInt(match[1], 16) % 201);
        for (let i = 0; rows.length < target; i++) rows.push(`${createHash('sha1').update(`pad${i}`).digest('hex').slice(0, 35).toUpperCase()}:0`);
        rows.sort();
      }
      let text = rows.join('\r\n');
      let type = 'text/plain';
      if (service.mode === 'malformed') text += '\r\nTHIS-IS-NOT-A-ROW';
      if (service.mode === 'html') {
        type = 'text/html';
        text = '<!doctype html><title>Sign in</title>';
      }
      if (service.mode === 'octet-stream') type = 'application/octet-stream'; // what static hosts send
      if (service.mode === 'empty') text = '';
      if (service.mode === 'oversized') text = `${'0'.repeat(35)}:0\r\n`.repeat(60000);
      res.writeHead(200, { 'content-type': type });
      res.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  service.url = `http://127.0.0.1:${server.address().port}/range`;
  service.close = () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); });
  return service;
}
