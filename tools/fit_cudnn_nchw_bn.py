#!/usr/bin/env python3
"""Fit [memory] cudnn_nchw_batch_norm_cta_gelems and _cta_latency_us (data/cost_model.toml) to measured kernel times.

cuDNN's CUDNN_BATCHNORM_SPATIAL training kernels on NCHW tensors (bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new and
the _singleread forms) run one CTA per channel, so a layer of C channels takes (src/cost/op_cost.cpp
cudnn_channel_bn_share)

    t = max(bytes / DRAM rate, ceil(C / (ctas_per_sm * SMs)) * (latency + elements / C / cta_rate)) + launches * ramp

with `bytes` (`elements` of activation size) the model's forward (x read twice, y written) or backward (x and dy read twice, dx written) traffic.
The kernel list (`kernels_*.txt` of a device session, 3 profiled steps) gives one time per kernel instance (template
argument 512/128/32, _singleread, _singleread_spec); each instance runs the layers of one image size. This tool
lists ResNet-50 v1.5's 53 batch norms (channels, image side; torchvision resnet.py, stride on the 3x3 conv), assigns
each layer to the instance of its image size (the call counts must match), and fits the two constants by least
squares on the log of the instances' per-step times. The DRAM rate is the model's own: the largest channels-last
norm op's bytes over its time less its ramps, from `perfcast predict --channels-last --json`.

    tools/fit_cudnn_nchw_bn.py [--kernels FILE] [--section NAME] [--steps 3] [--perfcast build/release/perfcast]
"""
import argparse
import json
import math
import re
import subprocess
import sys

SESSION = "data/device_sessions/2026-12-04-h200/kernels_main.txt"


def resnet50_bn_layers():
    """(channels, image side) of ResNet-50 v1.5's batch norms at 224x224 input, in model order."""
    layers = [(64, 112)]
    side = 56
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            inner = side if b > 0 or stride == 1 else side // stride
            layers.append((width, side))          # bn1 after the 1x1 conv, at the block's input size
            layers.append((width, inner))         # bn2 after the (strided) 3x3 conv
            layers.append((width * 4, inner))     # bn3
            if b == 0:
                layers.append((width * 4, inner))  # the downsample branch's batch norm
            side = inner
    return layers


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


