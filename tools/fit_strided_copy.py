#!/usr/bin/env python3
"""Derive [memory] strided_copy_elements_per_sm_clk (data/cost_model.toml, per architecture) from the H200 BERT AMP
profiles.

Eager attention's head-layout copies (RuntimeProfile::attention_head_copies: torch.matmul's reshape of a permuted
Q, K or V view, the context's .contiguous(), and the same four on the gradients in backward) copy a tensor that is
not contiguous. TensorIterator cannot vectorize such a copy: ATen's direct_copy_kernel_cuda runs gpu_kernel_nocast
on its non-contiguous branch, `elementwise_kernel<128, 4, gpu_kernel_impl_nocast<...>>` (launch_legacy_kernel), with
one scalar load and store per element, the input and output offsets computed per element by OffsetCalculator
(aten/src/ATen/native/cuda/Loops.cuh, CUDALoops.cuh). The H200 profiles list that kernel class 96 times a step
(8 per layer x 12 layers), each copying one [batch, seq, hidden] half tensor (read once, written once).

Such a copy is bound by the SMs' per-element work, not by DRAM: each thread walks its elements one after another
(offset, load, store; the store may alias the next load, so the loads do not overlap), so the rate is a number of
elements per SM per clock, the same on boards of one architecture whatever their memory. This reads the profiler
tables of data/device_sessions/2026-12-04-h200/kernels_main.txt (Hugging Face BertForPreTraining BERT-base,
torch.autocast, PyTorch 2.11) for the two AMP training sections, takes the class's average time per call, and
divides the elements a call copies by it and by the card's SMs x boost clock (data/gpus/<gpu>.toml; a copy draws
little power, so the board holds its boost clock: KernelCostModel::per_element_streaming charges clock_factor(0)).
The mean over the sections is the value for the card's architecture. It also prints each section's DRAM share, to
show that the copy sits far under the streaming rate.

    tools/fit_strided_copy.py [--session DIR] [--gpu h200-sxm-141gb]
"""
import argparse
import os
import re
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_dynamic_cast_copy import sections  # noqa: E402  (the same profiler-table reader)

HIDDEN = {"bert_base": 768, "bert_large": 1024}
KERNEL = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"


def toml_number(path, key):
    """The number at `key` in the TOML file: a top-level key, or `table.key` (sm_count, measured.dram_efficiency)."""
    with open(path, "rb") as f:
        value = tomllib.load(f)
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(f"{key} not in {path}")
        value = value[part]
    return float(value)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data")
    ap.add_argument("--session", default=os.path.join(data, "device_sessions", "2026-12-04-h200"))
    ap.add_argument("--gpu", default="h200-sxm-141gb")
    args = ap.parse_args()
    gpu = os.path.join(data, "gpus", args.gpu + ".toml")
    sm_clocks_per_us = toml_number(gpu, "sm_count") * toml_number(gpu, "boost_clock_mhz")
    copy_bytes_per_us = toml_number(gpu, "mem_bw_gbps") * toml_number(gpu, "measured.dram_efficiency") * 1e3
    rates = []
    for name, rows in sections(os.path.join(args.session, "kernels_main.txt")):
        m = re.match(r"(\w+) train amp b(\d+) s(\d+)", name)
        if not m or m.group(1) not in HIDDEN:
            continue
        hits = [v for k, v in rows.items() if k.startswith(KERNEL)]
        total_ms = sum(t for lst in hits for t, _ in lst)
        calls = sum(n for lst in hits for _, n in lst)
        if calls == 0:
            continue
        elements = int(m.group(2)) * int(m.group(3)) * HIDDEN[m.group(1)]
        bytes_per_call = 2.0 * elements * 2  # half tensor read and written
        avg_us = total_ms * 1e3 / calls
        rate = elements / (avg_us * sm_clocks_per_us)
        rates.append(rate)
        print(f"{name}: {calls} strided copies, {avg_us:.2f} us each for {elements / 1e6:.2f} M elements "
              f"({bytes_per_call / avg_us / 1e3:.0f} GB/s, {bytes_per_call / copy_bytes_per_us / avg_us:.3f} of the "
              f"streaming copy rate): {rate:.3f} elements per SM per clock")
    if rates:
        print(f"strided_copy_elements_per_sm_clk = {sum(rates) / len(rates):.2f}  (mean of {len(rates)})")


if __name__ == "__main__":
    main()
