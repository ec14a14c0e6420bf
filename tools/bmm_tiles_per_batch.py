#!/usr/bin/env python3
"""Where a batched SGEMM's rate goes: the measured bmm rows by tiles per batch, padding and length. Fits nothing.

For each GPU and the cuBLAS batched kernel each row ran (read off `Kernel Name`), it prints the median rate of the
PADDED tiles (2 B M N K / time / pad, in TFLOPS; pad = the share of the kernel's tiles that holds output elements)
with the row's tiles per batch (one product's CTAs: ceil(output columns / tile's first number) x ceil(M / its
second), the kernel's grid.x x grid.y) against pad, and against the measured length. A kernel whose padded tiles
cost as much as full ones (FMA-bound) reads flat along pad; one that pays for the elements it loads reads higher at
low pad. With --perfcast it also prints the median predicted / measured kernel time (`perfcast op --configs`, no
harness floor) with tiles per batch against pad. Rows under --min-ms measured or with a reduction under --min-depth
are left out (shallow products are bound by their output's bytes; short ones by the harness's floor).

NeuSight's bmm columns (shared/kernels/neusight_train, README there) are B, M, N = depth, K = output columns; the
kernel's tile runs its first number along the output's columns (docs/kernel-model.md, "cuBLAS tile orientation").

    tools/bmm_tiles_per_batch.py [--kernels ../shared/kernels/neusight_train] [--gpus v100-pcie-32gb,t4]
                                 [--perfcast build/release/perfcast]
"""
import argparse
import collections
import csv
import gzip
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_shape_classes import IDS  # noqa: E402  (file name -> catalog id)

TILES_PER_BATCH_CAP = 64
LENGTH_BINS_US = [0, 500, 1000, 2000, 4000, 8000, 16000]


def tile_of(kernel_name):
    """(along output columns, along rows) of a cuBLAS SGEMM kernel name, e.g. volta_sgemm_64x64_nn -> (64, 64)."""
    shape = kernel_name.split("_sgemm_")[-1].split("_")[0]
    a, b = shape.split("x")
    return int(a), int(b)


def pow2_bin(x, cap):
    return min(2 ** int(math.floor(math.log2(x))), cap)


def read_rows(kernels, gpus, min_ms, min_depth):
    rows = []
    for name, gpu in IDS.items():
        if gpus and gpu not in gpus:
            continue
        path = os.path.join(kernels, "bmm", name + ".csv.gz")
        if not os.path.exists(path):
            continue
        with gzip.open(path, "rt") as f:
            for r in csv.DictReader(f):
                meas_us = float(r["Latency"]) * 1000
                depth = int(r["N"])
                if meas_us < min_ms * 1000 or depth < min_depth or "_sgemm_" not in r["Kernel Name"]:
                    continue
                try:
                    tc, tr = tile_of(r["Kernel Name"])
                except ValueError:
                    continue  # sgemm_32x32x32_NN and other names without an m x n tile
                b, m, cols = int(r["B"]), int(r["M"]), int(r["K"])
                gx, gy = math.ceil(cols / tc), math.ceil(m / tr)
                rows.append({
                    "gpu": gpu, "kernel": r["Kernel Name"].split("_sgemm_")[-1], "b": b, "m": m, "depth": depth,
                    "cols": cols, "meas_us": meas_us, "tiles_per_batch": gx * gy,
                    "pad": m * cols / (gx * tc * gy * tr),
                })
    return rows


def predict(rows, perfcast):
    with tempfile.TemporaryDirectory() as tmp:
        cfg, out = os.path.join(tmp, "configs.csv"), os.path.join(tmp, "out.csv")
        with open(cfg, "w") as f:
            f.write("gpu,op,m,n,k,batch_count\n")
            for r in rows:
                f.write(f"{r['gpu']},matmul,{r['m']},{r['cols']},{r['depth']},{r['b']}\n")
        subprocess.run([perfcast, "op", "--configs", cfg, "--out", out], check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            for row, p in zip(rows, csv.DictReader(f)):
                row["ratio"] = float(p["predicted_us"]) / row["meas_us"] if p["status"] == "ok" else None
                row["picked"] = p["algorithm"]


def table(title, rows, col_of, value_of, col_labels):
    cells = collections.defaultdict(list)
    for r in rows:
        v = value_of(r)
        if v is not None:
            cells[(pow2_bin(r["tiles_per_batch"], TILES_PER_BATCH_CAP), col_of(r))].append(v)
    if not cells:
        return
    rows_keys = sorted({a for a, _ in cells})
    cols_keys = sorted({b for _, b in cells})
    print(f"\n{title}\n| tiles per batch | " + " | ".join(col_labels(c) for c in cols_keys) + " |")
    print("|---:|" + "---:|" * len(cols_keys))
    for a in rows_keys:
        out = []
        for b in cols_keys:
            v = cells.get((a, b), [])
            out.append(f"{statistics.median(v):.2f} ({len(v)})" if len(v) >= 3 else "")
        label = f">= {a}" if a == TILES_PER_BATCH_CAP else str(a)
        print(f"| {label} | " + " | ".join(out) + " |")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default=os.path.join(here, "..", "..", "shared", "kernels", "neusight_train"))
    ap.add_argument("--gpus", default="v100-pcie-32gb,t4,a100-pcie-40gb,p100-pcie-16gb")
    ap.add_argument("--perfcast", help="also print perfcast's predicted / measured (path of the binary)")
    ap.add_argument("--min-ms", type=float, default=0.3)
    ap.add_argument("--min-depth", type=int, default=128)
    a = ap.parse_args()
    gpus = set(a.gpus.split(",")) if a.gpus else set()
    rows = read_rows(a.kernels, gpus, a.min_ms, a.min_depth)
    if a.perfcast:
        predict(rows, a.perfcast)
    by_kernel = collections.defaultdict(list)
    for r in rows:
        by_kernel[(r["gpu"], r["kernel"])].append(r)
    pad_bin = lambda r: min(round(r["pad"], 1), 1.0)  # noqa: E731
    length_bin = lambda r: max(i for i, lo in enumerate(LENGTH_BINS_US) if r["meas_us"] >= lo)  # noqa: E731
    for (gpu, kernel), rs in sorted(by_kernel.items()):
        if len(rs) < 200:
            continue
        head = f"{gpu} {kernel} ({len(rs)} rows, depth >= {a.min_depth}, >= {a.min_ms} ms)"
        rate = lambda r: 2.0 * r["b"] * r["m"] * r["depth"] * r["cols"] / r["meas_us"] / 1e6 / r["pad"]  # noqa: E731
        table(f"{head}: padded-tile TFLOPS, by pad", rs, pad_bin, rate, lambda c: f"pad {c:.1f}")
        table(f"{head}: padded-tile TFLOPS, by measured length", rs, length_bin, rate,
              lambda c: f">= {LENGTH_BINS_US[c] / 1000:g} ms")
        if a.perfcast:
            table(f"{head}: perfcast predicted / measured, by pad", rs, pad_bin, lambda r: r.get("ratio"),
                  lambda c: f"pad {c:.1f}")


if __name__ == "__main__":
    main()
