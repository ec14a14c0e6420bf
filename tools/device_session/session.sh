#!/usr/bin/env bash
# The whole device session in one call (README.md here): the kernel sweep, the PyTorch throughputs and kernel
# lists, a recorded `perfcast monitor` session, perfcast-calibrate and the batch-norm SASS, in that order (most
# wanted first), each under its own time limit so the whole ends within about 9 minutes. Everything lands in
# $OUT/r and is packed into $OUT/session.tar.gz after each step, so a cut-off run still returns what it finished.
set -u
out=${OUT:?OUT must name the folder for the results}
gpu_id=${1:-h200-sxm-141gb}
r="$out/r"
mkdir -p "$r"
pack() { tar czf "$out/session.tar.gz.tmp" -C "$out" r && mv "$out/session.tar.gz.tmp" "$out/session.tar.gz"; }
stamp() { echo "$(date -u +%T) $*" >> "$r/session_log.txt"; }
stamp "start $(git rev-parse --short HEAD 2> /dev/null)"
nvidia-smi > "$r/nvidia-smi.txt" 2>&1
nvidia-smi -q > "$r/nvidia-smi-q.txt" 2>&1
lscpu > "$r/lscpu.txt" 2>&1
pack
stamp "kernel sweep"
PYTHONUNBUFFERED=1 timeout 130 python3 tools/device_session/kernel_sweep.py --out "$r" --budget-s 80 \
  > "$r/kernel_sweep_stdout.txt" 2>&1
stamp "kernel sweep exit $?"
pack
stamp "measure.py"
PYTHONUNBUFFERED=1 timeout 210 python3 tools/device_session/measure.py --gpu-id "$gpu_id" --out "$r" --budget-s 150 \
  > "$r/measure_stdout.txt" 2>&1
stamp "measure.py exit $?"
pack
stamp "monitor"
mkdir -p "$r/monitor"
OUT="$r/monitor" JOB_S=40 WATCH_S=32 timeout 200 bash tools/device_session/record_monitor.sh "$gpu_id" \
  > "$r/monitor_stdout.txt" 2>&1
stamp "monitor exit $?"
pack
if [ -x build/cuda/perfcast-calibrate ]; then
  stamp "calibrate"
  LD_LIBRARY_PATH="$PWD/.devlibs:${LD_LIBRARY_PATH:-}" timeout 80 build/cuda/perfcast-calibrate \
    --base "data/gpus/$gpu_id.toml" --out "$r/$gpu_id-measured.toml" > "$r/calibrate.log" 2>&1
  stamp "calibrate exit $?"
  pack
fi
if command -v cuobjdump > /dev/null; then
  nvcc -O3 -arch=sm_90 -cubin -o /tmp/bn.cubin tools/sass_count/bn_inference.cu &&
    timeout 20 cuobjdump -sass /tmp/bn.cubin > "$r/bn_inference_sm90.sass" 2>&1
fi
stamp "done"
pack
cat "$r/session_log.txt"
