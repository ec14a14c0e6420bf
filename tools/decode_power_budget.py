#!/usr/bin/env python3
"""Where the board power of a batch-1 eager decode goes: power.csv's ML.ENERGY rows against published readings.

Three questions, each answered with numbers (docs/calibration.md, session 40, h/power40):

1. Is the predicted time right? Each ML.ENERGY row's notes give the file's mean energy (J), time (s) and response
   length (tokens) per response; measured tokens/s = tokens / time. `perfcast validate --json` gives the step the
   model predicts for the row (the larger of host_ms and gpu_ms: the response's host dispatch and GPU time) and
   its GPU-busy share; predicted tokens/s = seq / step.

2. What must the busy part draw? perfcast averages P = busy x P_kernels + (1 - busy) x P_wait
   (src/analysis/power.cpp). For each row the tool prints the smallest busy share that could reach the measured
   average if every kernel drew (a) the board's limit, (b) a pure DRAM stream on the same architecture as
   published (data/power.toml [stream_readings]), with the waits at the model's clocks-up power. A row whose busy share under
   (a) exceeds the predicted one needs a busier GPU, not a hungrier kernel.

3. What do published readings say about the two terms? The A100 SXM4 roofline readings of gpu-benches
   (its stream reading in data/power.toml and A100_ROOFLINE's two more) are solved for P = P0 + a x FMA share + b x GB/s: the whole path's energy per bit moved from
   DRAM to the SMs (b), which the model's stream charge (DRAM pJ/bit + memory_kernel_sm_activity) must equal; the
   same leaderboard's A40 file (A40_DECODE; no power.csv row: the A40 is not in the catalog) against the A40's own
   stream reading shows whether a batch-1 decode draws more than a stream on a board where both were measured.

Reads predictions and published numbers; fits nothing, writes nothing. Refuses evaluation files.

Usage: tools/decode_power_budget.py [--perfcast build/release/perfcast] [data/validation/power.csv]
"""
import argparse
import collections
import csv
import os
import re
import statistics
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/calibration_rows.py
import calibration_rows  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))



def load_toml(*parts):
    with open(os.path.join(ROOT, *parts), "rb") as f:
        return tomllib.load(f)


POWER = load_toml("data", "power.toml")


def published_stream(arch):
    """data/power.toml [stream_readings.<arch>] as (board, GB/s, mean W of the boards), or None."""
    r = POWER["stream_readings"].get(arch)
    if not isinstance(r, dict):
        return None
    return (f"{r['board']} ({r['file']})", r["stream_gbps"], statistics.mean(r["board_w"]))


def arch_of(gpu):
    """'sm_80' for a catalog GPU, from its data/gpus file's compute capability."""
    return "sm_" + load_toml("data", "gpus", gpu + ".toml")["compute_capability"].replace(".", "")


# alex_a100_40.txt, eight A100 SXM4 40GB at 1410 MHz: (FP32 flop/s as a share of the board's FP32 peak, GB/s, mean W
# of the eight boards): the stream point of data/power.toml, then 14.25 and 60.25 flop/byte.
A100_SXM4 = load_toml("data", "gpus", "a100-sxm4-40gb.toml")
_A100_STREAM = published_stream("sm_80")
A100_ROOFLINE = [(POWER["stream_readings"]["flop_per_byte"] * _A100_STREAM[1] / 1000 / A100_SXM4["fp32_tflops"],
                  _A100_STREAM[1], _A100_STREAM[2]),
                 (16.40 / A100_SXM4["fp32_tflops"], 1150.6, 294.4), (18.70 / A100_SXM4["fp32_tflops"], 310, 198.1)]
HBM2_PJ_PER_BIT = POWER["dram_pj_per_bit"][A100_SXM4["memory_type"]]

# ml-energy/leaderboard@c814c36c data/legacy/A40_chat_benchmark.csv: the same benchmark (FastChat over Hugging Face
# LLaMA checkpoints, PyTorch 2.0.1, batch 1, FP16) on an A40 (300 W, 696 GB/s GDDR6): model -> (tokens, s, J).
A40_DECODE = {
    "lmsys/vicuna-7B": (284.27, 9.4742, 2239.07),
    "BAIR/koala-7b": (260.72, 8.7206, 2017.33),
    "tatsu-lab/alpaca-7B": (125.20, 4.1300, 916.05),
    "project-baize/baize-v2-7B": (324.25, 11.0117, 2621.35),
    "metaai/Llama-2-7b-chat-hf": (428.19, 13.3678, 2556.72),
    "lmsys/vicuna-13B": (281.30, 16.0968, 4265.29),
    "BAIR/koala-13b": (262.53, 15.0309, 3827.61),
    "camel-ai/CAMEL-13B-Combined-Data": (292.34, 16.8342, 4466.80),
    "nomic-ai/gpt4all-13b-snoozy": (250.17, 14.3229, 4093.90),
    "openaccess-ai-collective/manticore-13b-chat-pyg": (289.59, 16.5948, 4316.49),
    "metaai/Llama-2-13b-chat-hf": (384.73, 22.5527, 4337.67),
}
# The A40's datasheet limit and bandwidth: the test fixture that stands for it (not a catalog GPU).
_A40_FILE = load_toml("tests", "data", "gpus", "a40.toml")
A40 = {"limit_w": _A40_FILE["tdp_w"], "bw_gbps": _A40_FILE["mem_bw_gbps"]}
# FP16 weights streamed once per token (Llama 2 7B / 13B, embeddings excluded, LM head included), GB.
WEIGHT_GB = {"7b": 6.61e9 * 2 / 1e9, "13b": 12.85e9 * 2 / 1e9}


