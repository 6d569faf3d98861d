// @ts-check
/**
 * merkle.js — the tree that authenticates escalation replies (docs/FORMAT.md,
 * "Authenticated replies").
 *
 * A sparse binary tree of height `depth` whose leaf i is hash prefix i: range
 * endpoints depth 20 (5 hex digits), hashes endpoints depth 32 (8 hex digits).
 *   leaf  = SHA-256(0x00 || the prefix's real records, in hash order)
 *           range:  20-byte SHA-1 || u64 LE count, for each record with count > 0
 *           hashes: 32-byte SHA-256, for each record
 *   empty = SHA-256(0x00)                      (a prefix without records)
 *   node  = SHA-256(0x01 || left || right)     (empty subtrees by their default hash)
 * The root is in the signed endpoint manifest. Padding rows (count 0) are not
 * records, so a padded reply proves like an unpadded one.
 *
 * A proof is served per "block" of 2^blockBits leaves: the leaf hashes of the
 * block's non-empty leaves (none when blockBits is 0), then the sibling hashes
 * from the block's node to the root, bottom-up. Range: blockBits 0, so a proof
 * is 20 sibling hashes (640 bytes). Hashes: with 2^32 leaves a static host
 * cannot hold a proof per leaf, and a prefix without records (404) must be
 * provable too, so a proof names a block of 1 to 7 hex digits, sized to hold
 * ~16 non-empty leaves (shapeFor), and holds their hashes and the siblings. The verifier puts the leaf it computed from the reply
 * in place of the block's entry for that prefix and recomputes the root: any
 * change to the reply's real rows, or a reply of another prefix, misses it.
 *
 * Pure: the SHA-256 function is passed in (wasm in browsers, node:crypto in
 * the server and the CLI), so this file imports nothing.
 */

/** @typedef {(bytes: Uint8Array) => Uint8Array} Sha256 */
/** @typedef {{ depth: number, blockBits: number }} TreeShape */

/** The tree's depth: the bits of the hash prefix a reply answers. */
export const TREE_DEPTHS = Object.freeze({ range: 20, hashes: 32 });

/**
 * The shape a writer uses for a store of `records` records: range, a proof per
 * prefix; hashes, blocks of (32 - 4d) bits for the d in 1..7 that gives about
 * 16 records a block (a static export writes 16^d proof files).
 * @param {'range' | 'hashes'} protocol
 * @param {number} records
 * @returns {TreeShape}
 */
export function shapeFor(protocol, records) {
  if (protocol === 'range') return { depth: TREE_DEPTHS.range, blockBits: 0 };
  let digits = 1;
  while (digits < 7 && 16 ** digits * 16 < records) digits++;
  return { depth: TREE_DEPTHS.hashes, blockBits: 32 - 4 * digits };
}

/** Is this a shape a reader accepts for `protocol`? blockBits a multiple of 4 below the depth. */
export function validShape(protocol, depth, blockBits) {
  return depth === TREE_DEPTHS[protocol] && Number.isInteger(blockBits) && blockBits >= 0 && blockBits < depth && blockBits % 4 === 0;
}

const HASH = 32;
/** Bytes of a block entry's index (the leaf within its block, big-endian). */
function indexBytesOf(shape) {
  return Math.ceil(shape.blockBits / 8);
}

/** Bytes of one block entry: the leaf's index within its block, then its hash. */
export function entryBytes(shape) {
  return indexBytesOf(shape) + HASH;
}

/** Bytes of the sibling part of a proof. */
export function siblingBytes(shape) {
  return (shape.depth - shape.blockBits) * HASH;
}

/** Hex digits that name a proof's block: the top (depth - blockBits) bits. */
export function blockDigits(shape) {
  return (shape.depth - shape.blockBits) / 4;
}

/**
 * Hashing with domain bytes, and the default hash of an empty subtree of each height.
 * @param {Sha256} sha256
 */
export function merkleHasher(sha256) {
  const pair = new Uint8Array(1 + 2 * HASH);
  pair[0] = 1;
  const node = (left, right) => {
    pair.set(left, 1);
    pair.set(right, 1 + HASH);
    return sha256(pair);
  };
  const empty = [sha256(Uint8Array.of(0))];
  for (let h = 0; h < 32; h++) empty.push(node(empty[h], empty[h]));
  return {
    node,
    /** @type {ReadonlyArray<Uint8Array>} empty[h]: an empty subtree of height h */
    empty,
    /** @param {Uint8Array} records the leaf's record bytes (without the 0x00) */
    leaf(records) {
      const bytes = new Uint8Array(1 + records.length);
      bytes.set(records, 1);
      return sha256(bytes);
    },
  };
}

/** @typedef {ReturnType<typeof merkleHasher>} Hasher */

/**
 * A range leaf's record bytes: the real rows (count > 0) in hash order, each
 * the 20-byte SHA-1 and its count as u64 little-endian.
 * @param {Array<{ hash: Uint8Array, count: number }>} records sorted by hash
 */
