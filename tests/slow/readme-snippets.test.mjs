/**
 * Every JavaScript and shell snippet in README.md runs as written (or, where
 * it cannot run here, is at least valid as written).
 *
 * The marker convention: each ```js and ```sh block in README.md is preceded,
 * on the line right above its opening fence, by an HTML comment (invisible on
 * GitHub and npm) that says how to check it:
 *
 *   <!-- snippet: node -->             run with Node as an ES module; exits 0
 *   <!-- snippet: node stdout="..." --> ... and prints exactly this (JSON string)
 *   <!-- snippet: browser -->          parsed as a browser module: no syntax error,
 *                                      no undefined name (ESLint's no-undef with the
 *                                      browser and web-extension globals); not run (it
 *                                      needs a page)
 *   <!-- snippet: sh -->               run with `sh -e`; exits 0
 *   <!-- snippet: sh exit=N -->        ... and exits N (the last command's status)
 *   <!-- snippet: sh server -->        starts the reference server on 127.0.0.1:8787:
 *                                      checked by requests, then stopped (skipped when
 *                                      the port is taken by something else)
 *   <!-- snippet: KIND skip: REASON --> cannot run here (REASON says why): syntax only
 *
 * A block without a marker fails the test, so no snippet escapes.
 *
 * The runnable blocks run in document order in one temporary directory, so a
 * block can use the files an earlier one wrote, as a reader following the
 * README would. The directory (tests/js/helpers/snippets.mjs) has
 * node_modules/bloomgate, a symbolic link to this checkout (so `import
 * 'bloomgate'` is the package as installed), and node_modules/.bin/bloomgate;
 * `npx` is a shim on PATH that runs those bins (never the registry). Small
 * inputs the snippets name are generated first: pwned.txt (a Have I Been
 * Pwned dump in the downloader's format, SHA-1 of "password" and 199 others,
 * counts 1 to 200), urls-v7.txt and urls-v8.txt (two generations of a URL
 * list). The page's snippet runs in Chromium in tests/browser/readme-page.test.mjs.
 *
 * In the slow tier (npm run test:slow): a dozen CLI runs, 5-6 s of CPU, 6 s on
 * an idle machine and 12-14 s on a busy one here.
 *
 * Run: node --test tests/slow/readme-snippets.test.mjs
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

import { Linter } from 'eslint';
import globals from 'globals';

import { parseMarker, ROOT, readerDirectory, snippetsOf } from '../js/helpers/snippets.mjs';
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SERVER_PORT = 8787;

/** ESLint's parse and no-undef over a browser module: the messages, empty when valid. */
function browserProblems(code) {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(code, [{
    languageOptions: { ecmaVersion: 'latest', sourceType: 'module', globals: { ...globals.browser, ...globals.webextensions } },
    rules: { 'no-undef': 'error' },
  }]);
  return messages.map((m) => `${m.line}:${m.column} ${m.message}`);
}

function portIsFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const blocks = snippetsOf(README).filter((block) => ['js', 'javascript', 'mjs', 'sh', 'bash', 'shell'].includes(block.lang));

