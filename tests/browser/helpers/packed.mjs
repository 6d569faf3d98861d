/**
 * packed.mjs — the library as a user gets it: `npm pack` output installed
 * into a fresh project in a temporary directory (offline: the tarball has no
 * dependencies), plus a static server for what the project builds.
 *
 * The bundlers themselves are this repository's devDependencies, linked into
 * the project's node_modules (a linked package resolves its own dependencies
 * from where it really lives), so a test runs the same `esbuild`, `rollup`,
 * `webpack` or `vite` command a user would, from the project's directory,
 * without a network.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { listenLocal } from './listen.mjs';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Run a command; on failure the error carries its stdout and stderr. */
export async function sh(command, args, options = {}) {
  try {
    return await run(command, args, { timeout: 120000, maxBuffer: 64 << 20, ...options });
  } catch (error) {
    error.message = `${command} ${args.join(' ')} failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`;
    throw error;
  }
}

/**
 * `npm pack` the repository into `dir` (its prepack script generates
 * js/inline-module.js first). Returns the tarball's path.
 */
export async function packLibrary(dir) {
  const { stdout } = await sh(NPM, ['pack', '--json', '--pack-destination', dir], { cwd: root });
  const [info] = JSON.parse(stdout.slice(stdout.indexOf('[')));
  return { tarball: join(dir, info.filename), files: info.files.map((file) => file.path) };
}

/**
 * A fresh project in a temporary directory with the tarball installed and the
 * named devDependencies of this repository linked into node_modules.
 */
export async function createProject(tarball, { tools = [], packageJson = {} } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'bloomgate-project-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', ...packageJson }, null, 2));
  await sh(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', tarball], { cwd: dir });
  for (const tool of tools) {
    const target = join(dir, 'node_modules', tool);
    await mkdir(dirname(target), { recursive: true });
    await symlink(join(root, 'node_modules', tool), target, 'dir');
  }
  return {
    dir,
    bin: (name) => join(root, 'node_modules', '.bin', name),
    write: async (path, text) => {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.bgf': 'application/octet-stream',
};

/**
 * Serve `dir` on 127.0.0.1. `headers` are added to every reply (a CSP, say);
 * every request is recorded as { path, status }.
 */
export async function serveDir(dir, { headers = {} } = {}) {
  const requests = [];
  const base = resolve(dir);
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    const file = resolve(base, `.${path.endsWith('/') ? `${path}index.html` : path}`);
    let status = 404;
    let body = 'not found';
    let type = 'text/plain';
    if (file.startsWith(base + sep)) {
      try {
        body = await readFile(file);
        status = 200;
        type = TYPES[extname(file)] ?? 'application/octet-stream';
      } catch {
        // 404
      }
    }
    requests.push({ path, status });
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers }).end(body);
  });
  return listenLocal(server, { requests });
}

/** Every file under `dir`, relative, with its size. */
export async function listFiles(dir) {
  const out = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const path = join(entry.parentPath ?? entry.path, entry.name);
      out.push({ path: path.slice(dir.length + 1), size: (await readFile(path)).length });
    }
  }
  return out;
}

/** A small classic filter holding `words` (built with this repository's library, in Node). */
export async function wordFilter(words) {
  const { BloomFilter } = await import(pathToFileURL(join(root, 'js', 'index.js')).href);
  const filter = await BloomFilter.create({ capacity: 100, errorRate: 0.001 });
  filter.addAll(words);
  const bytes = filter.serialize();
  filter.free();
  return bytes;
}
