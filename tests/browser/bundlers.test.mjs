/**
 * End-to-end, every bundler with zero configuration: `npm pack` of this
 * repository installed into a fresh project, a tiny app that does
 * `import { loadFilter } from 'bloomgate'` (and one with 'bloomgate/inline'),
 * built by each bundler's own command, served from 127.0.0.1 and asked in
 * Debian's headless Chromium; the bundle for Node (esbuild --platform=node)
 * is run by Node from a directory with no node_modules.
 *
 * Where the module comes from, as asserted here: webpack and Vite emit
 * wasm/bloomgate.wasm as a hashed file and the page fetches it; esbuild and
 * rollup, which emit no file for `new URL('…', import.meta.url)`, get the
 * bytes inline (package.json "imports" → js/wasm-bytes-bundle.js) and the
 * page fetches no .wasm; so does every 'bloomgate/inline' build.
 *
 * Run: node --test tests/browser/bundlers.test.mjs (needs the devDependencies
 * esbuild, rollup, @rollup/plugin-node-resolve, webpack, webpack-cli, vite,
 * and /usr/bin/chromium or BG_CHROMIUM). About 30 s here.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';

import { CHROMIUM, launch } from './browser.mjs';
import { createProject, listFiles, packLibrary, root, serveDir, sh, wordFilter } from './helpers/packed.mjs';

const TOOLS = ['esbuild', 'rollup', '@rollup/plugin-node-resolve', 'webpack', 'webpack-cli', 'vite'];
const missing = TOOLS.filter((tool) => !existsSync(join(root, 'node_modules', tool, 'package.json')));
const skip = missing.length > 0 ? `devDependencies not installed: ${missing.join(', ')} (npm install)`
  : !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : false;

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

const page = (script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>bloomgate app</title></head>
<body><p id="out">loading</p>${script}</body></html>
`;

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

describe('bundlers, zero configuration, from the npm tarball', { skip, timeout: 240000 }, () => {
  let work;
  let packed;
  let project;
  let browser;
  let filterBytes;
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
    // The bundlers run two at a time (two cores).
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
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await project?.remove();
    if (work) await rm(work, { recursive: true, force: true });
  });

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

  for (const build of BUILDS) {
    it(`${build.name}: builds, and the page answers from the filter`, async (t) => {
      const result = built.get(build.name);
      if (result.error) throw result.error;
      const files = await listFiles(result.out);
      const js = files.filter((file) => /\.m?js$/.test(file.path));
      const wasmFiles = files.filter((file) => file.path.endsWith('.wasm'));
      const jsBytes = js.reduce((sum, file) => sum + file.size, 0);
      let jsGzip = 0;
      for (const file of js) jsGzip += gzipSync(await readFile(join(result.out, file.path)), { level: 9 }).length;
      t.diagnostic(`built in ${result.ms} ms; JavaScript ${jsBytes} bytes (${jsGzip} gzip) in ${js.length} file(s)` +
        `${wasmFiles.length ? `; ${wasmFiles.map((file) => `${file.path} ${file.size} bytes`).join(', ')}` : ''}`);

      const site = await serveDir(result.out);
      const tab = await browser.context.newPage();
      const errors = [];
      tab.on('pageerror', (error) => errors.push(error.message));
      tab.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      try {
        await tab.goto(`${site.origin}/`);
        await tab.waitForSelector('#out[data-state]', { timeout: 20000 });
        const state = await tab.getAttribute('#out', 'data-state');
        const answer = JSON.parse(await tab.getAttribute('#out', 'data-result'));
        assert.equal(state, 'ready', JSON.stringify(answer));
        assert.deepEqual(answer.present, WORDS, 'every added word is a maybe');
        assert.ok(answer.absent.length >= ABSENT.length - 1, `definite negatives: ${answer.absent.length} of ${ABSENT.length}`);
        assert.deepEqual(errors, []);
        assert.deepEqual(site.requests.filter((request) => request.status !== 200), [], 'no request failed');
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
        await tab.close();
        await site.close();
      }
    });
  }

  it('Vite dev server (no config): the pre-bundled library fetches the module from the package', async () => {
    const vite = await import('vite');
    await project.write('public/words.bgf', filterBytes);
    const server = await vite.createServer({
      root: project.dir, configFile: false, logLevel: 'warn', server: { host: '127.0.0.1', port: 0, strictPort: false },
    });
    await server.listen();
    const tab = await browser.context.newPage();
    const responses = [];
    tab.on('response', (response) => responses.push({ url: response.url(), status: response.status() }));
    try {
      await tab.goto(server.resolvedUrls.local[0]);
      await tab.waitForSelector('#out[data-state]', { timeout: 60000 });
      const answer = JSON.parse(await tab.getAttribute('#out', 'data-result'));
      assert.equal(await tab.getAttribute('#out', 'data-state'), 'ready', JSON.stringify(answer));
      assert.deepEqual(answer.present, WORDS);
      const wasm = responses.filter((response) => response.url.endsWith('.wasm'));
      assert.deepEqual(wasm.map((response) => [new URL(response.url).pathname, response.status]),
        [['/node_modules/bloomgate/wasm/bloomgate.wasm', 200]]);
    } finally {
      await tab.close();
      await server.close();
    }
  });

  it('a missing module file: E_FETCH names the URL tried and the three fixes', async () => {
    const result = built.get('webpack 5 (no config file)');
    if (result.error) throw result.error;
    const [wasm] = (await listFiles(result.out)).filter((file) => file.path.endsWith('.wasm'));
    await unlink(join(result.out, wasm.path));
    const site = await serveDir(result.out);
    const tab = await browser.context.newPage();
    try {
      await tab.goto(`${site.origin}/`);
      await tab.waitForSelector('#out[data-state]', { timeout: 20000 });
      assert.equal(await tab.getAttribute('#out', 'data-state'), 'error');
      const { code, message } = JSON.parse(await tab.getAttribute('#out', 'data-result'));
      assert.equal(code, 'E_FETCH');
      assert.ok(message.includes(`${site.origin}/${wasm.path}`), message);
      assert.match(message, /HTTP 404/);
      assert.match(message, /init\(/);
      assert.match(message, /'bloomgate\/inline'/);
      assert.match(message, /wasm\/bloomgate\.wasm/);
    } finally {
      await tab.close();
      await site.close();
    }
  });

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
