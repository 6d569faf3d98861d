// The CLI in scripts: `query`'s exit status is its answer (0: every item "no",
// 1: any "maybe", 64+: an error), a port that cannot be listened on says what to
// do instead (serve and the demo), and `build --list-id-from` names a subset
// filter after the store that answers its "maybe". Real processes, real ports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CLI, runCli, scratchDirectory } from './helpers/cli.mjs';
import { runBatch } from './helpers/cli-batch.mjs';

const scratch = scratchDirectory('bloomgate-cli-exit-');
const DEMO = fileURLToPath(new URL('../../examples/demo.mjs', import.meta.url));

/** `bloomgate ...args` without blocking the event loop (a port held by this process stays served). */
function runAsync(args, { input, command = CLI, ...options } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [command, ...args], { cwd: scratch.dir, stdio: ['pipe', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text) => { stdout += text; });
    child.stderr.setEncoding('utf8').on('data', (text) => { stderr += text; });
    child.on('error', reject);
    child.on('close', (status) => {
      assert.doesNotMatch(stderr, /\n\s+at /, `stack trace in stderr:\n${stderr}`);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

/** A port this process holds on 127.0.0.1 until close(). */
async function holdPort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return { port: /** @type {import('node:net').AddressInfo} */ (server.address()).port, close: () => new Promise((resolve) => server.close(resolve)) };
}

const sha1Row = (password, count) => `${createHash('sha1').update(password).digest('hex').toUpperCase()}:${count}`;

test('query exits 0 when every item is "no", 1 when any is "maybe", 64/65/66 for errors', async () => {
  const dir = scratch.dir;
  writeFileSync(join(dir, 'words.txt'), 'alpha\nbeta\ngamma\n');
  assert.equal(runCli(dir, ['build', 'words.txt', '-o', 'words.bgf', '--error-rate', '0.000001', '-q']).status, 0);
  writeFileSync(join(dir, 'broken.bgf'), Buffer.concat([readFileSync(join(dir, 'words.bgf')).subarray(0, 140)]));
  const cases = [
    // [args, stdin, expected status, expected stdout (or a pattern for stderr)]
    [['query', 'words.bgf', 'delta', 'epsilon'], '', 0, 'no\tdelta\nno\tepsilon\n'],
    [['query', 'words.bgf', 'delta', 'beta'], '', 1, 'no\tdelta\nmaybe\tbeta\n'],
    [['query', 'words.bgf', 'alpha'], '', 1, 'maybe\talpha\n'],
    [['query', 'words.bgf'], 'delta\r\nepsilon\n', 0, 'no\tdelta\nno\tepsilon\n'],
    [['query', 'words.bgf'], 'delta\ngamma\n', 1, 'no\tdelta\nmaybe\tgamma\n'],
    [['query', 'words.bgf'], '\n', 0, ''],
    [['query', 'words.bgf', '--json', 'zeta'], '', 0, '[\n{"item":"zeta","maybe":false}\n]\n'],
    [['query', 'words.bgf', '--json', 'zeta', 'alpha'], '', 1, '[\n{"item":"zeta","maybe":false},\n{"item":"alpha","maybe":true}\n]\n'],
    [['query', 'missing.bgf', 'alpha'], '', 66, /cannot open 'missing\.bgf'.*\(ENOENT\)/],
    [['query', 'broken.bgf', 'alpha'], '', 65, /broken\.bgf: .*\(E_TRUNCATED\)/],
    [['query'], '', 64, /missing the filter file.*\(E_USAGE\)/],
    [['query', 'words.bgf', '--bogus'], '', 64, /unknown option --bogus.*\(E_USAGE\)/],
  ];
  // Items on the command line: in one process (helpers/cli-batch.mjs); stdin: a process each.
  const batched = runBatch(dir, cases.filter(([, input]) => input === '').map(([args]) => ({ args })));
  const piped = await Promise.all(cases.filter(([, input]) => input !== '').map(([args, input]) => runAsync(args, { input })));
  const results = cases.map(([, input]) => (input === '' ? batched : piped).shift());
  for (const [i, [args, , status, expected]] of cases.entries()) {
    const result = results[i];
    assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
    if (typeof expected === 'string') assert.equal(result.stdout, expected, args.join(' '));
    else assert.match(result.stderr, new RegExp(`^bloomgate: ${expected.source}\\n$`), args.join(' '));
  }
  // A reader that stops early (`| head -1`): the status still says an answered item was "maybe".
  const early = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'query', 'words.bgf'], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text) => { stderr += text; });
    child.stdout.once('data', () => child.stdout.destroy());
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr }));
    child.stdin.on('error', () => {}); // the child may be gone before all of it is written
    child.stdin.end(`beta\n${Array.from({ length: 200_000 }, (_, i) => `other-${i}`).join('\n')}\n`);
  });
  assert.equal(early.status, 1, early.stderr);
  assert.equal(early.stderr, '');
  // The help says so.
  const { COMMAND_HELP, MAIN_HELP } = await import('../../js/cli/help.js');
  assert.match(COMMAND_HELP.query, /0 when every item is "no", 1 when any\s+item is "maybe"/);
  assert.match(MAIN_HELP, /^ {2}1 {3}query: at least one item is "maybe"$/m);
});

