// @ts-check
/**
 * errors.js — the one error type the library throws for its own failures.
 *
 * `code` is stable and machine-readable: the C status name without its BG_
 * prefix (E_CHECKSUM, E_TRUNCATED, E_DELTA_BASE, ...: js/wasm/contract.js
 * lists them), or one of the JavaScript-only codes: E_FREED (use after free),
 * E_INTEGRITY (Subresource Integrity mismatch), E_FETCH (network or HTTP
 * failure), E_TIMEOUT, E_ESCALATION (an escalation reply not to be trusted),
 * E_NOT_READY, E_WASM, E_CSP, and openFilter's E_MANIFEST (a bad publication
 * manifest), E_STALE (an older generation offered), E_LIST (another list
 * offered), E_STORAGE, E_SIGNATURE (a manifest or key history not signed by
 * the trusted keys), E_EXPIRED (a manifest past its expiry, or a stale filter
 * queried with onStale 'error') and E_INSECURE (plain http: off loopback).
 * Argument mistakes are TypeError or RangeError instead, as in the platform's
 * own APIs.
 */
export class BloomgateError extends Error {
  /**
   * @param {string} code stable error code, e.g. 'E_CHECKSUM'
   * @param {string} message human-readable explanation
   * @param {{ cause?: unknown }} [options] standard Error options
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = 'BloomgateError';
    this.code = code;
  }
}

/* ------------------------------------------------------------------------ */
/* Instantiation failures: say what was tried and how to fix it              */
/* ------------------------------------------------------------------------ */

const MODULE_FIXES = 'Serve wasm/bloomgate.wasm (it ships in the bloomgate package) at that URL, ' +
  'pass the module to init() yourself (await init(bytes), a URL or a compiled WebAssembly.Module), ' +
  "or import from 'bloomgate/inline', which carries the module in the JavaScript";

/**
 * E_FETCH for a wasm module that could not be fetched or read.
 * @param {unknown} where the URL or path tried
 * @param {string} detail what went wrong ('HTTP 404', 'no such file', ...)
 * @param {unknown} [cause]
 */
export function moduleFetchError(where, detail, cause) {
  const error = new BloomgateError('E_FETCH',
    `could not fetch the bloomgate wasm module from ${String(where || 'an unknown location')}: ${detail}. ${MODULE_FIXES}.`,
    cause === undefined ? undefined : { cause });
  return error;
}

/**
 * E_WASM for bytes that are not WebAssembly (a server answering an HTML page
 * for the module's URL, say).
 * @param {unknown} where
 * @param {ArrayBuffer | ArrayBufferView} bytes
 * @param {string} [type] the response's content type
 */
export function notWasmError(where, bytes, type) {
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : new Uint8Array(bytes);
  const start = Array.from(view.subarray(0, 16), (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
  return new BloomgateError('E_WASM',
    `the bloomgate wasm module from ${String(where || 'the response')} is not WebAssembly ` +
    `(${view.length} bytes starting "${start}"${type ? `, content type ${type}` : ''}). ${MODULE_FIXES}.`);
}

/** True when the first bytes are the WebAssembly magic "\0asm". */
export function looksLikeWasm(bytes) {
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 4))
    : new Uint8Array(bytes, 0, Math.min(bytes.byteLength, 4));
  return view.length === 4 && view[0] === 0 && view[1] === 0x61 && view[2] === 0x73 && view[3] === 0x6d;
}

// Chromium: "Refused to compile or instantiate WebAssembly module because 'unsafe-eval' is not an
// allowed source of script in the following Content Security Policy directive ..."; Firefox:
// "... blocked by CSP"; Safari: "Refused to create a WebAssembly object because 'unsafe-eval' or
// 'wasm-unsafe-eval' is not an allowed source of script ...".
const CSP_REFUSAL = /content[- ]security[- ]policy|\bCSP\b|unsafe-eval/i;

/**
 * What init() rejects with: a CSP refusal to compile WebAssembly becomes E_CSP,
 * another compile or link failure E_WASM; anything else is returned as it is.
 * @param {unknown} error
 */
export function instantiationError(error) {
  if (error instanceof BloomgateError || error === null || typeof error !== 'object') return error;
  const name = /** @type {{ name?: unknown }} */ (error).name;
  const message = String(/** @type {{ message?: unknown }} */ (error).message ?? '');
  const wasmError = name === 'CompileError' || name === 'LinkError' || name === 'RuntimeError';
  if ((wasmError || name === 'EvalError') && CSP_REFUSAL.test(message)) {
    return new BloomgateError('E_CSP',
      "this page's Content-Security-Policy does not allow WebAssembly: add 'wasm-unsafe-eval' to its script-src " +
      `(script-src 'self' 'wasm-unsafe-eval'); every way of loading the module needs it. The browser said: ${message}`,
      { cause: error });
  }
  if (wasmError) {
    return new BloomgateError('E_WASM', `the bloomgate wasm module could not be instantiated: ${message}`, { cause: error });
  }
  return error;
}
