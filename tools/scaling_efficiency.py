#!/usr/bin/env python3
"""Scaling efficiency of data-parallel rows: predicted vs measured, in points.

Efficiency of an N-GPU row = value(N) / (N x value(1)), with value(1) the 1-GPU row of its setup (every column but
n_gpus, interconnect, strategy, grad_accum, value, source and notes). Measured efficiency uses the measured 1-GPU
row, predicted efficiency the predicted one. Rows measured below 0.9 are the poorly scaling ones.

    tools/scaling_efficiency.py [--perfcast build/release/perfcast] [--by gpu,model] FILE...
"""
import argparse
import csv
import json
import subprocess
import sys
from collections import defaultdict

IGNORED = {"n_gpus", "interconnect", "strategy", "grad_accum", "value", "source", "notes"}


def rows_of(perfcast, path):
    out = subprocess.run([perfcast, "validate", path, "--json"], check=True, capture_output=True, text=True).stdout
    predicted = {r["line"]: r for r in json.loads(out)["rows"]}
    with open(path, newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            p = predicted.get(line)
            if p is None or not p.get("predicted"):
                continue
            row["predicted"] = p["predicted"]
            yield row


def pairs(rows):
    groups = defaultdict(list)
    for r in rows:
        groups[tuple((k, v) for k, v in sorted(r.items()) if k not in IGNORED and k != "predicted")].append(r)
    for members in groups.values():
        ones = [r for r in members if (r["n_gpus"] or "1") == "1"]
        if len(ones) != 1:
            continue
        one = ones[0]
        for r in members:
            n = int(r["n_gpus"] or 1)
            if n <= 1:
                continue
            meas = float(r["value"]) / (n * float(one["value"]))
            pred = r["predicted"] / (n * one["predicted"])
            yield r, n, meas, pred


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--by", default="", help="comma-separated columns to break the error down by")
    ap.add_argument("--rows", action="store_true", help="print every poorly scaling row")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    by = [c for c in a.by.split(",") if c]
    for path in a.files:
        res = list(pairs(rows_of(a.perfcast, path)))
        if not res:
            print(f"{path}: no multi-GPU row with its 1-GPU row")
            continue
        poor = [x for x in res if x[2] < 0.9]
        mean = lambda xs: sum(abs(p - m) for _, _, m, p in xs) / len(xs) * 100 if xs else float("nan")
        bias = lambda xs: sum(p - m for _, _, m, p in xs) / len(xs) * 100 if xs else float("nan")
        print(f"{path}: {len(res)} multi-GPU rows, efficiency error {mean(res):.2f} points (bias {bias(res):+.2f}); "
              f"{len(poor)} rows measured < 0.9: {mean(poor):.2f} points (bias {bias(poor):+.2f})")
        if by:
            groups = defaultdict(list)
            for x in res:
                groups[tuple(x[0][c] or "-" for c in by) + (str(x[1]),)].append(x)
            for k in sorted(groups):
                xs = groups[k]
                ps = [x for x in xs if x[2] < 0.9]
                print(f"  {' '.join(k):60s} n={len(xs):3d} err {mean(xs):5.1f} bias {bias(xs):+5.1f}"
                      f"  poor n={len(ps):3d} err {mean(ps):5.1f}")
        if a.rows:
            for r, n, m, p in sorted(poor, key=lambda x: -abs(x[3] - x[2])):
                print(f"    {r['gpu']:16s} {r['model']:18s} {r['runtime']:14s} {r['precision']:5s} {r['mode']:5s} "
                      f"b{r['batch']:>4s} n{n:<2d} {r.get('interconnect',''):13s} meas {m:.2f} pred {p:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
