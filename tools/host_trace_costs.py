#!/usr/bin/env python3
"""Measures what the host CPU spends per op in real PyTorch profiler (Kineto) traces, for the host model.

Usage: tools/host_trace_costs.py [--markdown OUT.md] TRACE.json[.gz] ...
  e.g. tools/host_trace_costs.py --markdown docs/host-trace-fit.md tests/data/kineto/*.json.gz

For each trace it reads the CPU threads' `cpu_op` / `cuda_runtime` events and reports, as medians over the
steady-state events (calls of 1 ms or more are first-use work: module loads, allocator growth, and are counted
apart):
  launch       the CPU time of one cudaLaunchKernel / hipLaunchKernel call
  fwd op       a top-level forward operator (an aten:: op not nested in another, outside the autograd engine):
               its duration less the launch calls inside it, plus the host time up to the next top-level op
               (Python, nn.Module.__call__); split into library ops (convolution, matmul, linear, addmm) and
               the others
  bwd node     one autograd::engine::evaluate_function: its duration less the launch calls inside, plus the
               engine's time up to the next node on the same thread; AccumulateGrad nodes apart
  allocator    cudaMalloc / hipMalloc calls (the caching allocator grows in the first steps, then stops)
  GPU idle     within a forward window on one stream: the share of the window with no kernel running

Traces from sampled or filtered profiles (events left out) give per-event durations but not the gaps between
them; the tool flags a trace as sampled when its CPU thread has stretches with no event while the GPU is idle,
and then reports durations only. The output is the evidence for the per-op keys of data/runtimes/pytorch.toml
(docs/host-trace-fit.md); it never writes to data/.
"""
import gzip, json, os, statistics, sys

LAUNCH = {"cudaLaunchKernel", "hipLaunchKernel", "hipExtModuleLaunchKernel", "cudaLaunchKernelExC",
          "cuLaunchKernel", "hipModuleLaunchKernel"}
