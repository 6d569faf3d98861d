/**
 * A contributor's install on the Node that package.json "engines" names gives
 * no engine warning: `npm ci --dry-run` over a copy of package.json and
 * package-lock.json (in a temporary directory, so node_modules here is not
 * touched) prints no EBADENGINE for any package of the lock, on the Node
 * running this test. Run on Node 20 (here and in CI), that is the floor.
 *
 * (webpack-cli 7 pulled rechoir 1.0.0, which needs Node >= 22.15; the
 * devDependency is pinned to webpack-cli 6.)
 *
 * Run: node --test tests/js/engines.test.mjs (needs npm; no network: the
 * dry run reads only the lock).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('npm ci on this Node reports no EBADENGINE for any package of the lock', () => {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const floor = Number(/^>=\s*(\d+)/.exec(engines.node)?.[1]);
  assert.ok(floor >= 20, `engines.node: ${engines.node}`);
  const major = Number(process.versions.node.split('.')[0]);
  assert.ok(major >= floor, `Node ${process.versions.node} is below engines.node ${engines.node}`);

  const dir = mkdtempSync(join(tmpdir(), 'bloomgate-engines-'));
  try {
    copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const result = spawnSync(NPM, ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier'], {
      cwd: dir, encoding: 'utf8',
    });
    assert.equal(result.error, undefined, String(result.error));
    const output = `${result.stdout}\n${result.stderr}`;
    assert.equal(result.status, 0, output);
    const warnings = output.split('\n').filter((line) => /EBADENGINE/.test(line));
    assert.deepEqual(warnings, [], `on Node ${process.versions.node}:\n${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
