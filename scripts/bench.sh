#!/usr/bin/env bash
# Builds the release preset and runs the benchmarks (bench/README.md): console table on stdout,
# JSON (3 repetitions, aggregates: mean, median, stddev, cv) in build/release/bench/results.json.
# Extra arguments go to the benchmark binary, e.g. scripts/bench.sh --benchmark_filter=Predict
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target perfcast_bench
./build/release/bench/perfcast_bench \
  --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true \
  --benchmark_out=build/release/bench/results.json \
  --benchmark_out_format=json \
  "$@"
echo "wrote build/release/bench/results.json"
