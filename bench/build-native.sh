#!/bin/sh
# Build a native benchmark program against the C core in src/*.c.
#
#   sh bench/build-native.sh               -> build/bench/native_bench (bench/native_bench.c)
#   sh bench/build-native.sh native_build  -> build/bench/native_build (bench/native_build.c,
#                                             the native floor under `build --format hibp`)
#   sh bench/build-native.sh floor_build   -> build/bench/floor_build (bench/floor_build.c,
#                                             a static kind built natively: bench/floor-speed.mjs)
#
# Exit status: 0 built, 3 skipped (no C compiler or no /usr/include/xxhash.h),
# anything else a real build failure. CC and CFLAGS may be overridden; the
# default -march=x86-64-v2 (SSE4.2/POPCNT) is what any x86-64 server of the last
# decade runs, and is dropped on other architectures.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/build/bench"
cc=${CC:-cc}
name=${1:-native_bench}
case "$name" in
  native_bench | native_build | floor_build) ;;
  *)
    echo "build-native: unknown program '$name' (native_bench, native_build or floor_build)" >&2
    exit 2
    ;;
esac

if ! command -v "$cc" >/dev/null 2>&1; then
  echo "build-native: no C compiler ($cc)" >&2
  exit 3
fi
if [ ! -f /usr/include/xxhash.h ]; then
  echo "build-native: /usr/include/xxhash.h missing (apt-get install libxxhash-dev)" >&2
  exit 3
fi

if [ -z "${CFLAGS:-}" ]; then
  CFLAGS="-O3 -std=c11 -DNDEBUG"
  case "$(uname -m)" in
    x86_64 | amd64) CFLAGS="$CFLAGS -march=x86-64-v2" ;;
  esac
fi

# libxxhash is only needed when the core does not inline xxHash (XXH_INLINE_ALL);
# linking it with --as-needed costs nothing when unused.
libs="-lm"
for dir in /usr/lib /usr/lib/*-linux-gnu /usr/local/lib; do
  if [ -e "$dir/libxxhash.so" ] || [ -e "$dir/libxxhash.a" ]; then
    libs="-Wl,--as-needed -lxxhash $libs"
    break
  fi
done

mkdir -p "$out"
# Up to date when the binary is newer than every input (and the flags are the same).
stamp="$out/$name.flags"
flags="$cc $CFLAGS $libs"
if [ -x "$out/$name" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$flags" ] &&
  [ -z "$(find "$root/src" "$root/bench/$name.c" "$root/bench/build-native.sh" -newer "$out/$name" \( -name '*.c' -o -name '*.h' -o -name '*.sh' \) 2>/dev/null)" ]; then
  echo "$out/$name"
  exit 0
fi
# Built under a temporary name and renamed, so a concurrent run never executes a half-written binary.
# shellcheck disable=SC2086 # CFLAGS and libs are word lists on purpose
"$cc" $CFLAGS -I"$root/src" -o "$out/$name.tmp-$$" "$root/bench/$name.c" "$root"/src/*.c $libs
mv -f "$out/$name.tmp-$$" "$out/$name"
printf '%s' "$flags" >"$stamp"
echo "$out/$name"