MALLOC = {"cudaMalloc", "hipMalloc"}
LIBRARY = ("conv", "linear", "addmm", "aten::mm", "matmul", "bmm", "cudnn")
FIRST_USE_US = 1000.0  # a call this long is first-use work (module load, allocator growth), not steady state
# Gaps longer than this on a CPU thread are waits or sampling holes, not per-op Python (a sync, a data loader).
MAX_GAP_US = 200.0


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    return [e for e in ev if e.get("ph") == "X" and "dur" in e]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def quart(xs):
    if len(xs) < 4:
        return (min(xs), max(xs)) if xs else (float("nan"), float("nan"))
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def inside(a, b):
    return a["ts"] >= b["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] + 0.5


def top_level(events):
    """Events not nested in another event of the list (the list sorted by start)."""
    out, end = [], -1.0
    for e in events:
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def launches_in(e, launches):
    return [l for l in launches if inside(l, e)]


def analyse(path):
    ev = load(path)
    ev.sort(key=lambda e: (e["ts"], -e["dur"]))
    name = os.path.basename(path)
    r = {"trace": name}
    cpu = [e for e in ev if e.get("cat") in ("cpu_op", "cuda_runtime", "user_annotation")]
    launches = [e for e in ev if e.get("cat") == "cuda_runtime" and e["name"] in LAUNCH]
    mallocs = [e for e in ev if e.get("cat") == "cuda_runtime" and e["name"] in MALLOC]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    r["launch_first_use"] = sum(1 for l in launches if l["dur"] >= FIRST_USE_US)
    r["malloc_n"] = len(mallocs)
    r["malloc_us"] = sum(m["dur"] for m in mallocs)
    r["kernels"] = len(kernels)

    # Steady state: a profiler schedule's last step (ProfilerStep#N) or a harness's last measured window; the whole
    # trace when it names neither.
    marks = [e for e in ev if e.get("cat") == "user_annotation"
             and (e["name"].startswith("ProfilerStep#") or "|measure|" in e["name"])]
    # (the last such mark that issued a kernel: a trailing step cut off by the profiler's end has none)
    marks = [m for m in marks if any(inside(l, m) for l in launches)]
    if marks:
        last = marks[-1]
        win = lambda e: inside(e, last)
        r["window"] = f"{last['name']} ({last['dur']:.0f} us)"
    else:
        win = lambda e: True
        r["window"] = "whole trace"
    r["ddp"] = any("reducer" in e["name"] for e in ev if e.get("cat") == "cpu_op")
    ops = [e for e in ev if e.get("cat") == "cpu_op" and win(e)]
    launches = [l for l in launches if win(l)]
    r["launch"] = [l["dur"] for l in launches if l["dur"] < FIRST_USE_US]
    bwd = [e for e in ops if e["name"].startswith("autograd::engine::evaluate_function")]
    in_bwd = lambda e: any(inside(e, b) for b in bwd)
    threads = sorted({e["tid"] for e in ops})

    # For each own time, the events the profiler recorded inside the op (itself, nested ops, runtime calls other
    # than launches, whose own cost is in the launch figure): each costs the profiler's per-event time.
    nested = {}
    fwd_lib, fwd_other, fwd_view, fwd_gap = [], [], [], []
    bwd_lib, bwd_node, bwd_view, bwd_acc, bwd_gap = [], [], [], [], []
    wrapper = []
    for tid in threads:
        t_ops = [e for e in ops if e["tid"] == tid]
        t_launch = [l for l in launches if l["tid"] == tid]
        t_bwd = top_level([e for e in t_ops if e in bwd])
        t_fwd = [e for e in top_level([e for e in t_ops if not e["name"].startswith("autograd::")
                                       and not e["name"].startswith("Optimizer")]) if not in_bwd(e)]
        # A forward op counts when the allocator did not grow inside it (steady state).
        steady = lambda e: not any(inside(m, e) for m in mallocs) and e["dur"] < FIRST_USE_US
        for i, e in enumerate(t_fwd):
            if not steady(e) or not e["name"].startswith("aten::"):
                continue
            ls = launches_in(e, t_launch)
            own = e["dur"] - sum(l["dur"] for l in ls)
            n_ev = sum(1 for c in cpu if c.get("tid") == tid and inside(c, e) and c["name"] not in LAUNCH)
            nested.setdefault("fwd_lib" if ls and any(k in e["name"] for k in LIBRARY) else
                              "fwd_other" if ls else "fwd_view", []).append(n_ev)
            if not ls:
                fwd_view.append(own)
            else:
                (fwd_lib if any(k in e["name"] for k in LIBRARY) else fwd_other).append(own)
            if i + 1 < len(t_fwd):
                gap = t_fwd[i + 1]["ts"] - (e["ts"] + e["dur"])
                if 0 <= gap < MAX_GAP_US:
                    fwd_gap.append(gap)
        for i, e in enumerate(t_bwd):
            if not steady(e):
                continue
            ls = launches_in(e, t_launch)
            own = e["dur"] - sum(l["dur"] for l in ls)
            n_ev = sum(1 for c in cpu if c.get("tid") == tid and inside(c, e) and c["name"] not in LAUNCH)
            lib = any(k in e["name"].split(": ")[-1].lower() for k in ("mm", "conv", "linear"))
            nested.setdefault("bwd_acc" if "AccumulateGrad" in e["name"] else "bwd_view" if not ls else
                              "bwd_lib" if lib else "bwd_node", []).append(n_ev)
            if "AccumulateGrad" in e["name"]:
                bwd_acc.append(own)
            elif not ls:
                bwd_view.append(own)
            else:
                lib = any(k in e["name"].split(": ")[-1].lower() for k in ("mm", "conv", "linear"))
                (bwd_lib if lib else bwd_node).append(own)
            if i + 1 < len(t_bwd):
                gap = t_bwd[i + 1]["ts"] - (e["ts"] + e["dur"])
                if 0 <= gap < MAX_GAP_US:
                    bwd_gap.append(gap)
        # The profiler's own cost per recorded event: an op whose only child is one other op (aten::conv2d ->
        # aten::convolution, aten::relu_ -> aten::clamp_min_) does almost nothing itself, so parent - child bounds
        # the per-event recording cost from above.
        for e in t_ops:
            kids = [c for c in t_ops if c is not e and inside(c, e)]
            direct = [c for c in kids if not any(o is not c and o is not e and inside(c, o) for o in kids)]
            if len(direct) == 1 and e["dur"] < FIRST_USE_US and e["name"].startswith("aten::"):
                wrapper.append(e["dur"] - direct[0]["dur"])
    r["nested"] = nested
    r.update(fwd_lib=fwd_lib, fwd_other=fwd_other, fwd_view=fwd_view, fwd_gap=fwd_gap, bwd_lib=bwd_lib,
             bwd_node=bwd_node, bwd_view=bwd_view, bwd_acc=bwd_acc, bwd_gap=bwd_gap, wrapper=wrapper)

    # GPU idle over the window: the share of the span from its first to its last kernel with no kernel running.
    ks = sorted((k for k in kernels if marks and k.get("args", {}).get("correlation") in
                 {l["args"].get("correlation") for l in launches}), key=lambda k: k["ts"])
    if ks:
        span = ks[-1]["ts"] + ks[-1]["dur"] - ks[0]["ts"]
        busy, end = 0.0, -1.0
        for k in ks:
            s0, f = max(k["ts"], end), k["ts"] + k["dur"]
            if f > s0:
                busy += f - s0
            end = max(end, f)
        r["gpu"] = (len(ks), span, busy)
    return r


def fmt(xs):
    if not xs:
        return "-"
    lo, hi = quart(xs)
    return f"{med(xs):.1f} ({lo:.1f}-{hi:.1f}) n={len(xs)}"


# A trace whose profiler costs more than this per recorded event (record_shapes, a cold first step) inflates every
# duration by more than the per-op costs being measured: its durations are shown but not fitted.
MAX_EVENT_COST_US = 10.0

ROWS = [("launch", "launch call"), ("fwd_other", "forward op with kernels, own"),
        ("fwd_lib", "forward library op (conv, GEMM), own"), ("fwd_view", "forward op without kernels, own"),
        ("fwd_gap", "Python between forward ops"), ("bwd_node", "backward node, own"),
        ("bwd_lib", "backward library node (conv, GEMM), own"), ("bwd_view", "backward node without kernels, own"),
        ("bwd_acc", "AccumulateGrad node, own"), ("bwd_gap", "engine between backward nodes"),
        ("wrapper", "profiler cost per recorded event (upper bound)")]


def fit(rs):
    """The runtime keys from the traces, at the traces' hosts, in us."""
    own = [r for r in rs if r["wrapper"] and med(r["wrapper"]) <= MAX_EVENT_COST_US]
    gaps = [r for r in rs if not r["ddp"]]
    pool = lambda src, k: [x for r in src for x in r[k]]
    # The profiler's cost per recorded event: the cheapest quarter of the pure wrappers (an op that only calls one
    # other op) is almost all recording. Each own time loses that much per event recorded inside it.
    event = quart(pool(own, "wrapper"))[0]
    net = lambda k: [x - n * event for r in own for x, n in zip(r[k], r["nested"].get(k, []))]
    other, node = med(net("fwd_other")), med(net("bwd_node"))
    # A library op's extra over a plain op; a GEMM node of backward runs two library calls (dgrad and wgrad).
    lib = [x - other for x in net("fwd_lib")] + [(x - node) / 2 for x in net("bwd_lib")]
    fgap, bgap = med(pool(gaps, "fwd_gap")), med(pool(gaps, "bwd_gap"))
    return {
        "host_overhead_per_kernel_us": (med(pool(own, "launch")), "median launch call"),
        "host_op_us": (other + fgap, "forward op with kernels: own time + the Python before the next op"),
        "host_inline_op_us": (other, "forward op with kernels: own time (host_op_us without the Python gap)"),
        "host_module_call_us": (fgap, "the Python between forward ops (host_op_us without the op's own time)"),
        "host_library_call_us": (med(lib), "library op's own time - a plain op's (forward; backward GEMM nodes / 2)"),
        "host_backward_op_us": (node + bgap, "backward node with kernels: own time + the engine's gap"),
        "host_accumulate_grad_us": (med(net("bwd_acc")) + bgap, "AccumulateGrad node: own time + the engine's gap"),
    }, own, gaps, event


def report(rs):
    out = ["# Host cost per op, measured in PyTorch profiler traces", "",
           "Generated by `tools/host_trace_costs.py --markdown docs/host-trace-fit.md tests/data/kineto/*.json.gz`;",
           "do not edit by hand. Each cell: median (interquartile range) of host CPU microseconds, and the number of",
           "events. `own` = the event's duration less the launch calls inside it. Durations include the profiler's own",
           "cost; the last row bounds it per recorded event. docs/host-model.md says how the runtime keys use them.", ""]
    out.append("| quantity | " + " | ".join(r["trace"] for r in rs) + " |")
    out.append("|---|" + "---|" * len(rs))
    out.append("| window | " + " | ".join(r["window"] for r in rs) + " |")
    out.append("| DDP reducer hooks in backward | " + " | ".join("yes" if r["ddp"] else "no" for r in rs) + " |")
    for k, label in ROWS:
        out.append(f"| {label} (us) | " + " | ".join(fmt(r[k]) for r in rs) + " |")
    out.append("| kernels in window, span (us), GPU idle | " + " | ".join(
        f"{r['gpu'][0]}, {r['gpu'][1]:.0f}, {100 * (1 - r['gpu'][2] / r['gpu'][1]):.0f}%" if r.get("gpu") else "-"
        for r in rs) + " |")
    out.append("| cudaMalloc calls, time (us) | " + " | ".join(f"{r['malloc_n']}, {r['malloc_us']:.0f}" for r in rs) + " |")
    keys, own, gaps, event = fit(rs)
    out += ["", "## The fit", "",
            f"Durations from the traces whose profiler cost per event is at most {MAX_EVENT_COST_US:.0f} us: " +
            ", ".join(r["trace"] for r in own) + ". Gaps between ops from the traces without DDP reducer hooks (they",
            "run between backward nodes): " + ", ".join(r["trace"] for r in gaps) + ".",
            f"Own times less {event:.1f} us per event the profiler recorded inside the op (the lower quartile of the",
            "pure wrappers' cost, almost all recording); launch calls keep theirs.", "",
            "| key | at the traces' hosts (us) | rule |", "|---|---:|---|"]
    out += [f"| {k} | {v:.1f} | {why} |" for k, (v, why) in keys.items()]
    return "\n".join(out) + "\n"


def main(argv):
    md = None
    if len(argv) > 1 and argv[0] == "--markdown":
        md, argv = argv[1], argv[2:]
    if not argv:
        sys.exit(__doc__)
    text = report([analyse(p) for p in argv])
    if md:
        tmp = md + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, md)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
