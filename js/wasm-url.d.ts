/**
 * 'bloomgate/wasm' is the package's wasm/bloomgate.wasm. What importing it
 * gives depends on the bundler's rule for .wasm files; with a rule that turns
 * files into URLs (esbuild `--loader:.wasm=file`, webpack `type: 'asset/resource'`,
 * @rollup/plugin-url) it is the emitted file's URL, for `init(url)`.
 * Resolving it (`import.meta.resolve('bloomgate/wasm')`,
 * `require.resolve('bloomgate/wasm')`) gives the file's location.
 */
declare const url: string;
export default url;
