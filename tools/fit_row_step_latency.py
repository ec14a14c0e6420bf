#!/usr/bin/env python3
"""Fit [row_kernels] *_step_latency_clk (data/cost_model.toml) to the H200 session's LayerNorm and softmax rows.

PyTorch runs LayerNorm and large-row softmax as one CTA per row (aten/src/ATen/native/cuda/layer_norm_kernel.cu,
SoftMax.cu). A CTA alone on its SM (a grid of no more rows than SMs) walks its row one loop step at a time, so its
time is steps x one step's time, whatever the DRAM bandwidth. This reads data/device_sessions/2026-12-04-h200
(kernel_sweep_seed*.csv) for the FP32 rows with at most 132 rows (the H200's SMs), counts each row's steps as
cost/op_cost.cpp does (steps() below mirrors it), and fits one step's time per kernel family through the origin,
least squares, on (steps, time - launch floor per kernel):

- vector: vectorized_layer_norm_kernel (N % 4 == 0): 128 threads x 4 elements a step, two passes over the row;
- scalar: RowwiseMomentsCUDAKernel (512 threads, one element a step) + LayerNormForwardCUDAKernel (256 threads);
- softmax: cunn_SoftMaxForward (N > 1024; 1024 threads x 4 FP32 elements a step; three passes: max, sum, write;
  two where the row fits shared memory and N % 4 == 0: cunn_SoftMaxForwardSmem / Reg).

Time: `Latency_back_to_back` (20 calls queued back to back: the kernels' own time once the host is ahead), kept
where it is over twice the op's smallest back-to-back time in its sweep (below that the host's dispatch rate sets
it; the second sweep's host was slower: LayerNorm 19.0 us against 12.1). The
profiled kernels' durations in the traces are not used: for these lone-CTA kernels they run ~2x the back-to-back
time (5 x 32641: RowwiseMoments 29.7 us + LayerNormForward 57.3 us traced against 42.8 us back to back), while the
large bandwidth-bound rows agree (3135 x 22031: 361 traced, 370 back to back), so the traced single call ran at a
lower clock. The trace names the kernels the rule below picks on every traced row (checked here).
Clocks: the H200's boost clock (data/gpus/h200-sxm-141gb.toml, 1980 MHz; nvidia-smi read 1980 MHz under load).

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
FLOOR_US = 4.7       # data/gpus/h200-sxm-141gb.toml [measured] kernel_floor_us (what the model charges this card per kernel)


def plan(op, cols):
    """(family, steps, kernels, expected kernel names) for one FP32 row of `cols` elements."""
    if op == "ln":
        if cols % 4 == 0:
            return "vector", 2 * math.ceil(cols / (128 * 4)), 1, ["vectorized_layer_norm_kernel"]
        return "scalar", math.ceil(cols / 512) + math.ceil(cols / 256), 2, ["RowwiseMomentsCUDAKernel",
                                                                           "LayerNormForwardCUDAKernel"]
    if cols <= 1024:
        return None, 0, 0, []
    cached = cols % 4 == 0 and cols * 4 < 49152
    return "softmax", (2 if cached else 3) * math.ceil(cols / (1024 * 4)), 1, ["cunn_SoftMaxForward"]


def short(name):
    """'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, ...>(...)' -> 'cunn_SoftMaxForward'."""
    name = name[5:] if name.startswith("void ") else name
    for prefix in ("at::native::", "(anonymous namespace)::"):
        name = name[len(prefix):] if name.startswith(prefix) else name
    return name.split("(")[0].split("<")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--session", default="data/device_sessions/2026-12-04-h200")
    a = ap.parse_args()
    rows = []
    for name in sorted(os.listdir(a.session)):
        if not (name.startswith("kernel_sweep_seed") and name.endswith(".csv")):
            continue
        path = os.path.join(a.session, name)
        trace = path[:-4] + "_trace.json.gz"
        traced = kernels_by_range(trace) if os.path.exists(trace) else {}
        for i, r in enumerate(csv.DictReader(open(path, newline=""))):
            if r["OPName"] in ("ln", "softmax") and r["Precision"] == "fp32":
                rows.append((name, r["OPName"], int(r["B"]), int(r["H"]), float(r["Latency_back_to_back"]) * 1e3,
                             [short(k[0]) for k in traced.get(i, [])]))
    # The host's dispatch rate: each sweep's (the second ran on a busier host) smallest back-to-back time per op.
    host = {}
    for sweep, op, _, _, t, _ in rows:
        host[(sweep, op)] = min(t, host.get((sweep, op), t))
    points = {"vector": [], "scalar": [], "softmax": []}
    mismatched = 0
    for sweep, op, b, h, t, names in rows:
        family, steps, kernels, expect = plan(op, h)
        if names and expect and not all(any(n.startswith(e) for n in names) for e in expect):
            # The Reg/Smem softmax variants carry other names; only the plain kernel's rows are checked.
            mismatched += family != "softmax"
        if family is None or b > SMS or t <= 2 * host[(sweep, op)]:
            continue
        points[family].append((steps, t - kernels * FLOOR_US, f"{op} {b}x{h}", t, kernels))
    if mismatched:
        sys.exit(f"{mismatched} traced LayerNorm rows ran other kernels than the rule says")
    print("host back-to-back floor (rows kept above 2x): " +
          ", ".join(f"{sweep} {op} {t:.1f} us" for (sweep, op), t in sorted(host.items())))
    for family, pts in points.items():
        if not pts:
            sys.exit(f"no {family} rows in {a.session}")
        us = sum(n * y for n, y, *_ in pts) / sum(n * n for n, *_ in pts)
        print(f"{family}: {len(pts)} rows, {us:.4f} us per step = {us * CLOCK_MHZ:.0f} clk at {CLOCK_MHZ:.0f} MHz")
        for n, _, what, t, k in sorted(pts):
            print(f"  {what:16s} steps {n:4d}  back to back {t:6.1f} us  model {k * FLOOR_US + n * us:6.1f} us")


if __name__ == "__main__":
    main()
