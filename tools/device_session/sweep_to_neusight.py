#!/usr/bin/env python3
"""Converts kernel_sweep.py's output (kernel_sweep*.csv + *_trace.json.gz) into NeuSight's measured-kernel layout
(../shared/kernels/neusight_train: one folder per op, one CSV per GPU), so `perfcast fit-kernels` and
`perfcast predict-kernels` read the rows like the shared ones.

`--out` gets the FP32 rows (TF32 off, as the shared files were measured), in the shared files' columns exactly.
`--tensor-out` (optional) gets the BF16/FP16/TF32 linear and bmm rows (tensor cores) in the same layout plus a
last `Precision` column (bf16, fp16, tf32); `perfcast fit-kernels` refuses them, `perfcast predict-kernels` costs
them at their precision. `Latency` stays the single-call median (the shared harness's timing);
`Latency_back_to_back` is dropped.

Shapes: the sweep follows torch (linear x[M,K] -> Linear(K,N); bmm [B,M,K]x[B,K,N]); NeuSight's files use N as
the contraction and K as the output dimension (src/import/measured_kernels.h), so N and K are swapped here.

Kernel names: each profiled call sits inside a user_annotation range `sweepN` (N = its 0-based row in the CSV);
the kernels it launched link to cuda_runtime (or cuda_driver) events inside that range by args.correlation. `Kernel Name` is the
longest kernel (the GEMM of a non-fused Winograd convolution, as in the shared files), `Kernels` all of them in
launch order, ';'-prefixed. A row without a profiled call gets empty kernel, grid and occupancy fields.

Usage: python3 sweep_to_neusight.py --out data/measured_kernels/h200 [--tensor-out data/measured_kernels/h200_tensor]
       SWEEP.csv [SWEEP.csv ...]
(each SWEEP.csv's trace is SWEEP_trace.json.gz beside it, if present).
"""
import argparse
import csv
import gzip
import json
import os
import sys

HEAD = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name", "Warps per SM",
        "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y", "Block z", "CUDA Version"]
# The columns after HEAD, per op, as in the shared files (elementwise and softmax have no `Kernels`).
TAIL = {
    "bmm": ["Kernels", "B", "M", "N", "K"],
    "linear": ["Kernels", "B", "M", "N", "K"],
    "conv": ["Kernels", "B", "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size", "Stride", "Padding"],
    "ln": ["Kernels", "B", "H"],
}
ELEMENTWISE_TAIL = ["B", "H"]
OPS = ["bmm", "linear", "conv", "add", "mul", "relu", "gelu", "softmax", "ln"]


