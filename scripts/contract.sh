#!/bin/sh
# Regenerate js/wasm/contract.js (or write it to $1) from src/bloomgate.h and
# wasm/exports.txt with the host C compiler.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$root/src" "$root/scripts/contract.c" -o "$tmp/contract"
"$tmp/contract" "$root/wasm/exports.txt" > "$tmp/contract.js"
cp "$tmp/contract.js" "${1:-$root/js/wasm/contract.js}"
