// Values per key, end to end: real `bloomgate` runs (build --buckets, URL<TAB>THREAT lists,
// inspect, merge, diff, patch, publish, export-ranges), the reference server on 127.0.0.1, and
// checkPassword / checkUrl / openFilter in Node reading what they wrote.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { BloomFilter, checkPassword, checkUrl, loadFilter, openFilter } from '../../js/index.js';
import { startReferenceServer } from '../../js/server.js';
import { bucketOf } from '../../js/values.js';
import { runCli, scratchDirectory } from './helpers/cli.mjs';

const scratch = scratchDirectory('bloomgate-values-cli-');
const sha1Hex = (text) => createHash('sha1').update(text).digest('hex').toUpperCase();
const sha256 = (text) => new Uint8Array(createHash('sha256').update(text).digest());
const BUCKETS = [1, 10, 100, 1000, 100000];
const COUNTS = [1, 2, 9, 10, 11, 99, 100, 101, 999, 1000, 1001, 99999, 100000, 100001, 3861493];
const PASSWORDS = Array.from({ length: 300 }, (_, i) => ({ password: `value password ${i}`, count: COUNTS[i % COUNTS.length] * (i < COUNTS.length ? 1 : 1) }));
const LABELS = ['phishing', 'malware', 'unwanted'];
const URLS = Array.from({ length: 240 }, (_, i) => ({ url: `http://threat-${i}.example/path/${i}/`, label: LABELS[i % 3] }));
const LIST_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

function cli(args, expectCode = 0) {
  const result = runCli(scratch.dir, args);
  assert.equal(result.status, expectCode, `bloomgate ${args.join(' ')}: exit ${result.status}\n${result.stderr}`);
  return result;
}

const path = (name) => join(scratch.dir, name);
const loadFile = (name) => loadFilter(new Uint8Array(readFileSync(path(name))));
const urlLines = (list) => `${list.map(({ url, label }) => `${url}\t${label}`).join('\n')}\n`;

