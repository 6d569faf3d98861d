#!/usr/bin/env node
// node bench/plot.mjs [results.json] [out.svg]
//
// Draws bits per key against the measured false-positive rate for every
// bloomgate kind, from the numbers bench/kinds.mjs wrote to
// bench/results/kinds.json, beside the information-theoretic floor
// log2(1/ε) and the classic Bloom curve (1/ln 2)·log2(1/ε) ≈ 1.44·log2(1/ε).
// Writes docs/images/bits-per-key.svg: hand-written SVG, no dependencies.
// x: error rate on a log scale, 10^-5 … 10^-1; y: bits per key (the .bgf file
// × 8 / n). Points above the y range are drawn on its top edge with their value.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(benchDir);
const input = path.resolve(process.argv[2] ?? path.join(benchDir, 'results', 'kinds.json'));
const output = path.resolve(process.argv[3] ?? path.join(root, 'docs', 'images', 'bits-per-key.svg'));

const result = JSON.parse(fs.readFileSync(input, 'utf8'));

// Okabe–Ito colours (distinguishable with colour-vision deficiencies), plus a shape per series.
const SERIES = [
  { key: 'classic', label: 'classic', color: '#0072B2', shape: 'circle' },
  { key: 'blocked', label: 'blocked', color: '#E69F00', shape: 'square' },
  { key: 'fuse', label: 'fuse (fuse8, fuse16)', color: '#009E73', shape: 'diamond' },
  { key: 'counting', label: 'counting', color: '#D55E00', shape: 'triangle' },
  { key: 'scalable', label: 'scalable', color: '#CC79A7', shape: 'triangleDown' },
  { key: 'cuckoo', label: 'cuckoo', color: '#56B4E9', shape: 'cross' },
];

const W = 900, H = 540;
const plot = { left: 72, right: 640, top: 64, bottom: 470 };
const X_MIN = -5, X_MAX = -1; // log10 of the error rate
const Y_MIN = 0, Y_MAX = 30;
const xOf = (rate) => plot.left + ((Math.log10(rate) - X_MIN) / (X_MAX - X_MIN)) * (plot.right - plot.left);
const yOf = (bits) => plot.bottom - ((bits - Y_MIN) / (Y_MAX - Y_MIN)) * (plot.bottom - plot.top);
const r1 = (v) => Math.round(v * 10) / 10;
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function marker(shape, x, y, color, filled, size = 6) {
  const fill = filled ? color : '#fff';
  const common = `fill="${fill}" stroke="${color}" stroke-width="2"`;
  const s = size;
  switch (shape) {
    case 'circle': return `<circle cx="${r1(x)}" cy="${r1(y)}" r="${s}" ${common}/>`;
    case 'square': return `<rect x="${r1(x - s)}" y="${r1(y - s)}" width="${2 * s}" height="${2 * s}" ${common}/>`;
    case 'diamond': return `<path d="M${r1(x)} ${r1(y - s * 1.3)}L${r1(x + s * 1.3)} ${r1(y)}L${r1(x)} ${r1(y + s * 1.3)}L${r1(x - s * 1.3)} ${r1(y)}Z" ${common}/>`;
    case 'triangle': return `<path d="M${r1(x)} ${r1(y - s * 1.3)}L${r1(x + s * 1.2)} ${r1(y + s)}L${r1(x - s * 1.2)} ${r1(y + s)}Z" ${common}/>`;
    case 'triangleDown': return `<path d="M${r1(x)} ${r1(y + s * 1.3)}L${r1(x + s * 1.2)} ${r1(y - s)}L${r1(x - s * 1.2)} ${r1(y - s)}Z" ${common}/>`;
    case 'cross': {
      const d = s * 1.1;
      return `<path d="M${r1(x - d)} ${r1(y - d)}L${r1(x + d)} ${r1(y + d)}M${r1(x - d)} ${r1(y + d)}L${r1(x + d)} ${r1(y - d)}" fill="none" stroke="${color}" stroke-width="${filled ? 3.2 : 2}"/>`;
    }
    default: throw new Error(`unknown shape ${shape}`);
  }
}

