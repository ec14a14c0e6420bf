#!/usr/bin/env python3
"""Fit the CPU GEMM shape constants of data/cpu_cost.toml on published CPU GEMM kernel timings (calibration).

Reads data/published_kernels/cpu_gemm.csv (one measured GEMM per row: C[m x n] = A[m x k] B[k x n] on `threads`
cores of `cpu`, one library call) and predicts each row with the binary: `perfcast op --device CPU --op OP
--m --n --k --cores THREADS --json`, which costs the GEMM by src/cost/cpu_cost.cpp (CpuCostModel::gemm through
cost_cpu_op) plus its one OpenMP region, so the formula lives in the C++ alone. OP is the row's `perfcast_op`:
`matmul` (two activation operands, no per-call weight packing: oneDNN inner products on weights already in the
kernel's layout) or `linear` (a BLAS call handed the plain [out, in] weight as its transposed operand, packed on
every call, as PyTorch's nn.Linear does). A swept value is written into a copy of the data folder (PERFCAST_DATA), as tools/fit_cpu_constant.py
does for end-to-end rows.

Scoring. `fit` rows are fitted; `record` rows are printed beside them. A run (the `run` column: one verbose log or
one benchmark) has its own clock and library level, which no shape constant sets, so the shape fit divides each
run's predictions by one free factor, the run's median of measured / predicted rate, and scores what is left:
|rate_measured / (factor x rate_predicted) - 1|. The absolute error (factor 1) is printed too. Leave one source out:
for each source (the `url` column), the value chosen on the other sources, scored on the held-out one.

    tools/fit_cpu_gemm.py [--perfcast build/release/perfcast] [--data data] [--key gemm_k_half] [--values 8,16,...]
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import tempfile
import statistics
import sys
import tomllib
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_cpu_constant import set_key  # noqa: E402  (one key setter for data/*.toml)


def load(data):
    with open(os.path.join(data, "cpu_cost.toml"), "rb") as f:
        cost = tomllib.load(f)
    with open(os.path.join(data, "published_kernels", "cpu_gemm.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    return cost, rows


def predict_us(perfcast, row, data):
    """The binary's prediction of one row (us) and what bounds it, with PERFCAST_DATA = data."""
    cmd = [perfcast, "op", "--device", row["cpu"], "--op", row["perfcast_op"], "--m", row["m"], "--n", row["n"],
           "--k", row["k"], "--cores", row["threads"], "--precision", row["precision"], "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PERFCAST_DATA=data))
    if out.returncode != 0:
        sys.exit(f"cpu_gemm.csv row {row['run']} {row['m']}x{row['n']}x{row['k']}: {out.stderr.strip()}")
    j = json.loads(out.stdout)
    return j["predicted_us"], "compute" if j["compute_us"] >= j["memory_us"] else "memory"


class Predictions:
    """Each row's prediction under each value of the swept key, from one data copy per value."""

    def __init__(self, perfcast, data, key):
        self.perfcast, self.data, self.key = perfcast, data, key
        self.tmp = tempfile.mkdtemp(prefix="fit_cpu_gemm_")
        self.cache = {}

    def data_for(self, value):
        if value is None:
            return self.data
        d = os.path.join(self.tmp, f"v{value:g}")
        if not os.path.isdir(d):
            shutil.copytree(self.data, d)
            path = os.path.join(d, "cpu_cost.toml")
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(set_key(text, self.key, f"{value:g}"))
        return d

    def us(self, row, value=None):
        k = (id(row), value)
        if k not in self.cache:
            self.cache[k] = predict_us(self.perfcast, row, self.data_for(value))
        return self.cache[k]

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def source_of(row):
    return row["url"]


def score(rows, preds, value=None, free_factor=True):
    """APE of each row, after dividing each run by its own median measured / predicted rate when free_factor."""
    by_run = defaultdict(list)
    for r in rows:
        pred, _ = preds.us(r, value)
        by_run[r["run"]].append((r, pred / float(r["time_us"])))  # measured rate / predicted rate
    out = []
    for run, pairs in by_run.items():
        factor = statistics.median(p for _, p in pairs) if free_factor else 1.0
        out += [(r, abs(p / factor - 1.0)) for r, p in pairs]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfcast", default=os.path.join("build", "release", "perfcast"))
    ap.add_argument("--data", default="data")
    ap.add_argument("--key", default="gemm_k_half")
    ap.add_argument("--values", default="8,16,24,32,48,64,96,128,192,256,384,512")
    a = ap.parse_args()
    cost, rows = load(a.data)
    if a.key not in cost:
        sys.exit(f"--key {a.key}: not a top-level key of {a.data}/cpu_cost.toml")
    preds = Predictions(a.perfcast, os.path.abspath(a.data), a.key)
    try:
        report(a, cost, rows, preds)
    finally:
        preds.close()


def report(a, cost, rows, preds):
    fit = [r for r in rows if r["role"] == "fit"]
    current = cost[a.key]

    print(f"rows: {len(rows)} ({len(fit)} fitted), predicted by {a.perfcast} op (data: {a.data})")
    print(f"{'run':8} {'cpu':24} {'thr':>3} {'m':>6} {'n':>6} {'k':>6} {'meas GF/s':>10} {'pred GF/s':>10} "
          f"{'meas/pred':>9} bound")
    for r in rows:
        pred, bound = preds.us(r)
        flops = 2.0 * int(r["m"]) * int(r["n"]) * int(r["k"])
        meas = float(r["time_us"])
        print(f"{r['run']:8} {r['cpu']:24} {r['threads']:>3} {r['m']:>6} {r['n']:>6} {r['k']:>6} "
              f"{flops / meas / 1e3:10.1f} {flops / pred / 1e3:10.1f} {pred / meas:9.2f} {bound}"
              f"{'' if r['role'] == 'fit' else '  (record)'}")
    absolute = [e for _, e in score(fit, preds, free_factor=False)]
    print(f"\nabsolute error on the fitted rows at {a.key} = {current:g}: median APE "
          f"{100 * statistics.median(absolute):.1f}% (each run's clock and library level included)")

    values = [float(v) for v in a.values.split(",")]
    table = {}
    print(f"\n{a.key:>12} {'shape median APE':>17} (each run divided by its own median measured / predicted)")
    for v in values:
        errs = score(fit, preds, v)
        table[v] = errs
        print(f"{v:12g} {100 * statistics.median(e for _, e in errs):16.1f}%{'  <- current' if v == current else ''}")
    best = min(values, key=lambda v: statistics.median(e for _, e in table[v]))
    cur_errs = score(fit, preds)
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
        pick = min(values, key=lambda v: statistics.median(e for _, e in score(train, preds, v)))
        errs = [e for _, e in score(test, preds, pick)]
        held += errs
        print(f"  held out {s}: chosen {pick:g} on the rest, held-out median APE {100 * statistics.median(errs):.1f}%")
    if held:
        print(f"  all held-out rows: median APE {100 * statistics.median(held):.1f}% over {len(held)} rows")


if __name__ == "__main__":
    main()
