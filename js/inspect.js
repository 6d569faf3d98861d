// @ts-check
/**
 * inspect.js — inspectFile(): everything a .bgf file says about itself, for
 * the CLI's `inspect` and for debugging. Bad file bytes are reported, never
 * thrown: the fixed header is shown whenever it parses (bg_header_peek), and
 * `code` is the result of full validation (lengths, checksum, every field).
 * The header's 64-bit fields are Numbers below 2^53 and BigInts from there
 * (js/wasm/contract.js), never rounded: a header resealed with a huge m, or a
 * valid file that claims 2^64 - 1 items. Readers check the type before any
 * arithmetic (the CLI's inspect prints them exactly, its other commands refuse
 * a valid file past 2^53 - 1 with E_TOO_LARGE: js/cli/filter-file.js).
 */
import { asBytes, wrapFilterPointer } from './filter.js';
import * as wasm from './wasm/index.js';

function checksumHolds(view) {
  const sum = new wasm.FileChecksum();
  try {
    sum.update(view);
    const digest = sum.digestBytes();
    for (let i = 0; i < 8; i++) if (digest[i] !== view[8 + i]) return false;
    return true;
  } finally {
    sum.free();
  }
}

/**
 * `bytes`: a .bgf file. The signature is index.d.ts's.
 * @type {typeof import('./index.js').inspectFile}
 */
export async function inspectFile(bytes) {
  const view = asBytes(bytes, 'inspectFile()');
  await wasm.ready();
  const { peek, validate } = wasm.headerOf(view);
  /** @type {import('./index.js').InspectReport} */
  const report = {
    ok: false,
    code: 'OK',
    message: 'ok',
    // The flattened header gains fileLength after it is read (wasm/buffers.js), which inference misses.
    header: /** @type {import('./index.js').FileHeader | null} */ (validate.header ?? peek.header),
    stats: null,
    metadata: null,
    checksumVerified: false,
  };
  // Checked on its own: validation stops at the first failure, and a failure after the
  // checksum step (a bad field) says nothing of whether the checksum held.
  report.checksumVerified = report.header !== null && view.length === report.header.fileLength && checksumHolds(view);
  if (validate.rc < 0) {
    report.code = /** @type {import('./index.js').BloomgateErrorCode} */ (wasm.statusName(validate.rc));
    report.message = wasm.statusMessage(validate.rc);
    return report;
  }
  /** @type {ReturnType<typeof wrapFilterPointer> | null} */
  let filter = null;
  try {
    filter = wrapFilterPointer(wasm.filterFromBytes(view));
    report.stats = filter.stats();
    // The flattened header carries no list id; the filter does.
    if (report.header !== null) report.header.listId = /** @type {import('./index.js').FilterStats} */ (report.stats).listId;
    report.metadata = filter.metadata;
    report.ok = true;
  } catch (/** @type {any} */ error) {
    // Validation passed but the filter could not be built (e.g. out of memory).
    report.code = typeof error.code === 'string' ? error.code : 'E_ARG';
    report.message = String(error.message);
  } finally {
    if (filter !== null) filter.free();
  }
  return report;
}