export function rangeLeafRecords(records) {
  let n = 0;
  for (const record of records) if (record.count > 0) n++;
  const out = new Uint8Array(n * 28);
  let at = 0;
  for (const { hash, count } of records) {
    if (!(count > 0)) continue;
    out.set(hash.subarray(0, 20), at);
    let rest = count;
    for (let i = 0; i < 8; i++) {
      out[at + 20 + i] = rest % 256;
      rest = Math.floor(rest / 256);
    }
    at += 28;
  }
  return out;
}

/**
 * A hashes leaf's record bytes: the 32-byte hashes in order.
 * @param {Array<{ hash: Uint8Array }>} records sorted by hash
 */
export function hashesLeafRecords(records) {
  const out = new Uint8Array(records.length * HASH);
  records.forEach(({ hash }, i) => out.set(hash.subarray(0, HASH), i * HASH));
  return out;
}

/**
 * One level of a sparse tree: node indices ascending, their hashes side by side.
 * @typedef {{ index: Uint32Array | number[], hashes: Uint8Array }} Level
 */

/**
 * Fold a sparse level up `levels` times: parent i = node(child 2i, child 2i+1),
 * a missing child by the default hash of its height. Returns every level, the
 * given one first.
 * @param {Level} level nodes at height `height`
 * @param {number} height
 * @param {number} levels how many times to fold
 * @param {Hasher} hasher
 * @returns {Level[]}
 */
export function foldSparse(level, height, levels, hasher) {
  const out = [level];
  let current = level;
  for (let h = height; h < height + levels; h++) {
    const { index, hashes } = current;
    const n = index.length;
    const parentIndex = new Uint32Array(n);
    const parentHashes = new Uint8Array(n * HASH);
    let m = 0;
    const none = hasher.empty[h];
    for (let i = 0; i < n; i++) {
      const at = index[i];
      const own = hashes.subarray(i * HASH, (i + 1) * HASH);
      let parent;
      if (at % 2 === 0) {
        if (i + 1 < n && index[i + 1] === at + 1) {
          parent = hasher.node(own, hashes.subarray((i + 1) * HASH, (i + 2) * HASH));
          i++;
        } else {
          parent = hasher.node(own, none);
        }
      } else {
        parent = hasher.node(none, own);
      }
      parentIndex[m] = Math.floor(at / 2);
      parentHashes.set(parent, m * HASH);
      m++;
    }
    current = { index: parentIndex.subarray(0, m), hashes: parentHashes.subarray(0, m * HASH) };
    out.push(current);
  }
  return out;
}

/** The hash at `at` of a level, or null when the node is empty. */
function findNode(level, at) {
  const { index } = level;
  let lo = 0;
  let hi = index.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (index[mid] === at) return level.hashes.subarray(mid * HASH, (mid + 1) * HASH);
    if (index[mid] < at) lo = mid + 1;
    else hi = mid - 1;
  }
  return null;
}

/**
 * The upper part of a tree, from the block nodes (height blockBits) to the
 * root: what a server keeps, and what export-ranges writes proofs from.
 * Build it with the non-empty blocks in ascending order.
 */
export class TreeTop {
  /**
   * @param {TreeShape} shape
   * @param {Hasher} hasher
   */
  constructor(shape, hasher) {
    this.shape = shape;
    this.hasher = hasher;
    /** @type {number[]} */
    this.blocks = [];
    /** Their hashes, 32 bytes each, in a buffer that grows (a million small arrays would cost ~100 MB). */
    this.blockHashes = new Uint8Array(1024 * HASH);
    /** @type {Level[] | null} */
    this.levels = null;
  }

  /**
   * @param {number} block the block's index (its top depth - blockBits bits)
   * @param {Uint8Array} hash the block node's hash (a leaf hash when blockBits is 0)
   */
  add(block, hash) {
    if (this.levels) throw new Error('TreeTop: add() after finish()');
    if (this.blocks.length && block <= this.blocks[this.blocks.length - 1]) throw new RangeError('TreeTop: blocks must come in ascending order');
    const at = this.blocks.length * HASH;
    if (at + HASH > this.blockHashes.length) {
      const grown = new Uint8Array(this.blockHashes.length * 2);
      grown.set(this.blockHashes);
      this.blockHashes = grown;
    }
    this.blockHashes.set(hash, at);
    this.blocks.push(block);
  }

  finish() {
    const hashes = this.blockHashes.slice(0, this.blocks.length * HASH);
    const { depth, blockBits } = this.shape;
    this.levels = foldSparse({ index: Uint32Array.from(this.blocks), hashes }, blockBits, depth - blockBits, this.hasher);
    this.blocks = [];
    this.blockHashes = new Uint8Array(0);
    return this;
  }

  /** @returns {Uint8Array} the 32-byte root */
  get root() {
    if (!this.levels) throw new Error('TreeTop: finish() first');
    const top = this.levels[this.levels.length - 1];
    return top.index.length ? top.hashes.slice(0, HASH) : this.hasher.empty[this.shape.depth].slice();
  }

