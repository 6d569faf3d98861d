/**
 * The package as a user installs it, in the slow tier (npm run test:slow):
 * npm and a git clone take 5-50 s here.
 *
 * 1. `npm pack`, then `npm install` of the tarball into a fresh project in a
 *    temporary directory, then the package's entry points imported by name
 *    from that project, as an application would.
 * 2. A fresh `git clone` of this repository's HEAD installed as a user would
 *    from a git URL: `npm install git+file://CLONE` (npm clones it again,
 *    prepares it and packs it) and `npm install CLONE` (a directory: linked).
 * 3. `vite build` of examples/vite in that fresh clone (its node_modules a
 *    link to this checkout's, which has vite).
 *
 * `bloomgate/inline` and `bloomgate/bundle` rest on generated files
 * (js/inline-module.js, js/bundle.mjs). They are committed, so a clone has
 * them and the tarball carries them without `prepack` (the pack in 1 runs no
 * scripts: what is packed is what is in the tree). .ci/run checks that the
 * committed copies are what js/ and the wasm give. Cases 2 and 3 test what is
 * committed (HEAD), not the working tree.
 *
 * Run: node --test tests/slow/package-install.test.mjs (needs npm and git;
 * case 2's git install has npm install the package's devDependencies in its
 * clone, from npm's cache or the registry, because package.json has build
 * scripts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** npm with no audit, fund or update notices, and (unless `online`) never the network. */
function npm(cwd, args, { online = false } = {}) {
  const network = online ? '--prefer-offline' : '--offline';
  const result = spawnSync(NPM, [...args, network, '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'], {
    cwd, encoding: 'utf8', env: { ...process.env, npm_config_yes: 'false' },
  });
  assert.equal(result.error, undefined, `npm ${args.join(' ')}: ${result.error}`);
  assert.equal(result.status, 0, `npm ${args.join(' ')} exited ${result.status}:\n${result.stderr}`);
  return result;
}

// What the installed package must do, run from the application's directory:
// each entry point by its package name, a filter made, filled, queried and
// round-tripped through its bytes.
const APP = `
import * as main from 'bloomgate';
import * as inline from 'bloomgate/inline';
import * as bundle from 'bloomgate/bundle';
import * as lite from 'bloomgate/lite';
import { createRequire } from 'node:module';

const out = {};
for (const [name, lib] of Object.entries({ main, inline, bundle, lite })) {
  const f = await lib.BloomFilter.create({ capacity: 1000, errorRate: 0.01 });
  f.add('in-the-list');
  const g = await lib.BloomFilter.from(f.serialize());
  out[name] = { member: g.mightContain('in-the-list'), stranger: g.mightContain('never-added'), kind: g.stats().kind };
  f.free();
  g.free();
}
out.wasm = import.meta.resolve('bloomgate/wasm');
out.pkg = createRequire(import.meta.url)('bloomgate/package.json').version;
console.log(JSON.stringify(out));
`;

/** A new application directory with `npm install SPEC` done in it. */
function appWith(dir, name, spec, options) {
  const app = join(dir, name);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  npm(app, ['install', spec], options);
  writeFileSync(join(app, 'app.mjs'), APP);
  return app;
}

/** Run app.mjs in `app`; check every entry point answered. */
function checkApp(app) {
  const result = spawnSync(process.execPath, ['app.mjs'], { cwd: app, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  for (const name of ['main', 'inline', 'bundle', 'lite']) {
    assert.deepEqual(out[name], { member: true, stranger: false, kind: 'classic' }, name);
  }
  assert.match(out.wasm, /\/bloomgate\/wasm\/bloomgate\.wasm$/);
  assert.equal(out.pkg, version);
}

const git = spawnSync('git', ['--version']).status === 0;
const inGit = git && spawnSync('git', ['rev-parse', '--git-dir'], { cwd: ROOT }).status === 0;

describe('the npm pack tarball, installed into a fresh project', { timeout: 120000 }, () => {
  let dir;
  let tarball;
  let files;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bloomgate-pack-'));
    const packed = npm(ROOT, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir]);
    const [info] = JSON.parse(packed.stdout);
    tarball = join(dir, info.filename);
    files = new Set(info.files.map((file) => file.path));
    appWith(dir, 'app', tarball);
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ships the licence, the changelog and the generated entry files', () => {
    for (const path of ['LICENSE', 'CHANGELOG.md', 'README.md', 'js/inline-module.js', 'js/bundle.mjs', 'js/lite.mjs', 'wasm/bloomgate.wasm']) {
      assert.ok(files.has(path), `${path} is not in ${tarball}`);
    }
    assert.match(tarball, new RegExp(`bloomgate-${version.replace(/\./g, '\\.')}\\.tgz$`));
  });

  it('bloomgate, bloomgate/inline, bloomgate/bundle and bloomgate/lite import by name and answer', () => {
    checkApp(join(dir, 'app'));
  });

  it('installs the bloomgate command', () => {
    const result = spawnSync(join(dir, 'app', 'node_modules', '.bin', 'bloomgate'), ['--version'], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, new RegExp(version.replace(/\./g, '\\.')));
  });
});

describe('a fresh git clone', { timeout: 300000, skip: !inGit && 'not a git checkout, or git is missing' }, () => {
  let dir;
  let clone;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'bloomgate-clone-'));
    clone = join(dir, 'bloomgate');
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has the generated entry files without any build step', () => {
    for (const path of ['js/inline-module.js', 'js/bundle.mjs']) {
      assert.ok(existsSync(join(clone, path)), `${path} is not committed`);
    }
  });

  it('installed from a git URL (git+file:), bloomgate/inline and bloomgate/bundle work', () => {
    checkApp(appWith(dir, 'from-git', `git+file://${clone}`, { online: true }));
  });

  it('installed from its directory, bloomgate/inline and bloomgate/bundle work', () => {
    checkApp(appWith(dir, 'from-dir', clone));
  });

  it('vite builds examples/vite', async () => {
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
    const out = join(dir, 'vite-out');
    const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
    const result = spawnSync(process.execPath, [vite, 'build', 'examples/vite', '--outDir', out, '--logLevel', 'warn'], {
      cwd: clone, encoding: 'utf8',
    });
    assert.equal(result.status, 0, `vite build failed:\n${result.stdout}\n${result.stderr}`);
    const assets = readdirSync(join(out, 'assets'));
    assert.ok(assets.some((name) => /^bloomgate-[\w-]+\.wasm$/.test(name)), `assets: ${assets.join(', ')}`);
    assert.ok(assets.some((name) => name.endsWith('.js')), `assets: ${assets.join(', ')}`);
  });
});
