#!/usr/bin/env bash
# A third, short call: the monitor recording alone (record_monitor.sh), about 2 minutes. Packed into
# $OUT/session3.tar.gz.
set -u
out=${OUT:?OUT must name the folder for the results}
mkdir -p "$out/r3/monitor"
OUT="$out/r3/monitor" JOB_S=40 WATCH_S=32 timeout 200 bash tools/device_session/record_monitor.sh "${1:-h200-sxm-141gb}" \
  > "$out/r3/monitor_stdout.txt" 2>&1
echo "monitor exit $?" >> "$out/r3/monitor_stdout.txt"
tar czf "$out/session3.tar.gz" -C "$out" r3
cat "$out/r3/monitor/job_"*.log "$out/r3/monitor_stdout.txt"
