// The URL checker page's first question (examples/url-checker/url-input.js):
// is what a person typed a web address at all? The library canonicalizes
// nearly any text the Safe Browsing way, so the page must say "not a URL" itself.
// (tests/browser/phone.test.mjs checks the page shows it.)
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { readUrl } from '../../examples/url-checker/url-input.js';
import { canonicalizeUrl, init } from '../../js/index.js';

const notUrls = {
  '': /nothing was entered/,
  '   ': /nothing was entered/,
  'not a url': /no spaces/,
  'hello world': /no spaces/,
  'https://exa mple.com/': /no spaces/,
  hello: /no domain/,
  www: /no domain/,
  'javascript:alert(1)': /"javascript:" is not a web address/,
  'mailto:someone@example.com': /"mailto:" is not a web address/,
  'data:text/html,hi': /"data:" is not a web address/,
  'file:///etc/passwd': /"file:" is not a web address/,
  'C:\\Windows\\system32': /"C:" is not a web address/,
  'someone@example.com': /email address/,
  12345: /not a host name or an address/,
  1.2: /not a host name or an address/,
  '....': /malformed/,
  'a..b': /malformed/,
  'http://': /cannot be read/,
  '#frag': /cannot be read/,
};

const urls = {
  'example.com': 'http://example.com/',
  '  www.example.com/login?next=/wallet#top ': 'http://www.example.com/login?next=/wallet',
  'EXAMPLE.COM/Path': 'http://example.com/Path',
  'example.com:8080/x': 'http://example.com/x',
  'example.com.': 'http://example.com/',
  'localhost:3000': 'http://localhost/',
  '1.2.3.4/admin': 'http://1.2.3.4/admin',
  '[::1]:8080/': 'http://[::1]/',
  'bücher.example/x': 'http://xn--bcher-kva.example/x',
  'https://example.com': 'https://example.com/',
  'https:/example.com': 'https://example.com/',
  'ftp://files.example.org/a.txt': 'ftp://files.example.org/a.txt',
  // Phishing links use every form a browser opens: credentials, one-label and numeric hosts.
  'https://paypal.com@evil.example/login': 'https://evil.example/login',
  'http://intranet/': 'http://intranet/',
  'http://12345/': 'http://0.0.48.57/',
  'http://exa_mple.com/': 'http://exa_mple.com/',
};

test('what no one would call a URL gets a reason', async () => {
  await init();
  for (const [text, reason] of Object.entries(notUrls)) {
    const read = readUrl(text);
    assert.equal(read.url, undefined, JSON.stringify(text));
    assert.match(read.notUrl, reason, JSON.stringify(text));
  }
  // The reason for the page's check: the library itself makes a URL of such text.
  assert.equal(canonicalizeUrl('not a url'), 'http://not%20a%20url/');
  assert.equal(canonicalizeUrl('hello'), 'http://hello/');
});

test('web addresses, with or without a scheme, pass and canonicalize', async () => {
  await init();
  for (const [text, url] of Object.entries(urls)) {
    const read = readUrl(text);
    assert.deepEqual(read, { url: /^[a-z]+:\//.test(text) ? text : `http://${text.trim()}` }, text);
    assert.equal(canonicalizeUrl(read.url), url, text);
  }
});
