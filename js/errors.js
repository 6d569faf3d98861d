/**
 * errors.js — the one error type the library throws for its own failures.
 *
 * `code` is stable and machine-readable: the C status name without its BG_
 * prefix (E_CHECKSUM, E_TRUNCATED, ...), or one of the JavaScript-only codes
 * E_FREED (use after free), E_INTEGRITY (Subresource Integrity mismatch) and
 * E_FETCH (network or HTTP failure). Argument mistakes are TypeError or
 * RangeError instead, as in the platform's own APIs.
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
