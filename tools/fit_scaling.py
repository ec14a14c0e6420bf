#!/usr/bin/env python3
"""Fit one data-parallel constant over the calibration sources and report its leave-one-source-out error.

Sets every KEY (a dotted path into data/interconnects.toml, e.g. strategy.ddp.sync_cv) to each VALUE in turn in a
temporary copy of data/, runs tools/scaling_efficiency.py's pairing over FILES, and reports the mean scaling-
efficiency error (points) per value, the in-sample best, and leave-one-source-out: for each source the value chosen
on the other sources, scored on the held-out one. A source is the `source` column up to its first ' (' (one README
or log tree); with --by-system the log tree's system folder; with --group-column COLUMN that column (gpu: one server).

    tools/fit_scaling.py --key strategy.ddp.sync_cv --key strategy.horovod.sync_cv --values 0.01,0.02,0.04 FILE...
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scaling_efficiency as se  # noqa: E402


def set_key(text, dotted, value):
    *table, key = dotted.split(".")
    header = "[" + ".".join(table) + "]"
    start = re.search(r"(?m)^" + re.escape(header) + r"$", text).start()
    end = text.find("\n[", start + 1)
    end = len(text) if end < 0 else end
    body, n = re.subn(r"(?m)^" + re.escape(key) + r" = .*$", f"{key} = {value}", text[start:end], count=1)
    if n != 1:
        body = text[start:end].rstrip("\n") + f"\n{key} = {value}\n"
    return text[:start] + body + text[end:]


def group_of(row, by_system, column=""):
    if column:
        return row[column]
    src = row["source"].split(" (")[0]
    if by_system:
        m = re.search(r"logs/([^/]+?)\.logs", src)
        if m:
            return re.sub(r"-?\d+x", "-", m.group(1).split("_TF")[0])
    return src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--data", default="data")
    ap.add_argument("--key", action="append", required=True)
    ap.add_argument("--values", required=True)
    ap.add_argument("--by-system", action="store_true", help="group lambdal log rows by system, not by source")
    ap.add_argument("--group-column", default="", help="group by this column (e.g. gpu: leave one server out)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    values = a.values.split(",")
    err = defaultdict(lambda: defaultdict(list))  # value -> group -> [(abs error, poor)]
    tmp = tempfile.mkdtemp(prefix="fit_scaling_")
    try:
        for v in values:
            d = os.path.join(tmp, "data")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(a.data, d)
            p = os.path.join(d, "interconnects.toml")
            text = open(p).read()
            for k in a.key:
                text = set_key(text, k, v)
            open(p, "w").write(text)
            os.environ["PERFCAST_DATA"] = d
            for f in a.files:
                for r, n, meas, pred in se.pairs(se.rows_of(a.perfcast, f)):
                    err[v][group_of(r, a.by_system, a.group_column)].append((abs(pred - meas) * 100, meas < 0.9))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    groups = sorted({g for v in values for g in err[v]})

    def score(v, gs, poor=False):
        xs = [e for g in gs for e, p in err[v][g] if p or not poor]
        return sum(xs) / len(xs) if xs else float("nan"), len(xs)

    print("value    all-rows  poor-rows")
    for v in values:
        print(f"{v:8s} {score(v, groups)[0]:8.2f} {score(v, groups, True)[0]:9.2f}")
    best = min(values, key=lambda v: score(v, groups)[0])
    print(f"in-sample best {best}: {score(best, groups)[0]:.2f} points (poor rows {score(best, groups, True)[0]:.2f})")
    tot = totp = 0.0
    cnt = cntp = 0
    for g in groups:
        rest = [h for h in groups if h != g]
        v = min(values, key=lambda x: score(x, rest)[0])
        s, n = score(v, [g])
        sp, np_ = score(v, [g], True)
        tot += s * n
        cnt += n
        if np_:
            totp += sp * np_
            cntp += np_
        print(f"  leave out {g[:80]:80s} n={n:3d} chosen {v:6s} error {s:5.2f} (poor {np_:2d}: {sp:5.2f})")
    print(f"leave-one-source-out: {tot / cnt:.2f} points over {cnt} rows, poor rows {totp / max(cntp, 1):.2f} over {cntp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