test('serve: a port in use says "port N is in use; try --port M" (exit 64), and so does the demo', async () => {
  const dir = scratch.dir;
  writeFileSync(join(dir, 's.txt'), 'one\ntwo\n');
  assert.equal(runCli(dir, ['build', 's.txt', '-o', 's.bgf', '-q']).status, 0);
  const held = await holdPort();
  try {
    const [serve, demo] = await Promise.all([
      runAsync(['serve', '--filter', `s=s.bgf`, '--port', String(held.port)]),
      runAsync(['--once', '--port', String(held.port)], { command: DEMO }),
    ]);
    assert.equal(serve.status, 64, serve.stderr);
    const match = /^bloomgate: port (\d+) is in use on 127\.0\.0\.1; try --port (\d+) \(free now\), or --port 0 for any free port \(EADDRINUSE\)\n$/.exec(serve.stderr);
    assert.ok(match, serve.stderr);
    assert.equal(Number(match[1]), held.port);
    assert.notEqual(Number(match[2]), held.port);
    assert.equal(demo.status, 64, demo.stderr);
    assert.match(demo.stderr, new RegExp(`^demo: port ${held.port} is in use on 127\\.0\\.0\\.1; try --port \\d+`));
    assert.doesNotMatch(demo.stdout, /serving/);
  } finally {
    await held.close();
  }
  // A host that is not this machine's, a bad --port: usage errors too, never 70.
  const [notMine, badPort] = await Promise.all([
    runAsync(['serve', '--filter', 's=s.bgf', '--host', '192.0.2.1', '--port', '0']),
    runAsync(['--once', '--port', 'eighty'], { command: DEMO }),
  ]);
  assert.equal(notMine.status, 64, notMine.stderr);
  assert.match(notMine.stderr, /^bloomgate: cannot listen on 192\.0\.2\.1:0: 192\.0\.2\.1 is not an address of this machine \(see --host\) \(EADDRNOTAVAIL\)\n$/);
  assert.equal(badPort.status, 64, badPort.stderr);
  assert.match(badPort.stderr, /^demo: invalid --port 'eighty': expected 0\.\.65535 \(E_USAGE\)\n$/);
});

// Ports below 1024 need privileges: as root, the test drops them for the child
// (setpriv to nobody); as anyone else, the child has none to begin with.
function unprivileged() {
  const floor = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim());
  if (!(floor > 80)) return { skip: `ports from ${floor} up need no privilege here` };
  if (process.getuid?.() !== 0) return { prefix: [] };
  const setpriv = spawnSync('setpriv', ['--version']);
  if (setpriv.error) return { skip: 'running as root without setpriv to drop privileges' };
  return { prefix: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] };
}

