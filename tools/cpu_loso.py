#!/usr/bin/env python3
"""Leave-one-source-out error of the CPU model over the CPU calibration rows, term by term.

Without --sweep: per source (the `source` column up to its first ' (', the '@commit' dropped, so two revisions of one
file are one source), the rows, median APE and median predicted / measured ratio at the data/ as it is, then the
median over all rows.

With --sweep TOML:KEY:V1,V2,... (repeatable; TOML is a file under data/, KEY a `key = value` line in it, as
tools/fit_cpu_constant.py sets it): each constant is set to each value in turn, alone, in a temporary copy of
data/. Per value, each source's median ratio shows whether the sources agree on it (a term that generalises moves
every source the same way or leaves the ones it does not touch alone); then leave one source out: for each
source the value the other sources score best (median APE of their rows) is chosen and the held-out source is
scored with it; the held-out rows' median APE is the term's out-of-sample figure, next to the in-sample best.

    tools/cpu_loso.py                                   # per-source figures as the data stands
    tools/cpu_loso.py --sweep cpu_cost.toml:omp_fork_join_us_per_thread:0.1,0.3,1.0
"""
import argparse
import math
import os
import shutil
import statistics
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_cpu_constant import rows_of, set_key, sources_of  # noqa: E402

DEFAULT_FILES = ["data/validation/cpu.csv", "data/validation/cpu_inference.csv",
                 "data/validation/cpu_transformer.csv", "data/validation/eval_cpu.csv"]


def source_key(source):
    return source.split("@")[0]


def collect(perfcast, files, data_dir):
    """[(source, ape_pct, predicted / measured)] over every predicted row of `files`."""
    os.environ["PERFCAST_DATA"] = data_dir
    out = []
    for f in files:
        srcs = sources_of(f)
        for r in rows_of(perfcast, f):
            # `line` counts the header as line 1.
            out.append((source_key(srcs[r["line"] - 2]), r["ape_pct"], r["predicted"] / r["measured"]))
    return out


def by_source(rows):
    groups = defaultdict(list)
    for s, ape, ratio in rows:
        groups[s].append((ape, ratio))
    return groups


def median_ape(rows, keep=None):
    xs = [ape for s, ape, _ in rows if keep is None or s in keep]
    return statistics.median(xs) if xs else float("nan")


def median_ratio(pairs):
    return math.exp(statistics.median(math.log(r) for _, r in pairs))


def report(rows):
    g = by_source(rows)
    print(f"{'source':70s} {'rows':>4s} {'med APE %':>9s} {'pred/meas':>9s}")
    for s in sorted(g):
        print(f"{s[:70]:70s} {len(g[s]):4d} {statistics.median(a for a, _ in g[s]):9.1f} {median_ratio(g[s]):9.2f}")
    print(f"{'all rows':70s} {len(rows):4d} {median_ape(rows):9.1f} {median_ratio([(a, r) for _, a, r in rows]):9.2f}"
          f"  (mean APE {statistics.mean(a for _, a, _ in rows):.1f}%)")


def sweep(perfcast, files, data, spec):
    toml, key, values = spec.split(":", 2)
    values = values.split(",")
    results = {}
    tmp = tempfile.mkdtemp(prefix="cpu_loso_")
    try:
        for v in values:
            d = os.path.join(tmp, "data")
            shutil.rmtree(d, ignore_errors=True)
            shutil.copytree(data, d)
            p = os.path.join(d, toml)
            with open(p) as f:
                text = f.read()
            with open(p, "w") as f:
                f.write(set_key(text, key, v))
            results[v] = collect(perfcast, files, d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sources = sorted({s for rows in results.values() for s, _, _ in rows})
    print(f"\n== {toml} {key}")
    short = [s.split(":")[-1][:24] for s in sources]
    print(f"{'value':>10s} {'med APE %':>9s}  " + " ".join(f"{n:>24s}" for n in short) + "   (median pred/meas per source)")
    for v in values:
        g = by_source(results[v])
        print(f"{v:>10s} {median_ape(results[v]):9.1f}  " + " ".join(f"{median_ratio(g[s]):24.2f}" for s in sources))
    best = min(values, key=lambda v: median_ape(results[v]))
    held = []
    for s in sources:
        rest = set(sources) - {s}
        chosen = min(values, key=lambda v: median_ape(results[v], rest))
        mine = [a for src, a, _ in results[chosen] if src == s]
        held += mine
        print(f"  leave out {s[:70]:70s} chosen {chosen:>8s} held-out median APE {statistics.median(mine):6.1f}%")
    print(f"in-sample best {best}: median APE {median_ape(results[best]):.1f}%; leave one source out: median APE "
          f"{statistics.median(held):.1f}% over {len(held)} rows (mean {statistics.mean(held):.1f}%)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--data", default="data")
    ap.add_argument("--sweep", action="append", default=[], metavar="TOML:KEY:V1,V2,...")
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES)
    a = ap.parse_args()
    report(collect(a.perfcast, a.files, a.data))
    for spec in a.sweep:
        sweep(a.perfcast, a.files, a.data, spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