def instances(lines, steps):
    """{(phase, instance): (ms per step, calls per step)} of the 1C11 kernels."""
    out = {}
    for line in lines:
        m = re.search(r"cudnn::bn_(fw_tr|bw)_1C11_(kernel_NCHW|kernel_new|singleread_spec|singleread)<[^,]+,"
                      r"\s*(?:\w+,\s*)*?(\d+),", line)
        if not m:
            continue
        cols = line.split()
        phase = "fw" if m.group(1) == "fw_tr" else "bw"
        kind = m.group(2) if m.group(2).startswith("singleread") else m.group(3)
        out[(phase, kind)] = (to_ms(cols[-5]) / steps, int(cols[-1]) // steps)
    return out


def assign(layers, inst):
    """Map each phase's instances to image sides, largest instance (template argument) to the largest images, in
    order of the images' sizes, by the call counts."""
    sides = sorted({s for _, s in layers}, reverse=True)
    count = {s: sum(1 for _, t in layers if t == s) for s in sides}

    def order(kind):  # multi-pass kernels by template argument, then the singleread forms (small images)
        return (0, -int(kind)) if kind.isdigit() else (1, 0 if kind == "singleread_spec" else 1)

    table = {}
    for phase in ("fw", "bw"):
        kinds = sorted((k for p, k in inst if p == phase), key=order)
        queue = list(sides)
        for k in kinds:
            calls, group = inst[(phase, k)][1], []
            while queue and sum(count[s] for s in group) < calls:
                group.append(queue.pop(0))
            if sum(count[s] for s in group) != calls:
                raise SystemExit(f"{phase} {k}: {calls} calls per step match no run of image sizes")
            table[(phase, k)] = group
    return table


def toml_number(path, key):
    """The first `key = number` line of a data file (the tool reads the constants the model reads)."""
    for line in open(path, encoding="utf-8"):
        m = re.match(rf"{key}\s*=\s*([0-9.eE+-]+)", line)
        if m:
            return float(m.group(1))
    raise SystemExit(f"no {key} in {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=SESSION)
    ap.add_argument("--section", default="resnet50_v1_5 train amp b256 s0 ")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--gpu", default="h200-sxm-141gb")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--elem-bytes", type=float, default=2.0, help="activation bytes (AMP: 2)")
    ap.add_argument("--ctas-per-sm", type=float, default=None,
                    help="default: [row_kernels] max_threads_per_sm of the GPU's architecture / "
                         "[memory] cudnn_nchw_batch_norm_cta_threads (data/cost_model.toml)")
    ap.add_argument("--ramp-us", type=float, default=None, help="default: data/kernel_fit.toml ramp_us")
    a = ap.parse_args()
    if a.ramp_us is None:
        a.ramp_us = toml_number("data/kernel_fit.toml", "ramp_us")
    if a.ctas_per_sm is None:
        cc = re.search(r'compute_capability\s*=\s*"(\d+)\.(\d+)"', open(f"data/gpus/{a.gpu}.toml").read())
        sm = int(cc.group(1)) * 10 + int(cc.group(2))
        threads = {int(k): float(v) for k, v in re.findall(r"sm_(\d+)\s*=\s*([0-9.]+)",
                   re.search(r"max_threads_per_sm\s*=\s*\{([^}]*)\}", open("data/cost_model.toml").read()).group(1))}
        per_sm = threads[max(k for k in threads if k <= sm)]
        a.ctas_per_sm = math.floor(per_sm / toml_number("data/cost_model.toml", "cudnn_nchw_batch_norm_cta_threads"))
    sec = sections(a.kernels)
    if a.section not in sec:
        raise SystemExit(f"no section '{a.section}' in {a.kernels}")
    inst = instances(sec[a.section], a.steps)
    layers = resnet50_bn_layers()
    assert len(layers) == 53, "ResNet-50 has 53 batch norms"
    table = assign(layers, inst)
    pred = json.loads(subprocess.run([a.perfcast, "predict", "--gpu", a.gpu, "--model", "resnet50_v1_5", "--mode",
                                      "train", "--precision", "amp", "--batch", str(a.batch), "--channels-last",
                                      "--json"], check=True, capture_output=True, text=True).stdout)
    sms = None
    for line in open(f"data/gpus/{a.gpu}.toml", encoding="utf-8"):
        m = re.match(r"sm_count\s*=\s*(\d+)", line)
        if m:
            sms = int(m.group(1))
    if not sms:
        raise SystemExit(f"no sm_count in data/gpus/{a.gpu}.toml")
    big = max((o for o in pred["ops"] if o["kind"] == "norm"), key=lambda o: o["bytes"])
    rate = big["bytes"] / (big["time_ms"] * 1e3 - big["launches"] * a.ramp_us)  # bytes per us
    passes = {"fw": 3.0, "bw": 5.0}

    def model_ms(key, gbps, lat):
        phase, total = key[0], 0.0
        for c, s in layers:
            if s not in table[key]:
                continue
            b = passes[phase] * a.batch * c * s * s * a.elem_bytes
            waves = math.ceil(c / (a.ctas_per_sm * sms))
            total += max(b / rate, waves * (lat + b / a.elem_bytes / c / (gbps * 1e3))) + 2 * a.ramp_us
        return total / 1e3

    def err(gbps, lat):
        return sum(math.log(model_ms(k, gbps, lat) / v[0]) ** 2 for k, v in inst.items())

    # coarse grid, then a finer one around its best point
    best = min((err(g, l), g, l) for g in [0.25 * i for i in range(1, 41)] for l in [2.0 * j for j in range(0, 21)])
    g0, l0 = best[1], best[2]
    best = min((err(g, l), g, l) for g in [max(0.01, g0 - 0.25 + 0.025 * i) for i in range(21)]
               for l in [max(0.0, l0 - 2.0 + 0.25 * j) for j in range(17)])
    _, gbps, lat = best
    print(f"model DRAM rate {rate / 1e3:.0f} GB/s, {sms} SMs, {a.ctas_per_sm:g} CTAs per SM")
    print(f"{'instance':28s} {'sides':10s} {'measured ms':>11s} {'model ms':>9s}")
    tot_m = tot_p = 0.0
    for k, (ms, _) in sorted(inst.items()):
        p = model_ms(k, gbps, lat)
        tot_m, tot_p = tot_m + ms, tot_p + p
        print(f"{k[0] + ' ' + k[1]:28s} {','.join(map(str, table[k])):10s} {ms:11.3f} {p:9.3f}")
    print(f"{'all':39s} {tot_m:11.3f} {tot_p:9.3f}")
    print(f"cudnn_nchw_batch_norm_cta_gelems = {gbps:.3f}")
    print(f"cudnn_nchw_batch_norm_cta_latency_us = {lat:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
