#!/usr/bin/env python3
"""Fit one CPU cost constant over calibration rows and report its leave-one-source-out error.

Sets KEY (a top-level `key = value` line of TOML, a file under data/, e.g. cpu_cost.toml) to each VALUE in turn in a
temporary copy of data/, runs `perfcast validate --json` over FILES and scores each value by the median absolute
percentage error of the rows. Prints, per value, the median APE over all rows; the in-sample best; and leave-one-
source-out: for each source, the value chosen on the other sources, scored on the held-out one, then the median APE
of all held-out rows together. A source is the `source` column up to its first ' (' (one file of one repository or
page); --only-runtime and --only-model keep the rows a constant can touch.

    tools/fit_cpu_constant.py --toml cpu_cost.toml --key linear_weight_b_transposed_... --values 1,2,4 FILE...
"""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict


def set_key(text, key, value):
    body, n = re.subn(r"(?m)^" + re.escape(key) + r"( *)= [^#\n]*", lambda m: f"{key}{m.group(1)}= {value} ", text, count=1)
    if n != 1:
        raise SystemExit(f"key '{key}' not found as a top-level line")
    return body


def sources_of(path):
    with open(path, newline="") as f:
        return [row["source"].split(" (")[0] for row in csv.DictReader(f)]


def rows_of(perfcast, path):
    out = subprocess.run([perfcast, "validate", path, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(out.stderr.strip())
    return json.loads(out.stdout)["rows"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--data", default="data")
    ap.add_argument("--toml", required=True, help="file under data/ holding the key")
    ap.add_argument("--key", required=True)
    ap.add_argument("--values", required=True)
    ap.add_argument("--only-runtime", default="")
    ap.add_argument("--only-model", default="")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    values = a.values.split(",")
    err = defaultdict(lambda: defaultdict(list))  # value -> source -> [APE]
    tmp = tempfile.mkdtemp(prefix="fit_cpu_")
    try:
        for v in values:
            d = os.path.join(tmp, "data")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(a.data, d)
            p = os.path.join(d, a.toml)
            text = open(p).read()
            open(p, "w").write(set_key(text, a.key, v))
            os.environ["PERFCAST_DATA"] = d
            for f in a.files:
                srcs = sources_of(f)
                for r in rows_of(a.perfcast, f):
                    if a.only_runtime and r["runtime"] != a.only_runtime:
                        continue
                    if a.only_model and r["model"] != a.only_model:
                        continue
                    # `line` counts the header as line 1.
                    err[v][srcs[r["line"] - 2]].append(r["ape_pct"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    groups = sorted({g for v in values for g in err[v]})

    def score(v, gs):
        xs = [e for g in gs for e in err[v][g]]
        return statistics.median(xs) if xs else float("nan"), len(xs)

    print("value      median APE %  (rows)")
    for v in values:
        s, n = score(v, groups)
        print(f"{v:10s} {s:10.2f}  ({n})")
    best = min(values, key=lambda v: score(v, groups)[0])
    print(f"in-sample best {best}: median APE {score(best, groups)[0]:.2f}%")
    held = []
    for g in groups:
        rest = [h for h in groups if h != g]
        v = min(values, key=lambda x: score(x, rest)[0]) if rest else best
        s, n = score(v, [g])
        held += err[v][g]
        print(f"  leave out {g[:90]:90s} n={n:3d} chosen {v:8s} median APE {s:6.2f}%")
    if held:
        print(f"leave-one-source-out: median APE {statistics.median(held):.2f}% over {len(held)} rows "
              f"(mean {statistics.mean(held):.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
