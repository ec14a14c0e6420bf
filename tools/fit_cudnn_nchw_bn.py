#!/usr/bin/env python3
"""Fit [memory] cudnn_nchw_batch_norm_bandwidth_efficiency (data/cost_model.toml) to measured kernel times.

Reads a torch.profiler kernel table (the `kernels_*.txt` of a device session) and sums, per profiled step, the
self-CUDA time of cuDNN's NCHW training batch-norm kernels (bn_fw_tr_1C11*, bn_bw_1C11*) in the NCHW section, and of
the channels-last kernels (batchnorm_*_nhwc*) in the NHWC section, for reference. The model's own figure for the same
layers comes from `perfcast predict --json` with --channels-last, where batch norm streams at the full rate: its norm
ops' time T1 over L launches. With the efficiency e the modeled time is (T1 - L*ramp)/e + L*ramp (kernel_cost.cpp
KernelCostModel::streaming: bytes / (bandwidth * e) + ramp_us per launch), so

    e = (T1 - L*ramp) / (T_measured - L*ramp)

    tools/fit_cudnn_nchw_bn.py [--kernels FILE] [--section NAME] [--steps 3] [--perfcast build/release/perfcast]
"""
import argparse
import json
import re
import subprocess
import sys

SESSION = "data/device_sessions/2026-12-04-h200/kernels_main.txt"


def sections(path):
    out, name = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("== "):
            name = line[3:].rstrip("\n")
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return out


def to_ms(text):
    m = re.fullmatch(r"([0-9.]+)(ms|us|s)", text)
    if not m:
        return None
    v = float(m.group(1))
    return v / 1000.0 if m.group(2) == "us" else v * 1000.0 if m.group(2) == "s" else v


def kernel_ms(lines, pattern):
    """Self CUDA time (the 6th numeric column from the right is Self CUDA) of rows whose name matches."""
    total = 0.0
    for line in lines:
        if not re.search(pattern, line):
            continue
        cols = line.split()
        # ... Self CUDA, Self CUDA %, CUDA total, CUDA time avg, # of Calls
        total += to_ms(cols[-5])
    return total


def ramp_us():
    for path in ("data/kernel_fit.toml", "data/cost_model.toml"):
        for line in open(path, encoding="utf-8"):
            m = re.match(r"ramp_us\s*=\s*([0-9.]+)", line)
            if m:
                return float(m.group(1))
    raise SystemExit("ramp_us not found")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=SESSION)
    ap.add_argument("--section", default="resnet50_v1_5 train amp b256 s0 ")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--gpu", default="h200-sxm-141gb")
    ap.add_argument("--model", default="resnet50_v1_5")
    ap.add_argument("--precision", default="amp")
    ap.add_argument("--batch", default="256")
    a = ap.parse_args()
    sec = sections(a.kernels)
    if a.section not in sec:
        raise SystemExit(f"no section '{a.section}' in {a.kernels}")
    nchw = kernel_ms(sec[a.section], r"cudnn::bn_(fw|bw)\w*_1C11") / a.steps
    nhwc_name = a.section.rstrip() + " nhwc"
    nhwc = kernel_ms(sec.get(nhwc_name, []), r"cudnn::batchnorm_\w*nhwc") / a.steps
    pred = json.loads(subprocess.run([a.perfcast, "predict", "--gpu", a.gpu, "--model", a.model, "--mode", "train",
                                      "--precision", a.precision, "--batch", a.batch, "--channels-last", "--json"],
                                     check=True, capture_output=True, text=True).stdout)
    norm = [o for o in pred["ops"] if o["kind"] == "norm"]
    t1 = sum(o["time_ms"] for o in norm)
    gb = sum(o["bytes"] for o in norm) / 1e9
    fixed = sum(o["launches"] for o in norm) * ramp_us() / 1000.0
    e = (t1 - fixed) / (nchw - fixed)
    print(f"measured per step: NCHW cuDNN SPATIAL batch norm {nchw:.2f} ms, channels-last {nhwc:.2f} ms")
    print(f"model: {len(norm)} batch norms, {gb:.1f} GB, {t1:.2f} ms at the full streaming rate "
          f"({gb / t1:.0f} GB/ms); NCHW achieved {gb / nchw:.0f} GB/ms")
    print(f"cudnn_nchw_batch_norm_bandwidth_efficiency = {e:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
