#!/usr/bin/env python3
"""Re-derive the architectures' power constants under the whole-board draw (data/power.toml [kernel_clock]).

The board draw of a kernel (src/device/board_power.cpp) is
    P(c) = P_idle + (P_full - P_idle) * c^e * a + P_dram * u_m(c)
with c the clock over boost, P_idle = idle_fraction * TDP, P_full = SMs * sm_power_w * (boost / sm_power_clock)^e,
a = compute share x (floor + (1 - floor) x shape efficiency) (x tensor_power_fraction on a tensor pipe),
P_dram = bandwidth x dram_efficiency x 8 x pJ/bit and u_m(c) = memory time / (compute time at boost / c).
Each constant is re-derived from the premise its `sources` string cites (a reference board at its limit under
full load at boost, or a published sustained GEMM rate giving the clock c = published / perfcast's rate at
boost), with a, shape and memory time from `perfcast op` (large square GEMMs; power constants do not enter the
at-boost rate). Prints the constants; writes nothing.

Usage: tools/whole_draw_power_constants.py [--perfcast build/release/perfcast]
"""
import argparse
import json
import math
import os
import subprocess
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data")


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


ARCH = load(os.path.join(DATA, "architectures.toml"))
POWER = load(os.path.join(DATA, "power.toml"))


def gpu_path(gpu):
    for d in ("data/gpus", "tests/data/gpus"):
        p = os.path.join(ROOT, d, gpu + ".toml")
        if os.path.exists(p):
            return p
    raise SystemExit(f"no gpu file {gpu}")


class Board:
    def __init__(self, gpu, sm, perfcast):
        g = load(gpu_path(gpu))
        self.gpu, self.sm, self.perfcast = gpu, sm, perfcast
        self.n_sm, self.boost, self.tdp = g["sm_count"], g["boost_clock_mhz"], g["tdp_w"]
        a = ARCH[sm]
        self.idle = POWER["idle_fraction"][sm] * self.tdp
        self.dram_w = g["mem_bw_gbps"] * a["dram_efficiency"] * 8 * POWER["dram_pj_per_bit"][g["memory_type"]] * 1e-3
        self.floor = POWER["defaults"]["shape_activity_floor"]
        self.path = gpu_path(gpu)

    def gemm(self, n, precision):
        """perfcast's square GEMM at boost: rate (TFLOPS), shape activity term, memory time / compute time."""
        out = subprocess.run([self.perfcast, "op", "--gpu", self.path, "--m", str(n), "--n", str(n), "--k", str(n),
                              "--precision", precision, "--json"], capture_output=True, text=True, check=True)
        j = json.loads(out.stdout)
        boost_us = j["compute_us"] * j["clock_factor"]
        shape = self.floor + (1 - self.floor) * min(1.0, j["shape_efficiency"])
        return j["flops"] / boost_us * 1e-6, shape, j["memory_us"] / boost_us

    def dynamic_full(self, w, e):
        return self.n_sm * w * (self.boost / ARCH_SM_CLOCK[self.sm]) ** e - self.idle


ARCH_SM_CLOCK = {k: v["sm_power_clock_mhz"] for k, v in ARCH.items() if isinstance(v, dict) and "sm_power_clock_mhz" in v}


def w_full_load(b, e, n=8192):
    """sm_power_w for a board at its limit under a large SGEMM at boost (c = 1)."""
    _, a, um = b.gemm(n, "fp32")
    dyn = (b.tdp - b.idle - b.dram_w * um) / a
    return (dyn + b.idle) / (b.n_sm * (b.boost / ARCH_SM_CLOCK[b.sm]) ** e)


def w_at_clock(b, e, c, a, dram_term_w):
    """sm_power_w for a board at its limit at clock c with activity a and a DRAM draw in W."""
    dyn = (b.tdp - b.idle - dram_term_w) / (a * c ** e)
    return (dyn + b.idle) / (b.n_sm * (b.boost / ARCH_SM_CLOCK[b.sm]) ** e)


