// Node directory storage: the temporary files of killed updates are cleaned up, never those of a
// live writer, and the copy already stored keeps loading (issue 19, item 4). Real child node
// processes write a large copy; one is killed with SIGKILL mid-write, one is stopped (SIGSTOP)
// mid-write and must find its file still there when it continues.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BloomFilter } from '../../js/index.js';
import { createDirectoryStorage, sweepLeftovers } from '../../js/persist-dir.js';

const PERSIST_DIR = fileURLToPath(new URL('../../js/persist-dir.js', import.meta.url));
const KEY = 'https://example.test/filters/manifest.json';
const TEMP = /\.tmp-/;

let root;
let counter = 0;
const newDir = () => join(root, `d${counter++}`);

before(() => {
  root = mkdtempSync(join(tmpdir(), 'bg-persist-cleanup-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** A valid generation-1 copy of a small real filter, stored in `dir`; its bytes. */
async function storeValidCopy(dir) {
  const filter = await BloomFilter.create({ capacity: 1000, errorRate: 0.01, generation: 1 });
  for (let i = 0; i < 100; i++) filter.add(`listed-${i}`);
  const bytes = filter.serialize();
  filter.free();
  await createDirectoryStorage(dir).set(KEY, bytes, { generation: 1, etag: '"g1"' });
  return bytes;
}

/**
 * A child node process storing a 16 MiB copy under KEY in `dir` (the storage checks no
 * content: the bytes stand for a large filter; openFilter validates before it stores);
 * `onTemporary(child, name)` runs the moment its temporary file appears.
 */
function writeLargeCopyInChild(dir, onTemporary) {
  const script = `
    const { createDirectoryStorage } = await import(${JSON.stringify(PERSIST_DIR)});
    const bytes = new Uint8Array(16 << 20).fill(0x5a);
    process.stdout.write('ready\\n');
    await createDirectoryStorage(${JSON.stringify(dir)}).set(${JSON.stringify(KEY)}, bytes, { generation: 2 });
    process.stdout.write('stored\\n');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  let seen = null;
  const watcher = watch(dir, (event, name) => {
    if (seen === null && typeof name === 'string' && TEMP.test(name)) {
      seen = name;
      onTemporary(child, name);
    }
  });
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      watcher.close();
      resolve({ code, signal, temporary: seen, out });
    });
  });
}

const leftovers = (dir) => readdirSync(dir).filter((name) => TEMP.test(name));

/** Set a file's mtime `ms` into the past (what waiting that long would do to it). */
function age(path, ms) {
  const then = new Date(Date.now() - ms);
  utimesSync(path, then, then);
}

test('a writer killed with SIGKILL mid-write: its temporary file is swept, the stored copy still loads', async () => {
  const dir = newDir();
  const valid = await storeValidCopy(dir);
  let killed;
  for (let attempt = 0; attempt < 3; attempt++) {
    killed = await writeLargeCopyInChild(dir, (child) => child.kill('SIGKILL'));
    if (killed.signal === 'SIGKILL' && leftovers(dir).length > 0) break;
  }
  assert.equal(killed.signal, 'SIGKILL', 'the child was killed');
  assert.doesNotMatch(killed.out, /stored/, 'killed before its rename');
  const left = leftovers(dir);
  assert.ok(left.length >= 1, 'a killed update leaves a temporary file behind');
  const [name] = left;
  assert.match(name, /^[0-9a-f]{40}\.bgf\.tmp-[0-9a-f]{8}-\d+-[0-9a-f]{12}$/);
  assert.equal(name, killed.temporary, 'the file the child was writing when it was killed');

  // Young (under 10 s): left for now, so a writer in another pid namespace is never raced.
  const fresh = await createDirectoryStorage(dir).get(KEY);
  assert.deepEqual(fresh.bytes, valid);
  assert.ok(existsSync(join(dir, name)), 'a temporary file under 10 s old is kept');

  // Ten seconds later (its mtime moved back): the next open removes it.
  for (const leftover of left) age(join(dir, leftover), 11_000);
  const reopened = await createDirectoryStorage(dir).get(KEY);
  assert.deepEqual(leftovers(dir), [], 'the leftovers are gone');
  assert.deepEqual(reopened.bytes, valid, 'the valid copy is untouched');
  assert.equal(reopened.meta.generation, 1);
  assert.equal(reopened.meta.etag, '"g1"');
  const filter = await BloomFilter.from(reopened.bytes);
  assert.equal(filter.mightContain('listed-7'), true);
  filter.free();
});

test('a live writer (stopped mid-write) keeps its temporary file, and its rename then succeeds', async () => {
  const dir = newDir();
  await storeValidCopy(dir);
  let result;
  let sweptWhileStopped;
  let keptWhileStopped;
  for (let attempt = 0; attempt < 3; attempt++) {
    sweptWhileStopped = null;
    result = await writeLargeCopyInChild(dir, (child, name) => {
      child.kill('SIGSTOP');
      const path = join(dir, name);
      try {
        age(path, 60 * 60 * 1000); // an hour without a write: still its writer's while it lives
        sweptWhileStopped = sweepLeftovers(dir);
        keptWhileStopped = existsSync(path);
      } catch {
        sweptWhileStopped = null; // renamed before it stopped: try again
      } finally {
        child.kill('SIGCONT');
      }
    });
    if (sweptWhileStopped !== null && keptWhileStopped !== undefined && /stored/.test(result.out)) break;
  }
  assert.deepEqual(sweptWhileStopped, [], 'nothing of a live writer is swept');
  assert.equal(keptWhileStopped, true);
  assert.equal(result.code, 0, 'the writer finished');
  assert.match(result.out, /stored/);
  assert.deepEqual(leftovers(dir), []);
  const stored = await createDirectoryStorage(dir).get(KEY);
  assert.equal(stored.meta.generation, 2, 'its copy replaced the old one');
  assert.equal(stored.bytes.length, 16 << 20);
});

test('who may be swept: tag, pid and age', async () => {
  const dir = newDir();
  // This host's tag, from the temporary name of a real write.
  let seen = null;
  await storeValidCopy(dir);
  const spy = watch(dir, (event, name) => {
    if (seen === null && typeof name === 'string' && TEMP.test(name)) seen = name;
  });
  await storeValidCopy(dir);
  await new Promise((resolve) => setTimeout(resolve, 50)); // let the watch event land
  spy.close();
  const tag = (seen ?? '').split('.tmp-')[1]?.split('-')[0];
  assert.match(tag, /^[0-9a-f]{8}$/);
  // A pid that ran and is gone: a child that has exited.
  const exited = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => exited.once('exit', resolve));
  const deadPid = exited.pid;

  const hash = 'a'.repeat(40);
  const live = process.ppid; // a running process of this namespace (the test runner)
  const files = {
    deadYoung: [`${hash}.bgf.tmp-${tag}-${deadPid}-000000000001`, 2_000, true],
    deadOld: [`${hash}.json.tmp-${tag}-${deadPid}-000000000002`, 11_000, false],
    liveOld: [`${hash}.bgf.tmp-${tag}-${live}-000000000003`, 60 * 60 * 1000, true],
    liveAbandoned: [`${hash}.bgf.tmp-${tag}-${live}-000000000004`, 25 * 60 * 60 * 1000, false],
    otherHost: [`${hash}.bgf.tmp-0badc0de-999999-000000000005`, 60 * 60 * 1000, true],
    otherHostAbandoned: [`${hash}.bgf.tmp-0badc0de-999999-000000000006`, 25 * 60 * 60 * 1000, false],
    untagged: [`${hash}.bgf.tmp-999999-000000000007`, 60 * 60 * 1000, true],
    untaggedAbandoned: [`${hash}.bgf.tmp-999999-000000000008`, 25 * 60 * 60 * 1000, false],
    notOurs: ['notes.txt.tmp-999999-000000000009', 25 * 60 * 60 * 1000, true],
    notOursEither: [`${hash}.bgf.tmp-999999-zzz`, 25 * 60 * 60 * 1000, true],
  };
  for (const [name, ms] of Object.values(files)) {
    writeFileSync(join(dir, name), 'partial');
    age(join(dir, name), ms);
  }
  await createDirectoryStorage(dir).set(KEY, (await createDirectoryStorage(dir).get(KEY)).bytes, { generation: 1 });
  for (const [what, [name, , kept]] of Object.entries(files)) {
    assert.equal(existsSync(join(dir, name)), kept, `${what}: ${kept ? 'kept' : 'swept'}`);
  }
  assert.ok(statSync(join(dir, readdirSync(dir).find((n) => n.endsWith('.bgf')))).size > 0);
});
