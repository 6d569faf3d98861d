// @ts-check
/**
 * entry-inline.js — what `import … from 'bloomgate/inline'` loads through
 * package.json "exports": js/inline.js plus the static platform imports of
 * js/entry.js (single-chunk bundles). Pages without a bundler import
 * js/inline.js by path.
 */
import './entry.js';

export * from './inline.js';
