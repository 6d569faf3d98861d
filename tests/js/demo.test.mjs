// The README's main-job command, end to end: `npm run demo -- --once`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const DEMO = fileURLToPath(new URL('../../examples/demo.mjs', import.meta.url));

test('the demo builds both filters, serves them and reports its scripted run', () => {
  const result = spawnSync(process.execPath, [DEMO, '--once', '--port', '0'], { encoding: 'utf8', timeout: 180000 });
  assert.equal(result.status, 0, result.stderr);
  const out = result.stdout;
  assert.match(out, /serving http:\/\/127\.0\.0\.1:\d+\//);
  assert.match(out, /passwords\.bgf\s+49,\d{3} common passwords/);
  assert.match(out, /urls\.bgf\s+13,\d{3} phishing domains/);
  const row = (name) => {
    const match = new RegExp(`^${name}\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)$`, 'm').exec(out);
    assert.ok(match, `no ${name} row in:\n${out}`);
    const [checks, local, escalated, listed, falsePositives] = match.slice(1).map(Number);
    return { checks, local, escalated, listed, falsePositives };
  };
  for (const name of ['passwords', 'urls']) {
    const r = row(name);
    assert.equal(r.checks, 1200);
    assert.equal(r.local + r.escalated, r.checks);
    assert.equal(r.listed, 200, 'every listed sample is found: no false negatives');
    assert.equal(r.escalated, r.listed + r.falsePositives);
    assert.ok(r.falsePositives <= 30, `${name}: ${r.falsePositives} false positives among 1000 clean checks`);
  }
  assert.match(out, /^false negatives: 0$/m);
});
