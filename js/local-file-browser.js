// @ts-check
/**
 * local-file-browser.js — outside Node there are no local files: every
 * string or URL given to loadFilter() is fetched (package.json maps
 * `#local-file` here for every non-Node condition).
 * @returns {Promise<null>}
 */
export async function openLocalFile() {
  return null;
}
