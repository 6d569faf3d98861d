/**
 * End-to-end, every bundler with zero configuration: `npm pack` of this
 * repository installed into a fresh project, a tiny app that does
 * `import { loadFilter } from 'bloomgate'` (and one with 'bloomgate/inline'),
 * built by each bundler's own command (once per run), served from 127.0.0.1
 * and asked in each engine of tests/browser/engines/ (Chromium, Firefox and
 * WebKit, the same assertions in each); the bundle for Node (esbuild
 * --platform=node) is run by Node from a directory with no node_modules.
 *
 * What left the browser is read where every engine lets us read it: the
 * 127.0.0.1 server's own request log (and, for the Vite dev server, a
 * middleware that only records); errors are collected in the page by a
 * classic script that runs before the app (window 'error' and
 * 'unhandledrejection' listeners).
 *
 * Where the module comes from, as asserted here: webpack and Vite emit
 * wasm/bloomgate.wasm as a hashed file and the page fetches it; esbuild and
 * rollup, which emit no file for `new URL('…', import.meta.url)`, get the
 * bytes inline (package.json "imports" → js/wasm-bytes-bundle.js) and the
 * page fetches no .wasm; so does every 'bloomgate/inline' build.
 *
 * Run: node --test tests/browser/bundlers.test.mjs (needs the devDependencies
 * esbuild, rollup, @rollup/plugin-node-resolve, webpack, webpack-cli, vite;
 * a browser that is not installed is skipped with the reason, unless
 * BLOOMGATE_REQUIRE_BROWSERS=1). Some engines: BG_ENGINES=webkit.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, copyFile, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

import { ENGINES, launchEngine, skipUnless } from './engines/index.mjs';
import { createProject, listFiles, packLibrary, root, serveDir, sh, wordFilter } from './helpers/packed.mjs';

const TOOLS = ['esbuild', 'rollup', '@rollup/plugin-node-resolve', 'webpack', 'webpack-cli', 'vite'];
const missing = TOOLS.filter((tool) => !existsSync(join(root, 'node_modules', tool, 'package.json')));
const skip = missing.length > 0 ? `devDependencies not installed: ${missing.join(', ')} (npm install)` : false;
const chosen = (process.env.BG_ENGINES ?? ENGINES.join(',')).split(',').map((name) => name.trim()).filter(Boolean);

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const ABSENT = ['granite', 'keyboard', 'velocity', 'harbour', 'pancake', 'quartzite', 'tundra', 'lantern'];

/** The app's one module: load the filter next to the page and ask it every word. */
function appSource(specifier) {
  return `import { loadFilter } from '${specifier}';

const out = document.getElementById('out');
loadFilter(new URL('words.bgf', document.baseURI)).then((filter) => {
  out.dataset.result = JSON.stringify({
    present: ${JSON.stringify(WORDS)}.filter((word) => filter.mightContain(word)),
    absent: ${JSON.stringify(ABSENT)}.filter((word) => !filter.mightContain(word)),
  });
  out.dataset.state = 'ready';
}, (error) => {
  out.dataset.result = JSON.stringify({ code: error.code, message: error.message });
  out.dataset.state = 'error';
});
`;
}

/** The Node app: a file path from the command line, read from disk by loadFilter. */
const NODE_APP = `import { loadFilter } from 'bloomgate';

loadFilter(process.argv[2]).then((filter) => {
  console.log(JSON.stringify({
    present: ${JSON.stringify(WORDS)}.filter((word) => filter.mightContain(word)),
    absent: ${JSON.stringify(ABSENT)}.filter((word) => !filter.mightContain(word)),
  }));
}, (error) => {
  console.error(error.code, error.message);
  process.exitCode = 1;
});
`;

/**
 * Errors thrown or rejected in the page, collected before the app's script runs (a classic
 * inline script: every engine, every bundler's HTML keeps it as it is).
 */
const COLLECT_ERRORS = `<script>
window.pageErrors = [];
addEventListener('error', (event) => { window.pageErrors.push('error: ' + (event.message || event.type)); });
addEventListener('unhandledrejection', (event) => { window.pageErrors.push('unhandled rejection: ' + (event.reason && event.reason.message || event.reason)); });
</script>`;

