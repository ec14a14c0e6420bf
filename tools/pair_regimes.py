#!/usr/bin/env python3
"""Issue 13's precision pairs, grouped into regimes, with what each regime holds back.

    tools/pair_regimes.py [--perfcast build/release/perfcast] [--json PAIRS.json] [--over 15] [--each-runs-batch]
                          FOLDER_OR_CSV...

Runs `perfcast validate --pairs ... --json` (or reads its output from --json) and takes the precision pairs at one
batch that count for issue 13's target (amp, fp16, bf16, int8, fp8 against fp32; not tf32); with --each-runs-batch,
the pairs at the batch each run chose instead (`validate --pairs`' "precision+batch" pairs). A regime is the pairs of
one measurement file on one GPU architecture under one runtime and release (data/gpus/<id>.toml `architecture`, the
row's `runtime_version` column). Prints:
  1. every pair off by more than --over percent or on the wrong side: lines, GPU (architecture), runtime and version,
     model, precision, batch, sequence, measured and predicted ratio, and each row's own bias (predicted / measured
     throughput - 1), which says on which side of the pair the miss is;
  2. per regime: pairs, median ratio error, pairs over --over, wrong side, the rows' median biases, and the pooled
     median / wrong-side count if that regime alone were exact, if only its fp32 rows were exact (the predicted ratio
     becomes measured x (1 + half row's bias)) and if only its reduced-precision rows were (measured / (1 + fp32
     row's bias));
  3. the wrong-side floor: pairs whose two rows agree in every column but the measurement's input data mode (`data`),
     `host`, `source` and `notes` form one setup; where a setup's measured ratios lie on both sides of the gain
     threshold, a prediction that gives the setup one ratio leaves min(pairs at or above, pairs below) of them on the
     wrong side whatever it predicts. Prints each such setup and the pooled floor. (perfcast does read `data` and
     `host`; the floor holds for a model whose ratio does not depend on them, as the predicted ratios listed show.)
The pooled figures are computed as `perfcast validate --pairs` computes them (median of |pred / meas - 1|; wrong side:
one ratio reaches data/what_if_pairs.toml gain_threshold and the other does not). Reads nothing else; writes nothing.
Run it from the repository root (the validation files name their model files relative to it).
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_dir():
    return os.environ.get("PERFCAST_DATA", os.path.join(ROOT, "data"))


def gain_threshold():
    text = open(os.path.join(data_dir(), "what_if_pairs.toml")).read()
    return float(re.search(r"^gain_threshold\s*=\s*([0-9.]+)", text, re.M).group(1))


def architecture(gpu, cache={}):
    if gpu not in cache:
        path = os.path.join(data_dir(), "gpus", gpu + ".toml")
        m = re.search(r'^architecture\s*=\s*"([^"]+)"', open(path).read(), re.M) if os.path.exists(path) else None
        cache[gpu] = m.group(1) if m else "?"
    return cache[gpu]


def csv_paths(args):
    out = {}
    for a in args:
        files = [os.path.join(a, f) for f in sorted(os.listdir(a))] if os.path.isdir(a) else [a]
        for f in files:
            if f.endswith(".csv"):
                out[os.path.basename(f)] = f
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build", "release", "perfcast"))
    ap.add_argument("--json", help="read `validate --pairs --json` output from this file instead of running perfcast")
    ap.add_argument("--over", type=float, default=15.0, help="list pairs whose ratio error exceeds this (percent)")
    ap.add_argument("--each-runs-batch", action="store_true",
                    help="take the precision pairs at the batch each run chose (A: the setup's fp32 row at another batch)")
    ap.add_argument("files", nargs="+", help="validation CSVs or folders (as `perfcast validate --pairs` takes them)")
    a = ap.parse_args()
    if a.json:
        report = json.load(open(a.json))
    else:
        out = subprocess.run([a.perfcast, "validate", "--pairs", *a.files, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(out.stderr.strip() or "perfcast validate --pairs failed")
        report = json.loads(out.stdout)
    paths = csv_paths(a.files)
    rows = {}

    def row(file, line):
        if file not in rows:
            with open(paths[file], newline="") as f:
                rows[file] = list(csv.DictReader(f))
        return rows[file][line - 2]  # line 1 is the header

    thr = gain_threshold()
    varied = "precision+batch" if a.each_runs_batch else "precision"
    kind = "each-run's-batch" if a.each_runs_batch else "same-batch"
    pairs = [p for p in report["pairs"] if p["varied"] == varied and not p["to"].startswith("tf32")]
    if not pairs:
        sys.exit(f"no {kind} precision pairs in these files")
    for p in pairs:
        r = row(p["file"], p["line_to"])
        p["arch"] = architecture(p["gpu"])
        p["version"] = r.get("runtime_version", "")
        p["seq"] = r.get("seq", "")
        p["regime"] = f'{p["file"][:-4]} {p["arch"]} {p["runtime"]} {p["version"] or "-"}'

    def pooled(ratio_of=None, regime=None):
        errs, wrong = [], 0
        for p in pairs:
            pred = ratio_of(p) if p["regime"] == regime else p["predicted"]
            errs.append(abs(pred / p["measured"] - 1) * 100)
            wrong += (p["measured"] >= thr) != (pred >= thr)
        return f"{statistics.median(errs):5.1f} / {wrong}"

    print(f"{len(pairs)} {kind} precision pairs: median / wrong side {pooled()}, gain threshold {thr}\n")
    print(f"Pairs over {a.over:g}% or on the wrong side (bias: predicted / measured throughput - 1 of each row)")
    print("| file | lines | GPU (arch) | runtime | model | pair | batch | seq | measured | predicted | error | fp32 bias | bias | wrong |")
    print("|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for p in sorted(pairs, key=lambda p: (p["regime"], p["line_to"])):
        if p["error_pct"] <= a.over and not p["wrong_side"]:
            continue
        signed = (p["predicted"] / p["measured"] - 1) * 100
        print(f'| {p["file"]} | {p["line_from"]}/{p["line_to"]} | {p["gpu"]} ({p["arch"]}) | {p["runtime"]} '
              f'{p["version"]} | {p["model"]} {p["mode"]} | fp32->{p["to"]} | {p["batch"]} | {p["seq"]} | '
              f'{p["measured"]:.2f} | {p["predicted"]:.2f} | {signed:+.1f}% | {p["from_bias_pct"]:+.1f}% | '
              f'{p["to_bias_pct"]:+.1f}% | {"yes" if p["wrong_side"] else ""} |')
    groups = defaultdict(list)
    for p in pairs:
        groups[p["regime"]].append(p)
    print("\nRegimes (pooled median / wrong side if the regime alone were exact, its fp32 rows alone, its other rows alone)")
    print("| regime (file, arch, runtime, version) | pairs | median | over | wrong | fp32 bias | bias | exact | fp32 exact | other exact |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|---|")
    for k, g in sorted(groups.items(), key=lambda kv: -sum(p["error_pct"] for p in kv[1])):
        print(f'| {k} | {len(g)} | {statistics.median(p["error_pct"] for p in g):.1f} | '
              f'{sum(p["error_pct"] > a.over for p in g)} | {sum(p["wrong_side"] for p in g)} | '
              f'{statistics.median(p["from_bias_pct"] for p in g):+.1f} | {statistics.median(p["to_bias_pct"] for p in g):+.1f} | '
              f'{pooled(lambda p: p["measured"], k)} | {pooled(lambda p: p["measured"] * (1 + p["to_bias_pct"] / 100), k)} | '
              f'{pooled(lambda p: p["measured"] / (1 + p["from_bias_pct"] / 100), k)} |')

    # Setups that differ only in what a ratio should not depend on: the data mode, the host, the log it came from.
    def setup(p):
        def key(r):
            return tuple(sorted((c, v) for c, v in r.items() if c not in ("value", "data", "host", "source", "notes")))
        return (p["file"], key(row(p["file"], p["line_from"])), key(row(p["file"], p["line_to"])))
    setups = defaultdict(list)
    for p in pairs:
        setups[setup(p)].append(p)
    floor, straddling = 0, []
    for g in setups.values():
        high = sum(p["measured"] >= thr for p in g)
        f = min(high, len(g) - high)
        floor += f
        if f:
            straddling.append((g, f))
    print(f"\nWrong-side floor: {len(setups)} setups (pairs alike but for data, host, source, notes); "
          f"{len(straddling)} of them measure ratios on both sides of {thr}, so one predicted ratio per setup leaves at "
          f"least {floor} of {len(pairs)} pairs on the wrong side (now {sum(p['wrong_side'] for p in pairs)})")
    if straddling:
        print("| file | lines | GPU | runtime | model | pair | batch | measured | predicted | wrong | floor |")
        print("|---|---|---|---|---|---|---|---|---|---:|---:|")
    for g, f in sorted(straddling, key=lambda gf: (gf[0][0]["file"], gf[0][0]["line_to"])):
        p = g[0]
        lines = ", ".join("%d/%d" % (q["line_from"], q["line_to"]) for q in g)
        measured = ", ".join("%.2f" % q["measured"] for q in g)
        predicted = ", ".join("%.2f" % q["predicted"] for q in g)
        print(f'| {p["file"]} | {lines} | {p["gpu"]} | {p["runtime"]} {p["version"]} | {p["model"]} {p["mode"]} | '
              f'{p["from"]}->{p["to"]} | {p["batch"]} | {measured} | {predicted} | '
              f'{sum(q["wrong_side"] for q in g)} | {f} |')


if __name__ == "__main__":
    main()
