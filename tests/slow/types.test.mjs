/**
 * The package's types as a TypeScript user compiles them: tests/types/*.ts
 * (every public name, used as the README documents it) type-checked with
 * `tsc --noEmit`, strict, without skipLibCheck, in a fresh project that
 * resolves 'bloomgate' through package.json "exports" (node_modules/bloomgate
 * links to this repository), in each configuration the README promises:
 *
 *   moduleResolution bundler | node16, lib ["es2022", "dom"], no @types
 *   moduleResolution bundler | node16, lib ["es2022"], types ["node"] (Node only, no DOM)
 *   moduleResolution bundler, lib ["esnext", "dom", "dom.iterable"], types ["node"] (both)
 *   moduleResolution nodenext, lib ["es2022", "dom"]
 *
 * with TypeScript 7 (the newest) and 5.7 (the oldest supported), two
 * compilers at a time. Skipped when typescript and @types/node
 * (devDependencies) are missing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const COMPILERS = [
  // The newest (what `npm install typescript` gives) and the oldest the types support:
  // Uint8Array<ArrayBuffer> needs 5.7 (devDependency "typescript-5.7", an npm alias).
  // 5.7 (in JavaScript, ~5 s a run here) checks two configurations, 7 every one.
  { name: 'TypeScript 7', tsc: join(root, 'node_modules', 'typescript', 'bin', 'tsc') },
  { name: 'TypeScript 5.7', tsc: join(root, 'node_modules', 'typescript-5.7', 'bin', 'tsc'), only: [0, 2] },
].filter((compiler) => existsSync(compiler.tsc));
const hasNodeTypes = existsSync(join(root, 'node_modules', '@types', 'node', 'package.json'));

const CONFIGS = [
  { name: 'bundler, es2022 + dom', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022', 'dom'], types: [], dom: true },
  { name: 'node16, es2022 + dom', module: 'node16', moduleResolution: 'node16', lib: ['es2022', 'dom'], types: [], dom: true },
  { name: 'node16, Node only (types node, no DOM)', module: 'node16', moduleResolution: 'node16', lib: ['es2022'], types: ['node'] },
  { name: 'bundler, Node only (types node, no DOM)', module: 'esnext', moduleResolution: 'bundler', lib: ['es2022'], types: ['node'] },
  { name: 'bundler, esnext + dom + node', module: 'esnext', moduleResolution: 'bundler', lib: ['esnext', 'dom', 'dom.iterable'], types: ['node'], dom: true },
  { name: 'nodenext, es2022 + dom', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [], dom: true },
];

const skip = COMPILERS.length === 0 ? 'typescript is not installed (npm install)'
  : !hasNodeTypes ? '@types/node is not installed (npm install)' : false;

describe('index.d.ts compiles for TypeScript users', { skip, timeout: 120000 }, () => {
  let project;
  const runs = new Map(); // "compiler/config" -> Promise<{ code, stdout, ms }>

  before(async () => {
    project = await mkdtemp(join(tmpdir(), 'bloomgate-types-'));
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await mkdir(join(project, 'node_modules', '@types'), { recursive: true });
    await symlink(root, join(project, 'node_modules', 'bloomgate'), 'dir');
    await symlink(join(root, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'), 'dir');
    for (const file of ['consumer.ts', 'consumer-dom.ts']) {
      await copyFile(join(root, 'tests', 'types', file), join(project, file));
    }
    for (const [index, config] of CONFIGS.entries()) {
      await writeFile(join(project, `tsconfig.${index}.json`), JSON.stringify({
        compilerOptions: {
          strict: true, skipLibCheck: false, noEmit: true, target: 'es2022',
          module: config.module, moduleResolution: config.moduleResolution, lib: config.lib, types: config.types,
          noUnusedLocals: false, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
        },
        files: config.dom ? ['consumer.ts', 'consumer-dom.ts'] : ['consumer.ts'],
      }, null, 2));
    }
    const queue = [];
    for (const compiler of COMPILERS) {
      for (const index of CONFIGS.keys()) {
        if (compiler.only && !compiler.only.includes(index)) continue;
        let settle;
        runs.set(`${compiler.name}/${index}`, new Promise((resolve) => { settle = resolve; }));
        queue.push(() => compile(compiler, index).then(settle));
      }
    }
    for (let i = 0; i < 2; i++) {
      (async () => {
        for (let job = queue.shift(); job; job = queue.shift()) await job();
      })();
    }
  });

  async function compile(compiler, index) {
    const started = Date.now();
    const result = await run(process.execPath, [compiler.tsc, '-p', `tsconfig.${index}.json`, '--pretty', 'false'], {
      cwd: project, timeout: 90000,
    }).then(({ stdout }) => ({ code: 0, stdout }), (error) => ({ code: error.code ?? error.signal, stdout: `${error.stdout}${error.stderr}` }));
    return { ...result, ms: Date.now() - started };
  }

  after(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  for (const compiler of COMPILERS) {
    for (const [index, config] of CONFIGS.entries()) {
      if (compiler.only && !compiler.only.includes(index)) continue;
      it(`${compiler.name}: ${config.name}`, async (t) => {
        const result = await runs.get(`${compiler.name}/${index}`);
        t.diagnostic(`${result.ms} ms`);
        assert.equal(result.code, 0, `tsc -p tsconfig.${index}.json:\n${result.stdout}`);
      });
    }
  }
});

describe('what the types promise at run time', () => {
  it('serialize() returns bytes in a fresh ArrayBuffer of their own (Uint8Array<ArrayBuffer>)', async () => {
    const { BloomFilter } = await import('../../js/index.js');
    const filter = await BloomFilter.create({ capacity: 10, errorRate: 0.01 });
    const a = filter.serialize();
    const b = filter.serialize();
    assert.ok(a.buffer instanceof ArrayBuffer);
    assert.equal(a.byteOffset, 0);
    assert.equal(a.buffer.byteLength, a.length);
    assert.notEqual(a.buffer, b.buffer);
    assert.equal(new Blob([a]).size, a.length);
    filter.free();
  });
});
