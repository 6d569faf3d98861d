/**
 * intercept.mjs — answer a public https origin from the test, the same way in every engine:
 * an HTTP proxy on 127.0.0.1 that the browser is launched with (the engines adapter's `proxy`
 * and `acceptInsecureCerts` options). A CONNECT to one of `hosts` is answered by a local TLS
 * server with a throwaway self-signed certificate (made by `openssl`) and the host's handler;
 * a CONNECT anywhere else is refused (nothing leaves the machine), and a plain-http request is
 * forwarded only to 127.0.0.1.
 *
 *   const proxy = await startInterceptor({ 'api.pwnedpasswords.com': (req, res) => { ... } });
 *   await launchEngine(name, { proxy: proxy.url, acceptInsecureCerts: true });
 *   proxy.refused              // 'host:port' of each CONNECT refused
 *   await proxy.close();
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { listenLocal } from './listen.mjs';

/** A self-signed certificate for `names` (a day long), through the openssl command. */
function selfSigned(names) {
  const dir = mkdtempSync(join(tmpdir(), 'bloomgate-cert-'));
  try {
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', `/CN=${names[0]}`,
      '-addext', `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`], { encoding: 'utf8' });
    if (made.error || made.status !== 0) {
      throw new Error(`intercept.mjs needs openssl (Debian: openssl): ${made.error?.message ?? made.stderr}`);
    }
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `hosts`: host name -> (req, res) handler for its https requests. */
export async function startInterceptor(hosts) {
  const names = Object.keys(hosts);
  const tls = createTlsServer(selfSigned(names), (req, res) => {
    const handler = hosts[(req.headers.host ?? '').replace(/:\d+$/, '')];
    if (!handler) return res.writeHead(421).end();
    return handler(req, res);
  });
  const refused = [];
  const server = createServer((req, res) => {
    // A plain-http proxy request: only to this machine's 127.0.0.1 servers.
    let target;
    try {
      target = new URL(req.url);
    } catch {
      return res.writeHead(400).end();
    }
    if (target.hostname !== '127.0.0.1') {
      refused.push(target.host);
      return res.writeHead(403).end();
    }
    const forwarded = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  server.on('connect', (req, socket) => {
    const [host, port] = req.url.split(':');
    if (!names.includes(host) || port !== '443') {
      refused.push(req.url);
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    tls.emit('connection', socket);
  });
  const listening = await listenLocal(server, { refused });
  return {
    url: listening.origin,
    refused,
    async close() {
      tls.closeAllConnections();
      tls.close();
      await listening.close();
    },
  };
}
