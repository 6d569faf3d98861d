// @ts-check
// A worker thread of a sharded fuse build (fuse-shards.js): its own
// WebAssembly instance builds one shard at a time from the shard's file of h1
// records (8 bytes each, little-endian), and sends back the shard filter's
// file, whose payload is the shard's. Memory: one shard's keys and scratch.
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort as maybeParentPort } from 'node:worker_threads';
import * as wasm from '../wasm/index.js';

const CHUNK = 4 * 1024 * 1024;
// A shard filter is always unsharded: its capacity is only a reservation hint.
const RESERVE_MAX = 2 ** 24;
// This module only ever runs as a worker, so it has a parent port.
const parentPort = /** @type {import('node:worker_threads').MessagePort} */ (maybeParentPort);

await wasm.ready();

parentPort.on('message', (task) => {
  let filter = 0;
  let fd;
  let valuesFd;
  try {
    // The error rate, key encoding (url keys are sized for a lower rate) and value bits decide
    // the cells of a fuse4 shard (its fingerprint width); fuse8 and fuse16 shards are the same
    // at any rate they take. Keys go in by h1, whatever their encoding.
    filter = createShard(task);
    fd = openSync(task.path, 'r');
    if (task.valuesPath !== null) valuesFd = openSync(task.valuesPath, 'r');
    const buffer = new Uint8Array(CHUNK);
    const values = valuesFd === undefined ? null : new Uint8Array(CHUNK / 8);
    let read = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      if (n === 0) break;
      if (n % 8 !== 0) throw new Error(`${task.path}: not whole 8-byte records`);
      if (values === null) wasm.filterAddH1(filter, buffer.subarray(0, n));
      else {
        const got = readSync(/** @type {number} */ (valuesFd), values, 0, n / 8, null);
        if (got !== n / 8) throw new Error(`${task.valuesPath}: ${read / 8 + got} values for more records`);
        wasm.filterAddH1(filter, buffer.subarray(0, n), values.subarray(0, got));
      }
      read += n;
    }
    if (read !== task.records * 8) throw new Error(`${task.path}: ${read / 8} records, ${task.records} written`);
    wasm.filterSeal(filter);
    const file = wasm.filterSerialize(filter);
    parentPort.postMessage({ shard: task.shard, file, count: task.records }, [file.buffer]);
  } catch (/** @type {any} */ error) {
    parentPort.postMessage({ shard: task.shard, error: { code: error?.name === 'BloomgateError' ? error.code : undefined, message: String(error?.message ?? error) } });
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (valuesFd !== undefined) closeSync(valuesFd);
    if (filter !== 0) wasm.filterFree(filter);
  }
});

/** A fresh (unsharded) fuse filter of the task's kind, rate and value bits for one shard's keys. */
function createShard(task) {
  return wasm.filterCreate(task.kind, Math.max(1, Math.min(task.records, RESERVE_MAX)), task.errorRate, task.seedLo, task.seedHi, task.keyEncoding, task.valueBits ?? 0);
}
