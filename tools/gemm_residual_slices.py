#!/usr/bin/env python3
"""Where the FP32 GEMM error of the kernel fit sits: slices of `perfcast fit-kernels --residuals` rows. Fits nothing.

    perfcast fit-kernels --kernels ../shared/kernels/neusight_train --no-leave-one-out --residuals /tmp/res.csv
    tools/gemm_residual_slices.py /tmp/res.csv [--gpus t4,tesla-p4] [--min-us 500]

For each GPU and GEMM op (linear, bmm) it prints the median pred/meas by the row's PREDICTED kernel length (binning
on the measured time would tie the bin to the denominator), a table of the median pred/meas by weight size (the
linear's reduction x output features x 4 bytes; bmm: one batch's second operand) against predicted length, and how
much of the spread of log(pred/meas) each of log(weight bytes), log(predicted time) and log(row stride = reduction x 4
bytes) explains alone and together (least squares, R^2). NeuSight's linear columns are B, M = rows, N = reduction,
K = output features (its grids: grid.x = K / tile, grid.y = M / tile); its bmm columns B, M, N = depth, K = output
columns (docs/kernel-model.md, "cuBLAS tile orientation").
"""
import argparse
import collections
import csv
import math
import statistics


def bin2(x):
    return 2 ** int(math.floor(math.log2(max(x, 1.0))))


def solve(a, b):
    n = len(a)
    m = [row[:] + [v] for row, v in zip(a, b)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def r_squared(features, ys):
    k = len(features[0])
    a = [[sum(f[i] * f[j] for f in features) for j in range(k)] for i in range(k)]
    b = [sum(f[i] * y for f, y in zip(features, ys)) for i in range(k)]
    c = solve(a, b)
    mean = statistics.fmean(ys)
    ss = sum((y - mean) ** 2 for y in ys)
    res = sum((y - sum(ci * fi for ci, fi in zip(c, f))) ** 2 for f, y in zip(features, ys))
    return 1 - res / ss, c[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("residuals")
    ap.add_argument("--gpus", default="t4,tesla-p4,p100-pcie-16gb,v100-pcie-32gb,a100-pcie-40gb")
    ap.add_argument("--min-us", type=float, default=500.0, help="predicted kernel length for the regression")
    args = ap.parse_args()
    rows = [r for r in csv.DictReader(open(args.residuals)) if r["op"] in ("linear", "bmm")]
    for gpu in args.gpus.split(","):
        for op in ("linear", "bmm"):
            sel = []
            for r in rows:
                if r["gpu"] != gpu or r["op"] != op:
                    continue
                n, k = int(r["n"]), int(r["k"])
                pred, meas = float(r["predicted_us"]), float(r["measured_us"])
                sel.append(dict(pm=pred / meas, pred=pred, w=n * k * 4.0, stride=n * 4.0))
            if not sel:
                continue
            print(f"== {gpu} {op}: {len(sel)} rows, median pred/meas {statistics.median(r['pm'] for r in sel):.2f}")
            edges = [100, 300, 1000, 3000, 10000, 30000, float("inf")]
            by_len = collections.defaultdict(list)
            for r in sel:
                by_len[next(e for e in edges if r["pred"] < e)].append(r["pm"])
            print("  by predicted length (us, upper edge): " + "  ".join(
                f"<{e:g}: {statistics.median(v):.2f} ({len(v)})" for e, v in sorted(by_len.items())))
            table = collections.defaultdict(list)
            for r in sel:
                if r["pred"] >= 1000:
                    table[(bin2(r["w"] / 2**20), bin2(r["pred"] / 1000))].append(r["pm"])
            ws = sorted({w for w, _ in table})
            ts = sorted({t for _, t in table})
            print("  weight MiB (rows) x predicted ms (columns), median pred/meas (rows >= 1 ms):")
            print("  " + " " * 6 + "".join(f"{t:>7}" for t in ts))
            for w in ws:
                cells = "".join(f"{statistics.median(table[(w, t)]):7.2f}" if len(table[(w, t)]) >= 5 else " " * 7
                                for t in ts)
                print(f"  {w:>6}{cells}")
            big = [r for r in sel if r["pred"] >= args.min_us]
            if len(big) > 20:
                ys = [math.log(r["pm"]) for r in big]
                feats = {"weight": lambda r: math.log(r["w"]), "time": lambda r: math.log(r["pred"]),
                         "stride": lambda r: math.log(r["stride"])}
                out = []
                for names in (("weight",), ("time",), ("stride",), ("weight", "time"), ("time", "stride")):
                    r2, slopes = r_squared([[1.0] + [feats[nm](r) for nm in names] for r in big], ys)
                    out.append(f"{'+'.join(names)} {r2:.2f} ({', '.join(f'{s:+.3f}' for s in slopes)})")
                print(f"  R^2 of log(pred/meas), rows over {args.min_us:g} us predicted ({len(big)}): "
                      + "; ".join(out))


if __name__ == "__main__":
    main()
