/**
 * screenshots.mjs — where the browser tests write their screenshots.
 *
 * By default outside every tracked file: build/screenshots/ (gitignored), or
 * BLOOMGATE_SCREENSHOT_DIR when set. A test run never rewrites a file under
 * docs/. BLOOMGATE_REFRESH_IMAGES=1 (`BLOOMGATE_REFRESH_IMAGES=1 npm run test:browser`)
 * writes the images the docs show (`docs: true`) into docs/images/ instead.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export const REFRESH_IMAGES = process.env.BLOOMGATE_REFRESH_IMAGES === '1';
export const DOCS_IMAGES = join(root, 'docs', 'images');
export const SCREENSHOT_DIR = process.env.BLOOMGATE_SCREENSHOT_DIR || join(root, 'build', 'screenshots');

/**
 * The path to write screenshot `name` to (its directory is created).
 * @param {string} name a file name such as 'signup-meter.png'
 * @param {{ docs?: boolean }} [options] docs: the image is one docs/images/ holds
 */
export function screenshotPath(name, { docs = false } = {}) {
  const dir = docs && REFRESH_IMAGES ? DOCS_IMAGES : SCREENSHOT_DIR;
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