def kernels_by_range(trace_path):
    """{row index: [(name, dur_us, args), ...] in launch order} from one profiler trace."""
    with gzip.open(trace_path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    ranges = [(e["ts"], e["ts"] + e["dur"], e["tid"], int(e["name"][5:])) for e in events
              if e.get("cat") == "user_annotation" and e.get("name", "").startswith("sweep") and e["name"][5:].isdigit()]
    ranges.sort()
    launch_row = {}
    for e in events:
        # cuda_driver: Hopper's cuBLAS launches its sm90 GEMMs through cuLaunchKernelEx, a driver call.
        if e.get("cat") not in ("cuda_runtime", "cuda_driver") or "correlation" not in e.get("args", {}):
            continue
        for start, end, tid, row in ranges:
            if tid == e["tid"] and start <= e["ts"] <= end:
                launch_row[e["args"]["correlation"]] = row
                break
    out = {}
    for e in sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"]):
        row = launch_row.get(e.get("args", {}).get("correlation"))
        if row is not None:
            out.setdefault(row, []).append((e["name"], e.get("dur", 0.0), e["args"]))
    return out


def columns(op, tensor):
    return HEAD + TAIL.get(op, ELEMENTWISE_TAIL) + (["Precision"] if tensor else [])


def convert_row(r, kernels):
    """One sweep row as {column: value} in NeuSight's layout (+ Precision for a tensor-core row)."""
    op = r["OPName"]
    tensor = r["Precision"] != "fp32"
    out = {c: "" for c in columns(op, tensor)}
    if tensor:
        out["Precision"] = r["Precision"]
    for c in ("OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "CUDA Version"):
        out[c] = r[c]
    if kernels:
        name, _, args = max(kernels, key=lambda k: k[1])  # first longest
        out["Kernel Name"] = name
        out["Warps per SM"] = args.get("warps per SM", "")
        out["Blocks per SM"] = args.get("blocks per SM", "")
        for axis, i in (("x", 0), ("y", 1), ("z", 2)):
            out["Grid " + axis] = args["grid"][i] if "grid" in args else ""
            out["Block " + axis] = args["block"][i] if "block" in args else ""
        if "Kernels" in out:
            out["Kernels"] = "".join(";" + k[0] for k in kernels)
    if op in ("bmm", "linear"):
        out.update(B=r["B"], M=r["M"], N=r["K"], K=r["N"])  # torch's K is the contraction: NeuSight's N
    elif op == "conv":
        out.update({"B": r["B"], "Input_Channel": r["Input_Channel"], "Output_Channel": r["Output_Channel"],
                    "Kernel_Szie": r["Kernel_Size"], "Input_Size": r["Input_Size"], "Stride": r["Stride"],
                    "Padding": r["Padding"]})
    else:
        out.update(B=r["B"], H=r["H"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder to write <op>/<Device>.csv into")
    ap.add_argument("--tensor-out", help="folder for the bf16/fp16/tf32 linear and bmm rows (with a Precision column)")
    ap.add_argument("sweeps", nargs="+", help="kernel_sweep*.csv files")
    a = ap.parse_args()
    rows = {op: [] for op in OPS}
    tensor_rows = {"bmm": [], "linear": []}
    named = total = 0
    for path in a.sweeps:
        trace = path[:-len(".csv")] + "_trace.json.gz"
        kernels = kernels_by_range(trace) if os.path.exists(trace) else {}
        with open(path, newline="") as f:
            for i, r in enumerate(csv.DictReader(f)):
                if r["OPName"] not in rows:
                    sys.exit(f"{path} row {i}: op '{r['OPName']}' is not one of {', '.join(OPS)}")
                if r["Precision"] not in ("fp32", "tf32", "bf16", "fp16"):
                    sys.exit(f"{path} row {i}: precision '{r['Precision']}' is not fp32, tf32, bf16 or fp16")
                if r["Precision"] != "fp32":
                    if r["OPName"] not in tensor_rows:
                        sys.exit(f"{path} row {i}: a {r['Precision']} {r['OPName']}: only linear and bmm run tensor cores here")
                    tensor_rows[r["OPName"]].append(convert_row(r, kernels.get(i)))
                    continue
                rows[r["OPName"]].append(convert_row(r, kernels.get(i)))
                total += 1
                named += i in kernels
    write(a.out, rows, tensor=False)
    print(f"{total} FP32 rows ({named} with kernel names) into {a.out}: " +
          ", ".join(f"{op} {len(rs)}" for op, rs in rows.items()))
    if a.tensor_out:
        write(a.tensor_out, tensor_rows, tensor=True)
        print(f"{sum(map(len, tensor_rows.values()))} tensor-core rows into {a.tensor_out}: " +
              ", ".join(f"{op} {len(rs)}" for op, rs in tensor_rows.items()))


def write(folder, rows, tensor):
    for op, rs in rows.items():
        if not rs:
            continue
        device = rs[0]["Device"].replace(" ", "_")
        os.makedirs(os.path.join(folder, op), exist_ok=True)
        with open(os.path.join(folder, op, device + ".csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns(op, tensor), lineterminator="\n")
            w.writeheader()
            w.writerows(rs)


if __name__ == "__main__":
    main()
