#!/usr/bin/env python3
"""Worst-input benchmarks (issue 14): the perfcast binary on 200,000-row `predict --configs` and `validate` files
and a 500 MB PyTorch profiler trace, generated here into a temporary folder (never committed) and removed afterwards. For each
run: wall time, user+system CPU time and the process's peak resident memory (ru_maxrss of the child, from wait4).

    python3 bench/worst_inputs.py [--perfcast build/release/perfcast] [--rows 20000,200000] [--trace-mb 500]
                                  [--validate-rows 20000,200000] [--json results.json] [--keep DIR]

Prints one table (text) and, with --json, the same rows as JSON. The configurations are drawn with a fixed seed
from the same lists as bench/sweep_bench.cpp (12 GPUs x 8 CNNs x train/infer x fp32/amp x batch 16-128 x 1-8 GPUs);
the trace repeats, per profiler step, ResNet-50-like forward operators with input shapes, each with a nested aten
op, three launch calls and three kernels (as bench/trace_bench.cpp writes it), until it reaches the size asked for.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

GPUS = ["gtx-1080-ti", "rtx-2080-ti", "rtx-3090", "rtx-4090", "t4", "l4", "v100-sxm2-16gb", "a100-sxm4-40gb",
        "a100-sxm4-80gb", "h100-sxm5-80gb", "a10", "l40s"]
MODELS = ["resnet50", "resnet152", "vgg16", "alexnet", "inception_v3", "inception_v4", "resnet18", "googlenet"]


def write_configs(path, rows, measured=False):
    # measured: a validation file (`perfcast validate`), with a made-up throughput in the value column.
    rng = random.Random(42)
    with open(path, "w") as f:
        f.write("gpu,model,runtime,mode,precision,batch,seq,n_gpus,interconnect,data,optimizer_step"
                + (",metric,value\n" if measured else "\n"))
        for _ in range(rows):
            f.write(f"{rng.choice(GPUS)},{rng.choice(MODELS)},pytorch,{rng.choice(['train', 'infer'])},"
                    f"{rng.choice(['fp32', 'amp'])},{rng.choice([16, 32, 64, 128])},,{rng.choice([1, 1, 2, 4, 8])},"
                    ",synthetic," + (f",samples_per_s,{rng.uniform(50, 5000):.1f}\n" if measured else "\n"))


# Output shapes of a ResNet-50-like forward pass at batch 64 (stem, then the four stages' blocks).
def op_shapes():
    shapes = [[64, 64, 112, 112], [64, 64, 56, 56]]
    for channels, size, blocks in ((256, 56, 3), (512, 28, 4), (1024, 14, 6), (2048, 7, 3)):
        for _ in range(blocks):
            mid = channels // 4
            shapes += [[64, mid, size, size]] * 6 + [[64, channels, size, size]] * 4
    return shapes + [[64, 2048], [64, 1000]]


def write_trace(path, target_bytes):
    shapes = op_shapes()
    written = 0
    ts = 0
    eid = 0
    with open(path, "w") as f:
        head = ('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", "numSms": 108, '
                '"computeMajor": 8, "computeMinor": 0, "totalGlobalMem": 42505273344}], "traceEvents": [\n')
        f.write(head)
        written += len(head)
        step = 0
        first = True
        while written < target_bytes:
            events = []
            start = ts
            for dims in shapes:
                d = json.dumps([dims])
                eid += 1
                events.append(f'{{"ph": "X", "cat": "cpu_op", "name": "aten::relu_", "pid": 1, "tid": 1, "ts": {ts}, '
                              f'"dur": 20, "args": {{"External id": {eid}, "Input Dims": {d}, "Input type": ["float"]}}}}')
                eid += 1
                events.append(f'{{"ph": "X", "cat": "cpu_op", "name": "aten::clamp_min_", "pid": 1, "tid": 1, '
                              f'"ts": {ts + 2}, "dur": 10, "args": {{"External id": {eid}, "Input Dims": {d}}}}}')
                for k in range(3):
                    eid += 1
                    events.append(f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, '
                                  f'"tid": 1, "ts": {ts + 3 + k}, "dur": 4, "args": {{"correlation": {eid}}}}}')
                    events.append(f'{{"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_'
                                  f'kernel<4>(int)", "pid": 0, "tid": 7, "ts": {ts + 10 + 30 * k}, "dur": 25, '
                                  f'"args": {{"device": 0, "stream": 7, "correlation": {eid}, "grid": [1024, 1, 1], '
                                  f'"block": [256, 1, 1]}}}}')
                ts += 100
            events.append(f'{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": 1, "tid": 1, '
                          f'"ts": {start}, "dur": {ts - start}}}')
            text = ("" if first else ",\n") + ",\n".join(events)
            first = False
            f.write(text)
            written += len(text)
            step += 1
        f.write("\n]}\n")
    return step


def run(cmd):
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    err = p.stderr.read().decode(errors="replace").strip()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    return {"exit_code": code, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "stderr": err.splitlines()[-1] if err else ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perfcast", default="build/release/perfcast")
    ap.add_argument("--rows", default="20000,200000", help="comma-separated row counts for predict --configs")
    ap.add_argument("--validate-rows", default="20000,200000", help="comma-separated row counts for validate")
    ap.add_argument("--trace-mb", type=float, default=500, help="trace size in MB (0: no trace run)")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--keep", help="generate into this folder and keep it (default: a temporary folder, removed)")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="perfcast-worst-")
    os.makedirs(tmp, exist_ok=True)
    results = []
    try:
        for rows in [int(r) for r in a.rows.split(",") if r]:
            csv = os.path.join(tmp, f"configs-{rows}.csv")
            if not os.path.exists(csv):
                write_configs(csv, rows)
            r = run([a.perfcast, "predict", "--configs", csv, "--out", os.path.join(tmp, f"out-{rows}.csv")])
            r.update({"input": f"predict --configs, {rows} rows", "input_mb": round(os.path.getsize(csv) / 1e6, 1)})
            results.append(r)
        for rows in [int(r) for r in a.validate_rows.split(",") if r]:
            csv = os.path.join(tmp, f"measured-{rows}.csv")
            if not os.path.exists(csv):
                write_configs(csv, rows, measured=True)
            r = run([a.perfcast, "validate", csv])
            r.update({"input": f"validate, {rows} rows", "input_mb": round(os.path.getsize(csv) / 1e6, 1)})
            results.append(r)
        if a.trace_mb > 0:
            trace = os.path.join(tmp, f"trace-{int(a.trace_mb)}mb.json")
            if not os.path.exists(trace):
                with open(trace + ".steps", "w") as f:
                    f.write(str(write_trace(trace, int(a.trace_mb * 1e6))))
            with open(trace + ".steps") as f:
                steps = f.read().strip()
            for extra, what in (["--no-predict"], "trace --no-predict"), ([], "trace (with prediction)"):
                r = run([a.perfcast, "trace", trace] + extra)
                r.update({"input": f"{what}, {steps} steps", "input_mb": round(os.path.getsize(trace) / 1e6, 1)})
                results.append(r)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'input':44} {'MB':>7} {'exit':>4} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12}")
    for r in results:
        print(f"{r['input']:44} {r['input_mb']:>7} {r['exit_code']:>4} {r['wall_s']:>8} {r['cpu_s']:>8} "
              f"{r['peak_rss_mb']:>12}  {r['stderr']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": os.environ.get("PERFCAST_THREADS", "all cores"), "cores": os.cpu_count(),
                       "results": results}, f, indent=2)
    return 0 if all(r["exit_code"] in (0, 1) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
