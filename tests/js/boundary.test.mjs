// The boundary contract (issue 14): js/wasm/ is the only code that touches the
// module's exports or memory, it calls exactly the exports wasm/exports.txt
// lists, and the facts JavaScript states about the core (error codes, kinds,
// version) match the generated contract.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as contract from '../../js/wasm/contract.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const jsDir = join(root, 'js');

function jsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

// Comments and string literals removed, so prose about bg_* functions does not count as a call.
function code(path) {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:\\])\/\/.*$/gm, '$1')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''");
}

const boundaryDir = join(jsDir, 'wasm');
const generated = new Set([join(jsDir, 'inline-module.js')]);
const outside = jsFiles(jsDir).filter((path) => !path.startsWith(boundaryDir + '/') && !generated.has(path));
const inside = jsFiles(boundaryDir);

test('only js/wasm/ touches the module: no export names, exports objects or memory views elsewhere', () => {
  assert.ok(outside.length > 20, 'the scan sees the library');
  for (const path of outside) {
    const text = code(path);
    const where = path.slice(root.length);
    assert.doesNotMatch(text, /\bbgw?_[a-z0-9_]+\s*\(/, `${where} calls a core function`);
    assert.doesNotMatch(text, /\.exports\b/, `${where} reads an instance's exports`);
    assert.doesNotMatch(text, /\bHEAP(U8|U32|F64)\b|\bmemory\.buffer\b/, `${where} touches wasm memory`);
    assert.doesNotMatch(text, /WebAssembly\.(instantiate|Instance)\b/, `${where} instantiates the module`);
  }
});

test('js/wasm/ calls exactly the exports wasm/exports.txt lists, and the contract copies that list', () => {
  const listed = readFileSync(join(root, 'wasm/exports.txt'), 'utf8').split('\n').filter((line) => /^[a-z_0-9]+$/.test(line));
  assert.deepEqual([...contract.EXPORTS], listed);
  const called = new Set();
  for (const path of inside) {
    for (const match of code(path).matchAll(/\bex\.([a-z_0-9]+)/g)) called.add(match[1]);
  }
  assert.deepEqual([...called].sort(), [...listed].sort(), 'every export is used by js/wasm/ and nothing unlisted is called');
});

test('the built module exports exactly the list (plus its memory and start-up hook)', async () => {
  const module = await WebAssembly.compile(readFileSync(join(root, 'wasm/bloomgate.wasm')));
  const functions = WebAssembly.Module.exports(module).filter((e) => e.kind === 'function').map((e) => e.name);
  const expected = new Set([...contract.EXPORTS, '_initialize']);
  assert.deepEqual(functions.filter((name) => !expected.has(name) && !name.startsWith('__') && !name.startsWith('emscripten_') && !name.startsWith('stack')), []);
  for (const name of contract.EXPORTS) assert.ok(functions.includes(name), `${name} is exported`);
});

test('each file of the boundary does one job in at most ~400 lines', () => {
  for (const path of inside) {
    if (path.endsWith('contract.js')) continue; // generated
    const lines = readFileSync(path, 'utf8').split('\n').length;
    assert.ok(lines <= 450, `${path.slice(root.length)} has ${lines} lines`);
  }
});

test('index.d.ts names every core status code and kind the contract has', () => {
  const types = readFileSync(join(jsDir, 'index.d.ts'), 'utf8');
  const codes = types.slice(types.indexOf('export type BloomgateErrorCode'), types.indexOf('(string & {})'));
  for (const { name } of contract.STATUSES) if (name !== 'OK') assert.match(codes, new RegExp(`'${name}'`), `BloomgateErrorCode lacks ${name}`);
  const kinds = types.slice(types.indexOf('export type Kind ='), types.indexOf(';', types.indexOf('export type Kind =')));
  for (const { name } of contract.KINDS) assert.match(kinds, new RegExp(`'${name}'`), `Kind lacks ${name}`);
  const encodings = types.slice(types.indexOf('export type KeyEncoding ='), types.indexOf(';', types.indexOf('export type KeyEncoding =')));
  for (const { name } of contract.KEY_ENCODINGS) assert.match(encodings, new RegExp(`'${name}'`), `KeyEncoding lacks ${name}`);
});

test('the version macros of bloomgate.h are the package version', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(contract.VERSION, pkg.version);
  const header = readFileSync(join(root, 'src/bloomgate.h'), 'utf8');
  const [major, minor, patch] = ['MAJOR', 'MINOR', 'PATCH'].map((part) => Number(new RegExp(`#define BG_VERSION_${part} (\\d+)`).exec(header)[1]));
  assert.equal(`${major}.${minor}.${patch}`, pkg.version);
});

test('status classes are one of four, and every code has a message', () => {
  for (const status of contract.STATUSES) {
    assert.ok(['data', 'usage', 'resource', 'internal'].includes(status.class), status.name);
    assert.ok(status.message.length > 1, status.name);
  }
  assert.equal(new Set(contract.STATUSES.map((s) => s.code)).size, contract.STATUSES.length, 'codes are unique');
});
