#!/usr/bin/env python3
"""Fit the CPU GEMM shape constants of data/cpu_cost.toml on published CPU GEMM kernel timings (calibration).

Reads data/published_kernels/cpu_gemm.csv (one measured GEMM per row: C[m x n] = A[m x k] B[k x n] on `threads`
cores of `cpu`, one library call) and predicts each row through the formula of src/cost/cpu_cost.cpp
(CpuCostModel::gemm with no cold weights; `perfcast op` refuses CPU devices, so the formula is restated here):

    compute_us = 2mnk / (threads x fp32 FLOPs/clk x vector clock x matmul_efficiency x shape_efficiency)
    shape_efficiency = spread x k / (k + gemm_k_half) x lane_fill(n)
    spread = blocks / (ceil(blocks / threads) x threads),  blocks = ceil(m / gemm_block_m) x ceil(n / gemm_block_n)
    lane_fill(n) = n / (ceil(n / lanes) x lanes),  lanes = vector_bits / 32
    memory_us = (A + B + C bytes) / (threads x single_core_dram_gbps)   (upper bound on the memory side)
    time_us = max(compute_us, memory_us)

Scoring. `fit` rows are fitted; `record` rows are printed beside them. A run (the `run` column: one verbose log or
one benchmark) has its own clock and library level, which no shape constant sets, so the shape fit divides each
run's predictions by one free factor, the run's median of measured / predicted rate, and scores what is left:
|rate_measured / (factor x rate_predicted) - 1|. The absolute error (factor 1) is printed too. Leave one source out:
for each source (the `url` column), the value chosen on the other sources, scored on the held-out one.

    tools/fit_cpu_gemm.py [--data data] [--key gemm_k_half] [--values 8,16,...]
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys
import tomllib
from collections import defaultdict


def load(data):
    with open(os.path.join(data, "cpu_cost.toml"), "rb") as f:
        cost = tomllib.load(f)
    with open(os.path.join(data, "runtimes", "cpu", "pytorch.toml"), "rb") as f:
        runtime = tomllib.load(f)
    cpus = {}
    for name in os.listdir(os.path.join(data, "cpus")):
        if name.endswith(".toml"):
            with open(os.path.join(data, "cpus", name), "rb") as f:
                spec = tomllib.load(f)
            cpus[spec["id"]] = spec
    with open(os.path.join(data, "published_kernels", "cpu_gemm.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    return cost, runtime, cpus, rows


def predict_us(row, cpu, c, matmul_efficiency):
    m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
    threads = int(row["threads"])
    clock = cpu["avx512_allcore_ghz"] if cpu["avx512_allcore_ghz"] > 0 else cpu["avx2_allcore_ghz"]
    flops_per_clk = cpu["fma_units"] * cpu["vector_bits"] / 32.0 * 2.0
    blocks = math.ceil(m / c["gemm_block_m"]) * math.ceil(n / c["gemm_block_n"])
    spread = blocks / (math.ceil(blocks / threads) * threads)
    lanes = cpu["vector_bits"] / 32.0
    fill = n / (math.ceil(n / lanes) * lanes)
    shape = max(1e-3, spread * k / (k + c["gemm_k_half"]) * fill)
    flops = 2.0 * m * n * k
    compute = flops / (threads * flops_per_clk * clock * 1e3 * matmul_efficiency * shape)
    memory = 4.0 * (m * k + k * n + m * n) / (threads * c["single_core_dram_gbps"] * 1e3)
    return max(compute, memory), "compute" if compute >= memory else "memory"


def source_of(row):
    return row["url"]


def score(rows, cpus, c, eff, free_factor=True):
    """APE of each row, after dividing each run by its own median measured / predicted rate when free_factor."""
    by_run = defaultdict(list)
    for r in rows:
        pred, _ = predict_us(r, cpus[r["cpu"]], c, eff)
        by_run[r["run"]].append((r, pred / float(r["time_us"])))  # measured rate / predicted rate
    out = []
    for run, pairs in by_run.items():
        factor = statistics.median(p for _, p in pairs) if free_factor else 1.0
        out += [(r, abs(p / factor - 1.0)) for r, p in pairs]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--key", default="gemm_k_half")
    ap.add_argument("--values", default="8,16,24,32,48,64,96,128,192,256,384,512")
    a = ap.parse_args()
    cost, runtime, cpus, rows = load(a.data)
    eff = runtime["matmul_efficiency"]
    for r in rows:
        if r["cpu"] not in cpus:
            sys.exit(f"cpu_gemm.csv: cpu '{r['cpu']}' is not in {a.data}/cpus")
    fit = [r for r in rows if r["role"] == "fit"]
    current = cost[a.key]

    print(f"rows: {len(rows)} ({len(fit)} fitted), matmul_efficiency {eff} (runtimes/cpu/pytorch.toml)")
    print(f"{'run':8} {'cpu':24} {'thr':>3} {'m':>6} {'n':>6} {'k':>6} {'meas GF/s':>10} {'pred GF/s':>10} "
          f"{'meas/pred':>9} bound")
    for r in rows:
        pred, bound = predict_us(r, cpus[r["cpu"]], cost, eff)
        flops = 2.0 * int(r["m"]) * int(r["n"]) * int(r["k"])
        meas = float(r["time_us"])
        print(f"{r['run']:8} {r['cpu']:24} {r['threads']:>3} {r['m']:>6} {r['n']:>6} {r['k']:>6} "
              f"{flops / meas / 1e3:10.1f} {flops / pred / 1e3:10.1f} {pred / meas:9.2f} {bound}"
              f"{'' if r['role'] == 'fit' else '  (record)'}")
    absolute = [e for _, e in score(fit, cpus, cost, eff, free_factor=False)]
    print(f"\nabsolute error on the fitted rows at {a.key} = {current:g}: median APE "
          f"{100 * statistics.median(absolute):.1f}% (each run's clock and library level included)")

    values = [float(v) for v in a.values.split(",")]
    table = {}
    print(f"\n{a.key:>12} {'shape median APE':>17} (each run divided by its own median measured / predicted)")
    for v in values:
        c = dict(cost, **{a.key: v})
        errs = score(fit, cpus, c, eff)
        table[v] = errs
        print(f"{v:12g} {100 * statistics.median(e for _, e in errs):16.1f}%{'  <- current' if v == current else ''}")
    best = min(values, key=lambda v: statistics.median(e for _, e in table[v]))
    cur_errs = score(fit, cpus, cost, eff)
    print(f"in-sample best {a.key} = {best:g}: median APE {100 * statistics.median(e for _, e in table[best]):.1f}% "
          f"(current {current:g}: {100 * statistics.median(e for _, e in cur_errs):.1f}%)")

    sources = sorted({source_of(r) for r in fit})
    held = []
    print("\nleave one source out:")
    for s in sources:
        train = [r for r in fit if source_of(r) != s]
        test = [r for r in fit if source_of(r) == s]
        if not train:
            continue
        pick = min(values, key=lambda v: statistics.median(e for _, e in score(train, cpus, dict(cost, **{a.key: v}), eff)))
        errs = [e for _, e in score(test, cpus, dict(cost, **{a.key: pick}), eff)]
        held += errs
        print(f"  held out {s}: chosen {pick:g} on the rest, held-out median APE {100 * statistics.median(errs):.1f}%")
    if held:
        print(f"  all held-out rows: median APE {100 * statistics.median(held):.1f}% over {len(held)} rows")


if __name__ == "__main__":
    main()