const page = (script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>bloomgate app</title>${COLLECT_ERRORS}</head>
<body><p id="out">loading</p>${script}</body></html>
`;

/**
 * Open `url` in `tab` and wait until the app wrote its answer: { state, answer, errors }.
 * One tab per engine, navigated from app to app (each is served on an origin of its own):
 * WebDriver ends a WebKit session when its last window closes.
 */
async function appAnswer(tab, url, timeout = 30000) {
  await tab.goto(url);
  await tab.waitFor(() => document.getElementById('out')?.dataset.state !== undefined, null, { timeout });
  const { state, result, errors } = await tab.evaluate(() => {
    const out = document.getElementById('out');
    return { state: out.dataset.state, result: out.dataset.result, errors: window.pageErrors ?? null };
  });
  return { state, answer: JSON.parse(result), errors };
}

const ROLLUP_CONFIG = (input, file, options) => `import { nodeResolve } from '@rollup/plugin-node-resolve';

export default {
  input: '${input}',
  output: { file: '${file}', format: 'es' },
  plugins: [nodeResolve(${options})],
};
`;

/**
 * Each build: the command a user runs in the project, where its output goes,
 * the page that loads it, and where the wasm must come from ('file' or 'inline').
 */
const BUILDS = [
  {
    name: 'esbuild --bundle (browser)',
    command: (p) => [p.bin('esbuild'), ['src/index.js', '--bundle', '--outfile=out/esbuild/app.js']],
    out: 'out/esbuild', script: '<script src="app.js"></script>', wasm: 'inline',
  },
  {
    name: 'esbuild --bundle --format=esm, bloomgate/inline',
    command: (p) => [p.bin('esbuild'), ['src/inline.js', '--bundle', '--format=esm', '--minify', '--outfile=out/esbuild-inline/app.js']],
    out: 'out/esbuild-inline', script: '<script type="module" src="app.js"></script>', wasm: 'inline',
  },
  {
    name: 'rollup + @rollup/plugin-node-resolve (output.file)',
    command: (p) => [p.bin('rollup'), ['-c', 'rollup.config.mjs']],
    out: 'out/rollup', script: '<script type="module" src="app.js"></script>', wasm: 'inline',
  },
  {
    name: 'rollup + node-resolve({ browser: true })',
    command: (p) => [p.bin('rollup'), ['-c', 'rollup.browser.config.mjs']],
    out: 'out/rollup-browser', script: '<script type="module" src="app.js"></script>', wasm: 'inline',
  },
  {
    name: 'rollup, bloomgate/inline',
    command: (p) => [p.bin('rollup'), ['-c', 'rollup.inline.config.mjs']],
    out: 'out/rollup-inline', script: '<script type="module" src="app.js"></script>', wasm: 'inline',
  },
  {
    // No webpack.config.js: entry ./src/index.js, output dist/main.js.
    name: 'webpack 5 (no config file)',
    command: (p) => [p.bin('webpack'), ['--mode', 'production']],
    out: 'dist', script: '<script src="main.js"></script>', wasm: 'file',
  },
  {
    name: 'webpack 5, bloomgate/inline',
    command: (p) => [p.bin('webpack'), ['--mode', 'production', '--entry', './src/inline.js', '--output-path', 'out/webpack-inline']],
    out: 'out/webpack-inline', script: '<script src="main.js"></script>', wasm: 'inline',
  },
  {
    name: 'Vite (no vite.config.js)',
    command: (p) => [p.bin('vite'), ['build', '--outDir', 'out/vite', '--logLevel', 'warn']],
    out: 'out/vite', html: true, wasm: 'file',
  },
  {
    name: 'Vite, bloomgate/inline',
    command: (p) => [p.bin('vite'), ['build', 'inline-app', '--outDir', '../out/vite-inline', '--logLevel', 'warn']],
    out: 'out/vite-inline', html: true, wasm: 'inline',
  },
];

describe('bundlers, zero configuration, from the npm tarball', { skip, timeout: 600000 }, () => {
  let work;
  let packed;
  let project;
  let filterBytes;
  /** The webpack build with its .wasm removed (a copy: the build itself is asked in every engine). */
  let missingModule;
  /** The Vite dev server, started by the first engine that asks for it: { url, requests }. */
  let devServer = null;
  const built = new Map();

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'bloomgate-pack-'));
    packed = await packLibrary(work);
    project = await createProject(packed.tarball, { tools: TOOLS });
    filterBytes = await wordFilter(WORDS);
    await project.write('src/index.js', appSource('bloomgate'));
    await project.write('src/inline.js', appSource('bloomgate/inline'));
    await project.write('src/node.js', NODE_APP);
    await project.write('index.html', page('<script type="module" src="/src/index.js"></script>'));
    await project.write('inline-app/index.html', page('<script type="module" src="./main.js"></script>'));
    await project.write('inline-app/main.js', "import '../src/inline.js';\n");
    await project.write('rollup.config.mjs', ROLLUP_CONFIG('src/index.js', 'out/rollup/app.js', ''));
    await project.write('rollup.browser.config.mjs', ROLLUP_CONFIG('src/index.js', 'out/rollup-browser/app.js', '{ browser: true }'));
    await project.write('rollup.inline.config.mjs', ROLLUP_CONFIG('src/inline.js', 'out/rollup-inline/app.js', ''));
    // Every bundle is built once, here, for all the engines; two at a time (two cores).
    const queue = [...BUILDS];
    await Promise.all([0, 1].map(async () => {
      for (let build = queue.shift(); build; build = queue.shift()) {
        const [command, args] = build.command(project);
        const started = Date.now();
        try {
          await sh(command, args, { cwd: project.dir, env: { ...process.env, NODE_ENV: 'production' } });
          const out = join(project.dir, build.out);
          if (!build.html) await writeFile(join(out, 'index.html'), page(build.script));
          await writeFile(join(out, 'words.bgf'), filterBytes);
          built.set(build.name, { out, ms: Date.now() - started });
        } catch (error) {
          built.set(build.name, { error });
        }
      }
    }));
    await project.write('public/words.bgf', filterBytes); // for the dev server (after the builds: Vite copies public/)
    const webpack = built.get('webpack 5 (no config file)');
    if (!webpack.error) {
      const out = join(project.dir, 'out', 'webpack-missing-module');
      await cp(webpack.out, out, { recursive: true });
      const [wasm] = (await listFiles(out)).filter((file) => file.path.endsWith('.wasm'));
      if (wasm) await unlink(join(out, wasm.path));
      missingModule = { out, wasm };
    }
  }, { timeout: 420000 });

  after(async () => {
    await devServer?.server.close();
    await project?.remove();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** The Vite dev server (no config file; a middleware that only records what reaches it). */
  async function startDevServer() {
    if (devServer) return devServer;
    const vite = await import('vite');
    const requests = [];
    const record = {
      name: 'record-requests',
      configureServer(server) {
        server.middlewares.use((req, res, next) => {
          res.on('finish', () => requests.push({ path: new URL(req.url, 'http://x').pathname, status: res.statusCode }));
          next();
        });
      },
    };
    const server = await vite.createServer({
      root: project.dir, configFile: false, logLevel: 'warn', plugins: [record], server: { host: '127.0.0.1', port: 0, strictPort: false },
    });
    await server.listen();
    devServer = { server, url: server.resolvedUrls.local[0], requests };
    return devServer;
  }

  it('the tarball carries the inline module and a types file for every subpath export', async () => {
    assert.ok(packed.files.includes('js/inline-module.js'), 'js/inline-module.js is generated by prepack and packed');
    const manifest = JSON.parse(await readFile(join(project.dir, 'node_modules', 'bloomgate', 'package.json'), 'utf8'));
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (subpath === './package.json') continue;
      assert.equal(typeof target.types, 'string', `${subpath} has a "types" condition`);
      assert.ok(packed.files.includes(target.types.slice(2)), `${target.types} is in the tarball`);
      assert.ok(packed.files.includes(target.default.slice(2)), `${target.default} is in the tarball`);
    }
    const inline = await readFile(join(project.dir, 'node_modules', 'bloomgate', 'js', 'inline-module.js'), 'utf8');
    const wasm = await readFile(join(root, 'wasm', 'bloomgate.wasm'));
    assert.ok(inline.includes(`'${wasm.toString('base64')}'`), 'the packed inline module is the current wasm/bloomgate.wasm');
  });

  for (const name of ENGINES) {
    describe(name, { skip: chosen.includes(name) ? skipUnless(name) : `not in BG_ENGINES=${process.env.BG_ENGINES}` }, () => {
      let engine;
      let tab;

      before(async () => {
        engine = await launchEngine(name);
        tab = await engine.newPage();
      }, { timeout: 120000 });

      after(async () => {
        await engine?.close();
      });

      for (const build of BUILDS) {
        it(`${build.name}: the page answers from the filter`, async (t) => {
          const result = built.get(build.name);
          if (result.error) throw result.error;
          const files = await listFiles(result.out);
          const js = files.filter((file) => /\.m?js$/.test(file.path));
          const wasmFiles = files.filter((file) => file.path.endsWith('.wasm'));
          const jsBytes = js.reduce((sum, file) => sum + file.size, 0);
          let jsGzip = 0;
          for (const file of js) jsGzip += gzipSync(await readFile(join(result.out, file.path)), { level: 9 }).length;
          t.diagnostic(`${name} ${engine.version}; built in ${result.ms} ms; JavaScript ${jsBytes} bytes (${jsGzip} gzip) in ${js.length} file(s)` +
            `${wasmFiles.length ? `; ${wasmFiles.map((file) => `${file.path} ${file.size} bytes`).join(', ')}` : ''}`);

          const site = await serveDir(result.out);
          try {
            const { state, answer, errors } = await appAnswer(tab, `${site.origin}/`);
            assert.equal(state, 'ready', JSON.stringify(answer));
            assert.deepEqual(answer.present, WORDS, 'every added word is a maybe');
            assert.ok(answer.absent.length >= ABSENT.length - 1, `definite negatives: ${answer.absent.length} of ${ABSENT.length}`);
            assert.deepEqual(errors, [], 'no error thrown or rejected in the page');
            assert.deepEqual(site.requests.filter((request) => request.status !== 200), [], 'no request failed');
            assert.ok(site.requests.some((request) => request.path === '/words.bgf'), 'the filter was fetched');
            const wasmRequests = site.requests.filter((request) => request.path.endsWith('.wasm'));
            if (build.wasm === 'file') {
              assert.equal(wasmFiles.length, 1, 'the bundler emitted the module as a file');
              assert.deepEqual(wasmRequests.map((request) => request.path), [`/${wasmFiles[0].path}`]);
              // No inline copy: the module's bytes (as the inline build writes them, base64) appear in no script.
              const wasmBase64 = (await readFile(join(root, 'wasm', 'bloomgate.wasm'))).toString('base64').slice(0, 512);
              for (const file of js) {
                assert.ok(!(await readFile(join(result.out, file.path), 'latin1')).includes(wasmBase64), `no inline copy of the module in ${file.path} (${jsBytes} bytes of JavaScript)`);
              }
            } else {
              assert.deepEqual(wasmRequests, [], 'nothing fetched: the module is inline');
              assert.ok(jsBytes > 120000, `the JavaScript carries the module (${jsBytes} bytes)`);
            }
          } finally {
            await site.close();
          }
        });
      }

      it('Vite dev server (no config): the pre-bundled library fetches the module from the package', async () => {
        const dev = await startDevServer();
        const from = dev.requests.length;
        const { state, answer, errors } = await appAnswer(tab, dev.url, 90000);
        assert.equal(state, 'ready', JSON.stringify(answer));
        assert.deepEqual(answer.present, WORDS);
        assert.deepEqual(errors, []);
        const wasm = dev.requests.slice(from).filter((request) => request.path.endsWith('.wasm'));
        assert.deepEqual(wasm.map((request) => [request.path, request.status]),
          [['/node_modules/bloomgate/wasm/bloomgate.wasm', 200]]);
      });

      it('a missing module file: E_FETCH names the URL tried and the three fixes', async () => {
        const result = built.get('webpack 5 (no config file)');
        if (result.error) throw result.error;
        assert.ok(missingModule.wasm, 'webpack emitted a .wasm file to remove');
        const site = await serveDir(missingModule.out);
        try {
          const { state, answer: { code, message } } = await appAnswer(tab, `${site.origin}/`);
          assert.equal(state, 'error');
          assert.equal(code, 'E_FETCH');
          assert.ok(message.includes(`${site.origin}/${missingModule.wasm.path}`), message);
          assert.match(message, /HTTP 404/);
          assert.match(message, /init\(/);
          assert.match(message, /'bloomgate\/inline'/);
          assert.match(message, /wasm\/bloomgate\.wasm/);
          assert.deepEqual(site.requests.filter((request) => request.status === 404).map((request) => request.path), [`/${missingModule.wasm.path}`]);
        } finally {
          await site.close();
        }
      });
    });
  }

  for (const format of ['cjs', 'esm']) {
    it(`esbuild --platform=node (${format}): the bundle runs alone, with no node_modules beside it`, async (t) => {
      const outfile = `out/node/app.${format === 'cjs' ? 'cjs' : 'mjs'}`;
      const started = Date.now();
      const args = ['src/node.js', '--bundle', '--platform=node', `--outfile=${outfile}`];
      if (format === 'esm') args.push('--format=esm');
      await sh(project.bin('esbuild'), args, { cwd: project.dir });
      const alone = await mkdtemp(join(tmpdir(), 'bloomgate-serverless-'));
      try {
        const bundle = join(alone, outfile.split('/').pop());
        await copyFile(join(project.dir, outfile), bundle);
        await writeFile(join(alone, 'words.bgf'), filterBytes);
        const { stdout } = await sh(process.execPath, [bundle, 'words.bgf'], { cwd: alone });
        const answer = JSON.parse(stdout);
        assert.deepEqual(answer.present, WORDS);
        assert.ok(answer.absent.length >= ABSENT.length - 1, `definite negatives: ${answer.absent.length}`);
        t.diagnostic(`built and ran in ${Date.now() - started} ms`);
      } finally {
        await rm(alone, { recursive: true, force: true });
      }
    });
  }
});
