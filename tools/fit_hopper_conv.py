#!/usr/bin/env python3
"""Fits [[conv.implicit_gemm_arch]] (data/cost_model.toml) for one architecture to measured FP32 CUDA-core
convolutions: conv_efficiency_cuda (the xmma FFMA kernels' rate against a plain SGEMM), implicit_gemm_step_latency_clk
(the cycles one 8-deep main-loop step takes at least when its CTAs cannot hide each other's loads) and
implicit_gemm_tile_m (the pixel tile searched: 0 = any tile of [gemm] tiles_cuda, 32, 128).

It costs the rows with perfcast itself (`perfcast predict-kernels --residuals`) over a grid of the three values,
each run on a copy of data/ with the candidate written into the entry that lists --sm, and keeps the values with
the smallest mean of min(|ln(pred/meas)|, ln 2) over the conv rows measured at least twice their host floor (the
kernel, not the host, sets them; the clip keeps a handful of pathological rows, such as cuDNN 9's FFT choice at
3-5% of the implicit-GEMM rate, from setting the fit). Only measured kernel times enter the loss.

Usage: python3 tools/fit_hopper_conv.py --perfcast build/release/perfcast --kernels FOLDER [--sm 90]
           [--report FOLDER ...]
FOLDER is a NeuSight-layout folder (tools/device_session/sweep_to_neusight.py); --report folders are costed with
the fitted values afterwards (held-out rows), and the start values (the entry as committed) too.
"""
import argparse
import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

csv.field_size_limit(10**9)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_entry(data_dir, sm, eff, lat, tile_m):
    path = os.path.join(data_dir, "cost_model.toml")
    text = open(path).read()
    head = "[[conv.implicit_gemm_arch]]\nsm = [%d]\n" % sm
    i = text.find(head)
    if i < 0:
        sys.exit("fit_hopper_conv: no [[conv.implicit_gemm_arch]] entry with sm = [%d] in %s" % (sm, path))
    j = i + len(head)
    body = ("conv_efficiency_cuda = %.4f\nimplicit_gemm_step_latency_clk = %.1f\nimplicit_gemm_tile_m = %d\n"
            % (eff, lat, tile_m))
    end = text.index("implicit_gemm_tile_m", j)
    end = text.index("\n", end) + 1
    open(path, "w").write(text[:i] + head + body + text[end:])


def conv_rows(perfcast, data_dir, kernels):
    with tempfile.NamedTemporaryFile(suffix=".csv") as res:
        env = dict(os.environ, PERFCAST_DATA=data_dir)
        subprocess.run([perfcast, "predict-kernels", "--kernels", kernels, "--residuals", res.name], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        rows = [r for r in csv.DictReader(open(res.name)) if r["op"] == "conv"]
    return [(float(r["predicted_us"]), float(r["measured_us"]), float(r["floor_us"])) for r in rows]


def figures(rows, kernel_bound):
    sel = [(p, m) for p, m, f in rows if not kernel_bound or m >= 2 * f]
    errs = [abs(p - m) / m for p, m in sel]
    ratios = [p / m for p, m in sel]
    return len(sel), statistics.median(errs), statistics.mean(errs), statistics.median(ratios)


def loss(rows):
    sel = [(p, m) for p, m, f in rows if m >= 2 * f]
    return statistics.mean(min(abs(math.log(p / m)), math.log(2)) for p, m in sel)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perfcast", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--sm", type=int, default=90)
    ap.add_argument("--report", nargs="*", default=[])
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="fit_hopper_conv_")
    data_dir = os.path.join(tmp, "data")
    shutil.copytree(os.path.join(REPO, "data"), data_dir)
    try:
        start = {k: conv_rows(a.perfcast, data_dir, k) for k in [a.kernels] + a.report}
        best = None
        for tile_m in (0, 32, 128):
            for lat in range(0, 1401, 100):
                for e in range(30, 101, 2):
                    eff = e / 100
                    write_entry(data_dir, a.sm, eff, lat, tile_m)
                    l = loss(conv_rows(a.perfcast, data_dir, a.kernels))
                    if best is None or l < best[0]:
                        best = (l, eff, lat, tile_m)
        l, eff, lat, tile_m = best
        print("fitted on %s (sm_%d): conv_efficiency_cuda = %.2f, implicit_gemm_step_latency_clk = %d, "
              "implicit_gemm_tile_m = %d (loss %.4f)" % (a.kernels, a.sm, eff, lat, tile_m, l))
        write_entry(data_dir, a.sm, eff, lat, tile_m)
        print("| kernels | rows | before: median error | mean | pred/meas | fitted: median error | mean | pred/meas |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for k in [a.kernels] + a.report:
            after = conv_rows(a.perfcast, data_dir, k)
            for kb in (False, True):
                n, med0, mean0, r0 = figures(start[k], kb)
                _, med1, mean1, r1 = figures(after, kb)
                print("| %s%s | %d | %.1f%% | %.1f%% | %.2f | %.1f%% | %.1f%% | %.2f |"
                      % (k, " (kernel-bound)" if kb else " (all)", n, 100 * med0, 100 * mean0, r0, 100 * med1,
                         100 * mean1, r1))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
