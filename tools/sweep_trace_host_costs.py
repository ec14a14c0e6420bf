#!/usr/bin/env python3
"""Per-call host cost of single PyTorch ops in a kernel-sweep profiler trace, beside what the host model charges.

Usage: tools/sweep_trace_host_costs.py [--host ID] TRACE.json.gz ...
  e.g. tools/sweep_trace_host_costs.py data/device_sessions/2026-12-04-h200/kernel_sweep_seed2026120*_trace.json.gz

`tools/device_session/kernel_sweep.py` profiles one more call of each swept op inside a `sweepN` range. For every
top-level `cpu_op` inside a range (an aten op not nested in another) this prints, per op name, the median profiled
duration, the launch calls inside it and the events the profiler recorded inside it (the op itself included), and
the median of all launch calls. The `charged` column is what the host model (docs/host-model.md) charges that call
at the --host of the trace (its single-thread score): (host_inline_op_us + launches x host_overhead_per_kernel_us
[+ host_library_call_us for linear / conv / matmul ops]) x reference score / host score, plus the fit's 2 us per
recorded event (docs/host-trace-fit.md), read from data/runtimes/pytorch.toml and data/cost_model.toml. The
module call (`host_module_call_us`) is not in it: the sweep calls ops directly. Evidence for docs/calibration.md
(session 29, h/host29); it writes nothing.
"""
import argparse
import bisect
import collections
import gzip
import json
import os
import statistics
import tomllib

LIBRARY = ("linear", "conv", "matmul", "addmm", "aten::mm", "bmm")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def toml_number(path, key):
    """The first numeric `key` in the TOML file, at the top level or in any table."""
    with open(os.path.join(ROOT, path), "rb") as f:
        doc = tomllib.load(f)
    stack = [doc]
    while stack:
        table = stack.pop(0)
        if isinstance(table.get(key), (int, float)):
            return float(table[key])
        stack.extend(v for v in table.values() if isinstance(v, dict))
    raise SystemExit(f"{path}: no {key}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("traces", nargs="+")
    p.add_argument("--host", default="emr-kvm-2p1ghz",
                   help="data/hosts id of the trace's host, whose single_thread_score scales the charge "
                        "(default: the H200 session's emr-kvm-2p1ghz)")
    a = p.parse_args()
    rt = "data/runtimes/pytorch.toml"
    inline, launch, library = (toml_number(rt, k) for k in
                               ("host_inline_op_us", "host_overhead_per_kernel_us", "host_library_call_us"))
    scale = toml_number("data/cost_model.toml", "reference_single_thread_score") / toml_number(f"data/hosts/{a.host}.toml", "single_thread_score")
    for path in a.traces:
        with gzip.open(path, "rt") as f:
            ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
        ranges = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("sweep")]
        cpu = sorted((e for e in ev if e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver")), key=lambda e: e["ts"])
        ts = [e["ts"] for e in cpu]
        per_op, launches = collections.defaultdict(list), []
        for r in ranges:
            end = r["ts"] + r["dur"]
            inside = [e for e in cpu[bisect.bisect_left(ts, r["ts"]):bisect.bisect_right(ts, end)]
                      if e["ts"] + e["dur"] <= end]
            ops = [e for e in inside if e["cat"] == "cpu_op"]
            for o in ops:
                if any(q is not o and q["ts"] <= o["ts"] and q["ts"] + q["dur"] >= o["ts"] + o["dur"] for q in ops):
                    continue  # nested: part of a top-level op
                sub = [e for e in inside if e is not o and o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
                n_launch = sum(1 for e in sub if e["name"].startswith("cudaLaunch"))
                per_op[o["name"]].append((o["dur"], n_launch, len(sub) + 1))
            launches += [e["dur"] for e in inside if e["name"].startswith("cudaLaunch")]
        print(f"{os.path.basename(path)}: {len(ranges)} ranges; launch call median {statistics.median(launches):.1f} us "
              f"(n={len(launches)}), charged {launch * scale:.1f} us")
        print(f"  {'op':18s} {'n':>4s} {'total us':>9s} {'launches':>8s} {'events':>6s} {'charged us':>10s}")
        for name, v in sorted(per_op.items()):
            if len(v) < 5:
                continue
            n_launch = statistics.median(x[1] for x in v)
            events = statistics.median(x[2] for x in v)
            lib = library if any(k in name for k in LIBRARY) and n_launch > 0 else 0.0
            charged = (inline + n_launch * launch + lib) * scale + 2.0 * events
            print(f"  {name:18s} {len(v):4d} {statistics.median(x[0] for x in v):9.1f} {n_launch:8.0f} {events:6.0f} "
                  f"{charged:10.1f}")


if __name__ == "__main__":
    main()
