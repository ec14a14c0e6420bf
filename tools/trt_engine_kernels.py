#!/usr/bin/env python3
"""Put a measured TensorRT engine's kernels against perfcast's per-kernel costs, and bound the engine's
launch-to-launch gap from the measured CUDA-graph replay.

The engine: data/published_kernels/tensorrt_engine_kernels.csv (its Nsight Systems kernel summary, taken in a
free-running loop without a CUDA graph) and tensorrt_engine.toml beside it (the same enqueue's CUDA-graph replay,
the two GPU files at the ends of the board's boost range, and the kinds both sides are grouped into); README.md
there gives the runs and their sources. The replay is timed with events on the stream around each replay: every
kernel and every gap between them, nothing of the host.

1. By kind: the measured kernel time an inference against `perfcast predict --json`'s per-op GPU time for the same
   layers, on either GPU file. An op perfcast fuses into the kernel before it counts with that kernel.
2. The gap. The graph replay is T = sum of kernel durations at the replay's clock + N x gap. The summary's kernels
   ran at some clock of the same range; a kernel's duration scales with the SM clock at most linearly (DRAM-bound
   kernels less), so at the replay's clock their sum is at least sum_nsys x low / high. Hence
      gap <= (T - sum_nsys x low / high) / N,
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

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def load_engine(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def kind_of_kernel(engine, kernel_kind):
    """The engine file's kind whose `kernels` lists this value of the kernels file's `kind` column."""
    for k in engine["kind"]:
        if kernel_kind in k["kernels"]:
            return k["name"]
    raise SystemExit(f"kernel kind '{kernel_kind}' is in no [[kind]] of the engine file")


def kind_of_op(engine, op_name):
    """The first of the engine file's kinds that names this op: an exact name, or "*suffix"."""
    for k in engine["kind"]:
        for pattern in k["ops"]:
            if op_name == pattern or (pattern.startswith("*") and op_name.endswith(pattern[1:])):
                return k["name"]
    raise SystemExit(f"op '{op_name}' is in no [[kind]] of the engine file")


def measured_by_kind(engine, path):
    """Kernel time an inference (us) and kernels an inference, by kind, from the summary's rows."""
    out = {k["name"]: [0.0, 0.0] for k in engine["kind"]}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            kind = kind_of_kernel(engine, r["kind"])
            n = float(r["inferences"])
            out[kind][0] += float(r["total_ns"]) / n / 1000
            out[kind][1] += float(r["instances"]) / n
    return out


def predicted_by_kind(engine, perfcast, gpu_file):
    cmd = [perfcast, "predict", "--gpu", gpu_file, "--model", engine["model"], "--runtime", "tensorrt",
           "--precision", engine["precision"], "--batch", str(engine["batch"]), "--mode", "infer", "--json"]
    p = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    out = {k["name"]: [0.0, 0.0] for k in engine["kind"]}
    k = None
    for op in p["ops"]:  # graph order: an op without a launch of its own is fused into the kernel before it
        if op["launches"] > 0:
            k = kind_of_op(engine, op["name"])
            out[k][1] += op["launches"]
        if k is not None:  # an op ahead of the first kernel (none in this engine) has no kernel to join
            out[k][0] += op["time_ms"] * 1000
    return out, p["gpu_busy_ms"] * 1000, p["kernel_launches"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build", "release", "perfcast"))
    kernels_dir = os.path.join(ROOT, "data", "published_kernels")
    ap.add_argument("--kernels", default=os.path.join(kernels_dir, "tensorrt_engine_kernels.csv"))
    ap.add_argument("--engine", default=os.path.join(kernels_dir, "tensorrt_engine.toml"))
    args = ap.parse_args()
    engine = load_engine(args.engine)
    replay_us = engine["graph_replay_us"]
    gpu_files = {end: os.path.join(ROOT, engine[f"gpu_file_{end}_clock"]) for end in ("low", "high")}
    clocks = {}
    for end, path in gpu_files.items():
        with open(path, "rb") as f:
            clocks[end] = float(tomllib.load(f)["boost_clock_mhz"])
    lo_mhz, hi_mhz = f"@{clocks['low']:.0f}", f"@{clocks['high']:.0f}"
    measured = measured_by_kind(engine, args.kernels)
    predicted = {end: predicted_by_kind(engine, args.perfcast, path) for end, path in gpu_files.items()}

    print(f"kind            kernels  measured us   perfcast us {lo_mhz} / {hi_mhz}   ratio {lo_mhz} / {hi_mhz}")
    print("                (meas/pc)  (nsys sum)   (per-op GPU time)          (perfcast / measured)")
    for k in measured:
        m, n = measured[k]
        lo, hi = predicted["low"][0][k][0], predicted["high"][0][k][0]
        print(f"{k:15s} {n:3.0f}/{predicted['high'][0][k][1]:<3.0f}   {m:9.1f}   {lo:9.1f} / {hi:7.1f}          "
              f"{lo / m:5.2f} / {hi / m:5.2f}")
    total_m = sum(v[0] for v in measured.values())
    kernels = sum(v[1] for v in measured.values())
    for end in ("low", "high"):
        by_kind, busy, launches = predicted[end]
        print(f"@{clocks[end]:.0f} MHz: perfcast kernels {sum(v[0] for v in by_kind.values()):.1f} us, GPU time of the "
              f"step (kernels + gaps) {busy:.1f} us over {launches} launches")
    print(f"measured: kernels {total_m:.1f} us over {kernels:.0f} (free-running loop), "
          f"CUDA-graph replay {replay_us:.1f} us")

    ratio = clocks["high"] / clocks["low"]
    bound = (replay_us - total_m / ratio) / kernels
    with open(os.path.join(ROOT, "data", "runtimes", "tensorrt.toml"), "rb") as f:
        gap = tomllib.load(f)["gpu_gap_per_kernel_us"]
    print(f"launch-to-launch gap <= ({replay_us:.1f} - {total_m:.1f} / {ratio:.3f}) / {kernels:.0f} = "
          f"{bound:.2f} us (data/runtimes/tensorrt.toml gpu_gap_per_kernel_us = {gap})")
    if gap > bound:
        print("the runtime file's gap is above what the replay allows", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
