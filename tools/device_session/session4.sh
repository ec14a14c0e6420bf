#!/usr/bin/env bash
# The call prepared for the next lent machine (session 20): what sessions 19's three calls left open.
# 1. host_bench.py: PyTorch eager's per-op host costs measured on the device host itself (its CPU SKU is hidden,
#    so no PassMark score can place it in data/hosts; docs/host-model.md), about 30 s.
# 2. kernel_sweep.py with a new seed: tensor-core GEMM shapes now drawn in multiples of 8 (session 19's rows were
#    unaligned and ran cuBLAS's align1 kernels), about 2 minutes.
# 3. memory_probe.py: the CUDA context, the allocator's peaks and nvidia-smi's per-process figure apart
#    (docs/memory.md, 'The H200 recording as an outside check'), under a minute.
# 4. measure.py main, if time is left: the PyTorch throughput rows again under this call's driver state.
# Results packed into $OUT/session4.tar.gz after each step. Needs no perfcast binary.
set -u
out=${OUT:?OUT must name the folder for the results}
gpu_id=${1:-h200-sxm-141gb}
r="$out/r4"
mkdir -p "$r"
pack() { tar czf "$out/session4.tar.gz.tmp" -C "$out" r4 && mv "$out/session4.tar.gz.tmp" "$out/session4.tar.gz"; }
stamp() { echo "$(date -u +%T) $*" >> "$r/session_log.txt"; }
stamp "start"
PYTHONUNBUFFERED=1 timeout 90 python3 tools/device_session/host_bench.py --out "$r" > "$r/host_bench_stdout.txt" 2>&1
stamp "host_bench exit $?"
pack
PYTHONUNBUFFERED=1 timeout 170 python3 tools/device_session/kernel_sweep.py --out "$r" --budget-s 130 --seed 20261206 \
  > "$r/kernel_sweep_stdout.txt" 2>&1
stamp "kernel sweep exit $?"
pack
PYTHONUNBUFFERED=1 timeout 100 python3 tools/device_session/memory_probe.py --batch 128 > "$r/memory_probe.txt" 2>&1
stamp "memory_probe exit $?"
pack
PYTHONUNBUFFERED=1 timeout 200 python3 tools/device_session/measure.py --gpu-id "$gpu_id" --out "$r" \
  --configs main --budget-s 150 > "$r/measure_stdout.txt" 2>&1
stamp "measure.py exit $?"
pack
cat "$r/session_log.txt" "$r/host_bench_stdout.txt"