def fail(message):
    calibration_rows.fail("decode_power_budget.py", message)


def solve3(rows):
    """P = p0 + a x u + b x gbps through three (u, gbps, P) points (Cramer's rule)."""
    m = [[1.0, u, g] for u, g, _ in rows]
    y = [p for _, _, p in rows]

    def det(x):
        return (x[0][0] * (x[1][1] * x[2][2] - x[1][2] * x[2][1]) - x[0][1] * (x[1][0] * x[2][2] - x[1][2] * x[2][0])
                + x[0][2] * (x[1][0] * x[2][1] - x[1][1] * x[2][0]))

    d = det(m)
    out = []
    for c in range(3):
        mc = [row[:] for row in m]
        for r in range(3):
            mc[r][c] = y[r]
        out.append(det(mc) / d)
    return out


def measured_of(notes):
    e = re.search(r"= ([\d.]+) J / ([\d.]+) s", notes)
    t = re.search(r"then ([\d.]+) generated tokens", notes)
    if not e or not t:
        return None
    return float(e.group(1)), float(e.group(2)), float(t.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build", "release", "perfcast"))
    ap.add_argument("file", nargs="?", default=os.path.join(ROOT, "data", "validation", "power.csv"))
    a = ap.parse_args()
    rows = calibration_rows.validated_rows("decode_power_budget.py", a.perfcast, a.file)
    with open(a.file, newline="") as f:
        by_line = {i + 2: r for i, r in enumerate(csv.DictReader(f))}
    rows = [r for r in rows if r.get("metric") == "board_power_w" and r.get("mode") == "generate"]
    if not rows:
        fail(f"no generate board_power_w rows in {a.file}")

    print("1-2. per row: measured vs predicted tokens/s; busy share predicted, and the least busy share that reaches "
          "the measured average with every kernel at the limit / at the published stream draw")
    print(f"{'line':>4} {'gpu':<15} {'size':<4} {'tok/s meas':>10} {'pred':>6} {'ratio':>6} {'P meas':>6} {'pred':>6} "
          f"{'busy':>5} {'at limit':>8} {'at stream':>9}")
    groups = collections.defaultdict(list)
    for r in rows:
        m = measured_of(by_line[r["line"]]["notes"])
        if not m:
            continue
        energy, latency, tokens = m
        step_s = max(r["host_ms"], r["gpu_ms"]) / 1000
        pred_tps = float(by_line[r["line"]]["seq"]) / step_s
        t = r["power_terms"]
        wait, limit = t["wait_power_w"], t["limit_w"]
        at_limit = (r["measured"] - wait) / (limit - wait)
        stream = published_stream(arch_of(r["gpu"]))
        at_stream = (r["measured"] - wait) / (stream[2] - wait) if stream else float("nan")
        size = r["model"].split("-")[-1]
        print(f"{r['line']:>4} {r['gpu']:<15} {size:<4} {tokens / latency:>10.1f} {pred_tps:>6.1f} "
              f"{(tokens / latency) / pred_tps:>6.2f} {r['measured']:>6.1f} {r['predicted']:>6.1f} {t['busy_share']:>5.2f} "
              f"{at_limit:>8.2f} {at_stream:>9.2f}")
        groups[(r["gpu"], size)].append(((tokens / latency) / pred_tps, t["busy_share"], at_limit,
                                          tokens / latency * WEIGHT_GB[size]))
    print("\nper GPU and size: median measured/predicted tokens/s, predicted busy share, least busy share at the "
          "limit, weights streamed per second at the measured rate")
    for (gpu, size), g in sorted(groups.items()):
        print(f"  {gpu:<15} {size:<4} n={len(g):>2}  tok/s ratio {statistics.median(x[0] for x in g):.2f}  "
              f"busy {statistics.median(x[1] for x in g):.2f}  needed at the limit "
              f"{min(x[2] for x in g):.2f}-{max(x[2] for x in g):.2f}  weights {statistics.median(x[3] for x in g):.0f} GB/s")

    p0, a_fma, b_bw = solve3(A100_ROOFLINE)
    print("\n3a. A100 SXM4 40GB roofline readings (gpu-benches alex_a100_40.txt), P = P0 + a x FMA share + b x GB/s:")
    print(f"  P0 {p0:.0f} W, a {a_fma:.0f} W at full FP32 FMA, b {b_bw * 1000:.1f} mW per GB/s = "
          f"{b_bw * 1000 / 8:.1f} pJ/bit moved DRAM -> SMs (HBM2 device alone: {HBM2_PJ_PER_BIT} pJ/bit, data/power.toml)")

    print("\n3b. the same benchmark on an A40 (leaderboard A40 file) against the A40's published stream "
          f"({published_stream('sm_86')[2]:.0f} W at {published_stream('sm_86')[1]} GB/s, limit {A40['limit_w']} W):")
    for model, (tokens, latency, energy) in A40_DECODE.items():
        size = "13b" if "13" in model else "7b"
        gbps = tokens / latency * WEIGHT_GB[size]
        floor = WEIGHT_GB[size] / A40["bw_gbps"] * tokens / latency  # share of the time the weights alone need
        print(f"  {model:<48} {size:<4} {tokens / latency:5.1f} tok/s  {energy / latency:5.0f} W "
              f"({energy / latency / A40['limit_w']:.2f} of the limit)  weights {gbps:4.0f} GB/s, "
              f"busy at least {floor:.2f} at the datasheet bandwidth")


if __name__ == "__main__":
    main()
