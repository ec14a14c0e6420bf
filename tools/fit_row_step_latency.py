#!/usr/bin/env python3
"""Fit [row_kernels] vector_step_latency_clk and scalar_step_latency_clk (data/cost_model.toml) to measured kernels.

PyTorch runs LayerNorm and large-row softmax as one CTA per row (aten/src/ATen/native/cuda/layer_norm_kernel.cu,
SoftMax.cu). A CTA alone on its SM (a grid of no more rows than SMs) streams its row one loop step at a time, each
step a dependent global load, so its time is steps x one step's latency, whatever the DRAM bandwidth. This reads
the rows of the H200 device session (data/device_sessions/2026-12-04-h200: kernel_sweep_seed*.csv, the profiler
traces beside them) whose grid is at most the SM count, counts each kernel's steps as cost/op_cost.cpp does
(row_kernel_steps below mirrors it), and fits the latency per step through the origin, least squares, on
(steps, time - kernel floor):

- vector: vectorized_layer_norm_kernel (N % 4 == 0): 128 threads x 4 elements a step, two passes over the row;
- scalar: RowwiseMomentsCUDAKernel (512 threads, one element a step), LayerNormForwardCUDAKernel (256 threads),
  cunn_SoftMaxForward (1024 threads x 4 FP32 elements a step, three passes: max, sum, write).

Time: the kernel's profiled duration where the trace has the row, else `Latency_back_to_back` (20 calls queued
back to back; the kernels' own time once the host is ahead), used only where it is over 3x the back-to-back time
of the smallest rows (the host's own rate). Clocks: the H200's boost clock (data/gpus/h200-sxm-141gb.toml,
1980 MHz; nvidia-smi read 1980 MHz under load, README of the session).

    tools/fit_row_step_latency.py [--session DIR]
"""
import argparse
import csv
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "device_session"))
from sweep_to_neusight import kernels_by_range  # noqa: E402

SMS = 132            # data/gpus/h200-sxm-141gb.toml sm_count
CLOCK_MHZ = 1980.0   # boost_clock_mhz
FLOOR_US = 2.0       # data/architectures.toml [sm_90] kernel_floor_us
HOST_B2B_US = 12.0   # back-to-back time of the smallest rows (their host dispatch), from the same CSVs


def steps(kernel, cols):
    """Dependent loop steps one CTA takes over a row of `cols` FP32 elements (the layer_norm_kernel.cu and
    SoftMax.cu loops)."""
    if kernel.startswith("vectorized_layer_norm_kernel"):
        return "vector", 2 * math.ceil(cols / (128 * 4))
    if kernel.startswith("RowwiseMomentsCUDAKernel"):
        return "scalar", math.ceil(cols / 512)
    if kernel.startswith("LayerNormForwardCUDAKernel"):
        return "scalar", math.ceil(cols / 256)
    if kernel.startswith("cunn_SoftMaxForward<"):
        return "scalar", 3 * math.ceil(cols / (1024 * 4))
    return None, 0


def short(name):
    """The kernel's own name: 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, ...>(...)' -> 'cunn_SoftMaxForward<4, ...>'."""
    name = name[5:] if name.startswith("void ") else name
    for prefix in ("at::native::", "(anonymous namespace)::"):
        name = name[len(prefix):] if name.startswith(prefix) else name
    return name.split("(")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--session", default="data/device_sessions/2026-12-04-h200")
    a = ap.parse_args()
    points = {"vector": [], "scalar": []}
    for name in sorted(os.listdir(a.session)):
        if not (name.startswith("kernel_sweep_seed") and name.endswith(".csv")):
            continue
        path = os.path.join(a.session, name)
        trace = path[:-4] + "_trace.json.gz"
        traced = kernels_by_range(trace) if os.path.exists(trace) else {}
        for i, r in enumerate(csv.DictReader(open(path, newline=""))):
            if r["OPName"] not in ("ln", "softmax") or r["Precision"] != "fp32":
                continue
            rows, cols = int(r["B"]), int(r["H"])
            if rows > SMS:
                continue
            if i in traced:
                for kname, dur, _ in traced[i]:
                    kind, n = steps(short(kname), cols)
                    if kind and n >= 4:
                        points[kind].append((n, dur, f"{r['OPName']} {rows}x{cols} {short(kname)[:28]} (trace)"))
            elif r["OPName"] == "ln" and cols % 4 == 0:
                b2b = float(r["Latency_back_to_back"]) * 1e3
                n = 2 * math.ceil(cols / 512)
                if b2b > 3 * HOST_B2B_US and n >= 4:
                    points["vector"].append((n, b2b, f"ln {rows}x{cols} vectorized (back to back)"))
    for kind, pts in points.items():
        if not pts:
            sys.exit(f"no {kind} rows found in {a.session}")
        sxy = sum(n * max(0.0, t - FLOOR_US) for n, t, _ in pts)
        sxx = sum(n * n for n, _, _ in pts)
        us = sxy / sxx
        print(f"{kind}: {len(pts)} kernels, {us:.4f} us per step = {us * CLOCK_MHZ:.0f} clk at {CLOCK_MHZ:.0f} MHz")
        for n, t, what in sorted(pts):
            print(f"  {what:60s} steps {n:4d}  {t:7.1f} us  model {FLOOR_US + n * us:7.1f} us")


if __name__ == "__main__":
    main()
