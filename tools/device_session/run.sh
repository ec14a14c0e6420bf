#!/usr/bin/env bash
# One prepared run for a session that is lent a GPU machine (see README.md here). Writes at most 7 files to $OUT.
set -u
out=${OUT:?OUT must name the folder for the results}
mkdir -p "$out"
gpu_id=${1:-h200-sxm-141gb}
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
# 1. perfcast-calibrate, built on the development machine and carried with its two non-CUDA libraries.
if [ -x build/cuda/perfcast-calibrate ]; then
  LD_LIBRARY_PATH="$PWD/.devlibs:${LD_LIBRARY_PATH:-}" timeout 150 build/cuda/perfcast-calibrate \
    --base "data/gpus/$gpu_id.toml" --out "$out/$gpu_id-measured.toml" > "$out/calibrate.log" 2>&1
fi
# 2. The SASS of the batch-norm inference kernel perfcast counts instructions for (tools/sass_count).
if command -v cuobjdump > /dev/null; then
  nvcc -O3 -arch=sm_90 -cubin -o /tmp/bn.cubin tools/sass_count/bn_inference.cu &&
    cuobjdump -sass /tmp/bn.cubin > "$out/bn_inference_sm90.sass" 2>&1
fi
# 3. PyTorch throughputs and kernel lists.
PYTHONUNBUFFERED=1 timeout 420 python3 tools/device_session/measure.py --gpu-id "$gpu_id" --out "$out" --budget-s 330
echo "run.sh done"
