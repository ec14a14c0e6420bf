#!/usr/bin/env python3
"""Measure PyTorch training/inference throughput on the GPU this runs on, for perfcast's validation files.

Written for a session that is lent a GPU machine (see tools/device_session/README.md). Each configuration is
timed with CUDA events after warm-up, on synthetic data already on the GPU, and written as a row in the format
of data/validation/*.csv (metric samples_per_s). A few configurations are also run under torch.profiler and
their kernel names and times are written out, to check which kernels the framework launches (cuDNN algorithm
choice, eager attention's elementwise kernels).

Usage: python3 measure.py --gpu-id h200-sxm-141gb --out DIR [--budget-s 360]
"""
import argparse
import csv
import os
import sys
import time
import traceback


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu-id", required=True, help="perfcast catalog id of this GPU (e.g. h200-sxm-141gb)")
    p.add_argument("--out", required=True, help="folder for the CSV, the kernel lists and the log")
    p.add_argument("--configs", choices=["main", "batch-sweep"], default="main", help="which list to run")
    p.add_argument("--budget-s", type=float, default=360.0, help="stop starting new configurations after this")
    return p.parse_args()


def timed_steps(step, warmup, iters, torch):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        step()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters  # seconds per step


def cnn(name, torchvision):
    if name == "resnet50_v1_5":
        return torchvision.models.resnet50()
    if name == "vgg16":
        return torchvision.models.vgg16()
    if name == "resnet152":
        return torchvision.models.resnet152()
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2()
    if name == "shufflenet_v2_x1_0":
        return torchvision.models.shufflenet_v2_x1_0()
    if name == "inception_v3":
        return torchvision.models.inception_v3(aux_logits=False, init_weights=False)
    raise ValueError(name)


def cnn_step(model_id, mode, precision, batch, channels_last, torch, torchvision):
    size = 299 if model_id == "inception_v3" else 224
    model = cnn(model_id, torchvision).cuda()
    x = torch.randn(batch, 3, size, size, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    amp_dtype = {"amp": torch.float16, "amp-bf16": torch.bfloat16}.get(precision)
    if mode == "infer":
        model.eval()

        def step():
            with torch.no_grad(), torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
                model(x)
        return step
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "amp")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


def bert_step(model_id, mode, precision, batch, seq, torch):
    import transformers
    cfg = transformers.BertConfig() if model_id == "bert_base" else transformers.BertConfig(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
    # The textbook (eager) attention perfcast's pytorch profile costs, not SDPA.
    try:
        model = transformers.BertForPreTraining._from_config(cfg, attn_implementation="eager").cuda()
    except Exception:
        cfg._attn_implementation = "eager"
        model = transformers.BertForPreTraining(cfg).cuda()
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")
    labels = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")
    nsp = torch.randint(0, 2, (batch,), device="cuda")
    amp_dtype = {"amp": torch.float16, "amp-bf16": torch.bfloat16}.get(precision)
    if mode == "infer":
        model.eval()

        def step():
            with torch.no_grad(), torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
                model(input_ids=ids)
        return step
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "amp")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype, enabled=amp_dtype is not None):
            out = model(input_ids=ids, labels=labels, next_sentence_label=nsp)
        scaler.scale(out.loss).backward()
        scaler.step(opt)
        scaler.update()
    return step


# (model, mode, precision, batch, seq, layout): perfcast names; fp32 = PyTorch defaults, tf32 = TF32 matmuls too.
CONFIGS = [
    ("resnet50_v1_5", "train", "amp", 256, 0, "nhwc"),
    ("resnet50_v1_5", "train", "amp", 256, 0, ""),
    ("resnet50_v1_5", "train", "tf32", 256, 0, ""),
    ("resnet50_v1_5", "train", "fp32", 128, 0, ""),
    ("resnet50_v1_5", "infer", "amp", 256, 0, "nhwc"),
    # Host-bound steps (issue 13): eager PyTorch at batch 1 and light models at batch 12, where the GPU waits on
    # Python dispatch; the host CPU is in log.txt (lscpu).
    ("resnet50_v1_5", "infer", "fp32", 1, 0, ""),
    ("bert_base", "infer", "fp32", 1, 128, ""),
    ("shufflenet_v2_x1_0", "train", "fp32", 12, 0, ""),
    ("mobilenet_v2", "train", "fp32", 12, 0, ""),
    ("resnet50_v1_5", "infer", "fp32", 256, 0, ""),
    ("resnet50_v1_5", "train", "amp-bf16", 256, 0, "nhwc"),
    ("vgg16", "infer", "fp32", 64, 0, ""),
    ("vgg16", "train", "amp", 128, 0, "nhwc"),
    ("inception_v3", "train", "amp", 128, 0, "nhwc"),
    ("bert_base", "train", "amp", 32, 128, ""),
    ("bert_base", "train", "amp", 16, 512, ""),
    ("bert_base", "train", "tf32", 32, 128, ""),
    ("bert_base", "infer", "amp", 64, 128, ""),
    ("bert_large", "train", "amp", 16, 128, ""),
]
# The second call of a session (--configs batch-sweep): where the host stops bounding the step, batch by batch, in
# inference (FP32 and AMP) and AMP training.
CONFIGS_BATCH_SWEEP = [
    ("resnet50_v1_5", "infer", "fp32", b, 0, "") for b in (2, 4, 8, 16, 32, 64)
] + [
    ("resnet50_v1_5", "infer", "amp", b, 0, "nhwc") for b in (1, 4, 16, 64)
] + [
    ("resnet50_v1_5", "train", "amp", b, 0, "nhwc") for b in (8, 32, 128)
] + [
    ("bert_base", "infer", "fp32", b, 128, "") for b in (4, 16)
] + [
    ("bert_base", "infer", "amp", b, 128, "") for b in (1, 8)
] + [
    ("mobilenet_v2", "infer", "fp32", 1, 0, ""),
    ("shufflenet_v2_x1_0", "infer", "fp32", 1, 0, ""),
    ("resnet152", "train", "fp32", 32, 0, ""),
    ("resnet152", "train", "amp", 64, 0, "nhwc"),
    ("vgg16", "train", "fp32", 64, 0, ""),
]
PROFILE = {("vgg16", "infer", "fp32"), ("bert_base", "train", "amp"), ("resnet50_v1_5", "train", "amp")}


