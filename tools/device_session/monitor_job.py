#!/usr/bin/env python3
"""A PyTorch training job for record_monitor.sh to watch: ResNet-50 (torchvision), AMP, SGD, for a fixed time.

--phase gpu: the batch lives on the GPU (synthetic data): the GPU should be busy nearly all the time.
--phase host: each batch is made on the host (random pixels normalised with numpy on one core, then copied from
pageable memory), as a slow input pipeline would hand it over: the GPU should wait for its input.

Prints the steps, the images per second and the batch; run on a GPU machine only (see README.md here).
"""
import argparse
import time

import numpy as np
import torch
import torchvision


def resnet50_amp_job(batch):
    """The job both this script and memory_probe.py run: ResNet-50, SGD momentum, AMP's scaler, a batch on the GPU."""
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    return model, opt, scaler, loss_fn, x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--phase", choices=["gpu", "host"], required=True)
    p.add_argument("--seconds", type=float, default=40)
    p.add_argument("--batch", type=int, default=128)
    a = p.parse_args()
    model, opt, scaler, loss_fn, x_gpu, y = resnet50_amp_job(a.batch)
    rng = np.random.default_rng(0)
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(1, 3, 1, 1)

    def batch():
        if a.phase == "gpu":
            return x_gpu
        pixels = rng.integers(0, 256, size=(a.batch, 3, 224, 224), dtype=np.uint8)
        x = (pixels.astype(np.float32) / 255.0 - mean) / std
        return torch.from_numpy(x).cuda()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(batch()), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(5):  # cuDNN's autotuning and the allocator's first blocks, before the watched span
        step()
    torch.cuda.synchronize()
    print("warm", flush=True)  # record_monitor.sh starts perfcast monitor at this line
    steps = 0
    start = time.monotonic()
    while time.monotonic() - start < a.seconds:
        step()
        steps += 1
    torch.cuda.synchronize()
    took = time.monotonic() - start
    print(f"phase {a.phase}: {steps} steps in {took:.1f} s, {steps * a.batch / took:.1f} images/s, batch {a.batch}")


if __name__ == "__main__":
    main()
