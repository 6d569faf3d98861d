// Vite config for the example. The one line that matters is the alias: inside
// this repository 'bloomgate' is the repo root, not an installed package. An
// app that ran `npm install bloomgate` needs no config at all: the wasm file is
// found through `new URL('../wasm/bloomgate.wasm', import.meta.url)` in the
// library, which Vite turns into a hashed asset on its own.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  resolve: { alias: { bloomgate: fileURLToPath(new URL('../..', import.meta.url)) } },
  build: { target: 'es2022' },
});
