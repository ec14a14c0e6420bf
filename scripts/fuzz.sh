#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in build/fuzz and runs each briefly.
#   scripts/fuzz.sh [seconds per target] [target ...]      (default: 20 s, every target)
# Seeds: the shipped data files and test fixtures, plus fuzz/regressions/<target>/. What a target finds (crash-*,
# leak-*, timeout-*, oom-*) is written to build/fuzz/findings/<target>/, outside the source tree: a finding is
# moved into fuzz/regressions/<target>/ (which tests/hostile_input_test.cpp replays) together with its fix, so a
# run never fails the test stages that follow it on the same checkout. Exit status 1 when any target found
# something. Long runs: docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(csv gpu_toml runtime_toml price_toml hf_config onnx trace monitor_session)

./scripts/install_fuzz_deps.sh
build=build/fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFCAST_BUILD_FUZZ=ON \
    -DPERFCAST_BUILD_TESTS=OFF -DPERFCAST_BUILD_BENCH=OFF >/dev/null
fi
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

# Seed corpora, rebuilt each run from the shipped files (read-only inputs; new finds go to $build/corpus).
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"
for t in "${targets[@]}"; do
  mkdir -p "$seeds/$t" "$build/corpus/$t" "$build/findings/$t" "fuzz/regressions/$t"
  case $t in
    csv) cp data/validation/*.csv "$seeds/$t/" ;;
    monitor_session) cp tests/data/monitor/*.csv "$seeds/$t/" ;;
    gpu_toml) cp data/gpus/*.toml "$seeds/$t/" ;;
    runtime_toml) cp data/runtimes/*.toml "$seeds/$t/" ;;
    price_toml) cp data/cloud/*.toml "$seeds/$t/" ;;
    hf_config) cp data/models/hf/*.json "$seeds/$t/" ;;
    onnx)
      # Small models from Debian's libonnx-testdata (one per operator test), when installed.
      if [ -d /usr/share/libonnx-testdata/data ]; then
        mapfile -t models < <(find /usr/share/libonnx-testdata/data -name model.onnx -size -8k | sort)
        for f in "${models[@]:0:400}"; do cp "$f" "$seeds/$t/$(echo "$f" | md5sum | cut -c1-12).onnx"; done
      fi ;;
    trace)
      for f in tests/data/kineto/*.json.gz; do
        out="$seeds/$t/$(basename "$f" .gz)"
        gzip -dc "$f" > "$out"
        [ "$(stat -c %s "$out")" -le 262144 ] || rm "$out"
      done ;;
  esac
done

found=()
for t in "${targets[@]}"; do
  max_len=65536
  [ "$t" = trace ] && max_len=262144
  echo "== fuzz_$t: ${seconds}s"
  if ! "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
       "$build/corpus/$t" "$seeds/$t" "fuzz/regressions/$t" 2>"$build/fuzz_$t.log"; then
    found+=("$t")
    grep -E "ERROR|SUMMARY|Test unit written" "$build/fuzz_$t.log" | head -5 || true
  fi
  grep -E "stat::number_of_executed_units|cov:" "$build/fuzz_$t.log" | tail -2 || true
done
if ((${#found[@]})); then
  echo "fuzz: findings in ${found[*]} (inputs in $build/findings/<target>/, logs in $build/fuzz_<target>.log);" \
    "fix the reader, then move each input into fuzz/regressions/<target>/"
  exit 1
fi
echo "fuzz: no findings in ${targets[*]} (${seconds}s each)"
