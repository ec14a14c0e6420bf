#!/usr/bin/env python3
"""tools/decode_power_budget.py's per-bit solve against readings it did not use, and its refusal of evaluation files.

The tool solves three A100 SXM4 40GB roofline readings of gpu-benches (alex_a100_40.txt at 0.25, 14.25 and 60.25
flop/byte) for P = P0 + a x FP32-FMA share + b x GB/s. The same file publishes the other intensities; three of them,
means of its eight boards at 1410 MHz, must follow from the solved terms within 3%:
  1.25 flop/byte:   1363 GB/s,  1.704 TFLOPS, 236/231/239/242/248/235/233/237 W (mean 237.6 W)
  40.25 flop/byte:   452 GB/s, 18.20 TFLOPS, 214/211/218/225/229/212/211/215 W (mean 216.9 W)
  100.25 flop/byte:  190 GB/s, 19.02 TFLOPS, 183/180/186/191/197/181/181/187 W (mean 185.75 W)
and the whole path's energy per bit must exceed the HBM2 device's own (O'Connor et al. 2017: data/power.toml
[dram_pj_per_bit]).

    tests/decode_power_budget_test.py SOURCE_DIR
"""
import importlib.util
import os
import subprocess
import sys


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    path = os.path.join(root, "tools", "decode_power_budget.py")
    spec = importlib.util.spec_from_file_location("decode_power_budget", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    p0, a, b = tool.solve3(tool.A100_ROOFLINE)
    failures = []
    for gbps, tflops, watts in [(1363, 1.704, 237.6), (452, 18.20, 216.9), (190, 19.02, 185.75)]:
        predicted = p0 + a * tflops / 19.5 + b * gbps
        if abs(predicted / watts - 1) > 0.03:
            failures.append(f"{gbps} GB/s, {tflops} TFLOPS: solved terms give {predicted:.1f} W, published {watts} W")
    if not b * 1000 / 8 > tool.HBM2_PJ_PER_BIT:
        failures.append(f"whole-path energy {b * 1000 / 8:.1f} pJ/bit is not above the HBM2 device's "
                        f"{tool.HBM2_PJ_PER_BIT}")
    out = subprocess.run([sys.executable, path, "--perfcast", "/nonexistent", os.path.join(root, "data", "validation",
                                                                                          "eval_x.csv")],
                         capture_output=True, text=True)
    if out.returncode != 2 or "is an evaluation file: frozen" not in out.stderr:
        failures.append(f"an eval_ file was not refused with exit code 2: {out.returncode} {out.stderr.strip()}")
    for f in failures:
        print("FAIL:", f)
    print("decode_power_budget_test:", "FAILED" if failures else "passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
