#!/usr/bin/env python3
"""Derive Pascal's sm_power_w (data/architectures.toml [sm_60], [sm_61]) from a reference board at its limit.

The premise (the sources strings of [sm_61] and [sm_89]): a datacenter board sits at its power limit at its boost
clock under its heaviest load, a large SGEMM (n = 8192; no tensor cores on Pascal, FP16 and FP64 are lighter),
with its pipes as busy as perfcast makes them there. Under the clock model in use (data/power.toml [kernel_clock]
whole_board_draw = false, KernelCostModel::clock_factor) a kernel draws
    sm_count x sm_power_w x (f / sm_power_clock_mhz)^e x a
with a the pipes' busy share at boost (the SGEMM's rate at boost over the board's FP32 peak) and e the
architecture's power_clock_exponent (absent: 3). At f = boost the draw equals tdp_w:
    sm_power_w = tdp_w / (sm_count x a x (boost / sm_power_clock_mhz)^e).
The rate at boost is `perfcast op --op matmul` (torch.mm: cuBLAS's nn SGEMM) with its clock factor taken out, so
the power constants do not enter it.

Then, checked and not fitted: the clock the derived value gives other Pascal boards under the same torch.mm (their
fitted sustained clocks, where data/kernel_fit.toml has one, set aside: the power model alone) and the rate at that
clock against the published torch.mm rates (github.com/zzc0721/torch-performance-test-data, the project's test.py,
square n x n FP32; the issues and database.md named beside each). Prints; writes nothing.

Usage: tools/pascal_power_constants.py [--perfcast build/release/perfcast] [--n 8192]
"""
import argparse
import json
import os
import subprocess
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data")

# (architecture, reference board) under the premise.
REFERENCE = (("sm_61", "tesla-p40"), ("sm_60", "p100-sxm2-16gb"))

# Published torch.mm FP32 rates, TFLOPS, by n (torch-performance-test-data; PyTorch and CUDA as the source says).
PUBLISHED = {
    "tesla-p40": ("database.md@078586871da3 best of n = 1024-10240, PyTorch 2.8.0 cu128", {"best": 10.07}),
    "gtx-1080-ti": ("issue #60, PyTorch 2.7.1 cu126", {4096: 10.06, 8192: 9.24, 10240: 10.09}),
    "titan-xp": ("none found", {}),
    "gtx-1080": ("none found", {}),
    "tesla-p4": ("issue #9, PyTorch 2.2.2 cu121, stock clocks", {4096: 4.55, 8192: 4.01, 10240: 4.19}),
    "p100-sxm2-16gb": ("issue #180, PyTorch 2.7.0 cu128", {4096: 9.04, 8192: 9.50, 10240: 9.49}),
    "p100-pcie-16gb": ("issues #164 / #177, PyTorch 2.7.0 cu128", {4096: (7.81, 8.21), 8192: (8.12, 8.63),
                                                                   10240: (7.97, 8.56)}),
}
CHECK = (("sm_61", ("tesla-p40", "gtx-1080-ti", "titan-xp", "gtx-1080", "tesla-p4")),
         ("sm_60", ("p100-sxm2-16gb", "p100-pcie-16gb")))


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


ARCH = load(os.path.join(DATA, "architectures.toml"))


def gpu(name):
    return load(os.path.join(DATA, "gpus", name + ".toml"))


def at_boost(perfcast, board, n):
    """perfcast's torch.mm at boost: rate (TFLOPS) and the pipes' busy share (rate over the FP32 peak)."""
    out = subprocess.run([perfcast, "op", "--gpu", board, "--op", "matmul", "--m", str(n), "--n", str(n), "--k",
                          str(n), "--precision", "fp32", "--json"], capture_output=True, text=True, check=True)
    j = json.loads(out.stdout)
    rate = j["flops"] / (j["compute_us"] * j["clock_factor"]) * 1e-6
    return rate, rate / j["roofline"]["peak_tflops"]


def exponent(sm):
    return ARCH[sm].get("power_clock_exponent", 3.0)


def power_clock(sm, g, w, a):
    """Clock (of boost) at which sm_count x w x curve x a meets tdp_w (PowerCurve::clock_at_power)."""
    e = exponent(sm)
    load_w = g["sm_count"] * w * (g["boost_clock_mhz"] / ARCH[sm]["sm_power_clock_mhz"]) ** e * a
    return 1.0 if load_w <= g["tdp_w"] else (g["tdp_w"] / load_w) ** (1 / e), load_w


def fmt_pub(v):
    return "/".join(f"{x:.2f}" for x in v) if isinstance(v, tuple) else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build/release/perfcast"))
    ap.add_argument("--n", type=int, default=8192)
    args = ap.parse_args()
    derived = {}
    for sm, board in REFERENCE:
        g = gpu(board)
        rate, a = at_boost(args.perfcast, board, args.n)
        ratio = g["boost_clock_mhz"] / ARCH[sm]["sm_power_clock_mhz"]
        w = g["tdp_w"] / (g["sm_count"] * a * ratio ** exponent(sm))
        derived[sm] = w
        print(f"{sm}: {board} ({g['tdp_w']} W, {g['sm_count']} SMs, boost {g['boost_clock_mhz']} MHz) torch.mm "
              f"n = {args.n} at boost {rate:.2f} TFLOPS, a = {a:.4f}; sm_power_w = {g['tdp_w']} / "
              f"({g['sm_count']} x {a:.4f} x ({g['boost_clock_mhz']} / {ARCH[sm]['sm_power_clock_mhz']})^"
              f"{exponent(sm):g}) = {w:.3f} W (file: {ARCH[sm]['sm_power_w']})")
    print("\nchecks (power-model clock with the file's value -> the derived one; rate at the derived clock):")
    for sm, boards in CHECK:
        for board in boards:
            g = gpu(board)
            src, pub = PUBLISHED[board]
            sizes = [4096, 8192, 10240]
            cells = []
            for n in sizes:
                rate, a = at_boost(args.perfcast, board, n)
                c_old, _ = power_clock(sm, g, ARCH[sm]["sm_power_w"], a)
                c_new, load_w = power_clock(sm, g, derived[sm], a)
                p = pub.get(n)
                cells.append(f"n={n}: a {a:.3f}, clock {c_old:.3f} -> {c_new:.3f} ({load_w:.0f} W at boost), "
                             f"{rate * c_new:.2f} TFLOPS" + (f" vs published {fmt_pub(p)}" if p else ""))
            print(f"  {board} ({g['tdp_w']} W, {g['sm_count']} SMs, {g['boost_clock_mhz']} MHz; published: {src}"
                  + (f", best {pub['best']:.2f}" if "best" in pub else "") + ")")
            for c in cells:
                print("    " + c)


if __name__ == "__main__":
    main()
