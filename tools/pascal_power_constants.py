#!/usr/bin/env python3
"""Derive Pascal's sm_power_w (data/architectures.toml [sm_60], [sm_61]) from a reference board at its limit.

The premise (the sources strings of [sm_61] and [sm_89]): a datacenter board sits at its power limit at its boost
clock under its heaviest load, a large SGEMM (n = 8192; no tensor cores on Pascal, FP16 and FP64 are lighter),
with its pipes as busy as perfcast makes them there. Under the clock model in use (data/power.toml [kernel_clock]
whole_board_draw = false, KernelCostModel::clock_factor) a kernel draws
    sm_count x sm_power_w x (f / sm_power_clock_mhz)^e x a
with a the pipes' busy share at boost (the SGEMM's rate at boost over the board's FP32 peak) and e the
architecture's power_clock_exponent (absent: the default of src/device/power_curve.h). At f = boost the draw equals tdp_w:
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
import csv
import json
import os
import re
import subprocess
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data")

# (architecture, reference board) under the premise.
REFERENCE = (("sm_61", "tesla-p40"), ("sm_60", "p100-sxm2-16gb"))

# Published torch.mm FP32 rates (roles record and check) are read from data/published_kernels/fp32_kernels.csv, the one place
# they are kept: gpu -> (sources, {n: rate or (rate, rate) of two boards, "best": best-of-sizes rate}).
PUBLISHED_CSV = os.path.join(DATA, "published_kernels", "fp32_kernels.csv")


def published(boards):
    out = {b: (set(), {}) for b in boards}
    with open(PUBLISHED_CSV, newline="") as f:
        for row in csv.DictReader(f):
            if row["gpu"] not in out or row["precision"] != "fp32":
                continue
            src, rates = out[row["gpu"]]
            url = row["url"]
            where = f"issue #{url.rsplit('/', 1)[-1]}" if "/issues/" in url else url.rsplit("/", 1)[-1]
            src.add(f"{where}, {row['library']}")
            key = "best" if row["statistic"].startswith("best_of") else int(row["n"])
            rate = float(row["tflops"])
            rates[key] = tuple(sorted((rates[key] if isinstance(rates[key], tuple) else (rates[key],)) + (rate,))) \
                if key in rates else rate
    return {b: ("; ".join(sorted(src)) or "none found", rates) for b, (src, rates) in out.items()}


# The C++ default of power_clock_exponent where an architecture gives none (src/device/power_curve.h), read from
# there rather than repeated; the tool stops when it cannot find it.
def default_exponent():
    with open(os.path.join(ROOT, "src", "device", "power_curve.h")) as f:
        m = re.search(r"double clock_exponent = ([0-9.]+);", f.read())
    if not m:
        raise SystemExit("src/device/power_curve.h: no `double clock_exponent = N;` default found")
    return float(m.group(1))


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


DEFAULT_EXPONENT = default_exponent()


def exponent(sm):
    return ARCH[sm].get("power_clock_exponent", DEFAULT_EXPONENT)


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
    pub_all = published([b for _, boards in CHECK for b in boards])
    print("\nchecks (power-model clock with the file's value -> the derived one; rate at the derived clock):")
    for sm, boards in CHECK:
        for board in boards:
            g = gpu(board)
            src, pub = pub_all[board]
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
