import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { BloomFilter, BloomgateError, canonicalizeUrl, checkUrl, init, urlExpressions } from '../../js/index.js';

const vectors = JSON.parse(readFileSync(new URL('../golden/url_vectors.json', import.meta.url), 'utf8'));
const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
const LISTED = ['evil.example/', 'bad.example/phish/', '1.2.3.4/malware/x.exe'];
const LIST_ID = '5eed0000000000000000000000000001';
// What `bloomgate export-ranges` writes for a URL store: files only for prefixes with hashes.
const MANIFEST = { format: 'bloomgate-escalation', version: 1, protocol: 'hashes', hashType: 'sha256', listId: LIST_ID,
  generation: 0, records: LISTED.length, minCount: 0, padding: 'none', notFound: 'empty' };

let server;
let base;
let requests;
let mode = 'ok';
let filter;

before(async () => {
  await init();
  const byPrefix = new Map();
  for (const expression of LISTED) {
    const hash = sha256(expression);
    byPrefix.set(hash.slice(0, 8), [...(byPrefix.get(hash.slice(0, 8)) ?? []), hash]);
  }
  requests = [];
  server = createServer((req, res) => {
    if (req.url === '/hashes/manifest.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(MANIFEST));
    requests.push({ url: req.url, headers: req.headers });
    const match = /^\/hashes\/([0-9a-f]{8})$/.exec(req.url);
    if (mode === 'down') return res.destroy();
    if (mode === 'malformed') return res.writeHead(200, { 'content-type': 'text/plain' }).end('zz\n');
    if (mode === 'wrong-prefix') return res.writeHead(200, { 'content-type': 'text/plain' }).end(`${'f'.repeat(64)}\n`);
    if (!match) return res.writeHead(400).end();
    const hashes = byPrefix.get(match[1]);
    if (!hashes) return res.writeHead(404).end(); // static hosting: no file for this prefix
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`${hashes.join('\n')}\n`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/hashes`;
  filter = await BloomFilter.create({ capacity: 100, errorRate: 0.001, keyEncoding: 'url', listId: LIST_ID });
  for (const expression of LISTED) filter.add(expression);
});

after(async () => {
  filter.free();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// A JS string holds code points, not bytes: an input that is not UTF-8 (inputHex) reaches the core
// with its bytes >= 0x80 percent-escaped, which the core's unescaping undoes before anything else.
function inputOf({ input, inputHex }) {
  if (input !== undefined) return input;
  let text = '';
  for (const byte of Buffer.from(inputHex, 'hex')) {
    text += byte < 0x80 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase()}`;
  }
  return text;
}

// The core escapes a non-ASCII host byte by byte (its contract, and the C vectors'); JS first turns
// a valid IDN into punycode with the platform URL parser, and leaves any other host to the core.
function canonicalInJs(canonical) {
  const [, scheme, host, rest] = /^([a-z]+:\/\/)([^/]*)(.*)$/s.exec(canonical);
  let decoded;
  try {
    decoded = decodeURIComponent(host);
  } catch {
    return canonical;
  }
  // eslint-disable-next-line no-control-regex -- the range starts at U+0000 on purpose: any non-ASCII unit
  if (!/[^\x00-\x7f]/.test(decoded)) return canonical;
  try {
    return scheme + new URL(`http://${decoded}/`).hostname + rest;
  } catch {
    return canonical;
  }
}

test('canonicalization matches every shared vector (the same C code as the builder)', () => {
  for (const vector of vectors.canonicalize) {
    const text = inputOf(vector);
    assert.equal(canonicalizeUrl(text), canonicalInJs(vector.canonical), `${JSON.stringify(text)} (${vector.source})`);
  }
  for (const { url, expressions } of vectors.expressions) assert.deepEqual(urlExpressions(url), expressions, url);
  for (const vector of vectors.invalid) {
    const text = inputOf(vector);
    const isUrlError = (e) => e instanceof BloomgateError && e.code === 'E_URL';
    assert.throws(() => canonicalizeUrl(text), isUrlError, `${JSON.stringify(text)} (${vector.source})`);
    assert.throws(() => urlExpressions(text), isUrlError, `${JSON.stringify(text)} (${vector.source})`);
  }
});

test('only http, https, ftp, ws and wss have a canonical form; other schemes are E_URL, never http://', async () => {
  for (const url of ['mailto:alice@evil.example', 'gopher:8999', 'gopher://evil.example/', 'javascript:alert(1)',
    'data:text/html,<p>', 'file:///etc/passwd', 'MAILTO:a@b.example', 'localhost:8080']) {
    assert.throws(() => canonicalizeUrl(url), { name: 'BloomgateError', code: 'E_URL' }, url);
    assert.throws(() => urlExpressions(url), { name: 'BloomgateError', code: 'E_URL' }, url);
    await assert.rejects(checkUrl(url, { filter }), { code: 'E_URL' }, url);
  }
  // Without a scheme a URL is still read as http://, and a dotted name before ':' is a host.
  assert.equal(canonicalizeUrl('evil.example/login'), 'http://evil.example/login');
  assert.equal(canonicalizeUrl('evil.example:8080/login'), 'http://evil.example/login');
  assert.deepEqual(urlExpressions('ws://evil.example/x'), ['evil.example/x', 'evil.example/']);
});

test('IDN hosts become punycode first (the one step left to the platform URL parser)', () => {
  assert.equal(canonicalizeUrl('http://bücher.example/Straße'), 'http://xn--bcher-kva.example/Stra%C3%9Fe');
  assert.equal(canonicalizeUrl('http://B%C3%BCcher.example/'), 'http://xn--bcher-kva.example/');
  assert.equal(canonicalizeUrl('http://user@münchen.example:8080/'), 'http://xn--mnchen-3ya.example/');
  assert.equal(canonicalizeUrl('http://www.ümlat.com/'), 'http://www.xn--mlat-zra.com/'); // Go client's vector
  assert.throws(() => canonicalizeUrl(42), TypeError);
});

test('a non-ASCII host the URL parser refuses is percent-escaped by the core, not rejected', () => {
  // The specification's "http://\x01\x80.com/" -> "http://%01%80.com/"; a JS string carries
  // U+0080, whose UTF-8 is C2 80. The byte 0x80 itself can only arrive escaped.
  assert.equal(canonicalizeUrl('http://\x01\x80.com/'), 'http://%01%C2%80.com/');
  assert.equal(canonicalizeUrl('http://\x01%80.com/'), 'http://%01%80.com/');
  assert.equal(canonicalizeUrl('http://%01%C2%80.com/'), 'http://%01%C2%80.com/');
  assert.equal(canonicalizeUrl('http://exa mple.例\u0000/'), 'http://exa%20mple.%E4%BE%8B%00/');
  assert.equal(canonicalizeUrl('http:// bücher.example/'), 'http://%20b%C3%BCcher.example/');
  assert.equal(canonicalizeUrl('http://<bücher>.example/a'), 'http://<b%C3%BCcher>.example/a');
  // An escaped '#' or '/' inside the host: the parser would read a part of it; the core keeps it all.
  assert.equal(canonicalizeUrl('http://bü%23cher.example/'), 'http://b%C3%BC%23cher.example/');
  assert.equal(canonicalizeUrl('http://b%C3%BCcher.example%2Fx/'), 'http://b%C3%BCcher.example/x/');
  assert.deepEqual(urlExpressions('http://www.a\x01é.example/x'),
    ['www.a%01%C3%A9.example/x', 'www.a%01%C3%A9.example/', 'a%01%C3%A9.example/x', 'a%01%C3%A9.example/']);
});

test('at most 30 expressions, most specific first', () => {
  const many = urlExpressions('http://a.b.c.d.e.f.g/1/2/3/4/5/6/7.html?q=1');
  assert.ok(many.length <= 30);
  assert.equal(many[0], 'a.b.c.d.e.f.g/1/2/3/4/5/6/7.html?q=1');
  assert.equal(new Set(many).size, many.length);
});

test('a listed URL escalates only 4-byte hash prefixes and is confirmed', async () => {
  requests.length = 0;
  const result = await checkUrl('https://www.evil.example/login?user=alice#top', { filter, hashesUrl: base });
  assert.deepEqual(result, { listed: true, expression: 'evil.example/', escalated: true, confirmed: true });
  assert.ok(requests.length >= 1);
  for (const request of requests) {
    assert.match(request.url, /^\/hashes\/[0-9a-f]{8}$/);
    assert.ok(!JSON.stringify(request).includes('evil'), 'the URL never leaves');
    assert.ok(!JSON.stringify(request).includes('alice'));
  }
  assert.equal((await checkUrl('http://0x01020304/malware/x.exe', { filter, hashesUrl: base })).listed, true);
});

test('clean URLs answer locally; a "maybe" the server does not list is a false positive', async () => {
  requests.length = 0;
  let escalated = 0;
  for (let i = 0; i < 300; i++) {
    const result = await checkUrl(`https://shop-${i}.example.org/cart?item=${i}`, { filter, hashesUrl: base });
    assert.equal(result.listed, false);
    if (result.escalated) escalated++;
  }
  assert.equal(requests.length, escalated);
  assert.ok(escalated <= 3, `${escalated} of 300 escalated at p = 0.001`);
  const everything = { mightContainKey: () => true, keyEncoding: 'url', listId: LIST_ID, generation: 0 };
  const fp = await checkUrl('https://good.example/', { filter: everything, hashesUrl: base });
  assert.deepEqual(fp, { listed: false, expression: null, escalated: true, confirmed: true });
});

test('without hashesUrl the filter answers alone and says so', async () => {
  assert.deepEqual(await checkUrl('http://bad.example/phish/page', { filter }), { listed: true, expression: 'bad.example/phish/', escalated: false, confirmed: false });
  assert.deepEqual(await checkUrl('http://fine.example/', { filter }), { listed: false, expression: null, escalated: false, confirmed: true });
});

test('malformed replies, wrong prefixes and failures are E_ESCALATION, never an answer', async () => {
  for (const m of ['malformed', 'wrong-prefix', 'down']) {
    mode = m;
    try {
      await assert.rejects(checkUrl('https://evil.example/', { filter, hashesUrl: base }), (e) => e.code === 'E_ESCALATION', m);
    } finally {
      mode = 'ok';
    }
  }
});

test('bad arguments', async () => {
  await assert.rejects(checkUrl('http://x/', {}), TypeError);
  const utf8 = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
  await assert.rejects(checkUrl('http://x/', { filter: utf8 }), { code: 'E_KEY_ENCODING' });
  utf8.free();
  await assert.rejects(checkUrl('http://[::1', { filter }), { code: 'E_URL' });
});
