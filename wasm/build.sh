#!/bin/sh
# Rebuild wasm/bloomgate.wasm from src/ with Debian's Emscripten.
# Output is byte-identical wherever the checkout lives (see CMakeLists.txt).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BG_WASM_BUILD_DIR:-$root/build/wasm}
# Debian's emscripten tools need its Node modules on the path.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
command -v emcmake >/dev/null 2>&1 || { echo "build.sh: emcmake not found: apt-get install emscripten" >&2; exit 1; }
emcmake cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBG_TESTS=OFF >/dev/null
cmake --build "$build" --target bloomgate_wasm
cp "$build/bloomgate.wasm" "${1:-$root/wasm/bloomgate.wasm}"
echo "wrote ${1:-$root/wasm/bloomgate.wasm} ($(wc -c < "${1:-$root/wasm/bloomgate.wasm}") bytes)"
