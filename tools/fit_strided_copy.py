#!/usr/bin/env python3
"""Derive [memory] strided_half_copy_efficiency (data/cost_model.toml, per architecture) from the H200 BERT AMP profiles.

Eager attention's head-layout copies (RuntimeProfile::attention_head_copies: torch.matmul's reshape of a permuted
Q, K or V view, the context's .contiguous(), and the same four on the gradients in backward) copy a tensor that is
not contiguous. TensorIterator cannot vectorize such a copy: ATen's direct_copy_kernel_cuda runs gpu_kernel_nocast
on its non-contiguous branch, `elementwise_kernel<128, 4, gpu_kernel_impl_nocast<...>>`, with one scalar load and
store per element and the input offset computed per element by OffsetCalculator (aten/src/ATen/native/cuda/Loops.cuh,
CUDALoops.cuh). The H200 profiles list that kernel class 96 times a step (8 per layer x 12 layers), each copying one
[batch, seq, hidden] half tensor (read once, written once).

This reads the profiler tables of data/device_sessions/2026-12-04-h200/kernels_main.txt (Hugging Face
BertForPreTraining BERT-base, torch.autocast, PyTorch 2.11) for the two AMP training sections, takes the class's
average time per call, removes perfcast's per-launch ramp ([memory] ramp_us), and divides the time a streaming
kernel at the card's copy rate (mem_bw_gbps x dram_efficiency of data/gpus/<gpu>.toml, the session's perfcast-calibrate)
would take by it. The mean over the sections is the value for the card's architecture.

    tools/fit_strided_copy.py [--session DIR] [--gpu h200-sxm-141gb]
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_dynamic_cast_copy import sections  # noqa: E402  (the same profiler-table reader)

HIDDEN = {"bert_base": 768, "bert_large": 1024}
KERNEL = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"


def toml_number(path, key):
    pattern = re.compile(r"^\s*" + re.escape(key) + r"\s*=\s*([0-9.eE+-]+)")
    with open(path) as f:
        for line in f:
            m = pattern.match(line)
            if m:
                return float(m.group(1))
    raise KeyError(f"{key} not in {path}")


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data")
    ap.add_argument("--session", default=os.path.join(data, "device_sessions", "2026-12-04-h200"))
    ap.add_argument("--gpu", default="h200-sxm-141gb")
    args = ap.parse_args()
    gpu = os.path.join(data, "gpus", args.gpu + ".toml")
    copy_bytes_per_us = toml_number(gpu, "mem_bw_gbps") * toml_number(gpu, "dram_efficiency") * 1e3
    ramp_us = toml_number(os.path.join(data, "cost_model.toml"), "ramp_us")
    shares = []
    for name, rows in sections(os.path.join(args.session, "kernels_main.txt")):
        m = re.match(r"(\w+) train amp b(\d+) s(\d+)", name)
        if not m or m.group(1) not in HIDDEN:
            continue
        hits = [v for k, v in rows.items() if k.startswith(KERNEL)]
        total_ms = sum(t for lst in hits for t, _ in lst)
        calls = sum(n for lst in hits for _, n in lst)
        if calls == 0:
            continue
        tokens = int(m.group(2)) * int(m.group(3))
        bytes_per_call = 2.0 * tokens * HIDDEN[m.group(1)] * 2  # half tensor read and written
        avg_us = total_ms * 1e3 / calls
        share = (bytes_per_call / copy_bytes_per_us) / (avg_us - ramp_us)
        shares.append(share)
        print(f"{name}: {calls} strided copies, {avg_us:.2f} us each for {bytes_per_call / 1e6:.2f} MB "
              f"({bytes_per_call / avg_us / 1e3:.0f} GB/s): {share:.3f} of the streaming copy rate")
    if shares:
        print(f"strided_half_copy_efficiency = {sum(shares) / len(shares):.2f}  (mean of {len(shares)})")


if __name__ == "__main__":
    main()
