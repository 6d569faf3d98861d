#!/bin/sh
# npm run test:c — the C tests under AddressSanitizer and UndefinedBehaviorSanitizer,
# then (when BG_FUZZ_SECONDS > 0) each libFuzzer target (reader, URL canonicalizer, delta reader) for that many seconds.
#   sh tests/c/run.sh                      # unit tests, golden files
#   BG_FUZZ_SECONDS=60 sh tests/c/run.sh   # and a minute of fuzzing (CI)
# Exits non-zero on any failure.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

CC=${CC:-clang}
export CC
fuzz_seconds=${BG_FUZZ_SECONDS:-0}
jobs=${BG_JOBS:-2}
generator=""
if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi

# Fail on the first sanitizer report, with a stack.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export UBSAN_OPTIONS

echo "== C tests (ASan + UBSan, $CC) in build/c-asan"
# shellcheck disable=SC2086 # $generator is empty or two words on purpose
cmake -S . -B build/c-asan $generator -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBG_SANITIZE=ON -DBG_TESTS=ON
cmake --build build/c-asan -j "$jobs"
(cd build/c-asan && ctest --output-on-failure -j "$jobs")

case "$fuzz_seconds" in
  '' | *[!0-9]*) echo "BG_FUZZ_SECONDS must be a whole number of seconds, got '$fuzz_seconds'" >&2; exit 2 ;;
esac
if [ "$fuzz_seconds" -gt 0 ]; then
  # shellcheck disable=SC2086
  cmake -S . -B build/fuzz $generator -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBG_FUZZ=ON -DBG_TESTS=OFF
  cmake --build build/fuzz -j "$jobs" --target fuzz_reader fuzz_url fuzz_delta
  # Fuzz copies: libFuzzer adds what it finds to the corpus directory it is given.
  work=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-fuzz.XXXXXX")
  trap 'rm -rf "$work"' EXIT INT TERM
  mkdir -p "$work/reader" "$work/url" "$work/delta" build/fuzz/artifacts
  cp tests/fuzz/corpus/* tests/fuzz/regressions/* "$work/reader"/
  cp tests/fuzz/url_corpus/* "$work/url"/
  cp tests/fuzz/delta_corpus/* "$work/delta"/
  echo "== fuzzing the reader for ${fuzz_seconds}s in build/fuzz"
  build/fuzz/tests/fuzz/fuzz_reader -max_total_time="$fuzz_seconds" -dict=tests/fuzz/bgf.dict \
    -artifact_prefix=build/fuzz/artifacts/ -print_final_stats=1 "$work/reader"
  echo "== fuzzing the URL canonicalizer for ${fuzz_seconds}s in build/fuzz"
  build/fuzz/tests/fuzz/fuzz_url -max_total_time="$fuzz_seconds" \
    -artifact_prefix=build/fuzz/artifacts/url- -print_final_stats=1 "$work/url"
  echo "== fuzzing the delta reader for ${fuzz_seconds}s in build/fuzz"
  build/fuzz/tests/fuzz/fuzz_delta -max_total_time="$fuzz_seconds" \
    -artifact_prefix=build/fuzz/artifacts/delta- -print_final_stats=1 "$work/delta"
  echo "fuzzers finished: no crash in ${fuzz_seconds}s each (crash inputs would be in build/fuzz/artifacts/)"
fi
