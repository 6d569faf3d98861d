/**
 * consumer.ts — a TypeScript user of every public name, as the README
 * documents them. Never run: tests/js/types.test.mjs compiles it with
 * `tsc --noEmit` (strict, no skipLibCheck) against the package's .d.ts files
 * in each supported configuration: moduleResolution bundler and node16, with
 * the DOM lib and in a Node-only project (types: ["node"], no DOM).
 */
import {
  BloomFilter, BloomgateError, canonicalizeUrl, checkPassword, checkUrl, createGate, hashPassword, init,
  directoryStorage, indexedDbStorage, inspectFile, loadFilter, openFilter, sizeFor, urlExpressions,
} from 'bloomgate';
import type {
  BloomgateErrorCode, CreateOptions, EscalationOptions, FileHeader, FilterSize, FilterStats, Gate, GateOptions,
  GateResult, GateStats, InspectReport, Item, KeyEncoding, Kind, LoadOptions, PackedKeys, PasswordCheck, UrlCheck,
  FilterStorage, FreshFilter, FreshFilterStats, OpenFilterOptions, RefreshOutcome,
} from 'bloomgate';
import * as inline from 'bloomgate/inline';
import wasmUrl from 'bloomgate/wasm';

export async function everything(bytes: Uint8Array, input: string): Promise<void> {
  const url: string = wasmUrl;
  await init();
  await init(url);
  await init(new URL('https://cdn.example/bloomgate.wasm'));
  await init(bytes);
  await init(bytes.buffer);
  await init(await fetch(url));
  await init(fetch(url));
  await inline.init();

  const size: FilterSize = sizeFor({ capacity: 1_000_000, errorRate: 0.01, keyEncoding: 'utf8' });
  const bits: number = size.m + size.k + size.bytes + size.bitsPerItem;

  const kind: Kind = 'classic';
  const keyEncoding: KeyEncoding = 'sha1';
  const options: CreateOptions = {
    capacity: 1_000, errorRate: 0.001, kind, seed: 42n, keyEncoding, metadata: { list: 'demo' },
    listId: '00112233445566778899aabbccddeeff', generation: 3,
  };
  const f = await BloomFilter.create(options);
  f.add('https://evil.example/login');
  const item: Item = new Uint8Array([1, 2, 3]);
  f.add(item);
  f.addAll(['a', 'b', new Uint8Array(4)]);
  const packed: PackedKeys = { bytes: new Uint8Array(40), offsets: Uint32Array.of(0, 20, 40) };
  f.addAll(packed);
  const maybe: boolean = f.mightContain('https://evil.example/login');
  const many: boolean[] = f.mightContainMany(['x', 'y']).concat(f.mightContainMany(packed));
  const answers: Uint8Array = f.mightContainMany(['x', 'y'], new Uint8Array(2));
  const packedAnswers: Uint8Array = f.mightContainMany(packed, new Uint8Array(2));
  f.addKey(new Uint8Array(20));
  const keyed: boolean = f.mightContainKey(new Uint8Array(20));
  const removed: boolean = f.remove('a') || f.removeKey(new Uint8Array(20));
  const merged: BloomFilter = f.merge(await BloomFilter.from(f.serialize()));
  const classic: BloomFilter = (await BloomFilter.create({ capacity: 10, errorRate: 0.01, kind: 'counting' })).toClassic();
  f.setMetadata(null);
  f.clear();
  const stats: FilterStats = f.stats();
  const described = `${stats.kind} ${stats.fillRatio} ${stats.estimatedItems} ${stats.estimatedErrorRate} ` +
    `${stats.theoreticalErrorRate} ${stats.overCapacity} ${stats.overFilled} ${f.listId} ${f.generation} ${f.minCount}` +
    `${f.kind} ${f.keyEncoding} ${String(f.metadata)} ${bits} ${maybe} ${many.length} ${answers.length + packedAnswers.length} ${keyed} ${removed}`;

  // serialize() is a fresh ArrayBuffer's bytes: a BlobPart, a BodyInit, a BufferSource.
  const file: Uint8Array<ArrayBuffer> = f.serialize();
  const blob = new Blob([f.serialize()], { type: 'application/octet-stream' });
  const response = new Response(f.serialize());
  const digest: ArrayBuffer = await crypto.subtle.digest('SHA-256', f.serialize());
  const again = await BloomFilter.from(file.buffer);

  const load: LoadOptions = {
    integrity: 'sha256-AAAA', onProgress: ({ loaded, total }) => void (loaded / total), signal: AbortSignal.timeout(5000),
    fetch: (input, init) => fetch(input, init), maxBytes: 1 << 20,
  };
  const loaded = [
    await loadFilter('/filters/passwords.bgf', load),
    await loadFilter(new URL('file:///srv/filters/passwords.bgf')),
    await loadFilter(response),
    await loadFilter(await blob.arrayBuffer()),
    await loadFilter(file),
    await inline.loadFilter('./words.bgf'),
  ];

  const report: InspectReport = await inspectFile(file);
  const header: FileHeader | null = report.header;
  const code: 'OK' | BloomgateErrorCode = report.code;

  const gateOptions: GateOptions = {
    filter: f,
    confirm: async (candidate, { signal }) => (signal.aborted ? false : { listed: candidate === 'x', ttlMs: 1000 }),
    onError: 'listed', timeoutMs: 5000, cache: { maxEntries: 100, ttlMs: 60_000 },
  };
  const gate: Gate = createGate(gateOptions);
  const checked: GateResult = await gate.check('x');
  const gateStats: GateStats = gate.stats();
  gate.clearCache();

  const sha1: string = hashPassword(input);
  const escalation: EscalationOptions = { fetch, signal: new AbortController().signal, timeoutMs: 10_000 };
  const password: PasswordCheck = await checkPassword(input, {
    filter: f, rangeUrl: 'https://api.pwnedpasswords.com/range', addPadding: 'auto', minCount: 1, ...escalation,
  });
  const canonical: string = canonicalizeUrl('HTTP://Evil.Example/%7Efoo/../login');
  const expressions: string[] = urlExpressions(canonical);
  const listed: UrlCheck = await checkUrl(input, { filter: f, hashesUrl: new URL('https://lists.example/hashes') });

  try {
    await BloomFilter.from(new Uint8Array(8));
  } catch (error) {
    if (error instanceof BloomgateError) {
      const known: BloomgateErrorCode = error.code;
      const csp: boolean = known === 'E_CSP' || known === 'E_WASM' || known === 'E_FETCH';
      void [csp, error.status, error.cause, error.name satisfies 'BloomgateError'];
    }
  }

  // A filter that keeps itself fresh (bloomgate publish): the checks accept it like a BloomFilter.
  const storage: FilterStorage = input === 'node' ? directoryStorage('/tmp/filters') : indexedDbStorage();
  const freshOptions: OpenFilterOptions = { storage, autoRefresh: true, refreshSeconds: 600, maxBytes: 1 << 26, listId: '00112233445566778899aabbccddeeff' };
  const fresh: FreshFilter = await openFilter('https://lists.example/urls/manifest.json', freshOptions);
  const freshStats: FreshFilterStats = fresh.stats();
  const outcome: RefreshOutcome = await fresh.refresh({ force: true });
  fresh.addEventListener('update', (event) => void event.detail.generation);
  const freshMaybe: boolean = fresh.mightContain('https://evil.example/') || (await checkUrl('https://evil.example/', { filter: fresh })).listed;
  void [freshStats.generation, freshStats.source, freshStats.lastError, outcome.error, freshMaybe];
  fresh.close();

  {
    using scoped = await BloomFilter.create({ capacity: 10, errorRate: 0.1 });
    scoped.add('freed at the end of the block');
  }
  f[Symbol.dispose]();
  for (const filter of [...loaded, merged, classic, again]) filter.free();
  void [described, blob, digest, header, code, checked, gateStats, sha1, password, expressions, listed];
}
