#!/usr/bin/env python3
"""How deep cuBLAS splits K in its CUDA-core SGEMMs, per architecture, read off measured kernel grids.

perfcast's rule (src/cost/kernel_cost.cpp KernelCostModel::search_tile): a plain cuBLAS SGEMM whose tile grid has
fewer than W waves of CTAs (W x SMs x [gemm] ctas_per_sm) splits K into min(floor(W x slots / tiles),
floor(K / split_k_min_depth)) slices. This script takes cuBLAS's own tile grid (grid.x x grid.y of the measured
kernel; grid.z > 1 is its split-K, every linear row has B = 1) and, for each candidate W, scores how far the rule's
slice count lies from grid.z: mean |log2(rule / grid.z)| over the rows with K >= 512 (where a split of at least two
256-deep slices is possible). It prints the score per W and GPU and the best W per architecture; with --leave-out it
also prints each GPU's W chosen from the other GPUs (what a board without measured kernels would get).

Input: shared/kernels/neusight_train/linear (NeuSight artifact, PyTorch 2.1, cuBLAS of CUDA 12.1; README there).
NeuSight's linear columns: B, M = rows, N = reduction (K of the GEMM), K = output columns.

    tools/fit_sgemm_split_waves.py [--kernels ../shared/kernels/neusight_train]
"""
import argparse
import csv
import glob
import gzip
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/neusight_devices.py
import neusight_devices  # noqa: E402

# Board (the files' Device column) -> (architecture, SMs): data/kernel_fit_setup.toml [devices] and the catalog.
BOARDS = {device: neusight_devices.gpu_spec(gpu) for device, gpu in neusight_devices.catalog_ids().items()}
CANDIDATES = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
MIN_DEPTH = 256  # data/cost_model.toml [gemm] split_k_min_depth
CTAS_PER_SM = 1  # data/cost_model.toml [gemm] ctas_per_sm


def rule_split(tiles, k, slots, waves):
    if tiles >= slots * waves:
        return 1
    return max(1, min(math.floor(slots * waves / tiles), math.floor(k / MIN_DEPTH)))


def read(folder):
    rows = {}
    for path in sorted(glob.glob(os.path.join(folder, "linear", "*.csv.gz"))):
        with gzip.open(path, "rt") as f:
            for r in csv.DictReader(f):
                if r["Device"] not in BOARDS or int(r["N"]) < 512:
                    continue
                tiles = int(r["Grid x"]) * int(r["Grid y"])
                rows.setdefault(r["Device"], []).append((tiles, int(r["N"]), max(1, int(r["Grid z"]))))
    return rows


def score(rows, slots, waves):
    return sum(abs(math.log2(rule_split(t, k, slots, waves) / z)) for t, k, z in rows) / len(rows)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default=os.path.join(here, "..", "..", "shared", "kernels", "neusight_train"))
    ap.add_argument("--leave-out", action="store_true", help="also choose each GPU's W from the other GPUs")
    a = ap.parse_args()
    rows = read(a.kernels)
    if not rows:
        raise SystemExit(f"no linear rows under {a.kernels}/linear")
    table = {}
    print("| GPU | rows | split by cuBLAS | " + " | ".join(f"W={w}" for w in CANDIDATES) + " | best W |")
    print("|---|---:|---:|" + "---:|" * len(CANDIDATES) + "---:|")
    for dev, rs in rows.items():
        arch, sms = BOARDS[dev]
        slots = sms * CTAS_PER_SM
        table[dev] = [score(rs, slots, w) for w in CANDIDATES]
        best = CANDIDATES[min(range(len(CANDIDATES)), key=lambda i: table[dev][i])]
        split = 100 * sum(z > 1 for _, _, z in rs) / len(rs)
        print(f"| {dev} ({arch}) | {len(rs)} | {split:.0f}% | " + " | ".join(f"{s:.3f}" for s in table[dev]) + f" | {best} |")
    if a.leave_out:
        print("\nLeave one GPU out (W with the lowest mean score over the other GPUs):")
        for dev in rows:
            others = [d for d in rows if d != dev]
            mean = [sum(table[d][i] for d in others) / len(others) for i in range(len(CANDIDATES))]
            print(f"  {dev}: W = {CANDIDATES[min(range(len(CANDIDATES)), key=lambda i: mean[i])]}")


if __name__ == "__main__":
    main()
