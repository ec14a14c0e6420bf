#!/usr/bin/env bash
# The second call of a device session, where time is left after session.sh (README.md here): more kernel shapes
# (another seed), the batch sweep of measure.py (where the host stops bounding the step), and the monitor
# recording. About 5 minutes; results packed into $OUT/session2.tar.gz after each step.
set -u
out=${OUT:?OUT must name the folder for the results}
gpu_id=${1:-h200-sxm-141gb}
r="$out/r2"
mkdir -p "$r"
pack() { tar czf "$out/session2.tar.gz.tmp" -C "$out" r2 && mv "$out/session2.tar.gz.tmp" "$out/session2.tar.gz"; }
stamp() { echo "$(date -u +%T) $*" >> "$r/session_log.txt"; }
stamp "start"
mkdir -p "$r/monitor"
OUT="$r/monitor" JOB_S=40 WATCH_S=32 timeout 200 bash tools/device_session/record_monitor.sh "$gpu_id" \
  > "$r/monitor_stdout.txt" 2>&1
stamp "monitor exit $?"
pack
PYTHONUNBUFFERED=1 timeout 200 python3 tools/device_session/measure.py --gpu-id "$gpu_id" --out "$r" \
  --configs batch-sweep --budget-s 150 > "$r/measure_stdout.txt" 2>&1
stamp "measure.py exit $?"
pack
PYTHONUNBUFFERED=1 timeout 100 python3 tools/device_session/kernel_sweep.py --out "$r" --budget-s 60 --seed 20261205 \
  > "$r/kernel_sweep_stdout.txt" 2>&1
stamp "kernel sweep exit $?"
pack
cat "$r/session_log.txt"
