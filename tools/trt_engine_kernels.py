#!/usr/bin/env python3
"""Put a measured TensorRT engine's kernels against perfcast's per-kernel costs, and bound the engine's
launch-to-launch gap from the measured CUDA-graph replay.

The engine (data/published_kernels/tensorrt_engine_kernels.csv, README there): ResNet-50 INT8 at batch 1, TensorRT
10.14, GeForce RTX 4050 Laptop (sm_89, 20 SMs, boost clock 1605-2370 MHz by its power limit, not recorded). Two
measurements of it: the Nsight Systems kernel summary (56 kernels an inference, their GPU durations, taken in a
free-running loop without a CUDA graph) and the latency of the same enqueue captured in a CUDA graph and replayed
(events on the stream around each replay: every kernel and every gap between them, nothing of the host).

1. By kind (the 36 1x1 convolutions, the 16 3x3 ones, stem + input reformat, global pool, classifier): the
   measured kernel time an inference against `perfcast predict --json`'s per-op GPU time for the same layers, at
   either end of the clock range (tests/data/gpus/rtx-4050-laptop-1605.toml, -2370.toml). perfcast's op names are
   the model's (resnet50_v1_5: layerN.M.conv2 is the 3x3 convolution of a bottleneck; conv1 carries the stem and
   TensorRT's input reformat, two launches). An op perfcast fuses into the kernel before it (the ReLU, the residual
   add whose read the 1x1 convolution's epilogue makes, the INT8 stem's max pool) counts with that kernel.
2. The gap. The graph replay is T = sum of kernel durations at the replay's clock + N x gap. The summary's kernels
   ran at some clock of the same range; a kernel's duration scales with the SM clock at most linearly (DRAM-bound
   kernels less), so at the replay's clock their sum is at least sum_nsys / (2370 / 1605). Hence
      gap <= (T - sum_nsys x 1605 / 2370) / N,
   an upper bound on the launch-to-launch time that the kernels leave idle on the stream, whatever the two clocks
   were. It is printed beside data/runtimes/tensorrt.toml's gpu_gap_per_kernel_us.

    tools/trt_engine_kernels.py [--perfcast build/release/perfcast]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tomllib

GRAPH_REPLAY_US = 347.16  # benchmarks/int8.csv latency_ms_mean 0.34716 (README beside the kernels file)
KINDS = ("conv1x1", "conv3x3", "stem+reformat", "avgpool", "fc")


def measured_by_kind(path):
    """Kernel time an inference (us) and kernels an inference, by kind, from the summary's rows."""
    out = {k: [0.0, 0.0] for k in KINDS}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            kind = "stem+reformat" if r["kind"] in ("stem", "reformat") else r["kind"]
            n = float(r["inferences"])
            out[kind][0] += float(r["total_ns"]) / n / 1000
            out[kind][1] += float(r["instances"]) / n
    return out


def perfcast_kind(op_name):
    if op_name == "conv1":
        return "stem+reformat"
    if op_name in ("avgpool", "fc"):
        return op_name
    return "conv3x3" if op_name.endswith(".conv2") else "conv1x1"


def predicted_by_kind(perfcast, gpu_file):
    cmd = [perfcast, "predict", "--gpu", gpu_file, "--model", "resnet50_v1_5", "--runtime", "tensorrt",
           "--precision", "int8", "--batch", "1", "--mode", "infer", "--json"]
    p = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    out = {k: [0.0, 0.0] for k in KINDS}
    k = None
    for op in p["ops"]:  # graph order: an op without a launch of its own is fused into the kernel before it
        if op["launches"] > 0:
            k = perfcast_kind(op["name"])
            out[k][1] += op["launches"]
        if k is not None:  # an op ahead of the first kernel (none in this engine) has no kernel to join
            out[k][0] += op["time_ms"] * 1000
    return out, p["gpu_busy_ms"] * 1000, p["kernel_launches"]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.join(here, "..")
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default=os.path.join(root, "build", "release", "perfcast"))
    ap.add_argument("--kernels", default=os.path.join(root, "data", "published_kernels", "tensorrt_engine_kernels.csv"))
    args = ap.parse_args()
    fixtures = {c: os.path.join(root, "tests", "data", "gpus", f"rtx-4050-laptop-{c}.toml") for c in ("1605", "2370")}
    clocks = {}
    for c, path in fixtures.items():
        with open(path, "rb") as f:
            clocks[c] = float(tomllib.load(f)["boost_clock_mhz"])
    measured = measured_by_kind(args.kernels)
    predicted = {c: predicted_by_kind(args.perfcast, path) for c, path in fixtures.items()}

    print("kind            kernels  measured us   perfcast us @1605 / @2370   ratio @1605 / @2370")
    print("                (meas/pc)  (nsys sum)   (per-op GPU time)          (perfcast / measured)")
    for k in KINDS:
        m, n = measured[k]
        lo, hi = predicted["1605"][0][k][0], predicted["2370"][0][k][0]
        print(f"{k:15s} {n:3.0f}/{predicted['2370'][0][k][1]:<3.0f}   {m:9.1f}   {lo:9.1f} / {hi:7.1f}          "
              f"{lo / m:5.2f} / {hi / m:5.2f}")
    total_m = sum(v[0] for v in measured.values())
    kernels = sum(v[1] for v in measured.values())
    for c in ("1605", "2370"):
        by_kind, busy, launches = predicted[c]
        print(f"@{c} MHz: perfcast kernels {sum(v[0] for v in by_kind.values()):.1f} us, GPU time of the step "
              f"(kernels + gaps) {busy:.1f} us over {launches} launches")
    print(f"measured: kernels {total_m:.1f} us over {kernels:.0f} (free-running loop), "
          f"CUDA-graph replay {GRAPH_REPLAY_US:.1f} us")

    ratio = clocks["2370"] / clocks["1605"]
    bound = (GRAPH_REPLAY_US - total_m / ratio) / kernels
    with open(os.path.join(root, "data", "runtimes", "tensorrt.toml"), "rb") as f:
        gap = tomllib.load(f)["gpu_gap_per_kernel_us"]
    print(f"launch-to-launch gap <= ({GRAPH_REPLAY_US:.1f} - {total_m:.1f} / {ratio:.3f}) / {kernels:.0f} = "
          f"{bound:.2f} us (data/runtimes/tensorrt.toml gpu_gap_per_kernel_us = {gap})")
    if gap > bound:
        print("the runtime file's gap is above what the replay allows", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
