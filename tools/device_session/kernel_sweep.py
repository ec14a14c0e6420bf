#!/usr/bin/env python3
"""Time single PyTorch ops on the GPU this runs on, in the column layout of ../shared/kernels (NeuSight's collector).

Written for a session that is lent a GPU machine (tools/device_session/README.md). The shared kernel files hold
five GPUs from Pascal to Ampere; this adds the GPU the session runs on, so the kernel fit (perfcast fit-kernels)
can be checked on an architecture it never saw. Each op is a fresh random shape drawn log-uniformly (fixed seed),
timed two ways after 3 warm-ups: `Latency` (milliseconds, as the shared files' column) is the median of 5 single
calls, each with CUDA events around one call after a synchronize, as data/kernel_fit_setup.toml [harness] says the
shared files were measured (the host's dispatch of the op is a floor under small kernels); `Latency_back_to_back`
is the mean over 20 calls queued back to back between two events (the kernels' own time once the host is ahead).
Precisions:
- fp32 with TF32 off, as the shared files were measured (`torch.backends.cuda.matmul.allow_tf32 = False`,
  `torch.backends.cudnn.allow_tf32 = False`): linear, bmm, conv, add, mul, relu, gelu, softmax, ln;
- bf16, fp16 and tf32 for linear and bmm (the tensor-core GEMMs), written both to the op files (column
  `Precision`) and as rows of data/published_kernels/tensor_gemm.csv's layout.
After the timing pass, every op is run once more under torch.profiler and the Chrome trace is saved
(kernel names, grids and blocks are read from it on the development machine, tools/device_session/README.md).

Usage: python3 kernel_sweep.py --out DIR [--budget-s 100] [--seed N]
"""
import argparse
import csv
import gzip
import math
import os
import random
import sys
import time
import traceback

FIELDS = ["OPName", "Latency", "Latency_back_to_back", "Device", "Torch Version", "CUDNN Version", "Precision", "CUDA Version",
          "B", "M", "N", "K", "Input_Channel", "Output_Channel", "Kernel_Size", "Input_Size", "Stride", "Padding",
          "H"]


