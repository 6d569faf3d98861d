/**
 * The README's snippets, for the tests that run them
 * (tests/slow/readme-snippets.test.mjs, tests/browser/readme-page.test.mjs):
 * the fenced blocks with their markers, the small inputs the snippets name,
 * and a reader's directory to run them in. The marker convention is described
 * in tests/slow/readme-snippets.test.mjs.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The fenced blocks of a Markdown text with their language, line and marker.
 * @returns {{ lang: string, code: string, line: number, marker: null | { kind: string, exit: number, server: boolean, stdout?: string, skip?: string } }[]}
 */
export function snippetsOf(markdown) {
  const lines = markdown.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(```|~~~)\s*([\w-]*)/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end].startsWith(open[1])) end++;
    const markerMatch = i > 0 ? /^<!--\s*snippet:\s*(.*?)\s*-->\s*$/.exec(lines[i - 1]) : null;
    blocks.push({ lang: open[2], code: lines.slice(i + 1, end).join('\n') + '\n', line: i + 1, marker: markerMatch ? parseMarker(markerMatch[1]) : null });
    i = end;
  }
  return blocks;
}

/** 'sh exit=1', 'node stdout="a\nb\n"', 'sh skip: why' -> the marker's fields. */
export function parseMarker(text) {
  const skip = /\bskip:\s*(.*)$/.exec(text);
  const head = skip ? text.slice(0, skip.index) : text;
  const kind = /^(node|browser|sh)\b/.exec(head.trim());
  if (!kind) throw new Error(`snippet marker '${text}': the kind must be node, browser or sh`);
  const marker = { kind: kind[1], exit: 0, server: /\bserver\b/.test(head) };
  const exit = /\bexit=(\d+)/.exec(head);
  if (exit) marker.exit = Number(exit[1]);
  const stdout = /\bstdout=("(?:[^"\\]|\\.)*")/.exec(head);
  if (stdout) marker.stdout = JSON.parse(stdout[1]);
  if (skip) marker.skip = skip[1].trim() || 'no reason given';
  return marker;
}

/**
 * A Have I Been Pwned dump in the downloader's format: 200 sorted SHA1HEX:COUNT
 * lines, CRLF; "password" is seen 200 times, "password-i" i times.
 */
export function pwnedDump() {
  const rows = [];
  for (let i = 0; i < 200; i++) {
    const password = i === 0 ? 'password' : `password-${i}`;
    rows.push(`${createHash('sha1').update(password).digest('hex').toUpperCase()}:${i === 0 ? 200 : i}`);
  }
  return rows.sort().join('\r\n') + '\r\n';
}

/**
 * A temporary directory as a README reader's project: node_modules/bloomgate
 * a symbolic link to this checkout, node_modules/.bin/bloomgate, the inputs
 * the snippets name (pwned.txt, urls-v7.txt, urls-v8.txt), and `env` whose
 * PATH starts with an `npx` shim that runs node_modules/.bin (never the
 * registry).
 * @returns {{ dir: string, env: NodeJS.ProcessEnv }}
 */
export function readerDirectory() {
  const dir = mkdtempSync(join(tmpdir(), 'bloomgate-readme-'));
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'bloomgate'), 'dir');
  symlinkSync(join('..', 'bloomgate', 'js', 'cli.js'), join(dir, 'node_modules', '.bin', 'bloomgate'));
  const shims = join(dir, '.shims');
  mkdirSync(shims);
  writeFileSync(join(shims, 'npx'), '#!/bin/sh\nbin="$PWD/node_modules/.bin/$1"\n' +
    '[ -x "$bin" ] || { echo "npx shim: no $1 in node_modules/.bin" >&2; exit 127; }\nshift\nexec "$bin" "$@"\n');
  chmodSync(join(shims, 'npx'), 0o755);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'readme-reader', private: true, type: 'module' }));
  writeFileSync(join(dir, 'pwned.txt'), pwnedDump());
  writeFileSync(join(dir, 'urls-v7.txt'), 'https://evil.example/login\nhttp://phish.example/\nhttp://bad.example/a/b\n');
  writeFileSync(join(dir, 'urls-v8.txt'), 'https://evil.example/login\nhttp://bad.example/a/b\nhttp://phish2.example/x?y=1\n');
  return { dir, env: { ...process.env, PATH: `${shims}:${process.env.PATH}`, NO_COLOR: '1' } };
}
