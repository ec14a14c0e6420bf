#!/usr/bin/env python3
"""Derive [memory] dynamic_cast_copy_efficiency (data/cost_model.toml) from the H200 session's BERT AMP profiles.

PyTorch's CUDA copy (aten/src/ATen/native/cuda/Copy.cu, direct_copy_kernel_cuda) runs FP32 -> half and FP32 ->
bfloat16 on gpu_kernel_nocast, the vectorized_elementwise_kernel<8, float16_copy_kernel_cuda ...> of the traces;
every other dtype change (half or bfloat16 -> FP32 among them; the special case for those is `#ifdef USE_ROCM`)
goes through gpu_kernel with dynamic casting, unrolled_elementwise_kernel<direct_copy_kernel_cuda ...,
LoadWithCast<1>, StoreWithCast<1>>: scalar loads through a dtype switch, no vector loads.

Under torch.autocast every cast in the forward pass has a backward cast of the same tensor the other way
(ToCopyBackward0): weights and FP32-list outputs cast down to half forward are cast up backward, the loss input
cast up forward is cast down backward. So over a training step the two kernels move about the same bytes, and the
ratio of their class totals in the profile is the ratio of their rates. This reads the profiler tables of
data/device_sessions/2026-12-04-h200/kernels_main.txt (Hugging Face BertForPreTraining BERT-base, PyTorch 2.11)
for the two AMP training sections and prints each ratio (vectorized total / dynamic-cast total) and their mean.

    tools/fit_dynamic_cast_copy.py [--session DIR]
"""
import argparse
import os
import re


def ms(text):
    text = text.strip()
    if text.endswith("ms"):
        return float(text[:-2])
    if text.endswith("us"):
        return float(text[:-2]) / 1000.0
    if text.endswith("s"):
        return float(text[:-1]) * 1000.0
    raise ValueError(text)


def sections(path):
    name, rows = None, {}
    with open(path) as f:
        for line in f:
            if line.startswith("== "):
                if name:
                    yield name, rows
                name, rows = line[3:].strip(), {}
                continue
            cols = re.split(r"\s{2,}", line.strip())
            if name and len(cols) >= 10 and cols[-1].isdigit():
                # Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, Self CUDA, Self CUDA %, CUDA total,
                # CUDA time avg, # of Calls
                rows.setdefault(cols[0], []).append((ms(cols[6]), int(cols[-1])))
    if name:
        yield name, rows


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--session", default=os.path.join(here, "..", "data", "device_sessions", "2026-12-04-h200"))
    args = ap.parse_args()
    ratios = []
    for name, rows in sections(os.path.join(args.session, "kernels_main.txt")):
        if not (name.startswith("bert") and " train amp " in name):
            continue
        dynamic = "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda"
        unrolled = [v for k, v in rows.items() if k.startswith(dynamic)]
        vector = [v for k, v in rows.items()
                  if "float16_copy_kernel_cuda" in k and "vectorized_elementwise_kernel" in k]
        u_ms = sum(t for lst in unrolled for t, _ in lst)
        u_n = sum(n for lst in unrolled for _, n in lst)
        v_ms = sum(t for lst in vector for t, _ in lst)
        v_n = sum(n for lst in vector for _, n in lst)
        if u_ms <= 0 or v_ms <= 0:
            continue
        ratios.append(v_ms / u_ms)
        print(f"{name}: dynamic-cast copies {u_ms:.3f} ms ({u_n} launches), vectorized casts {v_ms:.3f} ms "
              f"({v_n} launches): rate ratio {v_ms / u_ms:.3f}")
    if ratios:
        print(f"dynamic_cast_copy_efficiency = {sum(ratios) / len(ratios):.2f}  (mean of {len(ratios)})")


if __name__ == "__main__":
    main()
