// @ts-check
/**
 * store-tree.js — the Merkle tree of an exact store (Node): what `bloomgate
 * serve --sign` keeps and `bloomgate export-ranges --sign` writes proofs from.
 * The tree itself is js/merkle.js; this file reads a store into it.
 *
 * One pass over the records computes every non-empty leaf and keeps the
 * levels from the block nodes up (range: all 20 levels, at most 2^21 nodes,
 * 75 MB for a store that fills every prefix; hashes: from the blocks up, about
 * one node per 8 records). The leaves of a hashes block are recomputed per
 * proof from one store read of the block's prefix.
 */
import { createHash } from 'node:crypto';

import { blockNode, hashesLeafRecords, merkleHasher, proofBytes, rangeLeafRecords, shapeFor, TreeTop } from './merkle.js';

/** js/merkle.js's hashing over node:crypto. */
export function nodeHasher() {
  return merkleHasher((bytes) => createHash('sha256').update(bytes).digest());
}

/** The leaf (hash prefix of `depth` bits) a record's hash falls in. */
export function leafOf(hash, protocol) {
  if (protocol === 'range') return (hash[0] << 12) | (hash[1] << 4) | (hash[2] >> 4);
  return ((hash[0] << 24) | (hash[1] << 16) | (hash[2] << 8) | hash[3]) >>> 0;
}

/** A leaf's record bytes for `protocol` (records of one leaf, in hash order). */
export function leafRecordsOf(protocol, records) {
  return protocol === 'range' ? rangeLeafRecords(records) : hashesLeafRecords(records);
}

/**
 * Group records (in hash order) into leaves and leaves into blocks: calls
 * `onBlock(block, entries)` for each non-empty block, entries ascending.
 * @param {AsyncIterable<{ hash: Uint8Array, count: number }> | Iterable<{ hash: Uint8Array, count: number }>} records
 * @param {'range' | 'hashes'} protocol
 * @param {import('./merkle.js').TreeShape} shape
 * @param {ReturnType<typeof merkleHasher>} hasher
 * @param {(block: number, entries: Array<{ leaf: number, hash: Uint8Array }>) => void | Promise<void>} onBlock
 */
export async function forEachBlock(records, protocol, shape, hasher, onBlock) {
  const { blockBits } = shape;
  const span = 2 ** blockBits;
  let leaf = -1;
  /** @type {Array<{ hash: Uint8Array, count: number }>} */
  let inLeaf = [];
  let block = -1;
  /** @type {Array<{ leaf: number, hash: Uint8Array }>} */
  let entries = [];
  const closeLeaf = () => {
    if (leaf < 0) return;
    const bytes = leafRecordsOf(protocol, inLeaf);
    // A range leaf whose records all have count 0 holds no real rows: it is empty.
    if (bytes.length > 0) entries.push({ leaf: leaf % span, hash: hasher.leaf(bytes) });
    inLeaf = [];
  };
  const closeBlock = async () => {
    closeLeaf();
    if (block >= 0 && entries.length > 0) await onBlock(block, entries);
    entries = [];
  };
  for await (const { hash, count } of records) {
    const at = leafOf(hash, protocol);
    if (at !== leaf) {
      closeLeaf();
      const atBlock = Math.floor(at / span);
      if (atBlock !== block) {
        await closeBlock();
        block = atBlock;
      }
      leaf = at;
    }
    inLeaf.push({ hash: hash.slice(), count });
  }
  await closeBlock();
}

/**
 * The tree of a store: its upper levels and root.
 * @param {import('./store.js').StoreReader} store
 * @param {'range' | 'hashes'} protocol
 */
export async function storeTree(store, protocol) {
  const shape = shapeFor(protocol, store.count);
  const hasher = nodeHasher();
  const top = new TreeTop(shape, hasher);
  await forEachBlock(store.records(), protocol, shape, hasher, (block, entries) => top.add(block, blockNode(entries, shape, hasher)));
  top.finish();
  return { top, hasher, shape, root: Buffer.from(top.root).toString('hex') };
}

/**
 * The proof of block `block` (range: a leaf) from the store, for `bloomgate serve`.
 * @param {import('./store.js').StoreReader} store
 * @param {'range' | 'hashes'} protocol
 * @param {{ top: TreeTop, shape: import('./merkle.js').TreeShape, hasher: ReturnType<typeof merkleHasher> }} tree from storeTree
 * @param {number} block
 */
export async function storeProof(store, protocol, tree, block) {
  const { shape } = tree;
  /** @type {Array<{ leaf: number, hash: Uint8Array }>} */
  let entries = [];
  if (shape.blockBits > 0) {
    const bits = shape.depth - shape.blockBits;
    const prefix = new Uint8Array(4);
    new DataView(prefix.buffer).setUint32(0, block * 2 ** (32 - bits));
    const records = await store.lookup(prefix, bits);
    await forEachBlock(records, protocol, shape, tree.hasher, (_, found) => {
      entries = found;
    });
  }
  return proofBytes(entries, tree.top.siblings(block), shape);
}
