#!/usr/bin/env python3
"""What would a power row's kernels have to draw? A bound on board-power rows, from `perfcast validate --json`.

perfcast averages a step's board power as (src/analysis/power.cpp)
    P_avg = busy_share x P_kernels + (1 - busy_share) x P_wait
with busy_share the share of the step the GPU runs kernels and P_wait the board with its clocks up and no kernel
(data/power.toml clocks_up_activity). `validate --json` gives each board_power_w row these terms (`power_terms`).
Holding the predicted busy share and wait power, the mean kernel draw a measurement implies is
    P_kernels = (measured - (1 - busy_share) x P_wait) / busy_share.
A row whose implied draw passes the board's limit (`limit_w`) cannot be met by any per-kernel power constant: its
predicted busy share (the kernels' time against the host's), its wait power or the board the row names is wrong.
A row under the limit can: the implied draw is set against the kernels' mean draw in the prediction (the same
formula with the predicted average) and the most any of its kernels draws (`peak_power_w`).

Prints one line per power row and a count per (GPU, mode); writes nothing. Fits nothing: it reads predictions.

Usage: tools/power_regimes.py [--perfcast build/release/perfcast] [data/validation/power.csv]
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/calibration_rows.py
import calibration_rows  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    calibration_rows.fail("power_regimes.py", message)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build", "release", "perfcast"))
    ap.add_argument("file", nargs="?", default=os.path.join(ROOT, "data", "validation", "power.csv"))
    a = ap.parse_args()
    rows = [r for r in calibration_rows.validated_rows("power_regimes.py", a.perfcast, a.file) if r.get("metric") == "board_power_w" and "power_terms" in r]
    if not rows:
        fail(f"no board_power_w rows with power terms in {a.file}")
    print(f"{'line':>4} {'gpu':<16} {'model':<16} {'mode':<8} {'meas W':>7} {'pred W':>7} {'busy':>5} "
          f"{'wait W':>6} {'peak W':>6} {'limit':>5} {'kernels W':>9} {'implied':>7}  verdict")
    groups = collections.defaultdict(lambda: [0, 0, 0])
    for r in rows:
        t = r["power_terms"]
        busy, wait, peak, limit = t["busy_share"], t["wait_power_w"], t["peak_power_w"], t["limit_w"]
        if busy <= 0:
            continue
        kernels = (r["predicted"] - (1 - busy) * wait) / busy
        implied = (r["measured"] - (1 - busy) * wait) / busy
        if kernels <= 0:
            continue
        if implied > limit:
            verdict, k = "over the limit: busy share, wait power or board", 0
        elif implied > peak:
            verdict, k = "over the step's hungriest kernel", 1
        else:
            verdict, k = f"kernels x {implied / kernels:.2f}", 2
        g = groups[(r["gpu"], r["mode"])]
        g[k] += 1
        print(f"{r['line']:>4} {r['gpu']:<16} {r['model']:<16} {r['mode']:<8} {r['measured']:>7.1f} "
              f"{r['predicted']:>7.1f} {busy:>5.2f} {wait:>6.1f} {peak:>6.1f} {limit:>5.0f} {kernels:>9.0f} "
              f"{implied:>7.0f}  {verdict}")
    print("\nper GPU and mode: rows whose implied kernel draw is over the limit / over the hungriest kernel / "
          "within it")
    for (gpu, mode), (over, above_peak, within) in sorted(groups.items()):
        print(f"  {gpu:<16} {mode:<8} {over:>3} / {above_peak:>3} / {within:>3}")


if __name__ == "__main__":
    main()