const out = [];
out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="13" fill="#222">`);
out.push(`<title>bloomgate: bits per key against measured false-positive rate, per filter kind</title>`);
out.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
out.push(`<text x="${plot.left}" y="28" font-size="17" font-weight="600">Bits per key against measured false-positive rate</text>`);
const sizes = [...new Set(result.rows.filter((r) => r.impl === 'bloomgate').map((r) => r.n))].sort((a, b) => a - b);
out.push(`<text x="${plot.left}" y="48" font-size="12" fill="#555">bloomgate kinds at capacity (${sizes.map((n) => `${n / 1e6}M`).join(' and ')} keys), serialized file × 8 / n; bench/kinds.mjs, ${esc(result.machine.date.slice(0, 10))}</text>`);

// grid and axes
out.push(`<g stroke="#e4e4e4" stroke-width="1">`);
for (let e = X_MIN; e <= X_MAX; e++) {
  for (let m = 1; m < 10 && e + Math.log10(m) <= X_MAX; m++) {
    const x = xOf(m * 10 ** e);
    out.push(`<line x1="${r1(x)}" y1="${plot.top}" x2="${r1(x)}" y2="${plot.bottom}"${m === 1 ? ' stroke="#cfcfcf"' : ''}/>`);
  }
}
for (let b = Y_MIN; b <= Y_MAX; b += 5) out.push(`<line x1="${plot.left}" y1="${r1(yOf(b))}" x2="${plot.right}" y2="${r1(yOf(b))}"/>`);
out.push(`</g>`);
out.push(`<rect x="${plot.left}" y="${plot.top}" width="${plot.right - plot.left}" height="${plot.bottom - plot.top}" fill="none" stroke="#888"/>`);
const rateLabel = { '-5': '0.001 %', '-4': '0.01 %', '-3': '0.1 %', '-2': '1 %', '-1': '10 %' };
for (let e = X_MIN; e <= X_MAX; e++) {
  out.push(`<text x="${r1(xOf(10 ** e))}" y="${plot.bottom + 20}" text-anchor="middle">${rateLabel[e]}</text>`);
}
for (let b = Y_MIN; b <= Y_MAX; b += 5) out.push(`<text x="${plot.left - 8}" y="${r1(yOf(b) + 4)}" text-anchor="end">${b}</text>`);
out.push(`<text x="${r1((plot.left + plot.right) / 2)}" y="${plot.bottom + 44}" text-anchor="middle" font-size="14">false-positive rate ε (measured; log scale)</text>`);
out.push(`<text transform="translate(24 ${r1((plot.top + plot.bottom) / 2)}) rotate(-90)" text-anchor="middle" font-size="14">bits per key</text>`);

// reference curves: straight lines in log10(ε)
const curve = (factor) => {
  const a = 10 ** X_MIN, b = 10 ** X_MAX;
  return `M${r1(xOf(a))} ${r1(yOf(factor * Math.log2(1 / a)))}L${r1(xOf(b))} ${r1(yOf(factor * Math.log2(1 / b)))}`;
};
const classicFactor = 1 / Math.LN2;
out.push(`<path d="${curve(1)}" fill="none" stroke="#222" stroke-width="2"/>`);
out.push(`<path d="${curve(classicFactor)}" fill="none" stroke="#0072B2" stroke-width="1.5" stroke-dasharray="7 5"/>`);
// curve labels: left part of the plot, away from the measured points, rotated along the slope
const slopeAngle = (factor) => {
  const x0 = xOf(1e-4), x1 = xOf(1e-3);
  const y0 = yOf(factor * Math.log2(1e4)), y1 = yOf(factor * Math.log2(1e3));
  return (Math.atan2(y1 - y0, x1 - x0) * 180) / Math.PI;
};
const labelAt = (factor, rate, text, color, dy) => {
  const x = xOf(rate), y = yOf(factor * Math.log2(1 / rate)) + dy;
  out.push(`<text transform="translate(${r1(x)} ${r1(y)}) rotate(${r1(slopeAngle(factor))})" fill="${color}" font-size="12.5">${text}</text>`);
};
labelAt(classicFactor, 1.5e-5, 'classic Bloom, 1.44·log₂(1/ε)', '#0072B2', -9);
labelAt(1, 1.2e-4, 'floor, log₂(1/ε)', '#222', 17);

// measured points
const rows = result.rows.filter((r) => r.impl === 'bloomgate' && !r.error && r.fp > 0);
const bigN = Math.max(...sizes);
const offScale = [];
for (const s of SERIES) {
  for (const r of rows.filter((row) => row.kind === s.key)) {
    const filled = r.n === bigN;
    if (r.bitsPerKey > Y_MAX) {
      offScale.push({ s, r, filled });
      continue;
    }
    out.push(marker(s.shape, xOf(r.fpRate), yOf(r.bitsPerKey), s.color, filled));
  }
}
// points above the range: a marker on the top edge and the value beside it, one label per rate
const seenOff = new Set();
for (const { s, r, filled } of offScale) {
  const x = xOf(r.fpRate);
  out.push(marker(s.shape, x, plot.top, s.color, filled, 5));
  const label = `${s.label} ${r.bitsPerKey.toFixed(1)} ↑`;
  if (seenOff.has(label)) continue;
  seenOff.add(label);
  out.push(`<text x="${r1(x + 9)}" y="${plot.top + 18 + 0 * seenOff.size}" fill="${s.color}" font-size="12">${esc(label)}</text>`);
}
// fuse labels: name the two natural rates
for (const r of rows.filter((row) => row.kind === 'fuse' && row.n === bigN)) {
  out.push(`<text x="${r1(xOf(r.fpRate) + 11)}" y="${r1(yOf(r.bitsPerKey) + 18)}" fill="#009E73" font-size="12">${esc(r.kindName)}</text>`);
}

// legend
const lx = plot.right + 24;
let ly = plot.top + 6;
out.push(`<text x="${lx}" y="${ly}" font-weight="600">kind</text>`);
ly += 22;
for (const s of SERIES) {
  out.push(marker(s.shape, lx + 8, ly - 4, s.color, true));
  out.push(`<text x="${lx + 24}" y="${ly}">${esc(s.label)}</text>`);
  ly += 24;
}
ly += 8;
out.push(`<path d="M${lx} ${ly - 4}h18" stroke="#222" stroke-width="2"/>`);
out.push(`<text x="${lx + 24}" y="${ly}">floor log₂(1/ε)</text>`);
ly += 22;
out.push(`<path d="M${lx} ${ly - 4}h18" stroke="#0072B2" stroke-width="1.5" stroke-dasharray="7 5"/>`);
out.push(`<text x="${lx + 24}" y="${ly}">classic Bloom, 1.44·log₂(1/ε)</text>`);
ly += 30;
if (sizes.length > 1) {
  out.push(marker('circle', lx + 8, ly - 4, '#555', true));
  out.push(`<text x="${lx + 24}" y="${ly}">${bigN / 1e6}M keys</text>`);
  ly += 22;
  out.push(marker('circle', lx + 8, ly - 4, '#555', false));
  out.push(`<text x="${lx + 24}" y="${ly}">${sizes.filter((n) => n !== bigN).map((n) => `${n / 1e6}M`).join(', ')} keys</text>`);
  ly += 30;
}
function fuse16Note() {
  const r = rows.find((row) => row.kindName === 'fuse16');
  if (!r) return [];
  return [`(fuse16: only ${r.fp} false positives,`, `so its ε is ±${Math.round(100 / Math.sqrt(r.fp))} %).`];
}
const note = [
  'Asked 1 % and 0.1 %; fuse has',
  'natural rates (2⁻⁸, 2⁻¹⁶). Each point',
  `is measured with ${(result.config.fpProbes / 1e6).toLocaleString('en-US')}M probes`,
  ...fuse16Note(),
  'counting (4-bit counters) is',
  'above the range: its value is',
  'printed at the top edge.',
];
for (const line of note) {
  out.push(`<text x="${lx}" y="${ly}" font-size="11.5" fill="#555">${esc(line)}</text>`);
  ly += 16;
}
out.push(`</svg>`);

fs.mkdirSync(path.dirname(output), { recursive: true });
fs.writeFileSync(output, out.join('\n') + '\n');
process.stderr.write(`plot: wrote ${path.relative(root, output)} (${rows.length} points)\n`);
