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
  try {
    // The error rate goes nowhere but the shard filter's own header, which is not kept.
    filter = wasm.filterCreate(task.kind, Math.max(1, Math.min(task.records, RESERVE_MAX)), 0.5, task.seedLo, task.seedHi, 0);
    fd = openSync(task.path, 'r');
    const buffer = new Uint8Array(CHUNK);
    let read = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, null);
      if (n === 0) break;
      if (n % 8 !== 0) throw new Error(`${task.path}: not whole 8-byte records`);
      wasm.filterAddH1(filter, buffer.subarray(0, n));
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
    if (filter !== 0) wasm.filterFree(filter);
  }
});