def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def shapes(rng):
    """(op, precision, dims) in a shuffled order, so a budget that runs out cuts every op class alike."""
    out = []
    # Tensor-core GEMMs get N and K in multiples of 8, as model layers have them: cuBLAS falls back to 'align1'
    # kernels at a fifth of the rate otherwise (the session-19 sweep drew them unaligned; data/measured_kernels).
    def dim(lo, hi, prec):
        d = log_uniform(rng, lo, hi)
        return d if prec == "fp32" else max(8, (d + 4) // 8 * 8)
    for prec, n in (("fp32", 200), ("bf16", 200), ("fp16", 100), ("tf32", 100)):
        for _ in range(n):
            out.append(("linear", prec, {"B": 1, "M": log_uniform(rng, 1, 16384), "N": dim(16, 16384, prec),
                                         "K": dim(16, 16384, prec)}))
    for prec, n in (("fp32", 120), ("bf16", 120)):
        for _ in range(n):
            out.append(("bmm", prec, {"B": log_uniform(rng, 1, 256), "M": log_uniform(rng, 16, 4096),
                                      "N": dim(16, 4096, prec), "K": dim(16, 4096, prec)}))
    for op in ("add", "mul", "relu", "gelu", "softmax", "ln"):
        for _ in range(40):
            out.append((op, "fp32", {"B": log_uniform(rng, 1, 4096), "H": log_uniform(rng, 64, 65536)}))
    for _ in range(150):
        size = rng.choice([7, 14, 28, 56, 112, 224])
        kernel = rng.choice([1, 3, 3, 5, 7])
        out.append(("conv", "fp32", {"B": log_uniform(rng, 1, 64), "Input_Channel": log_uniform(rng, 3, 1024),
                                     "Output_Channel": log_uniform(rng, 16, 1024), "Kernel_Size": kernel,
                                     "Input_Size": size, "Stride": rng.choice([1, 1, 2]), "Padding": kernel // 2}))
    rng.shuffle(out)
    return out


def fp32_bytes(op, d):
    """Bytes of the op's tensors in FP32 (an upper bound for the 16-bit ones)."""
    if op in ("linear", "bmm"):
        elems = d["B"] * (d["M"] * d["K"] + d["K"] * d["N"] + d["M"] * d["N"])
    elif op == "conv":
        out_size = (d["Input_Size"] + 2 * d["Padding"] - d["Kernel_Size"]) // d["Stride"] + 1
        elems = d["B"] * (d["Input_Channel"] * d["Input_Size"] ** 2 + d["Output_Channel"] * out_size ** 2)
    else:
        elems = d["B"] * d["H"] * 2
    return elems * 4


def make_call(op, prec, d, torch):
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec, torch.float32)
    dev = "cuda"
    if op == "linear":
        x = torch.randn(d["M"], d["K"], device=dev, dtype=dtype)
        layer = torch.nn.Linear(d["K"], d["N"], bias=False, device=dev, dtype=dtype)
        return lambda: layer(x)
    if op == "bmm":
        a = torch.randn(d["B"], d["M"], d["K"], device=dev, dtype=dtype)
        b = torch.randn(d["B"], d["K"], d["N"], device=dev, dtype=dtype)
        return lambda: torch.bmm(a, b)
    if op == "conv":
        x = torch.randn(d["B"], d["Input_Channel"], d["Input_Size"], d["Input_Size"], device=dev)
        layer = torch.nn.Conv2d(d["Input_Channel"], d["Output_Channel"], d["Kernel_Size"], stride=d["Stride"],
                                padding=d["Padding"], bias=False, device=dev)
        return lambda: layer(x)
    x = torch.randn(d["B"], d["H"], device=dev)
    if op == "add":
        y = torch.randn_like(x)
        return lambda: x + y
    if op == "mul":
        y = torch.randn_like(x)
        return lambda: x * y
    if op == "relu":
        return lambda: torch.relu(x)
    if op == "gelu":
        return lambda: torch.nn.functional.gelu(x)
    if op == "softmax":
        return lambda: torch.softmax(x, dim=-1)
    if op == "ln":
        layer = torch.nn.LayerNorm(d["H"], device=dev)
        return lambda: layer(x)
    raise ValueError(op)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=100.0)
    p.add_argument("--seed", type=int, default=20261204, help="shapes are drawn from this seed")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    import torch
    torch.backends.cudnn.benchmark = False  # cuDNN's heuristic choice, as a first call in a framework makes it
    props = torch.cuda.get_device_properties(0)
    env = {"Device": props.name, "Torch Version": "p" + torch.__version__.split("+")[0],
           "CUDNN Version": torch.backends.cudnn.version(), "CUDA Version": "cu" + (torch.version.cuda or "")}
    log = open(os.path.join(a.out, "kernel_sweep_log.txt"), "w")
    print(f"{env}, {props.multi_processor_count} SMs", file=log, flush=True)
    rng = random.Random(a.seed)
    rows, calls, held = [], [], 0
    for i, (op, prec, d) in enumerate(shapes(rng)):
        if time.time() - t0 > a.budget_s:
            print(f"budget reached at op {i}", file=log, flush=True)
            break
        size = fp32_bytes(op, d)
        if size > 4e9:  # the sweep is about speed, not capacity
            continue
        torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
        torch.backends.cudnn.allow_tf32 = False
        try:
            with torch.no_grad():
                call = make_call(op, prec, d, torch)
                for _ in range(3):
                    call()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(20):
                    call()
                end.record()
                torch.cuda.synchronize()
                ms_queued = start.elapsed_time(end) / 20
                single = []
                for _ in range(5):
                    torch.cuda.synchronize()
                    start.record()
                    call()
                    end.record()
                    torch.cuda.synchronize()
                    single.append(start.elapsed_time(end))
            ms = sorted(single)[2]
            row = {"OPName": op, "Latency": f"{ms:.6g}", "Latency_back_to_back": f"{ms_queued:.6g}", "Precision": prec,
                   **env, **d}
            rows.append(row)
            if held + size < 30e9:  # the profiler pass reruns the ops whose tensors are still held (30 GB at most)
                calls.append((f"sweep{len(rows) - 1}", prec, call))
                held += size
        except Exception:
            print(f"FAILED {op} {prec} {d}:\n{traceback.format_exc()}", file=log, flush=True)
    with open(os.path.join(a.out, "kernel_sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    print(f"timed {len(rows)} ops in {time.time() - t0:.0f} s", file=log, flush=True)
    try:  # kernel names: one profiled call of each op still held, each inside a record_function range
        from torch.profiler import ProfilerActivity, profile, record_function
        with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for name, prec, call in calls:
                torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
                with record_function(name):
                    call()
            torch.cuda.synchronize()
        path = os.path.join(a.out, "kernel_sweep_trace.json")
        prof.export_chrome_trace(path)
        with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
            dst.write(src.read())
        os.remove(path)
        print(f"profiled {len(calls)} ops, total {time.time() - t0:.0f} s", file=log, flush=True)
    except Exception:
        print(f"profiler pass failed:\n{traceback.format_exc()}", file=log, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
