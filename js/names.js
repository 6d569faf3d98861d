// @ts-check
/**
 * names.js — kinds, key encodings and hash algorithms by name and by header
 * id, read from the core's tables (js/wasm/contract.js, generated from
 * src/bloomgate.h), for filter.js and the CLI. No list is restated here.
 */
import { HASH_ALGORITHMS, HEADER_FIELDS, KEY_ENCODINGS, KINDS } from './wasm/index.js';

/** Kind header id by name ('classic' -> 1). */
export const KIND_IDS = new Map(KINDS.map((kind) => [kind.name, kind.id]));
/** Key encoding header id by name ('utf8' -> 0). */
export const KEY_ENCODING_IDS = new Map(KEY_ENCODINGS.map((encoding) => [encoding.name, encoding.id]));
/** Header ids of the static kinds (built once from all their keys). */
export const STATIC_KIND_IDS = new Set(KINDS.filter((kind) => kind.static).map((kind) => kind.id));
/** Header ids of the kinds sized exactly like the classic filter. */
export const CLASSIC_SIZED_KIND_IDS = new Set(KINDS.filter((kind) => kind.classicSized).map((kind) => kind.id));

const KIND_NAMES = new Map(KINDS.map((kind) => [kind.id, kind.name]));
const KEY_ENCODING_NAMES = new Map(KEY_ENCODINGS.map((encoding) => [encoding.id, encoding.name]));
const HASH_NAMES = new Map(HASH_ALGORITHMS.map((hash) => [hash.id, hash.name]));

/** 'classic' for 1; `unknown(9)` for an id this build does not know. */
export const kindName = (id) => KIND_NAMES.get(id) ?? `unknown(${id})`;
export const keyEncodingName = (id) => KEY_ENCODING_NAMES.get(id) ?? `unknown(${id})`;
export const hashName = (id) => HASH_NAMES.get(id) ?? `unknown(${id})`;

/** Byte offset of a fixed header field ('listId' -> 80), for reading files that fail validation. */
export function headerOffset(name) {
  const field = HEADER_FIELDS.find((f) => f.name === name);
  if (field === undefined) throw new Error(`no header field '${name}'`);
  return field.offset;
}
