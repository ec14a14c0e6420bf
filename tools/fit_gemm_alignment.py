#!/usr/bin/env python3
"""Fit [gemm] misaligned_tensor_efficiency_{2b,4b,8b} (data/cost_model.toml) for one architecture from measured
tensor-core GEMMs whose leading dimensions are not multiples of 16 bytes.

Input: the residuals CSV of `perfcast predict-kernels --kernels data/measured_kernels/h200_tensor --residuals FILE`
(columns op, precision, b, m, n, k, measured_us, predicted_us, kernel_us, floor_us). In NeuSight's layout n is the
contraction and k the output dimension: both are leading dimensions of a row-major GEMM (m, the rows, is not).
Each row's kernel time is first put back to the aligned rate by multiplying it with the factor the model applied
(read from cost_model.toml for --sm), so the fit does not depend on the values it replaces. Rows the kernel sets
(measured at least twice the op's host floor) are kept; a row's factor is aligned kernel time / (measured time -
the predicted launch), and each class's value is the median over its rows (bf16/fp16 and tf32 pooled by bytes).
Undoing the factor is exact for the rate but not for the clock the model lowers with tensor activity, so the fit is
rerun with its own output until the printed values stop moving (two rounds from the first fit of session 29).

    build/release/perfcast predict-kernels --kernels data/measured_kernels/h200_tensor --residuals /tmp/r.csv
    python3 tools/fit_gemm_alignment.py /tmp/r.csv --sm 90
"""
import argparse
import csv
import math
import pathlib
import statistics
import tomllib


# The rule of gemm_alignment_efficiency (src/cost/op_cost.cpp): keep the two the same.
def alignment_bytes(n, k, elem):
    common = math.gcd(n, k)
    b = elem
    while b < 16 and common % (2 * b // elem) == 0:
        b *= 2
    return min(b, 16)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("residuals")
    ap.add_argument("--sm", type=int, required=True)
    ap.add_argument("--cost-model", default=str(pathlib.Path(__file__).resolve().parents[1] / "data" / "cost_model.toml"))
    args = ap.parse_args()
    gemm = tomllib.loads(pathlib.Path(args.cost_model).read_text())["gemm"]
    current = {b: gemm.get(f"misaligned_tensor_efficiency_{b}b", {}).get(f"sm_{args.sm}", 1.0) for b in (2, 4, 8)}
    classes = {2: [], 4: [], 8: []}
    aligned = []
    with open(args.residuals, newline="") as f:
        for r in csv.DictReader(f):
            prec = r.get("precision", "")
            if prec not in ("fp16", "bf16", "tf32"):
                continue
            elem = 4 if prec == "tf32" else 2
            n, k = int(r["n"]), int(r["k"])
            meas, pred, kern, floor = (float(r[c]) for c in ("measured_us", "predicted_us", "kernel_us", "floor_us"))
            if meas < 2 * floor or kern <= 0:
                continue
            launch = max(0.0, pred - kern) if pred > floor else 0.0
            b = alignment_bytes(n, k, elem)
            if b >= 16:
                aligned.append(kern / max(meas - launch, 1e-9))
                continue
            classes[b].append(kern * current[b] / max(meas - launch, 1e-9))
    for b in (2, 4, 8):
        v = classes[b]
        if v:
            print(f"misaligned_tensor_efficiency_{b}b sm_{args.sm}: {statistics.median(v):.3f} "
                  f"(rows {len(v)}, quartiles {statistics.quantiles(v, n=4)[0]:.3f}-{statistics.quantiles(v, n=4)[2]:.3f})")
        else:
            print(f"misaligned_tensor_efficiency_{b}b sm_{args.sm}: no rows")
    if aligned:
        print(f"aligned rows (16 bytes): {len(aligned)}, median predicted/measured kernel {statistics.median(aligned):.3f}")


if __name__ == "__main__":
    main()