def main():
    args = parse()
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, f"log_{args.configs}.txt"), "w")
    t0 = time.time()
    import torch
    import torchvision
    props = torch.cuda.get_device_properties(0)
    env = (f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
           f"{props.name}, {props.multi_processor_count} SMs")
    print(env, file=log, flush=True)
    try:
        import subprocess
        print(subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout, file=log, flush=True)
    except Exception as e:
        print(f"lscpu: {e}", file=log, flush=True)
    torch.backends.cudnn.benchmark = True
    rows = []
    kernels = open(os.path.join(args.out, f"kernels_{args.configs}.txt"), "w")
    for model_id, mode, precision, batch, seq, layout in (CONFIGS if args.configs == "main" else CONFIGS_BATCH_SWEEP):
        if time.time() - t0 > args.budget_s:
            print(f"budget reached, skipping {model_id} {mode} {precision}", file=log, flush=True)
            continue
        # PyTorch's defaults (what perfcast's "fp32" means for PyTorch >= 1.12): TF32 convolutions, FP32 matmuls.
        tf32 = precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = True
        try:
            if model_id.startswith("bert"):
                step = bert_step(model_id, mode, precision, batch, seq, torch)
            else:
                step = cnn_step(model_id, mode, precision, batch, layout == "nhwc", torch, torchvision)
            s = timed_steps(step, warmup=5, iters=20, torch=torch)
            rate = batch / s
            note = (f"measured by tools/device_session/measure.py: {env}; synthetic data on the GPU; "
                    f"cudnn.benchmark on; TF32 convolutions on, TF32 matmuls {'on' if tf32 else 'off'}; "
                    f"{'torch.autocast ' + precision if precision.startswith('amp') else precision}; "
                    f"{'channels_last; ' if layout == 'nhwc' else ''}"
                    f"{'SGD momentum' if not model_id.startswith('bert') else 'AdamW, HF BertForPreTraining eager attention'}; "
                    f"mean of 20 steps after 5 warm-up ({s * 1e3:.2f} ms per step)")
            rows.append({"gpu": args.gpu_id, "model": model_id, "runtime": "pytorch", "mode": mode,
                         "precision": "amp-bf16" if precision == "amp-bf16" else precision, "batch": batch,
                         "seq": seq or "", "n_gpus": 1, "data": "synthetic", "optimizer_step": "",
                         "metric": "samples_per_s", "value": f"{rate:.4g}",
                         "source": "perfcast device session (tools/device_session)", "layout": layout,
                         "conv_algo": "autotune", "attention": "eager" if model_id.startswith("bert") else "",
                         "notes": note, "runtime_version": torch.__version__.split("+")[0].rsplit(".", 1)[0]})
            print(f"{model_id} {mode} {precision} b{batch} s{seq} {layout}: {rate:.1f}/s", file=log, flush=True)
            if (model_id, mode, precision) in PROFILE:
                from torch.profiler import ProfilerActivity, profile
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(3):
                        step()
                    torch.cuda.synchronize()
                print(f"== {model_id} {mode} {precision} b{batch} s{seq} {layout}", file=kernels)
                print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=90),
                      file=kernels, flush=True)
        except Exception:
            print(f"FAILED {model_id} {mode} {precision}:\n{traceback.format_exc()}", file=log, flush=True)
        finally:
            torch.cuda.empty_cache()
    fields = ["gpu", "model", "runtime", "mode", "precision", "batch", "seq", "n_gpus", "data", "optimizer_step",
              "metric", "value", "source", "layout", "conv_algo", "attention", "notes", "runtime_version"]
    with open(os.path.join(args.out, f"measured_pytorch_{args.configs}.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"done in {time.time() - t0:.0f} s, {len(rows)} rows", file=log, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
