#!/usr/bin/env python3
"""Host-side costs of PyTorch eager on the device machine's own CPU.

perfcast scales its per-op host costs (docs/host-model.md: `host_op_us`, `host_autograd_op_us`,
`host_backward_op_us`, `host_library_call_us`, `host_optimizer_op_us`, `host_overhead_per_kernel_us`) from the
reference desktop by a PassMark single-thread score. The device host is a KVM guest whose CPU SKU is hidden
(data/device_sessions/2026-12-04-h200/lscpu.txt), so no score can be looked up for it. This script measures the
costs themselves on that host, each on tensors so small that the GPU finishes every kernel before the host issues
the next one: the time per call is the host's.

Each figure is the median over `--repeats` runs of `--n` calls, in microseconds per call (per tensor for the
optimizer rows, per kernel for the CUDA-graph row). Output: host_bench.csv (key, us, n, what) and host_bench.txt
(the versions and the CPU the figures belong to).
"""
import argparse
import csv
import os
import platform
import statistics
import time


def timed(fn, n, repeats, sync):
    """Median microseconds per call of fn() over `repeats` runs of n calls, the GPU drained around each run."""
    runs = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        runs.append((time.perf_counter() - t0) * 1e6 / n)
    return statistics.median(runs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for host_bench.csv and host_bench.txt")
    p.add_argument("--n", type=int, default=2000, help="calls per run")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)

    import torch

    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    rows = []

    def record(key, us, n, what):
        rows.append({"key": key, "us": f"{us:.3f}", "n": n, "what": what})
        print(f"{key:32s} {us:9.3f} us  ({what})", flush=True)

    # Python's own speed: the interpreter loop every framework op pays for.
    def py_loop():
        s = 0
        for i in range(1000):
            s += i
        return s
    record("python_loop_1000_adds", timed(py_loop, 2000, args.repeats, lambda: None), 2000,
           "a 1000-iteration Python for-loop adding ints, no GPU: single-thread interpreter speed")

    a = torch.ones(1, device=dev)
    b = torch.ones(1, device=dev)
    for _ in range(200):  # warm the allocator, the dispatcher and the kernel images
        torch.add(a, b)
    sync()
    record("op_inplace_add", timed(lambda: a.add_(1.0), args.n, args.repeats, sync), args.n,
           "a.add_(1) on one element: dispatcher + TensorIterator + cudaLaunchKernel")
    record("op_add_new_output", timed(lambda: torch.add(a, b), args.n, args.repeats, sync), args.n,
           "torch.add(a, b) on one element: as above plus the caching allocator's output")
    record("sync_idle", timed(sync, args.n, args.repeats, lambda: None), args.n,
           "torch.cuda.synchronize() with nothing in flight")

    with torch.no_grad():
        lin = torch.nn.Linear(8, 8).to(dev)
        x8 = torch.ones(1, 8, device=dev)
        conv = torch.nn.Conv2d(3, 8, 3, padding=1).to(dev)
        img = torch.ones(1, 3, 8, 8, device=dev)
        for _ in range(50):
            lin(x8)
            conv(img)
        record("module_linear", timed(lambda: lin(x8), args.n, args.repeats, sync), args.n,
               "nn.Linear(8, 8) forward: module call + addmm (cuBLAS setup + launch)")
        record("module_conv2d", timed(lambda: conv(img), args.n, args.repeats, sync), args.n,
               "nn.Conv2d(3, 8, 3) forward on 1x3x8x8: module call + cuDNN setup + launches")

    # Autograd: a chain of 100 elementwise ops recorded and backpropagated; per op, forward and backward together.
    chain = 100
    leaf = torch.ones(1, device=dev, requires_grad=True)

    def fwd_only():
        with torch.no_grad():
            y = leaf
            for _ in range(chain):
                y = y * 1.0001
        return y

    def fwd_bwd():
        y = leaf
        for _ in range(chain):
            y = y * 1.0001
        y.backward()

    nf = max(1, args.n // chain)
    t_nograd = timed(fwd_only, nf, args.repeats, sync) / chain
    t_train = timed(fwd_bwd, nf, args.repeats, sync) / chain
    record("op_mul_no_grad", t_nograd, nf * chain, "y = y * c under no_grad, per op")
    record("op_mul_forward_backward", t_train, nf * chain,
           "y = y * c recorded by autograd, then backward through the chain, per op (forward + its backward)")

    # Optimizer: per parameter tensor, torch.optim.SGD with momentum, for-loop vs foreach vs fused where offered.
    params = [torch.nn.Parameter(torch.ones(8, device=dev)) for _ in range(100)]
    for q in params:
        q.grad = torch.ones_like(q)
    variants = [("optimizer_sgd_forloop", dict(foreach=False)), ("optimizer_sgd_foreach", dict(foreach=True))]
    if "fused" in torch.optim.SGD.__init__.__code__.co_varnames:
        variants.append(("optimizer_sgd_fused", dict(fused=True)))
    for key, kw in variants:
        try:
            opt = torch.optim.SGD(params, lr=0.01, momentum=0.9, **kw)
            opt.step()
            no = max(1, args.n // 20)
            record(key, timed(opt.step, no, args.repeats, sync) / len(params), no * len(params),
                   f"SGD(momentum=0.9, {kw}) step over 100 tensors of 8 elements, per tensor")
        except Exception as e:  # an optimizer option this PyTorch lacks
            print(f"{key}: skipped ({e})", flush=True)

    # CUDA graphs: the host cost of replaying a captured graph, per kernel in it.
    g_x = torch.ones(1, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            g_x.add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(100):
            g_x.add_(1.0)
    graph.replay()
    ng = max(1, args.n // 20)
    replay_total = timed(graph.replay, ng, args.repeats, lambda: None)
    record("cuda_graph_replay_call", replay_total, ng, "graph.replay() of 100 kernels, host time of the call")
    record("cuda_graph_replay_per_kernel_gpu",
           timed(graph.replay, ng, args.repeats, sync) / 100, ng * 100,
           "graph.replay() of 100 one-element kernels with the GPU drained, per kernel (GPU-side pace)")

    with open(os.path.join(args.out, "host_bench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["key", "us", "n", "what"])
        w.writeheader()
        w.writerows(rows)
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    with open(os.path.join(args.out, "host_bench.txt"), "w") as f:
        f.write(f"torch {torch.__version__} cuda {torch.version.cuda} python {platform.python_version()}\n")
        f.write(f"gpu {torch.cuda.get_device_name(0)}\ncpu {cpu}\nlogical cpus {os.cpu_count()}\n")
        f.write(f"n {args.n} repeats {args.repeats} (median of repeats)\n")


if __name__ == "__main__":
    main()
