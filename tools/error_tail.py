#!/usr/bin/env python3
"""The heavy tail of a calibration file's errors, grouped by mechanism (issue 13: mean error and within 2x).

    tools/error_tail.py [--perfcast build/release/perfcast] [--json-dir DIR] [--tail 10] [--list 0] CSV...

For each validation CSV, runs `perfcast validate CSV --json` (or reads DIR/<name>.json, that command's output) and
takes the worst --tail percent of its predicted rows by absolute percentage error (APE = |predicted / measured - 1|).
Frozen evaluation files (`eval_*.csv`) are refused: their predictions must not be read while choosing anything.
A row's mechanism is its GPU architecture (data/gpus/<id>.toml), runtime and release (`runtime_version`), mode,
precision class (fp32 | tf32 | half | int8 | fp8 | other), the batch class (b1 | b2-16 | b17+, samples per GPU),
what bounds the step (`bound` in the validate output), and one GPU or several. Prints, per file:
  1. the file's median / mean APE and rows beyond 2x (predicted / measured above 2 or under 1/2);
  2. per mechanism, largest share of the mean first: tail rows / rows of that mechanism in the file, the share of
     the file's mean APE its tail rows carry (sum of their APE / all rows), the mean APE were every row of the
     mechanism exact (APE 0), its rows beyond 2x, and the tail rows' median bias (predicted / measured - 1);
  3. for the tail's multi-GPU rows (`n_gpus` > 1): how many inherit their miss from their one-GPU twin (the row
     tools/scaling_efficiency.py pairs them with: the file's only one-GPU row that agrees in every column but n_gpus,
     interconnect, strategy, grad_accum, value, source and notes) because the twin's own APE is at least the row's
     scaling-ratio error, and how many miss in the scaling itself. The scaling-ratio error is |(predicted_n /
     predicted_1) / (measured_n / measured_1) - 1| = |predicted efficiency / measured efficiency - 1|; over every
     multi-GPU row with a twin it is also summarised by GPU count and interconnect.
With --list N, the N worst rows of each file are printed (line, GPU, model, runtime, mode, precision, batch, GPUs,
bound, bias). Reads nothing else; writes nothing. Run it from the repository root.
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scaling_efficiency  # noqa: E402  (the one definition of a multi-GPU row's one-GPU twin)
from pair_regimes import architecture  # noqa: E402  (a GPU id's architecture, read from data/gpus)


def fail(message):
    """Bad input: one line naming the problem, exit code 2."""
    print(f"error_tail.py: {message}", file=sys.stderr)
    sys.exit(2)


def precision_class(p):
    p = (p or "").lower()
    if p == "fp32":
        return "fp32"
    if p == "tf32":
        return "tf32"
    if p in ("fp16", "bf16", "amp", "amp-bf16"):
        return "half"
    if p in ("int8", "fp8"):
        return p
    return "other"


def batch_class(batch):
    """b1 (latency-bound serving), b2-16, b17+ (throughput runs)."""
    try:
        b = int(batch)
    except (TypeError, ValueError):
        return "b?"
    return "b1" if b <= 1 else "b2-16" if b <= 16 else "b17+"


def ratio(r):
    return r["predicted"] / r["measured"]


def beyond_2x(r):
    q = ratio(r)
    return q > 2 or q < 0.5


def load(csv_path, perfcast, json_dir):
    name = os.path.basename(csv_path)
    if name.startswith("eval_"):
        fail(f"{name} is a frozen evaluation file: its predictions are not read here")
    if json_dir:
        path = os.path.join(json_dir, name[:-4] + ".json")
        if not os.path.isfile(path):
            fail(f"{path}: no `perfcast validate {name} --json` output there")
        report = json.load(open(path))
    else:
        if not os.path.isfile(perfcast):
            fail(f"{perfcast}: no perfcast binary (build it, or pass --perfcast or --json-dir)")
        out = subprocess.run([perfcast, "validate", csv_path, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            fail(out.stderr.strip() or f"perfcast validate {csv_path} failed")
        report = json.loads(out.stdout)
    with open(csv_path, newline="") as f:
        src = list(csv.DictReader(f))
    rows = []
    for r in report["rows"]:
        if r.get("ape_pct") is None or not r.get("measured") or r.get("predicted") is None:
            continue
        s = dict(src[r["line"] - 2])  # line 1 is the header
        s["predicted"] = r["predicted"]  # as tools/scaling_efficiency.py pairs them
        r = dict(r)
        r["_src"] = s
        r["n_gpus"] = int(s.get("n_gpus") or 1)
        r["mechanism"] = " ".join([
            architecture(r["gpu"]), f'{r["runtime"]} {s.get("runtime_version") or "-"}', r["mode"],
            precision_class(r["precision"]), batch_class(r.get("batch")),
            r.get("bound") or "-", "multi-gpu" if r["n_gpus"] > 1 else "1-gpu"])
        rows.append(r)
    if not rows:
        fail(f"{name}: no predicted row to rank")
    return rows


def scaling_errors(rows):
    """For each multi-GPU row with its one-GPU twin (tools/scaling_efficiency.py's pairing): (row, the twin's APE,
    the scaling-ratio error), both in percent. The twin's ratio follows from the row's: predicted_n / measured_n =
    (predicted_1 / measured_1) x (predicted efficiency / measured efficiency)."""
    if not rows or "n_gpus" not in rows[0]["_src"]:
        return []
    by_src = {id(r["_src"]): r for r in rows}
    out = []
    for s, _, meas_eff, pred_eff in scaling_efficiency.pairs([r["_src"] for r in rows]):
        r = by_src[id(s)]
        scale = pred_eff / meas_eff
        out.append((r, abs(ratio(r) / scale - 1) * 100, abs(scale - 1) * 100))
    return out


def report(name, rows, tail_pct, list_n):
    n = len(rows)
    apes = [r["ape_pct"] for r in rows]
    mean = statistics.mean(apes)
    print(f"\n## {name}: {n} rows, median / mean APE {statistics.median(apes):.1f} / {mean:.1f}%, "
          f"beyond 2x {sum(beyond_2x(r) for r in rows)}")
    worst = sorted(rows, key=lambda r: -r["ape_pct"])
    k = max(1, math.ceil(n * tail_pct / 100))
    tail = worst[:k]
    print(f"worst {tail_pct:g}%: {k} rows, APE {tail[-1]['ape_pct']:.1f}% and above, carrying "
          f"{sum(r['ape_pct'] for r in tail) / n:.1f} of the {mean:.1f} points of the mean")
    by = defaultdict(list)
    for r in tail:
        by[r["mechanism"]].append(r)
    alln = Counter(r["mechanism"] for r in rows)
    print("| mechanism (arch, runtime version, mode, precision, batch, bound, GPUs) | tail / rows | share of mean | "
          "mean if exact | beyond 2x | tail bias |")
    print("|---|---:|---:|---:|---:|---:|")
    for mech, rs in sorted(by.items(), key=lambda kv: -sum(r["ape_pct"] for r in kv[1])):
        share = sum(r["ape_pct"] for r in rs) / n
        exact = sum(r["ape_pct"] for r in rows if r["mechanism"] != mech) / n
        b2 = sum(beyond_2x(r) for r in rows if r["mechanism"] == mech)
        bias = statistics.median(ratio(r) - 1 for r in rs) * 100
        print(f"| {mech} | {len(rs)} / {alln[mech]} | {share:.2f} | {exact:.1f} | {b2} | {bias:+.0f}% |")
    scal = scaling_errors(rows)
    if scal:
        in_tail = {id(r) for r in tail}
        tail_multi = [(r, t, e) for r, t, e in scal if id(r) in in_tail]
        inherited = sum(1 for r, t, e in tail_multi if t >= e)
        no_twin = sum(1 for r in tail if r["n_gpus"] > 1) - len(tail_multi)
        print(f"multi-GPU tail rows: {len(tail_multi)} with a one-GPU twin, {inherited} inherit the twin's miss, "
              f"{len(tail_multi) - inherited} miss in the scaling; {no_twin} without a twin")
        groups = defaultdict(list)
        for r, t, e in scal:
            groups[(r["n_gpus"], r["_src"].get("interconnect") or "-")].append(e)
        allerr = [e for _, _, e in scal]
        print(f"scaling-ratio error over {len(scal)} multi-GPU rows: median / mean {statistics.median(allerr):.1f} / "
              f"{statistics.mean(allerr):.1f}%")
        print("| GPUs | interconnect | rows | median | mean | max |")
        print("|---:|---|---:|---:|---:|---:|")
        for (g, ic), es in sorted(groups.items()):
            print(f"| {g} | {ic} | {len(es)} | {statistics.median(es):.1f} | {statistics.mean(es):.1f} | {max(es):.1f} |")
    for r in worst[:list_n]:
        print(f'  line {r["line"]}: {r["gpu"]} {r["model"]} {r["runtime"]} {r["_src"].get("runtime_version") or "-"} '
              f'{r["mode"]} {r["precision"]} b{r["batch"]} x{r["n_gpus"]} {r.get("bound") or "-"} '
              f'{(ratio(r) - 1) * 100:+.0f}%')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build", "release", "perfcast"))
    ap.add_argument("--json-dir", help="read `validate CSV --json` output from DIR/<name>.json instead of running perfcast")
    ap.add_argument("--tail", type=float, default=10.0, help="the worst this percent of each file's rows (default 10)")
    ap.add_argument("--list", type=int, default=0, help="also print each file's N worst rows")
    ap.add_argument("files", nargs="+", help="calibration validation CSVs")
    a = ap.parse_args()
    if not 0 < a.tail <= 100:
        fail(f"--tail must be a percentage in (0, 100], got {a.tail:g}")
    for path in a.files:
        if not path.endswith(".csv") or not os.path.isfile(path):
            fail(f"{path}: not a validation CSV")
    for path in a.files:
        report(os.path.basename(path), load(path, a.perfcast, a.json_dir), a.tail, a.list)


if __name__ == "__main__":
    main()