/** A server answering with one store at a time: { url, close } */
async function serve(options) {
  const { server, url } = await startReferenceServer({ host: '127.0.0.1', port: 0, ...options });
  return { url, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('passwords: build --format hibp --buckets', () => {
  before(() => {
    writeFileSync(path('pwned.txt'), PASSWORDS.map(({ password, count }) => `${sha1Hex(password)}:${count}\r\n`).join(''));
  });

  it("stores each hash's COUNT bucket: every member's value is exact, the bounds are in the metadata", async () => {
    const { stderr } = cli(['build', 'pwned.txt', '--format', 'hibp', '--buckets', BUCKETS.join(','), '--store', 'pwned.bgs', '--list-id', LIST_ID, '-o', 'pwned.bgf']);
    assert.match(stderr, /values: 3 bits per key, seen at least 1 \/ 10 \/ 100 \/ 1000 \/ 100000 times/);
    const filter = await loadFile('pwned.bgf');
    try {
      assert.equal(filter.kind, 'fuse4');
      assert.equal(filter.valueBits, 3, 'r = ceil(log2(5 buckets))');
      assert.deepEqual(filter.metadata.values, { meaning: 'seen-at-least', buckets: BUCKETS });
      assert.equal(filter.minCount, 1);
      let exact = 0;
      for (const { password, count } of PASSWORDS) {
        if (filter.valueOfKey(Buffer.from(sha1Hex(password), 'hex')) === bucketOf(BUCKETS, count)) exact++;
      }
      assert.equal(exact, PASSWORDS.length, 'every member gets its exact bucket');
    } finally {
      filter.free();
    }
  });

  it('checkPassword: seenAtLeast from the filter (confirmed: false), then the server\'s count (confirmed: true)', async () => {
    const filter = await loadFile('pwned.bgf');
    const server = await serve({ passwordStore: path('pwned.bgs') });
    try {
      for (const { password, count } of PASSWORDS.slice(0, COUNTS.length)) {
        const local = await checkPassword(password, { filter });
        const bound = BUCKETS[bucketOf(BUCKETS, count)];
        assert.deepEqual(local, { breached: true, count: null, escalated: false, confirmed: false, minCount: 1, seenAtLeast: bound }, password);
        const confirmed = await checkPassword(password, { filter, rangeUrl: `${server.url}/range` });
        assert.deepEqual(confirmed, { breached: true, count, escalated: true, confirmed: true, minCount: 1, seenAtLeast: bound }, password);
      }
      const clean = await checkPassword('not in the dump at all', { filter, rangeUrl: `${server.url}/range` });
      assert.equal(clean.breached, false);
      assert.equal(clean.seenAtLeast, null);
      // A filter without values keeps the result it always had: no seenAtLeast.
      cli(['build', 'pwned.txt', '--format', 'hibp', '-o', 'plain.bgf', '-q']);
      const plain = await loadFile('plain.bgf');
      assert.equal('seenAtLeast' in await checkPassword(PASSWORDS[0].password, { filter: plain }), false);
      plain.free();
    } finally {
      filter.free();
      await server.close();
    }
  });

  it('rows below the first bound are dropped: the first bound is the filter\'s threshold', async () => {
    const { stderr } = cli(['build', 'pwned.txt', '--format', 'hibp', '--buckets', '100,100000', '--value-bits', '2', '-o', 'hundred.bgf']);
    const below = PASSWORDS.filter(({ count }) => count < 100).length;
    assert.match(stderr, new RegExp(`skipped ${below} rows with COUNT below 100`));
    const filter = await loadFile('hundred.bgf');
    try {
      assert.equal(filter.minCount, 100);
      assert.equal(filter.valueBits, 2, '--value-bits wins over the fewest bits (1)');
      for (const { password, count } of PASSWORDS) {
        if (count < 100) continue;
        assert.equal(filter.valueOfKey(Buffer.from(sha1Hex(password), 'hex')), count >= 100000 ? 1 : 0);
      }
      const result = await checkPassword(PASSWORDS.find(({ count }) => count === 100001).password, { filter });
      assert.equal(result.seenAtLeast, 100000);
    } finally {
      filter.free();
    }
  });

  it('a sharded build (--shards 4 --jobs 2) carries the values through the workers', async () => {
    const { stderr } = cli(['build', 'pwned.txt', '--format', 'hibp', '--buckets', BUCKETS.join(','), '--shards', '4', '--jobs', '2', '-o', 'sharded.bgf']);
    assert.match(stderr, /4 shards .* built 2 at a time/);
    const filter = await loadFile('sharded.bgf');
    try {
      assert.equal(filter.valueBits, 3);
      assert.deepEqual(filter.metadata.values, { meaning: 'seen-at-least', buckets: BUCKETS });
      const wrong = PASSWORDS.filter(({ password, count }) => filter.valueOfKey(Buffer.from(sha1Hex(password), 'hex')) !== bucketOf(BUCKETS, count));
      assert.deepEqual(wrong, [], 'every member of every shard gets its exact bucket');
      assert.equal((await checkPassword(PASSWORDS[14].password, { filter })).seenAtLeast, 100000);
    } finally {
      filter.free();
    }
  });

  it('inspect shows the value bits and their meaning; merge refuses value filters (exit 65)', () => {
    const { stdout } = cli(['inspect', 'pwned.bgf']);
    assert.match(stdout, /values\s+3 bits per key: seen at least 1 \/ 10 \/ 100 \/ 1,000 \/ 100,000 times \(a member's exact; a false positive's arbitrary\)/);
    const json = JSON.parse(cli(['inspect', 'pwned.bgf', '--json']).stdout);
    assert.deepEqual(json.values, { bits: 3, meaning: 'seen-at-least', buckets: BUCKETS });
    assert.equal('values' in JSON.parse(cli(['inspect', 'plain.bgf', '--json']).stdout), false);
    const merged = cli(['merge', '-o', 'merged.bgf', 'pwned.bgf', 'pwned.bgf'], 65);
    assert.match(merged.stderr, /pwned\.bgf: a filter with values \(fuse4, 3 value bits per key\) cannot be merged.*\(E_UNSUPPORTED\)/);
  });
});

describe('URLs: a second, tab-separated column names the threat', () => {
  let server;
  before(async () => {
    writeFileSync(path('urls.txt'), urlLines(URLS));
    // The server's store lists the first URL as malware where the filter says phishing: what the escalation says wins.
    writeFileSync(path('urls-relabelled.txt'), urlLines(URLS.map((entry, i) => (i === 0 ? { ...entry, label: 'malware' } : entry))));
  });
  after(() => server?.close());

  it('stores each URL\'s label as its value, the labels in the metadata and the store', async () => {
    const { stderr } = cli(['build', 'urls.txt', '--format', 'urls', '--store', 'urls.bgs', '--list-id', LIST_ID, '-o', 'urls.bgf']);
    assert.match(stderr, /values: 2 bits per key, threat phishing \/ malware \/ unwanted/);
    const filter = await loadFile('urls.bgf');
    try {
      assert.equal(filter.kind, 'fuse4');
      assert.equal(filter.valueBits, 2);
      assert.deepEqual(filter.metadata.values, { meaning: 'threat', labels: LABELS });
      let exact = 0;
      for (const { url, label } of URLS) {
        const result = await checkUrl(url, { filter });
        if (result.listed && result.threat === label && result.confirmed === false) exact++;
      }
      assert.equal(exact, URLS.length, 'every listed URL gets its exact label, unconfirmed');
      assert.deepEqual(await checkUrl('http://clean.example/', { filter }), { listed: false, expression: null, escalated: false, confirmed: true, threat: null });
    } finally {
      filter.free();
    }
    const { stdout } = cli(['inspect', 'urls.bgf']);
    assert.match(stdout, /values\s+2 bits per key: threat phishing \/ malware \/ unwanted/);
  });

  it('serve: the manifest carries the labels, /hashes rows HASH:VALUE, and checkUrl takes the server\'s label', async () => {
    cli(['build', 'urls-relabelled.txt', '--format', 'urls', '--store', 'relabelled.bgs', '--list-id', LIST_ID, '-o', 'relabelled.bgf', '-q']);
    server = await serve({ urlStore: path('relabelled.bgs') });
    const manifest = await (await fetch(`${server.url}/hashes/manifest.json`)).json();
    assert.deepEqual(manifest.values, { meaning: 'threat', labels: ['malware', 'unwanted', 'phishing'] }, 'labels in first-appearance order');
    const hash = Buffer.from(sha256('threat-0.example/path/0/')).toString('hex');
    const reply = await (await fetch(`${server.url}/hashes/${hash.slice(0, 8)}`)).text();
    assert.ok(reply.split('\n').includes(`${hash}:0`), reply);

    const filter = await loadFile('urls.bgf');
    try {
      const first = await checkUrl(URLS[0].url, { filter, hashesUrl: `${server.url}/hashes` });
      assert.deepEqual(first, { listed: true, expression: 'threat-0.example/path/0/', escalated: true, confirmed: true, threat: 'malware' }, "the server's label, not the filter's phishing");
      for (const { url, label } of URLS.slice(1, 30)) {
        const result = await checkUrl(url, { filter, hashesUrl: `${server.url}/hashes` });
        assert.equal(result.threat, label, url);
        assert.equal(result.confirmed, true);
      }
      const clean = await checkUrl('http://clean.example/', { filter, hashesUrl: `${server.url}/hashes` });
      assert.equal(clean.listed, false);
    } finally {
      filter.free();
    }
  });

  it('export-ranges: the static files and manifest carry the values too, and an old unlabelled endpoint still answers', async () => {
    cli(['export-ranges', 'relabelled.bgs', '-o', 'export', '-q']);
    const manifest = JSON.parse(readFileSync(path('export/hashes/manifest.json'), 'utf8'));
    assert.deepEqual(manifest.values, { meaning: 'threat', labels: ['malware', 'unwanted', 'phishing'] });
    // Mounted under /static/: the server's own /hashes routes answer only from a store.
    const staticServer = await serve({ staticDir: [{ prefix: '/static/', dir: path('export') }] });
    const filter = await loadFile('urls.bgf');
    try {
      const first = await checkUrl(URLS[0].url, { filter, hashesUrl: `${staticServer.url}/static/hashes` });
      assert.equal(first.threat, 'malware');
      assert.equal(first.confirmed, true);
    } finally {
      await staticServer.close();
    }
    // An endpoint over an unlabelled store (no `values`, bare rows): listed is confirmed, the threat is the filter's.
    writeFileSync(path('urls-plain.txt'), `${URLS.map(({ url }) => url).join('\n')}\n`);
    cli(['build', 'urls-plain.txt', '--format', 'urls', '--store', 'plain-urls.bgs', '--list-id', LIST_ID, '-o', 'plain-urls.bgf', '-q']);
    const plainServer = await serve({ urlStore: path('plain-urls.bgs') });
    try {
      const manifest2 = await (await fetch(`${plainServer.url}/hashes/manifest.json`)).json();
      assert.equal('values' in manifest2, false);
      const result = await checkUrl(URLS[0].url, { filter, hashesUrl: `${plainServer.url}/hashes` });
      assert.deepEqual(result, { listed: true, expression: 'threat-0.example/path/0/', escalated: true, confirmed: true, threat: 'phishing' });
      const plainFilter = await loadFile('plain-urls.bgf');
      assert.equal('threat' in await checkUrl(URLS[0].url, { filter: plainFilter, hashesUrl: `${plainServer.url}/hashes` }), false, 'no values anywhere: the result as before');
      plainFilter.free();
    } finally {
      filter.free();
      await plainServer.close();
    }
  });
});

describe('URL lists from a pipe', () => {
  it('a threat column is seen on the first chunk of stdin, with or without --capacity; a plain list stays plain', async () => {
    const text = urlLines(URLS);
    for (const extra of [[], ['--capacity', '500'], ['--capacity', '500', '--value-bits', '4']]) {
      const result = runCli(scratch.dir, ['build', '-', '--format', 'urls', ...extra, '-o', 'piped.bgf'], { input: text });
      assert.equal(result.status, 0, result.stderr);
      const filter = await loadFile('piped.bgf');
      try {
        assert.equal(filter.valueBits, extra.includes('--value-bits') ? 4 : 2, extra.join(' '));
        assert.deepEqual(filter.metadata.values, { meaning: 'threat', labels: LABELS });
        const wrong = [];
        for (const { url, label } of URLS) if ((await checkUrl(url, { filter })).threat !== label) wrong.push(url);
        assert.deepEqual(wrong, [], extra.join(' '));
      } finally {
        filter.free();
      }
    }
    // Empty lines first, then labels; and a plain list through a pipe with --capacity.
    const padded = runCli(scratch.dir, ['build', '-', '--format', 'urls', '--capacity', '500', '-o', 'padded.bgf', '-q'], { input: `\n\r\n\n${text}` });
    assert.equal(padded.status, 0, padded.stderr);
    const paddedFilter = await loadFile('padded.bgf');
    assert.equal(paddedFilter.valueBits, 2);
    paddedFilter.free();
    const plain = runCli(scratch.dir, ['build', '-', '--format', 'urls', '--capacity', '500', '-o', 'piped-plain.bgf', '-q'], { input: `${URLS.map(({ url }) => url).join('\n')}\n` });
    assert.equal(plain.status, 0, plain.stderr);
    const plainFilter = await loadFile('piped-plain.bgf');
    try {
      assert.equal(plainFilter.kind, 'classic');
      assert.equal((await checkUrl(URLS[3].url, { filter: plainFilter })).listed, true);
    } finally {
      plainFilter.free();
    }
    const noColumn = runCli(scratch.dir, ['build', '-', '--format', 'urls', '--value-bits', '2', '-o', 'bad.bgf'], { input: 'http://a.example/\n' });
    assert.equal(noColumn.status, 64);
    assert.match(noColumn.stderr, /--value-bits: the input has no threat column/);
  });
});

describe('a signed labelled endpoint (serve --sign, export-ranges --sign)', () => {
  it('its signature covers the labels: with keys the threat is confirmed, a "not listed" proven, forged labels refused', async () => {
    const { generateKeyFile, readSigningKeys, signAll } = await import('../../js/cli/signing.js');
    await generateKeyFile(path('publisher.key'));
    const [publisher] = await readSigningKeys([path('publisher.key')]);
    const keys = [publisher.id];
    const server = await serve({ urlStore: path('urls.bgs'), sign: (bytes) => signAll(bytes, [publisher]) });
    const filter = await loadFile('urls.bgf');
    try {
      const manifest = await (await fetch(`${server.url}/hashes/manifest.json`)).json();
      assert.equal(manifest.version, 2);
      assert.deepEqual(manifest.values, { meaning: 'threat', labels: LABELS });
      const listed = await checkUrl(URLS[4].url, { filter, hashesUrl: `${server.url}/hashes`, keys, listId: LIST_ID });
      assert.deepEqual(listed, { listed: true, expression: 'threat-4.example/path/4/', escalated: true, confirmed: true, threat: URLS[4].label });
      // A "maybe" the store does not hold (a store of the list without URL 7): "not listed", proven against the signed root.
      writeFileSync(path('urls-minus.txt'), urlLines(URLS.filter((_, i) => i !== 7)));
      cli(['build', 'urls-minus.txt', '--format', 'urls', '--store', 'minus.bgs', '--list-id', LIST_ID, '-o', 'minus.bgf', '-q']);
      const minus = await serve({ urlStore: path('minus.bgs'), sign: (bytes) => signAll(bytes, [publisher]) });
      try {
        const notListed = await checkUrl(URLS[7].url, { filter, hashesUrl: `${minus.url}/hashes`, keys, listId: LIST_ID });
        assert.deepEqual(notListed, { listed: false, expression: null, escalated: true, confirmed: true, threat: null });
      } finally {
        await minus.close();
      }

      // The same manifest with its labels swapped: the signature no longer holds.
      cli(['export-ranges', 'urls.bgs', '-o', 'signed-export', '--sign', 'publisher.key', '-q']);
      const exported = path('signed-export/hashes/manifest.json');
      const forged = JSON.parse(readFileSync(exported, 'utf8'));
      forged.values.labels = ['malware', 'phishing', 'unwanted'];
      writeFileSync(exported, JSON.stringify(forged));
      const staticServer = await serve({ staticDir: [{ prefix: '/static/', dir: path('signed-export') }] });
      try {
        // A listed URL escalates (a clean one never asks): the forged manifest is refused before any reply counts.
        await assert.rejects(checkUrl(URLS[0].url, { filter, hashesUrl: `${staticServer.url}/static/hashes`, keys, listId: LIST_ID }),
          (error) => error.code === 'E_ESCALATION' && /signature/i.test(error.message));
      } finally {
        await staticServer.close();
      }
    } finally {
      filter.free();
      await server.close();
    }
  });
});

describe('generations of a value filter: diff, patch, publish and openFilter keep the values', () => {
  it('a relabelled URL travels as a delta; after the update every value is intact', async () => {
    const common = ['--format', 'urls', '--list-id', LIST_ID, '--capacity', '300', '--seed', '7', '-q'];
    writeFileSync(path('gen0.txt'), urlLines(URLS));
    const next = URLS.map((entry, i) => (i === 5 ? { ...entry, label: 'unwanted' } : entry));
    writeFileSync(path('gen1.txt'), urlLines(next));
    cli(['build', 'gen0.txt', ...common, '--generation', '0', '-o', 'gen0.bgf']);
    cli(['build', 'gen1.txt', ...common, '--generation', '1', '-o', 'gen1.bgf']);
    cli(['diff', 'gen0.bgf', 'gen1.bgf', '-o', 'gen.bgd']);
    cli(['patch', 'gen0.bgf', 'gen.bgd', '-o', 'patched.bgf']);
    assert.deepEqual(readFileSync(path('patched.bgf')), readFileSync(path('gen1.bgf')), 'patch gives the new generation, byte for byte');

    cli(['publish', 'gen0.bgf', '--dir', 'site', '--min-refresh', '0']);
    const site = await serve({ staticDir: path('site') });
    const live = await openFilter(`${site.url}/manifest.json`, { storage: false });
    try {
      assert.equal(live.generation, 0);
      assert.equal((await checkUrl(URLS[5].url, { filter: live })).threat, URLS[5].label);
      cli(['publish', 'gen1.bgf', '--dir', 'site', '--min-refresh', '0']);
      const deltaBytes = readFileSync(path('gen.bgd')).length;
      const fileBytes = readFileSync(path('gen1.bgf')).length;
      const outcome = await live.refresh();
      assert.equal(live.generation, 1);
      // A relabel changes few fingerprints: the delta is small enough to publish, and it is taken.
      assert.ok(deltaBytes < fileBytes / 2, `delta ${deltaBytes} bytes, file ${fileBytes}`);
      assert.equal(outcome.source, 'delta');
      let exact = 0;
      for (const { url, label } of next) if ((await checkUrl(url, { filter: live })).threat === label) exact++;
      assert.equal(exact, next.length, 'every value intact after the update, the relabelled one new');
      assert.equal((await checkUrl(URLS[5].url, { filter: live })).threat, 'unwanted');
      // The live filter answers values itself, from the generation in use.
      assert.ok(live.valueBits >= 1);
      assert.equal(typeof live.valueOf(next[5].url), 'number');
      const valueOfLabel = new Map();
      for (const { url, label } of next) {
        const value = live.valueOf(url);
        assert.equal(typeof value, 'number', url);
        if (!valueOfLabel.has(label)) valueOfLabel.set(label, value);
        assert.equal(value, valueOfLabel.get(label), `${url}: one value per label`);
      }
      assert.equal(new Set(valueOfLabel.values()).size, valueOfLabel.size, 'distinct labels, distinct values');
    } finally {
      live.close();
      await site.close();
    }
  });
});

describe('bad input: usage errors that name the limit, malformed lines with their number', () => {
  const usage = [
    [['--format', 'hibp', '--buckets', '10,1'], /--buckets must be ascending: bound 2 \(1\) is not above bound 1 \(10\)/],
    [['--format', 'hibp', '--buckets', ''], /--buckets needs at least one bound/],
    [['--format', 'hibp', '--buckets', '1,ten'], /bound 2 'ten' is not a positive integer/],
    [['--format', 'hibp', '--buckets', '1,1.5'], /not a positive integer/],
    [['--format', 'hibp', '--buckets', Array.from({ length: 257 }, (_, i) => i + 1).join(',')], /257 bounds are more than 256 \(2\^8/],
    [['--format', 'hibp', '--buckets', '1,10,100,1000,10000', '--value-bits', '2'], /5 buckets do not fit --value-bits 2 \(at most 2\^2 = 4 classes/],
    [['--format', 'hibp', '--buckets', '1,10', '--value-bits', '9'], /invalid --value-bits '9': a value holds 1 to 8 bits/],
    [['--format', 'hibp', '--buckets', '1,10', '--kind', 'classic'], /only --kind fuse4 does; --kind classic cannot/],
    [['--format', 'hibp', '--buckets', '1,10', '--kind', 'fuse8'], /--kind fuse8 cannot/],
    [['--format', 'hibp', '--buckets', '10,100', '--min-count', '5'], /--min-count 5 contradicts --buckets/],
    [['--format', 'lines', '--buckets', '1,10'], /--buckets applies only to --format hibp/],
    [['--format', 'hibp', '--value-bits', '3'], /--value-bits sets the width of values: it needs --buckets/],
  ];
  it('a rate below what a fingerprint kind reaches: exit 64 naming its lowest rate', () => {
    for (const [kind, rate, limit] of [['fuse4', '1e-12', /--kind fuse4 reaches rates down to 2\^-32 \(2\.33e-10\)/], ['fuse8', '0.001', /--kind fuse8 reaches only its natural rate 2\^-8/]]) {
      const { stderr } = cli(['build', 'pwned.txt', '--format', 'hibp', '--kind', kind, '--error-rate', rate, '-o', 'bad.bgf'], 64);
      assert.match(stderr, limit, kind);
    }
  });

  it('--buckets, --value-bits and --kind: exit 64', () => {
    for (const [args, message] of usage) {
      const { stderr } = cli(['build', 'pwned.txt', ...args, '-o', 'bad.bgf'], 64);
      assert.match(stderr, message, args.join(' '));
      assert.match(stderr, /\(E_USAGE\)/);
    }
  });

  it('a threat column with more labels than the values hold: exit 64 naming the limit and the line', () => {
    writeFileSync(path('five.txt'), urlLines(['a', 'b', 'c', 'd', 'e'].map((label, i) => ({ url: `http://five-${i}.example/`, label }))));
    const { stderr } = cli(['build', 'five.txt', '--format', 'urls', '--value-bits', '2', '-o', 'bad.bgf'], 64);
    assert.match(stderr, /line 5: threat label "e" is label 5, more than 2\^2 = 4, what --value-bits 2 holds/);
    writeFileSync(path('many.txt'), urlLines(Array.from({ length: 257 }, (_, i) => ({ url: `http://many-${i}.example/`, label: `class-${i}` }))));
    const many = cli(['build', 'many.txt', '--format', 'urls', '-o', 'bad.bgf'], 64);
    assert.match(many.stderr, /line 257: threat label "class-256" is label 257, more than 256, the most a value holds \(2\^8: at most 8 bits\)/);
    const kind = cli(['build', 'five.txt', '--format', 'urls', '--kind', 'blocked', '-o', 'bad.bgf'], 64);
    assert.match(kind.stderr, /a threat column \(--format urls, URL<TAB>THREAT lines\) stores a value with each key, which only --kind fuse4 does; --kind blocked cannot/);
  });

  it('malformed value columns: exit 65 with the line number; --skip-invalid skips them', async () => {
    const cases = [
      ['http://a.example/\tphishing\nhttp://b.example/\n', /line 2: expected URL<TAB>THREAT \(the first line has a threat label\)/],
      ['http://a.example/\nhttp://b.example/\tmalware\n', /line 2: a second, tab-separated column \(a threat label\), but the first line has none/],
      ['http://a.example/\tphishing\nhttp://b.example/\tmal\tware\n', /line 2: expected URL<TAB>THREAT, got more than two columns/],
      ['http://a.example/\tphishing\nhttp://b.example/\t\n', /line 2: threat label "" is not 1 to 64 bytes/],
      ['http://a.example/\tphishing\n\tmalware\n', /line 2: no URL before the threat label/],
      [`http://a.example/\tphishing\nhttp://b.example/\t${'x'.repeat(65)}\n`, /line 2: threat label "x{40,}.*is not 1 to 64 bytes/],
      ['http://a.example/\tphishing\nhttp://A.example/\tmalware\n', /line 2: "http:\/\/A.example\/" is labelled "malware", but line 1 lists the same expression as "phishing"/],
    ];
    for (const [text, message] of cases) {
      writeFileSync(path('bad.txt'), text);
      const { stderr } = cli(['build', 'bad.txt', '--format', 'urls', '-o', 'bad.bgf'], 65);
      assert.match(stderr, message, JSON.stringify(text));
    }
    writeFileSync(path('skip.txt'), 'http://a.example/\tphishing\nhttp://b.example/\nhttp://c.example/\tmalware\n');
    const { stderr } = cli(['build', 'skip.txt', '--format', 'urls', '--skip-invalid', '-o', 'skip.bgf']);
    assert.match(stderr, /skipped 1 invalid line \(line 2\)/);
    const filter = await loadFile('skip.bgf');
    try {
      assert.equal((await checkUrl('http://c.example/', { filter })).threat, 'malware');
      assert.equal((await checkUrl('http://b.example/', { filter })).listed, false);
    } finally {
      filter.free();
    }
  });
});

it('BloomFilter is the one the CLI wrote with (a sanity check of the import)', () => {
  assert.equal(typeof BloomFilter.create, 'function');
});