  /**
   * The siblings of block `block`'s node up to the root, bottom-up.
   * @param {number} block
   * @returns {Uint8Array} (depth - blockBits) * 32 bytes
   */
  siblings(block) {
    if (!this.levels) throw new Error('TreeTop: finish() first');
    const { depth, blockBits } = this.shape;
    const out = new Uint8Array(siblingBytes(this.shape));
    let at = block;
    for (let h = blockBits; h < depth; h++) {
      const level = this.levels[h - blockBits];
      out.set(findNode(level, at ^ 1) ?? this.hasher.empty[h], (h - blockBits) * HASH);
      at = Math.floor(at / 2);
    }
    return out;
  }
}

/**
 * The node of a block from its non-empty leaves.
 * @param {Array<{ leaf: number, hash: Uint8Array }>} entries leaf index within the block, ascending
 * @param {TreeShape} shape
 * @param {Hasher} hasher
 */
export function blockNode(entries, shape, hasher) {
  if (shape.blockBits === 0) return entries.length ? entries[0].hash : hasher.empty[0];
  const hashes = new Uint8Array(entries.length * HASH);
  entries.forEach(({ hash }, i) => hashes.set(hash, i * HASH));
  const levels = foldSparse({ index: entries.map(({ leaf }) => leaf), hashes }, 0, shape.blockBits, hasher);
  const top = levels[levels.length - 1];
  return top.index.length ? top.hashes.slice(0, HASH) : hasher.empty[shape.blockBits];
}

/**
 * A proof's bytes: the block's entries (index big-endian, then hash), then the siblings.
 * @param {Array<{ leaf: number, hash: Uint8Array }>} entries
 * @param {Uint8Array} siblings
 * @param {TreeShape} shape
 */
export function proofBytes(entries, siblings, shape) {
  const size = entryBytes(shape);
  const indexBytes = indexBytesOf(shape);
  const out = new Uint8Array(entries.length * size + siblings.length);
  entries.forEach(({ leaf, hash }, i) => {
    for (let k = 0; k < indexBytes; k++) out[i * size + k] = (leaf >>> (8 * (indexBytes - 1 - k))) & 0xff;
    out.set(hash, i * size + indexBytes);
  });
  out.set(siblings, entries.length * size);
  return out;
}

/**
 * Does a leaf, computed by the client from a reply, chain to the signed root?
 * Returns null when it does, or why not (a malformed proof, or a mismatch).
 * @param {Uint8Array} proof the proof file's bytes
 * @param {number} leafIndex the prefix the reply answers (0 .. 2^depth - 1)
 * @param {Uint8Array} leafHash computed from the reply's real rows
 * @param {Uint8Array} root from the signed manifest
 * @param {TreeShape} shape
 * @param {Hasher} hasher
 * @returns {string | null}
 */
export function verifyLeaf(proof, leafIndex, leafHash, root, shape, hasher) {
  const { depth, blockBits } = shape;
  const tail = siblingBytes(shape);
  const size = entryBytes(shape);
  const body = proof.length - tail;
  if (body < 0 || body % size !== 0 || (blockBits === 0 && body !== 0)) {
    return `a proof of ${proof.length} bytes is malformed (${blockBits === 0 ? `expected ${tail}` : `${tail} plus a multiple of ${size}`})`;
  }
  const block = Math.floor(leafIndex / 2 ** blockBits);
  const own = leafIndex - block * 2 ** blockBits;
  const indexBytes = indexBytesOf(shape);
  /** @type {Array<{ leaf: number, hash: Uint8Array }>} */
  const entries = [];
  let placed = false;
  let previous = -1;
  for (let at = 0; at < body; at += size) {
    let leaf = 0;
    for (let k = 0; k < indexBytes; k++) leaf = leaf * 256 + proof[at + k];
    if (leaf <= previous) return 'the proof\'s entries are not in ascending order';
    if (leaf >= 2 ** blockBits) return 'a proof entry lies outside its block';
    previous = leaf;
    if (!placed && leaf >= own) {
      entries.push({ leaf: own, hash: leafHash });
      placed = true;
      if (leaf === own) continue; // the client's own leaf replaces what the proof says
    }
    entries.push({ leaf, hash: proof.subarray(at + indexBytes, at + size) });
  }
  if (!placed) entries.push({ leaf: own, hash: leafHash });
  let node = blockNode(entries, shape, hasher);
  let at = block;
  for (let h = blockBits; h < depth; h++) {
    const sibling = proof.subarray(body + (h - blockBits) * HASH, body + (h - blockBits + 1) * HASH);
    node = at % 2 === 0 ? hasher.node(node, sibling) : hasher.node(sibling, node);
    at = Math.floor(at / 2);
  }
  for (let i = 0; i < HASH; i++) if (node[i] !== root[i]) return 'the reply does not match the signed root';
  return null;
}
