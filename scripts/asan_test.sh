#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer (the `asan` preset, GCC), failing on the first
# report. Benchmarks are not built. Extra arguments go to ctest (e.g. -R Hostile for a subset).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake --preset asan -DPERFCAST_BUILD_BENCH=OFF >/dev/null
cmake --build --preset asan -j "$jobs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
ctest --preset asan -j "$jobs" "$@"
