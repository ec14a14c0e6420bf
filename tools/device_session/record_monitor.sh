#!/usr/bin/env bash
# Records `perfcast monitor` sessions on a GPU machine while a PyTorch job runs (README.md here, "perfcast monitor"):
# ResNet-50 AMP training with its batches on the GPU, then with each batch made on the host, each watched for 50 s
# at 1 s with --compare against perfcast's prediction of the GPU-fed job, nvidia-smi sampling beside it as a check
# of the NVML readings. About 2.5 minutes. Writes at most 12 files to $OUT.
set -u
out=${OUT:?OUT must name the folder for the results}
mkdir -p "$out"
gpu_id=${1:-h200-sxm-141gb}
bin=${PERFCAST_BIN:-build/release/perfcast}
job_s=${JOB_S:-40}      # how long each phase's training job runs
watch_s=${WATCH_S:-50}  # how long perfcast monitor samples each phase
# perfcast built on the development machine, carried with the libraries the device machine lacks (.devlibs); the
# path is set for perfcast alone, so the PyTorch job keeps the device's own libraries.
devlibs="$PWD/.devlibs:${LD_LIBRARY_PATH:-}"
export PERFCAST_DATA="$PWD/data"  # the checkout's data/, not an installed prefix
perfcast() { LD_LIBRARY_PATH="$devlibs" "$bin" "$@"; }
perfcast --version > "$out/perfcast-version.txt" 2>&1
perfcast predict --gpu "$gpu_id" --model resnet50_v1_5 --mode train --precision amp --batch 128 --json \
  > "$out/predict_resnet50_amp_b128.json" 2> "$out/predict.err"
for phase in gpu host; do
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw,clocks.sm,clocks_throttle_reasons.active \
    --format=csv -lms 1000 > "$out/nvidia-smi_$phase.csv" 2>&1 &
  smi=$!
  PYTHONUNBUFFERED=1 python3 tools/device_session/monitor_job.py --phase "$phase" --seconds "$job_s" \
    > "$out/job_$phase.log" 2>&1 &
  job=$!
  # Watch the steady state: start the monitor once the job has warmed up (its "warm" line), at most 60 s on.
  for _ in $(seq 120); do grep -q '^warm' "$out/job_$phase.log" 2> /dev/null && break; sleep 0.5; done
  LD_LIBRARY_PATH="$devlibs" timeout $((watch_s + 20)) "$bin" monitor --interval 1s --duration "${watch_s}s" --csv "$out/${gpu_id}_resnet50_amp_b128_$phase.csv" \
    --compare "$out/predict_resnet50_amp_b128.json" > "$out/monitor_$phase.txt" 2>&1
  echo "monitor exit $?" >> "$out/monitor_$phase.txt"
  wait "$job"
  kill "$smi" 2> /dev/null
done
echo "record_monitor.sh done"
