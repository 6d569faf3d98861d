/**
 * hosts.mjs — the servers the escalation browser tests run against, all on
 * 127.0.0.1 with ports picked at run time:
 *
 *   startNginx       Debian's nginx, its default http settings (mime.types,
 *                    default_type application/octet-stream, sendfile, gzip)
 *                    plus the snippet export-ranges wrote, one server block per
 *                    site; pid, logs and temp paths in a directory of its own
 *   startPython      stock `python3 -m http.server` (no CORS headers at all)
 *   startCorsOnly    a static host that adds only Access-Control-Allow-Origin: *
 *                    and answers no preflight (OPTIONS is a 405 without CORS)
 *   startRecorder    node:http with a route function; records every request
 *
 * Every one records what reached it (method, URL, headers where the server can
 * see them) so tests can assert on what left the browser.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { listenLocal } from './listen.mjs';

export const NGINX = process.env.BG_NGINX ?? '/usr/sbin/nginx';
export const PYTHON = process.env.BG_PYTHON ?? 'python3';

/** A port nobody listens on right now (bound and released). */
export async function freePort() {
  const server = createServer();
  await new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolvePromise);
  });
  const { port } = server.address();
  await new Promise((resolvePromise) => server.close(resolvePromise));
  return port;
}

/** Resolve once `origin` accepts HTTP requests (any status), or fail after `timeoutMs`. */
async function waitForHttp(origin, child, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`${origin}: the server exited with code ${child.exitCode}`);
    try {
      const response = await fetch(`${origin}/`, { signal: AbortSignal.timeout(1000) });
      await response.body?.cancel();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${origin} did not come up: ${error.message}`, { cause: error });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolvePromise();
    });
    child.kill('SIGTERM');
  });
}

export async function hasPython() {
  return new Promise((resolvePromise) => {
    const child = spawn(PYTHON, ['-c', 'import http.server'], { stdio: 'ignore' });
    child.once('error', () => resolvePromise(false));
    child.once('exit', (code) => resolvePromise(code === 0));
  });
}

export const hasNginx = () => existsSync(NGINX);

/**
 * Debian's nginx in the foreground, unprivileged-friendly: everything it
 * writes lives under `dir`. Each site is `{ root, include }`: one server block
 * with `root` at the export directory and the generated snippet included, as
 * docs/CLI.md tells users to deploy it. Requests are logged one per line as
 * `METHOD URI add-padding=VALUE origin=VALUE status` (log format only; nothing
 * else differs from Debian's defaults).
 * @returns {Promise<{ origins: string[], requests: () => Promise<string[]>, close: () => Promise<void> }>}
 */
export async function startNginx(dir, sites) {
  await mkdir(dir, { recursive: true });
  const ports = [];
  for (let i = 0; i < sites.length; i++) ports.push(await freePort());
  const accessLog = join(dir, 'access.log');
  const servers = sites.map(({ root, include }, i) => `
    server {
      listen 127.0.0.1:${ports[i]};
      root ${root};
      index index.html index.htm;
      server_name _;
      location / {
        try_files $uri $uri/ =404;
      }
      include ${include};
    }`).join('\n');
  // Debian's /etc/nginx/nginx.conf, minus what needs root (pid in /run, logs in
  // /var/log, temp paths in /var/lib/nginx) and the sites-enabled default server.
  const conf = `
${process.getuid?.() === 0 ? 'user www-data;' : ''}
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')};
events {
  worker_connections 768;
}
http {
  sendfile on;
  tcp_nopush on;
  types_hash_max_size 2048;
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  log_format bloomgate '$request_method $request_uri add-padding=$http_add_padding origin=$http_origin $status';
  access_log ${accessLog} bloomgate;
  gzip on;
  client_body_temp_path ${join(dir, 'client_body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
${servers}
}
`;
  const confPath = join(dir, 'nginx.conf');
  await writeFile(confPath, conf);
  const child = spawn(NGINX, ['-p', dir, '-c', confPath, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const origins = ports.map((port) => `http://127.0.0.1:${port}`);
  try {
    for (const origin of origins) await waitForHttp(origin, child);
  } catch (error) {
    await stopChild(child);
    const log = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
    throw new Error(`${error.message}\n${stderr}\n${log}`, { cause: error });
  }
  return {
    origins,
    /** Access-log lines so far (nginx writes each after the reply). */
    requests: async () => (await readFile(accessLog, 'utf8').catch(() => '')).split('\n').filter(Boolean),
    close: () => stopChild(child),
  };
}

/**
 * Stock `python3 -m http.server`, port picked by python itself (0), serving `dir`.
 * @returns {Promise<{ origin: string, requests: () => string[], close: () => Promise<void> }>}
 */
export async function startPython(dir) {
  const child = spawn(PYTHON, ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const port = await new Promise((resolvePromise, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`python3 -m http.server did not start:\n${stdout}\n${stderr}`)), 15000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`python3 -m http.server exited (${code}):\n${stderr}`)));
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /port (\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolvePromise(Number(match[1]));
      }
    });
  });
  child.removeAllListeners('exit');
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(origin, child);
  return {
    origin,
    /** Request lines from python's log ("GET /path HTTP/1.1" status). */
    requests: () => [...stderr.matchAll(/"([A-Z]+ \S+) HTTP\/[\d.]+" (\d{3})/g)].map((m) => `${m[1]} ${m[2]}`),
    close: () => stopChild(child),
  };
}

/**
 * A node:http server on 127.0.0.1 that records every request and hands it to `route(req, res)`.
 * @returns {Promise<{ origin: string, server: import('node:http').Server, requests: Array<{ method: string, url: string, headers: object }>, close: () => Promise<void> }>}
 */
export async function startRecorder(route) {
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method, url: req.url, headers: { ...req.headers } });
    Promise.resolve(route(req, res)).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error: ${error.message}\n`);
    });
  });
  return listenLocal(server, { requests });
}

/**
 * A static host like a bucket behind a CDN configured with one rule, "add
 * Access-Control-Allow-Origin: *": files by path (no path outside `dir` by
 * name; symlinks in `dir` are followed, as python's http.server follows them),
 * .json as application/json and everything else as application/octet-stream,
 * 404 for what is missing. It answers no preflight:
 * OPTIONS gets a 405 with no CORS headers.
 */
export async function startCorsOnly(dir) {
  const top = await realpath(resolve(dir));
  return startRecorder(async (req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' });
      return res.end('method not allowed\n');
    }
    const cors = { 'access-control-allow-origin': '*' };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...cors, allow: 'GET, HEAD', 'content-type': 'text/plain' });
      return res.end('method not allowed\n');
    }
    const notFound = () => {
      res.writeHead(404, { ...cors, 'content-type': 'text/plain' });
      res.end('not found\n');
    };
    let path;
    try {
      path = resolve(top, `.${decodeURIComponent(new URL(req.url, 'http://x').pathname)}`);
    } catch {
      return notFound();
    }
    if (path !== top && !path.startsWith(top + sep)) return notFound(); // by name: the site's own symlinks lead out
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return notFound();
    const body = await readFile(path);
    res.writeHead(200, {
      ...cors,
      'content-type': extname(path) === '.json' ? 'application/json' : 'application/octet-stream',
      'content-length': body.length,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
}
