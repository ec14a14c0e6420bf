#!/usr/bin/env python3
"""The three memory figures of one PyTorch training job, for docs/memory.md's like-for-like comparison.

Runs the job of monitor_job.py (torchvision ResNet-50, AMP autocast FP16, SGD momentum, cudnn.benchmark, batch on
the GPU) and prints, one `key value` line each (bytes unless the key says MiB):

- context_mib: nvidia-smi's used memory of this process after CUDA is initialised with one tiny tensor (the bare
  context with lazy module loading), then after one cuBLAS GEMM and one cuDNN convolution (their handles and the
  kernels they load), each minus what the caching allocator reserved at that point;
- max_memory_allocated, max_memory_reserved: torch.cuda's peaks over the timed steps (reset after the warm-up);
- smi_used_mib: nvidia-smi --query-compute-apps used_memory of this process after the timed steps (per process: it
  leaves out the driver's reserved memory, which NVML's v1 nvmlDeviceGetMemoryInfo `used` counts);
- allocated_model_and_batch, warmup_max_memory_*: the parameters and the batch alone, and the peaks of the
  warm-up steps (cuDNN's benchmark trials included).

Run on a GPU machine only: `python3 tools/device_session/memory_probe.py --batch 128`.
"""
import argparse
import os
import subprocess

import torch

from monitor_job import resnet50_amp_job  # the same job, from this folder


def smi_used_mib():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        pid, used = (x.strip() for x in line.split(","))
        if int(pid) == os.getpid():
            return int(used)
    return -1  # inside a container nvidia-smi may not see this process's pid


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    mib = 1024 * 1024
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    print("context_mib bare", smi_used_mib() - torch.cuda.memory_reserved() / mib, flush=True)
    x = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    (x @ x).sum().item()
    torch.nn.functional.conv2d(torch.randn(8, 64, 56, 56, device="cuda", dtype=torch.float16),
                               torch.randn(64, 64, 3, 3, device="cuda", dtype=torch.float16), padding=1).sum().item()
    print("context_mib after_gemm_conv", smi_used_mib() - torch.cuda.memory_reserved() / mib, flush=True)
    del x
    torch.cuda.empty_cache()

    model, opt, scaler, loss_fn, x, y = resnet50_amp_job(a.batch)
    print("allocated_model_and_batch", torch.cuda.memory_allocated(), flush=True)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    print("warmup_max_memory_allocated", torch.cuda.max_memory_allocated(), flush=True)
    print("warmup_max_memory_reserved", torch.cuda.max_memory_reserved(), flush=True)
    torch.cuda.reset_peak_memory_stats()
    for _ in range(a.steps):
        step()
    torch.cuda.synchronize()
    print("max_memory_allocated", torch.cuda.max_memory_allocated())
    print("max_memory_reserved", torch.cuda.max_memory_reserved())
    print("memory_reserved", torch.cuda.memory_reserved())
    print("smi_used_mib", smi_used_mib())
    free, total = torch.cuda.mem_get_info()
    print("device_total_minus_free_mib", (total - free) // mib)
    print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
          "CUDA_MODULE_LOADING", os.environ.get("CUDA_MODULE_LOADING", "(unset: LAZY by default)"))


if __name__ == "__main__":
    main()