test('serve: a privileged port without the privilege says what to do (exit 64)', (t) => {
  let how;
  try {
    how = unprivileged();
  } catch {
    how = { skip: 'no /proc/sys/net/ipv4/ip_unprivileged_port_start' };
  }
  if (how.skip) {
    t.skip(how.skip);
    return;
  }
  const dir = scratch.dir;
  chmodSync(dir, 0o755); // nobody reads the filter
  writeFileSync(join(dir, 'p.txt'), 'one\n');
  assert.equal(runCli(dir, ['build', 'p.txt', '-o', 'p.bgf', '-q']).status, 0);
  chmodSync(join(dir, 'p.bgf'), 0o644);
  const [program, ...prefixArgs] = how.prefix.length ? how.prefix : [process.execPath];
  const args = how.prefix.length ? [...prefixArgs, process.execPath, CLI] : [CLI];
  const result = spawnSync(program, [...args, 'serve', '--filter', `p=${join(dir, 'p.bgf')}`, '--port', '80'], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
  assert.equal(result.status, 64, result.stderr);
  assert.match(result.stderr, /^bloomgate: not allowed to listen on 127\.0\.0\.1:80: ports below 1024 need root or CAP_NET_BIND_SERVICE; try --port 8080, or --port 0 for any free port \(EACCES\)\n$/);
});

test('build --list-id-from: a subset filter named after the whole store, which serve then vouches for', async () => {
  const dir = scratch.dir;
  const rows = Array.from({ length: 60 }, (_, i) => ({ password: `pw-${i}`, count: i + 1 }))
    .sort((a, b) => sha1Row(a.password, 0).localeCompare(sha1Row(b.password, 0)));
  writeFileSync(join(dir, 'dump.txt'), `${rows.map(({ password, count }) => sha1Row(password, count)).join('\n')}\n`);
  const [full, subset, inspected] = runBatch(dir, [
    { args: ['build', 'dump.txt', '--format', 'hibp', '-o', 'full.bgf', '--store', 'full.bgs', '-q'] },
    { args: ['build', 'dump.txt', '--format', 'hibp', '--min-count', '30', '-o', 'subset.bgf', '--list-id-from', 'full.bgs', '-q'] },
    { args: ['inspect', 'subset.bgf', '--json'] },
  ]);
  assert.equal(full.status, 0, full.stderr);
  assert.equal(subset.status, 0, subset.stderr);

  const { StoreReader } = await import('../../js/store.js');
  const store = await StoreReader.open(join(dir, 'full.bgs'));
  const storeListId = store.listId;
  await store.close();
  assert.match(storeListId, /^[0-9a-f]{32}$/);
  assert.notEqual(storeListId, '0'.repeat(32));
  const report = JSON.parse(inspected.stdout);
  assert.equal(report.header.listId, storeListId, 'the subset filter names the store\'s list');
  assert.equal(report.minCount, 30);
  assert.equal(report.metadata.items, 31);

  // The server of the whole store names that list in its manifest, with a threshold the subset's clients accept.
  const child = spawn(process.execPath, [CLI, 'serve', '--filter', 'pw=subset.bgf', '--password-store', 'full.bgs', '--port', '0'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const address = await new Promise((resolve, reject) => {
      let text = '';
      child.stderr.setEncoding('utf8').on('data', (chunk) => {
        text += chunk;
        const found = /serving on (http:\/\/\S+)/.exec(text);
        if (found) resolve(found[1]);
      });
      child.on('close', () => reject(new Error(`serve ended: ${text}`)));
    });
    const manifest = await (await fetch(`${address}/range/manifest.json`)).json();
    assert.equal(manifest.listId, storeListId);
    assert.ok(manifest.minCount <= report.minCount, `store threshold ${manifest.minCount} at most the filter's`);
  } finally {
    child.kill('SIGTERM');
  }

  // What can go wrong, each with its own code, and no output left behind.
  writeFileSync(join(dir, 'urls.txt'), 'evil.example\n');
  const { writeStore } = await import('../../js/store.js');
  writeFileSync(join(dir, 'u.bgs'), writeStore([{ hash: createHash('sha256').update('evil.example/').digest(), count: 1 }], { hashType: 'sha256', listId: 'cd'.repeat(16) }));
  writeFileSync(join(dir, 'cut.bgs'), readFileSync(join(dir, 'full.bgs')).subarray(0, 200));
  writeFileSync(join(dir, 'unnamed.bgs'), writeStore([{ hash: createHash('sha1').update('x').digest(), count: 1 }], { hashType: 'sha1' }));
  const hibp = ['build', 'dump.txt', '--format', 'hibp', '-o', 'refused.bgf'];
  const refusals = [
    [[...hibp, '--list-id-from', 'nope.bgs'], 66, /^bloomgate: cannot open 'nope\.bgs': no such file or directory \(ENOENT\)\n$/],
    [[...hibp, '--list-id-from', '.'], 66, /^bloomgate: cannot open '\.': is a directory \(EISDIR\)\n$/],
    [[...hibp, '--list-id-from', 'cut.bgs'], 65, /^bloomgate: --list-id-from 'cut\.bgs': .*\(E_TRUNCATED\)\n$/],
    [[...hibp, '--list-id-from', 'full.bgf'], 65, /^bloomgate: --list-id-from 'full\.bgf': .*\(E_MAGIC\)\n$/],
    [[...hibp, '--list-id-from', 'u.bgs'], 64, /that store holds sha256 hashes, but --format hibp builds a filter of sha1 keys.*\(E_USAGE\)\n$/],
    [[...hibp, '--list-id-from', 'unnamed.bgs'], 64, /that store names no list.*\(E_USAGE\)\n$/],
    [[...hibp, '--list-id-from', 'full.bgs', '--list-id', 'ab'.repeat(16)], 64, new RegExp(`the store's list id ${storeListId} contradicts --list-id ${'ab'.repeat(16)}.*\\(E_USAGE\\)\\n$`)],
    [['build', 'urls.txt', '-o', 'refused.bgf', '--list-id-from', 'full.bgs'], 64, /--list-id-from .*needs --format hibp or --format urls \(E_USAGE\)\n$/],
    // The same id given twice is no contradiction; a URL filter named after a URL store.
    [[...hibp.slice(0, -1), 'same.bgf', '--list-id-from', 'full.bgs', '--list-id', storeListId.toUpperCase(), '-q'], 0, /^$/],
    [['build', 'urls.txt', '--format', 'urls', '-o', 'u.bgf', '--list-id-from', 'u.bgs', '-q'], 0, /^$/],
  ];
  const results = runBatch(dir, refusals.map(([args]) => ({ args })));
  for (const [i, [args, status, pattern]] of refusals.entries()) {
    assert.equal(results[i].status, status, `${args.join(' ')}: ${results[i].stderr}`);
    assert.match(results[i].stderr, pattern, args.join(' '));
  }
  assert.equal(existsSync(join(dir, 'refused.bgf')), false);
  const { BloomFilter } = await import('../../js/index.js');
  for (const [file, listId] of [['same.bgf', storeListId], ['u.bgf', 'cd'.repeat(16)]]) {
    const filter = await BloomFilter.from(readFileSync(join(dir, file)));
    assert.equal(filter.listId, listId, file);
    filter.free();
  }
  // The help names the option.
  const { COMMAND_HELP } = await import('../../js/cli/help.js');
  assert.match(COMMAND_HELP.build, /--list-id-from STORE\.bgs/);
});
