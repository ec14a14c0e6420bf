#!/usr/bin/env python3
"""Measured streaming bandwidth of each NeuSight board against the kernel model's DRAM rate (a check; writes nothing).

NeuSight's collector (shared/kernels/neusight_train) times FP32 elementwise calls (add, mul, div: two inputs and one
output; addu: in-place, one input and one output) on five boards. Above ~30 MB a call is long enough that the
measurement is a straight line in its bytes, t = intercept + bytes / rate: the slope is the board's streaming rate
(what a long memory-bound kernel in a training step moves at), the intercept the harness's per-call cost (dispatch
before the GPU starts, docs/kernel-model.md "The harness measures dispatch + kernel"). `perfcast fit-kernels` fits one
`dram_efficiency` per architecture over all sizes under a max(floor, launch + kernel) harness, so that value also
carries the intercept; this tool shows how far the two part for long kernels. (`perfcast fit-kernels --host-launch
elementwise_binary elementwise_unary softmax layernorm` fits the intercept as the host's launch instead: session 41,
docs/calibration.md.)

For every board it prints the least-squares slope as a share of the datasheet bandwidth (data/gpus/<id>.toml
mem_bw_gbps), pooled and per op (the spread is the check that the figure is the board's, not one kernel's), the
slope from the 30-150 MB and the >= 150 MB rows apart, the intercept, the fitted dram_efficiency of its architecture
(data/kernel_fit.toml), and with --perfcast the median ratio predicted / measured of `perfcast op` (kernel only, no
harness floor) per size bin.

    tools/streaming_bandwidth.py [--kernels ../shared/kernels/neusight_train] [--perfcast build/release/perfcast]
"""
import argparse
import csv
import gzip
import json
import os
import re
import sys
import statistics
import subprocess

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/neusight_devices.py
import neusight_devices  # noqa: E402


def neusight_boards(folder):
    """NeuSight file name -> perfcast GPU id, architecture, for the files in `folder` (empty when it is missing)."""
    if not os.path.isdir(folder):
        return {}
    return {board: (gpu, neusight_devices.gpu_spec(gpu)[0])
            for board, gpu in neusight_devices.board_ids(folder, "streaming_bandwidth.py").items()}


TENSORS = {"add": 3, "mul": 3, "div": 3, "addu": 2}  # FP32 tensors each call moves (inputs + output)
MIN_BYTES = 30e6


def line_fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


def datasheet_gbps(root, gpu):
    for line in open(os.path.join(root, "data", "gpus", gpu + ".toml")):
        m = re.match(r"\s*mem_bw_gbps\s*=\s*([0-9.]+)", line)
        if m:
            return float(m.group(1))
    raise SystemExit(f"no mem_bw_gbps in data/gpus/{gpu}.toml")


def fitted_dram_efficiency(root, arch):
    text = open(os.path.join(root, "data", "kernel_fit.toml")).read()
    m = re.search(r"\[arch\.%s\][^\[]*?dram_efficiency = ([0-9.]+)" % arch, text, re.S)
    return float(m.group(1)) if m else float("nan")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=os.path.join(root, "..", "shared", "kernels", "neusight_train"))
    ap.add_argument("--perfcast", help="also compare `perfcast op` per size bin (slow: one call per sampled row)")
    args = ap.parse_args()
    boards = neusight_boards(os.path.join(args.kernels, "add"))
    missing = [os.path.join(args.kernels, op, board + ".csv.gz") for op in TENSORS for board in boards
               if not os.path.isfile(os.path.join(args.kernels, op, board + ".csv.gz"))] or \
        ([] if boards else [os.path.join(args.kernels, "add")])
    if missing:
        print(f"streaming_bandwidth.py: measured kernels not found: {missing[0]} (--kernels names the neusight_train "
              "folder)", file=sys.stderr)
        sys.exit(2)
    for board, (gpu, arch) in boards.items():
        peak = datasheet_gbps(root, gpu)
        xs, ys, per_op, rows = [], [], {}, []
        for op, tensors in TENSORS.items():
            path = os.path.join(args.kernels, op, board + ".csv.gz")
            ox, oy = [], []
            for r in csv.DictReader(gzip.open(path, "rt")):
                nbytes = int(r["B"]) * int(r["H"]) * 4 * tensors
                seconds = float(r["Latency"]) * 1e-3  # the CSV's Latency is in ms
                rows.append((op, r, nbytes, seconds))
                if nbytes >= MIN_BYTES:
                    ox.append(nbytes)
                    oy.append(seconds)
            per_op[op] = 1 / line_fit(ox, oy)[0] / 1e9 / peak
            xs += ox
            ys += oy
        slope, intercept = line_fit(xs, ys)
        lo = [(x, y) for x, y in zip(xs, ys) if x < 150e6]
        hi = [(x, y) for x, y in zip(xs, ys) if x >= 150e6]
        lo_eff = 1 / line_fit(*zip(*lo))[0] / 1e9 / peak
        hi_eff = 1 / line_fit(*zip(*hi))[0] / 1e9 / peak
        print(f"{gpu} ({arch}, {peak:.0f} GB/s): {len(xs)} calls >= {MIN_BYTES / 1e6:.0f} MB, streaming "
              f"{1 / slope / 1e9:.0f} GB/s = {1 / slope / 1e9 / peak:.3f} of the datasheet (30-150 MB {lo_eff:.3f}, "
              f">= 150 MB {hi_eff:.3f}; " + ", ".join(f"{o} {e:.3f}" for o, e in per_op.items()) +
              f"), intercept {intercept * 1e6:.1f} us; kernel_fit.toml dram_efficiency {fitted_dram_efficiency(root, arch):.3f}")
        if not args.perfcast:
            continue
        bins = {}
        for op, r, nbytes, seconds in rows:
            if op != "add":
                continue
            name = "<10 MB" if nbytes < 10e6 else "10-50 MB" if nbytes < 50e6 else "50-200 MB" if nbytes < 200e6 else ">=200 MB"
            bins.setdefault(name, []).append((r, seconds))
        for name, members in bins.items():
            ratios = []
            for r, seconds in members[:: max(1, len(members) // 25)]:
                out = subprocess.run([args.perfcast, "op", "--gpu", gpu, "--op", "elementwise", "--function", "add",
                                      "--rows", r["B"], "--cols", r["H"], "--json"], capture_output=True, text=True,
                                     check=True).stdout
                ratios.append(json.loads(out)["predicted_us"] * 1e-6 / seconds)
            print(f"  add {name}: {len(ratios)} calls, median predicted / measured {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