describe('README.md snippets', { timeout: 120000 }, () => {
  let dir;
  let env;

  before(() => {
    ({ dir, env } = readerDirectory());
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every js and sh block has a marker', () => {
    const unmarked = blocks.filter((block) => block.marker === null).map((block) => `README.md:${block.line} (${block.lang})`);
    assert.deepEqual(unmarked, [], 'add <!-- snippet: ... --> right above each block (see this file\'s header)');
    assert.ok(blocks.some((block) => block.marker?.kind === 'node' && !block.marker.skip), 'no runnable Node snippet found');
    assert.ok(blocks.some((block) => block.marker?.kind === 'sh' && !block.marker.skip), 'no runnable CLI snippet found');
    assert.ok(blocks.some((block) => block.marker?.kind === 'browser'), 'no browser snippet found');
  });

  for (const block of blocks) {
    const { marker } = block;
    if (marker === null) continue;
    const name = `README.md:${block.line} ${marker.kind}${marker.server ? ' server' : ''}${marker.exit ? ` exit=${marker.exit}` : ''}${marker.skip ? ` (skip: ${marker.skip})` : ''}`;
    const isJs = ['js', 'javascript', 'mjs'].includes(block.lang);
    assert.ok(isJs === (marker.kind !== 'sh'), `${name}: a ${block.lang} block marked ${marker.kind}`);

    if (marker.kind === 'browser' || (isJs && marker.skip)) {
      it(`${name}: valid as written`, () => {
        assert.deepEqual(browserProblems(block.code), [], block.code);
        assert.doesNotMatch(block.code, /…/, 'an ellipsis placeholder in code that is meant to run');
      });
    } else if (marker.kind === 'sh' && marker.skip) {
      it(`${name}: valid sh as written`, () => {
        const check = spawnSync('sh', ['-n'], { input: block.code, encoding: 'utf8' });
        assert.equal(check.status, 0, check.stderr);
      });
    } else if (marker.kind === 'node') {
      it(`${name}: runs`, () => {
        const file = join(dir, `snippet-${block.line}.mjs`);
        writeFileSync(file, block.code);
        const result = spawnSync(process.execPath, [file], { cwd: dir, env, encoding: 'utf8', timeout: 30000 });
        assert.equal(result.status, marker.exit, `exit ${result.status}\n${result.stderr}`);
        if (marker.stdout !== undefined) assert.equal(result.stdout, marker.stdout);
      });
    } else if (marker.server) {
      it(`${name}: serves, answers, stops`, async (t) => {
        if (!(await portIsFree(SERVER_PORT))) {
          t.skip(`port ${SERVER_PORT} is taken by another process`);
          return;
        }
        const child = spawn('sh', ['-e', '-c', block.code], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk) => { output += chunk; });
        child.stderr.on('data', (chunk) => { output += chunk; });
        const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
        try {
          const prefix = createHash('sha1').update('password').digest('hex').toUpperCase();
          let reply = null;
          const deadline = Date.now() + 30000;
          while (reply === null && Date.now() < deadline) {
            const early = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 200, null))]);
            assert.equal(early, null, `the server block exited early (${JSON.stringify(early)}):\n${output}`);
            reply = await fetch(`http://127.0.0.1:${SERVER_PORT}/range/${prefix.slice(0, 5)}`).catch(() => null);
          }
          assert.ok(reply, `no answer on port ${SERVER_PORT} within 30 s:\n${output}`);
          assert.equal(reply.status, 200);
          assert.match(await reply.text(), new RegExp(`^${prefix.slice(5)}:200\\r?$`, 'm'));
          const filter = await fetch(`http://127.0.0.1:${SERVER_PORT}/filters/pwned.bgf`);
          assert.equal(filter.status, 200);
          assert.deepEqual([...new Uint8Array(await filter.arrayBuffer()).subarray(0, 4)], [0x89, 0x42, 0x47, 0x46]);
        } finally {
          try {
            process.kill(-child.pid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
        const { code, signal } = await exited;
        assert.ok(code === 0 || signal === 'SIGTERM' || code === 143, `stopped with ${code ?? signal}:\n${output}`);
      });
    } else {
      it(`${name}: runs`, () => {
        const result = spawnSync('sh', ['-e', '-c', block.code], { cwd: dir, env, encoding: 'utf8', timeout: 60000 });
        assert.equal(result.status, marker.exit, `exit ${result.status}\n${result.stdout}\n${result.stderr}`);
        assert.doesNotMatch(result.stderr, /\n\s+at /, `stack trace:\n${result.stderr}`);
      });
    }
  }

  it('the marker and block readers', () => {
    const sample = '<!-- snippet: sh exit=1 -->\n```sh\nfalse\n```\n\n```js\nx\n```\n<!-- snippet: node stdout="a\\n" -->\n```js\nconsole.log("a")\n```\n';
    const found = snippetsOf(sample);
    assert.deepEqual(found.map((b) => [b.lang, b.line, b.marker]), [
      ['sh', 2, { kind: 'sh', exit: 1, server: false }],
      ['js', 6, null],
      ['js', 10, { kind: 'node', exit: 0, server: false, stdout: 'a\n' }],
    ]);
    assert.deepEqual(parseMarker('sh skip: needs a cluster'), { kind: 'sh', exit: 0, server: false, skip: 'needs a cluster' });
    assert.throws(() => parseMarker('python'), /kind must be/);
    assert.deepEqual(browserProblems('const a = 1;\nconsole.log(a, input);\n'), ["2:16 'input' is not defined."]);
  });
});
