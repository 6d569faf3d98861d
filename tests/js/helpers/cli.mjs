/**
 * Running the CLI from a test: one scratch directory per test file, and
 * `bloomgate ...` in it, checked for the two things every CLI test wants
 * (it ran, and no stack trace reached the user).
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../../js/cli.js', import.meta.url));

/** A scratch directory made before the file's tests and removed after: `scratch.dir`. */
export function scratchDirectory(prefix) {
  const scratch = { dir: '' };
  before(() => {
    scratch.dir = mkdtempSync(join(tmpdir(), prefix));
  });
  after(() => rmSync(scratch.dir, { recursive: true, force: true }));
  return scratch;
}

/** `bloomgate ...args` in `cwd`; fails the test on a spawn error or a stack trace in stderr. */
export function runCli(cwd, args, options = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', ...options });
  assert.equal(result.error, undefined);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `stack trace in stderr:\n${result.stderr}`);
  return result;
}
