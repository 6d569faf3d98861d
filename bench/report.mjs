// Markdown for the benchmark results: the per-operation table, load and size
// figures, and the targets as ratios with PASS/FAIL.

const fmtNs = (v) => (v == null ? '–' : v >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1));
const fmtMs = (v) => (v == null ? '–' : v.toFixed(v < 1 ? 3 : 2));
const fmtBits = (v) => (v == null ? '–' : v.toFixed(2));
const fmtRate = (v) => (v == null ? '–' : `${(v * 100).toFixed(3)} %`);
const fmtRatio = (v) => (v == null ? '–' : `${v.toFixed(3)}×`);
const fmtBytes = (v) => (v == null ? '–' : v.toLocaleString('en-US'));

function table(header, rows) {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i ? '---:' : ':---')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** Evaluate a target: ratio = measured / reference, pass when ratio <= limit. */
export function target(name, measured, reference, limit, detail) {
  if (measured == null || reference == null) return { name, ratio: null, limit, result: 'SKIP', detail };
  const ratio = measured / reference;
  return { name, ratio, limit, result: ratio <= limit ? 'PASS' : 'FAIL', detail };
}

export function renderReport(r) {
  const out = [];
  const c = r.config;
  out.push('# bloomgate benchmark');
  out.push('');
  out.push(`- Date: ${r.machine.date}`);
  out.push(`- Node ${r.machine.node} (V8 ${r.machine.v8}), ${r.machine.platform}`);
  out.push(`- CPU: ${r.machine.cpu} × ${r.machine.cores} logical cores; 1-minute load average ${r.machine.loadStart.toFixed(2)} at start, ${r.machine.loadEnd.toFixed(2)} at end (other work on the machine inflates and scatters every figure)`);
  out.push(`- Command: \`${r.command}\`${c.quick ? ' (quick mode: fewer rounds, bloom-filters only partly filled)' : ''}`);
  out.push(
    `- Keys: ${c.n.toLocaleString('en-US')} members \`${r.keys.example}\` (${r.keys.length} bytes each) and ` +
      `${c.n.toLocaleString('en-US')} never-inserted probes of the same shape; capacity ${c.n.toLocaleString('en-US')}, p = ${c.errorRate}`,
  );
  out.push(
    `- Method: median of ${c.rounds} rounds, cases interleaved; each measurement repeats whole passes for ≥ ${c.minMs} ms; ` +
      `batches of ${c.batch} keys; bloom-filters timed on ${c.bfsSubset.toLocaleString('en-US')}-key subsets`,
  );
  out.push('');

  const v = r.values;
  const peers = r.versions;
  out.push('## Time per key (ns, lower is better)');
  out.push('');
  out.push(
    table(
      ['Operation', 'bloomgate (wasm)', `bloomfilter ${peers.bloomfilter}`, `bloom-filters ${peers.bloomFilters}`, 'C core (native)'],
      [
        ['insert `add(string)`', fmtNs(v.bg.add), fmtNs(v.bf.add), fmtNs(v.bfs.add), fmtNs(v.native?.add_ns)],
        ['insert, batch (`addAll` / `add_many`)', fmtNs(v.bg.addAll), '–', '–', fmtNs(v.native?.add_many_ns)],
        ['query `mightContain(string)`, member', fmtNs(v.bg.member), fmtNs(v.bf.member), fmtNs(v.bfs.member), fmtNs(v.native?.contains_member_ns)],
        ['query `mightContain(string)`, non-member', fmtNs(v.bg.nonmember), fmtNs(v.bf.nonmember), fmtNs(v.bfs.nonmember), fmtNs(v.native?.contains_nonmember_ns)],
        ['query `mightContain(Uint8Array)`, member', fmtNs(v.bg.u8member), '–', '–', '–'],
        ['query `mightContain(Uint8Array)`, non-member', fmtNs(v.bg.u8nonmember), '–', '–', '–'],
        ['`mightContainMany(strings)`, member', fmtNs(v.bg.manyStrMember), '–', '–', '–'],
        ['`mightContainMany(strings)`, non-member', fmtNs(v.bg.manyStrNonmember), '–', '–', '–'],
        ['`mightContainMany(Uint8Array[])` / `contains_many`, member', fmtNs(v.bg.manyU8Member), '–', '–', fmtNs(v.native?.contains_many_member_ns)],
        ['`mightContainMany(Uint8Array[])` / `contains_many`, non-member', fmtNs(v.bg.manyU8Nonmember), '–', '–', fmtNs(v.native?.contains_many_nonmember_ns)],
        ['`mightContainMany({ bytes, offsets })` / `contains_many`, member', fmtNs(v.bg.manyPackedMember), '–', '–', fmtNs(v.native?.contains_many_member_ns)],
        ['`mightContainMany({ bytes, offsets })` / `contains_many`, non-member', fmtNs(v.bg.manyPackedNonmember), '–', '–', fmtNs(v.native?.contains_many_nonmember_ns)],
      ],
    ),
  );
  out.push('');
  out.push('## Space and accuracy');
  out.push('');
  out.push(
    table(
      ['', 'bloomgate (wasm)', `bloomfilter ${peers.bloomfilter}`, `bloom-filters ${peers.bloomFilters}`, 'C core (native)'],
      [
        ['m (bits), k', `${fmtBytes(v.bg.m)}, ${v.bg.k}`, `${fmtBytes(v.bf.m)}, ${v.bf.k}`, `${fmtBytes(v.bfs.m)}, ${v.bfs.k}`, v.native ? `${fmtBytes(v.native.m)}, ${v.native.k}` : '–'],
        ['bits per key (m / n)', fmtBits(v.bg.m / c.n), fmtBits(v.bf.m / c.n), fmtBits(v.bfs.m / c.n), v.native ? fmtBits(v.native.m / c.n) : '–'],
        ['bits per key (serialized bytes × 8 / n)', fmtBits((v.bg.fileBytes * 8) / c.n), fmtBits(v.bf.jsonBytes ? (v.bf.jsonBytes * 8) / c.n : null) + ' (JSON)', '–', v.native ? fmtBits((v.native.serialized_bytes * 8) / c.n) : '–'],
        ['measured false-positive rate', `${fmtRate(v.bg.fpRate)} (${fmtBytes(c.n)} probes)`, `${fmtRate(v.bf.fpRate)} (${fmtBytes(c.n)})`, v.bfs.fpRate == null ? 'n/a in quick mode' : `${fmtRate(v.bfs.fpRate)} (${fmtBytes(v.bfs.fpProbes)})`, v.native ? fmtRate(v.native.fp_rate) : '–'],
        ['false negatives', String(v.bg.falseNegatives), String(v.bf.falseNegatives), String(v.bfs.falseNegatives ?? '–'), v.native ? String(v.native.false_negatives) : '–'],
      ],
    ),
  );
  out.push('');
  out.push('## Load (ms per load, checksum verified)');
  out.push('');
  out.push(
    table(
      ['Filter', 'file bytes', '`BloomFilter.from(bytes)`', '`loadFilter(bytes)`', 'copy into wasm memory', 'C `bg_filter_deserialize`', 'C `memcpy`'],
      [
        [`${fmtBytes(c.n)} keys`, fmtBytes(v.load.bytes1M), fmtMs(v.load.from1M), fmtMs(v.load.loadFilter1M), fmtMs(v.load.copy1M), fmtMs(v.native?.deserialize_ms), fmtMs(v.native?.memcpy_ms)],
        [`${fmtBytes(c.loadN)} keys, warm (back to back)`, fmtBytes(v.load.bytes10M), fmtMs(v.load.from10M), fmtMs(v.load.loadFilter10M), fmtMs(v.load.copy10M), '–', '–'],
        [`${fmtBytes(c.loadN)} keys, cold caches`, fmtBytes(v.load.bytes10M), fmtMs(v.load.from10MCold), fmtMs(v.load.loadFilter10MCold), fmtMs(v.load.copy10MCold), '–', '–'],
      ],
    ),
  );
  out.push('');
  out.push(`wasm/bloomgate.wasm: ${fmtBytes(v.wasm.raw)} bytes raw, ${fmtBytes(v.wasm.gzip)} bytes gzip -9.`);
  out.push('');
  const d = v.diag;
  if (d && d.rawMember != null) {
    const minus = (a, b) => (a == null || b == null ? null : a - b);
    out.push('## Where the time goes (ns per key)');
    out.push('');
    out.push(
      'The same `bloomgate.wasm`, instantiated directly by the benchmark and called on keys already packed in its ' +
        'memory ("raw"), isolates the core from the JavaScript around it.',
    );
    out.push('');
    out.push(
      table(
        ['Step', 'member', 'non-member'],
        [
          ['`mightContain(string)` through the API', fmtNs(v.bg.member), fmtNs(v.bg.nonmember)],
          ['raw wasm `bg_filter_contains`, one call per key', fmtNs(d.rawMember), fmtNs(d.rawNonmember)],
          ['native `bg_filter_contains`', fmtNs(v.native?.contains_member_ns), fmtNs(v.native?.contains_nonmember_ns)],
          ['→ JavaScript side of a string query (API − raw)', fmtNs(minus(v.bg.member, d.rawMember)), fmtNs(minus(v.bg.nonmember, d.rawNonmember))],
          ['`mightContainMany(Uint8Array[])` through the API', fmtNs(v.bg.manyU8Member), fmtNs(v.bg.manyU8Nonmember)],
          ['`mightContainMany({ bytes, offsets })` through the API', fmtNs(v.bg.manyPackedMember), fmtNs(v.bg.manyPackedNonmember)],
          ['raw wasm `bg_filter_contains_many`, batches of ' + c.batch, fmtNs(d.rawManyMember), fmtNs(d.rawManyNonmember)],
          ['native `bg_filter_contains_many`', fmtNs(v.native?.contains_many_member_ns), fmtNs(v.native?.contains_many_nonmember_ns)],
          ['→ JavaScript side of a `Uint8Array[]` batch (API − raw)', fmtNs(minus(v.bg.manyU8Member, d.rawManyMember)), fmtNs(minus(v.bg.manyU8Nonmember, d.rawManyNonmember))],
          ['→ JavaScript side of a packed batch (API − raw)', fmtNs(minus(v.bg.manyPackedMember, d.rawManyMember)), fmtNs(minus(v.bg.manyPackedNonmember, d.rawManyNonmember))],
        ],
      ),
    );
    out.push('');
    out.push(
      table(
        ['Component (non-member keys)', 'wasm / JS', 'native'],
        [
          ['XXH3-128 of a 38-byte key (`bgw_hash` / `bg_hash`)', fmtNs(d.rawHash), fmtNs(v.native?.hash_ns)],
          ['hash + k positions (`bgw_positions` / `bg_positions`)', fmtNs(d.rawPositions), fmtNs(v.native?.hash_positions_ns)],
          ['an almost empty wasm call (`bg_strerror`)', fmtNs(d.call), '–'],
          ['stage a 38-char string: `charCodeAt` loop into wasm memory', fmtNs(d.stageAscii), '–'],
          ['stage a 38-char string: `TextEncoder.encodeInto`', fmtNs(d.stageEncodeInto), '–'],
          ['stage a 38-byte `Uint8Array`: `TypedArray.prototype.set`', fmtNs(d.stageU8Set), '–'],
        ],
      ),
    );
    out.push('');
    if (v.load.validate10M != null) {
      out.push(
        `Load of the ${fmtBytes(c.loadN)}-key file (${fmtBytes(v.load.bytes10M)} bytes): copy into wasm memory ${fmtMs(v.load.copy10M)} ms, ` +
          `raw \`bgw_file_validate\` (header checks + XXH3-64 checksum over the file, already in memory) ${fmtMs(v.load.validate10M)} ms, ` +
          `\`BloomFilter.from\` ${fmtMs(v.load.from10M)} ms.`,
      );
      out.push('');
    }
  }
  out.push('## Targets (issue 2, item 6)');
  out.push('');
  out.push(
    table(
      ['Target', 'ratio (medians)', 'ratio (best rounds)', 'limit', 'result'],
      r.targets.map((t) => [
        t.detail ? `${t.name} (${t.detail})` : t.name,
        fmtRatio(t.ratio),
        fmtRatio(t.bestRatio),
        `≤ ${fmtRatio(t.limit)}`,
        `**${t.result}**`,
      ]),
    ),
  );
  out.push('');
  out.push(
    'The verdict uses the medians. "Best rounds" divides the fastest round of each side: when the machine is busy ' +
      'it is the better estimate of the uncontended cost, and a verdict that differs between the two columns is not settled by this run.',
  );
  out.push('');
  if (r.native.status !== 'ok') out.push(`Native C core: ${r.native.reason}.`);
  out.push(`Checksum of all answers (keeps the work observable): ${r.sink}.`);
  out.push('');
  out.push('The same cases in headless Chromium beside Node, with loads from 127.0.0.1 and the time to first answer in a ' +
    'fresh page: `npm run bench:browser` (bench/README.md, bench/browser.mjs).');
  out.push('');
  return out.join('\n');
}