def tensor_fraction(b, w, e, c, a, um):
    """tensor_power_fraction at which a tensor GEMM's draw at clock c meets the limit."""
    return (b.tdp - b.idle - b.dram_w * um * c) / (b.dynamic_full(w, e) * c ** e * a)


def bisect(f, lo, hi):
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if (f(lo) > 0) == (f(mid) > 0):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perfcast", default=os.path.join(ROOT, "build/release/perfcast"))
    pc = ap.parse_args().perfcast
    out = {}

    # sm_89: L40S best FP32 torch.mm 46.88 TFLOPS (n = 1024-10240; taken at n = 8192), L4 10.66 / 11.11 at
    # n = 8192 / 10240 (data/published_kernels/fp32_kernels.csv). Two boards, two unknowns (w, e).
    l40s, l4 = Board("l40s", "sm_89", pc), Board("l4", "sm_89", pc)
    r1, a1, m1 = l40s.gemm(8192, "fp32")
    c1 = 46.88 / r1
    es = []
    for n, meas in ((8192, 10.66), (10240, 11.11)):
        r2, a2, m2 = l4.gemm(n, "fp32")
        c2 = meas / r2

        def gap(e):
            w = w_at_clock(l40s, e, c1, a1, l40s.dram_w * m1 * c1)
            return l4.idle + l4.dynamic_full(w, e) * c2 ** e * a2 + l4.dram_w * m2 * c2 - l4.tdp
        e = bisect(gap, 0.3, 3.0)
        es.append(e)
        print(f"sm_89: L40S c = {c1:.3f} (a {a1:.3f}), L4 n={n} c = {c2:.3f} (a {a2:.3f}) -> exponent {e:.3f}")
    e89 = sum(es) / len(es)
    w89 = w_at_clock(l40s, e89, c1, a1, l40s.dram_w * m1 * c1)
    out["sm_89.power_clock_exponent"], out["sm_89.sm_power_w"] = e89, w89
    # sm_89 tensor: the L40S FP16 torch.mm is unthrottled at 0.73-0.74 of peak: the largest fraction keeping c = 1.
    _, a, um = l40s.gemm(8192, "fp16")
    out["sm_89.tensor_power_fraction"] = tensor_fraction(l40s, w89, e89, 1.0, a, um)

    # sm_61: Tesla P40 at its limit under a large SGEMM at boost (n = 8192); exponent taken from sm_89.
    p40 = Board("tesla-p40", "sm_61", pc)
    out["sm_61.sm_power_w"] = w_full_load(p40, e89)
    out["sm_61.power_clock_exponent"] = e89
    out["sm_75.power_clock_exponent"] = e89
    out["sm_86.power_clock_exponent"] = e89

    # Reference boards at their limit under full compute load at boost (a large SGEMM).
    for sm, gpu in (("sm_60", "p100-sxm2-16gb"), ("sm_70", "v100-sxm2-16gb"), ("sm_75", "titan-rtx"),
                    ("sm_80", "a100-sxm4-40gb"), ("sm_90", "h100-sxm5-80gb")):
        e = e89 if sm == "sm_75" else ARCH[sm].get("power_clock_exponent", 3.0)
        out[f"{sm}.sm_power_w"] = w_full_load(Board(gpu, sm, pc), e)
    # sm_70 exponent: V100 PCIe (250 W, 1380 MHz) at its limit under the same load, with SXM2's sm_power_w.
    v = Board("v100-pcie-16gb", "sm_70", pc)
    _, a, um = v.gemm(8192, "fp32")
    w70 = out["sm_70.sm_power_w"]
    out["sm_70.power_clock_exponent"] = bisect(
        lambda e: v.idle + v.dynamic_full(w70, e) * a + v.dram_w * um - v.tdp, 0.5, 4.0)

    # sm_86 sm_power_w: an A40 running gpu-benches' FP32 FMA roofline kernel at 98-128 flop/byte holds 23.5
    # TFLOPS at 1715 MHz and reads 300 W. Its FMA pipes are 23.5 / (84 x 256 x 1.715) = 0.64 busy; a GEMM's
    # activity 1 is the pipes busy at the architecture's FP32 GEMM efficiency, so a = 0.64 / that efficiency.
    # DRAM at 23.5 TFLOPS / 113 flop/byte.
    a40 = Board("a40", "sm_86", pc)
    busy = 23.5 / (84 * 256 * 1.715 / 1000)  # 128 FP32 lanes x 2 flop per SM per clock
    r, shape, _ = a40.gemm(8192, "fp32")
    peak = 84 * 256 * a40.boost * 1e-6
    eff = r / peak / ((shape - a40.floor) / (1 - a40.floor))  # rate = peak x efficiency x shape efficiency
    dram = 23.5e3 / 113 * 8 * POWER["dram_pj_per_bit"]["GDDR6"] * 1e-3
    c = 1715 / a40.boost
    e86 = out["sm_86.power_clock_exponent"]
    b = a40
    dyn = (b.tdp - b.idle - dram) / (min(1.0, busy / eff) * c ** e86)
    w86 = (dyn + b.idle) / (b.n_sm * (b.boost / ARCH_SM_CLOCK["sm_86"]) ** e86)
    print(f"sm_86: A40 FMA pipes busy {busy:.3f}, FP32 GEMM efficiency {eff:.3f}, DRAM {dram:.1f} W")
    out["sm_86.sm_power_w"] = w86
    # sm_86 tensor: RTX A6000 (its [measured] table set aside) FP16 torch.mm best 120.49 TFLOPS.
    a6 = Board("rtx-a6000", "sm_86", pc)
    with open(gpu_path("rtx-a6000")) as f:
        text = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        a6.path = os.path.join(tmp, "rtx-a6000.toml")
        with open(a6.path, "w") as f:
            f.write(text.split("\n[measured]")[0] + "\n")
        r, a, um = a6.gemm(8192, "fp16")
    out["sm_86.tensor_power_fraction"] = tensor_fraction(a6, w86, e86, 120.49 / r, a, um)

    # sm_80 tensor: A100 PCIe 40GB torch.mm at n = 8192 / 10240 (issue #108), cube law.
    a100 = Board("a100-pcie-40gb", "sm_80", pc)
    rows = {"fp16": (197.5, 205.7), "bf16": (215.3, 211.7), "tf32": (97.3, 102.1)}
    out["sm_80.tensor_power_fraction"] = tpf_rows(a100, out["sm_80.sm_power_w"], 3.0, rows)
    # sm_90 tensor: H100 PCIe torch.mm at n = 8192 / 10240 (issue #95), exponent 1.2 (sm_90's own).
    h100 = Board("h100-pcie-80gb", "sm_90", pc)
    rows = {"fp16": (437.07, 449.65), "bf16": (492.84, 471.79), "tf32": (240.43, 225.65)}
    out["sm_90.tensor_power_fraction"] = tpf_rows(h100, out["sm_90.sm_power_w"],
                                                   ARCH["sm_90"]["power_clock_exponent"], rows)
    for k, v in out.items():
        old = ARCH[k.split(".")[0]].get(k.split(".")[1])
        print(f"{k:32s} {v:7.3f}   (file: {old})")


def tpf_rows(b, w, e, rows):
    fr = []
    for prec, meas in rows.items():
        for n, m in zip((8192, 10240), meas):
            r, a, um = b.gemm(n, prec)
            c = min(1.0, m / r)
            fr.append(tensor_fraction(b, w, e, c, a, um))
            print(f"{b.gpu} {prec} n={n}: c = {c:.3f}, fraction {fr[-1]:.3f}")
    return gmean(fr)


if __name__ == "__main__":
    main()
