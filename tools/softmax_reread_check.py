#!/usr/bin/env python3
"""How many times does PyTorch's block softmax read its input from DRAM? A check on measured kernels; fits nothing.

PyTorch's host_softmax (aten/src/ATen/native/cuda/SoftMax.cu) runs rows of dim_size > 1024 (or over 4 KiB) as one
CTA of 1024 threads per row. cunn_SoftMaxForwardSmem copies the row to shared memory on its first read (taken when
dim_size < (sharedMemPerBlock - warps x sizeof(accscalar_t)) / sizeof(scalar_t), dim_size % ILP == 0 and both
pointers 16-byte aligned; PyTorch 2.1's traces in the NeuSight files never name it), cunn_SoftMaxForward reads the
row three times from global memory (ilpReduce for the max, ilpReduce for the sum of exp, WriteFpropResults).

For each kernel-bound row (input at least --min-mib MiB) this prints the input reads the measured time pays for at
the board's streaming rate: reads = (time x rate - output bytes) / input bytes, and the bytes the rows the SMs hold
at once span (2 CTAs of 1024 threads a SM on sm_70 and later, 2048 threads; one on sm_6x), the distance over which
cost/row_kernels.cpp's row_reread_l2_share asks the L2 ramp (data/architectures.toml l2_reuse_*_fraction) for hits.

- H200: data/device_sessions/2026-12-04-h200/kernel_sweep_seed*.csv, Latency_back_to_back (20 calls back to back),
  rate = the card's measured copy rate (data/gpus/h200-sxm-141gb.toml [measured] dram_efficiency 0.881 x 4800 GB/s).
- NeuSight GPUs: shared/kernels/neusight_train/softmax (fastest 5 of 25 calls), rate = datasheet bandwidth x the
  fitted data/kernel_fit.toml dram_efficiency of the architecture.

    tools/softmax_reread_check.py [--shared ../shared/kernels/neusight_train] [--min-mib 8]
"""
import argparse
import csv
import glob
import gzip
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name in the file -> (datasheet GB/s from data/gpus/*.toml, fitted dram_efficiency from data/kernel_fit.toml,
# SMs, CTAs of 1024 threads a SM, L2 bytes)
NEUSIGHT = {
    "A100": (1555, 0.7826, 108, 2, 40 * 2**20),
    "V100": (900, 0.8022, 80, 2, 6 * 2**20),
    "P100": (732, 0.6093, 56, 2, 4 * 2**20),
    "T4": (320, 0.7263, 40, 1, 4 * 2**20),
    "P4": (192, 0.729, 20, 2, 2 * 2**20),
}
H200 = (4800, 0.881, 132, 2, 50 * 2**20)


def path_of(kernel, cols):
    if "SoftMaxForwardSmem" in kernel:
        return "smem (1 read)"
    if "cunn_SoftMaxForward" in kernel:
        return "three-pass"
    if "softmax_warp_forward" in kernel:
        return "warp (1 read)"
    # The H200 CSVs carry no kernel name: SoftMax.cu's rule (FP32: ILP 4, 48 KiB shared memory, 32 warps x 4 bytes).
    if cols <= 1024:
        return "warp (1 read)"
    return "smem (1 read)" if cols < (49152 - 32 * 4) // 4 and cols % 4 == 0 else "three-pass"


def report(name, rows, spec, min_bytes):
    gbps, eff, sms, ctas, l2 = spec
    rate = gbps * 1e9 * eff
    by_path = {}
    for b, n, t_s, kernel in rows:
        byt = b * n * 4.0
        if byt < min_bytes:
            continue
        reads = (t_s * rate - byt) / byt
        resident = min(b, sms * ctas) * n * 4.0
        by_path.setdefault(path_of(kernel, n), []).append((b, n, t_s * 1e6, reads, resident / l2))
    for p, v in sorted(by_path.items()):
        med = statistics.median(x[3] for x in v)
        print(f"{name:5s} {p:14s} rows {len(v):4d}  median input reads at the streaming rate {med:5.2f}")
        if name == "H200":
            for b, n, us, reads, share in sorted(v, key=lambda x: x[4]):
                print(f"        {b:5d} x {n:6d}  {us:7.1f} us  reads {reads:4.2f}  resident rows {share:5.2f} of L2")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "kernels", "neusight_train"))
    ap.add_argument("--min-mib", type=float, default=8.0)
    a = ap.parse_args()
    min_bytes = a.min_mib * 2**20
    rows = []
    for f in sorted(glob.glob(os.path.join(ROOT, "data/device_sessions/2026-12-04-h200/kernel_sweep_seed*.csv"))):
        for r in csv.DictReader(open(f)):
            if r["OPName"] == "softmax" and r["Precision"] == "fp32":
                rows.append((int(r["B"]), int(r["H"]), float(r["Latency_back_to_back"]) * 1e-3, ""))
    report("H200", rows, H200, min_bytes)
    for f in sorted(glob.glob(os.path.join(a.shared, "softmax", "*.csv.gz"))):
        name = next((k for k in NEUSIGHT if k in os.path.basename(f)), None)
        if name is None:
            continue
        rows = [(int(r["B"]), int(r["H"]), float(r["Latency"]) * 1e-3, r["Kernel Name"])
                for r in csv.DictReader(gzip.open(f, "rt"))]
        report(name, rows, NEUSIGHT[name], min_bytes)


if __name__ == "__main__":
    main()
