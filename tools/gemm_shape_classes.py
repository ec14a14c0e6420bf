#!/usr/bin/env python3
"""perfcast's FP32 GEMM kernel time against NeuSight's measured linear and bmm kernels, by GEMM shape class.

Writes every measured linear / bmm row as a `perfcast op --configs` row, runs it, and prints the median of
predicted / measured kernel time (no harness floor, no launch: what `perfcast op` predicts) per GPU and class:
long-K (depth >= 2.5 x output columns), wide-N (output columns >= 2.5 x depth), square (the rest), and for bmm
depth <= 96 (like Q K^T, depth = head size), output columns <= 96 (like P V) and the rest; then the linear classes by
measured length (the T4's and P4's power-limited soak and the P100's long-K rows are length effects).

NeuSight's columns (shared/kernels/neusight_train, README there): linear B, M, N, K is x[B, M, N] -> [B, M, K], so
the GEMM is m = B x M rows, depth N, output columns K; bmm B, M, N, K is [B, M, N] x [B, N, K], depth N, output
columns K (src/analysis/kernel_fit.cpp measured_op_spec reads them so). --swap passes NeuSight's N as perfcast's n
and K as k (depth and output columns exchanged): the reading that gave session 32's lead its long-K / wide-N split
(docs/calibration.md, session 32, h/gemmshape32). Rows under --min-ms measured are left out.

    tools/gemm_shape_classes.py [--perfcast build/release/perfcast] [--kernels ../shared/kernels/neusight_train] [--swap]
"""
import argparse
import csv
import glob
import gzip
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/neusight_devices.py
import neusight_devices  # noqa: E402

LENGTH_BINS_US = [0, 300, 1000, 3000, 10000, 30000]


def linear_class(depth, cols):
    return "long-K" if depth >= 2.5 * cols else "wide-N" if cols >= 2.5 * depth else "square"


def bmm_class(depth, cols):
    return "bmm depth<=96" if depth <= 96 else "bmm cols<=96" if cols <= 96 else "bmm other"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfcast", default=os.path.join(here, "..", "build", "release", "perfcast"))
    ap.add_argument("--kernels", default=os.path.join(here, "..", "..", "shared", "kernels", "neusight_train"))
    ap.add_argument("--swap", action="store_true", help="exchange depth and output columns (the wrong reading)")
    ap.add_argument("--min-ms", type=float, default=0.1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg, out = os.path.join(tmp, "configs.csv"), os.path.join(tmp, "out.csv")
        with open(cfg, "w") as f:
            f.write("gpu,op,m,n,k,batch_count,meas_us,depth,cols,shape_class\n")
            for op in ("linear", "bmm"):
                for path in sorted(glob.glob(os.path.join(a.kernels, op, "*.csv.gz"))):
                    gpu = neusight_devices.catalog_id(neusight_devices.device_of_file(path), "gemm_shape_classes.py")
                    with gzip.open(path, "rt") as g:
                        for r in csv.DictReader(g):
                            meas = float(r["Latency"]) * 1000
                            if meas < a.min_ms * 1000:
                                continue
                            b, m, depth, cols = int(r["B"]), int(r["M"]), int(r["N"]), int(r["K"])
                            n, k = (depth, cols) if a.swap else (cols, depth)
                            if op == "linear":
                                row = f"{gpu},linear,{b * m},{n},{k},1,{meas},{depth},{cols},{linear_class(depth, cols)}"
                            else:
                                row = f"{gpu},matmul,{m},{n},{k},{b},{meas},{depth},{cols},{bmm_class(depth, cols)}"
                            f.write(row + "\n")
        subprocess.run([a.perfcast, "op", "--configs", cfg, "--out", out], check=True, stdout=subprocess.DEVNULL)
        by_class, by_length = {}, {}
        with open(out) as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok":
                    continue
                ratio = float(r["predicted_us"]) / float(r["meas_us"])
                by_class.setdefault((r["gpu"], r["shape_class"]), []).append(ratio)
                if not r["shape_class"].startswith("bmm"):
                    b = max(i for i, lo in enumerate(LENGTH_BINS_US) if float(r["meas_us"]) >= lo)
                    by_length.setdefault((r["gpu"], r["shape_class"], b), []).append(ratio)
    gpus = sorted({g for g, _ in by_class})
    classes = ["long-K", "square", "wide-N", "bmm depth<=96", "bmm cols<=96", "bmm other"]
    print(f"median predicted / measured kernel time (rows), rows of {a.min_ms} ms and more" + (", SWAPPED" if a.swap else ""))
    print("| GPU | " + " | ".join(classes) + " |\n|---|" + "---:|" * len(classes))
    for g in gpus:
        cells = [f"{statistics.median(v):.2f} ({len(v)})" if (v := by_class.get((g, c))) else "" for c in classes]
        print(f"| {g} | " + " | ".join(cells) + " |")
    print("\nlinear by measured length (us):")
    print("| GPU | class | " + " | ".join(f">= {lo}" for lo in LENGTH_BINS_US) + " |\n|---|---|" + "---:|" * len(LENGTH_BINS_US))
    for g in gpus:
        for c in classes[:3]:
            cells = [f"{statistics.median(v):.2f} ({len(v)})" if (v := by_length.get((g, c, i))) else ""
                     for i in range(len(LENGTH_BINS_US))]
            print(f"| {g} | {c} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
