"""The sweep of docs/python.md: ResNet-50 training with AMP, batch size against predicted throughput and memory on
three GPUs, with `import perfcast`. Run from the repository root after a build:
    /usr/bin/python3 docs/python_sweep.py build/release/python docs/python_sweep.png"""
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else "build/release/python")
import matplotlib  # noqa: E402

matplotlib.use("Agg")  # no display: write the PNG
import matplotlib.pyplot as plt  # noqa: E402
import perfcast  # noqa: E402

gpus = ["gtx-1080-ti", "v100-sxm2-16gb", "a100-sxm4-40gb"]
batches = [8, 16, 32, 64, 128, 256, 512]

# One prediction per GPU and batch: the dict is `perfcast predict --json`.
rows = []
for gpu in gpus:
    for batch in batches:
        p = perfcast.predict(gpu=gpu, model="resnet50", mode="train", precision="amp", batch=batch)
        rows.append({"gpu": gpu, "batch": batch, "fits": p["fits"],
                     "samples_per_s": p["throughput"]["samples_per_s"] if p["fits"] else None,
                     "memory_gb": p["memory"]["total_bytes"] / 1e9,
                     "capacity_gb": p["memory"]["capacity_bytes"] / 1e9})

print(f"{'gpu':<16} {'batch':>5} {'samples/s':>10} {'memory GB':>10} {'fits':>5}")
for r in rows:
    sps = f"{r['samples_per_s']:.0f}" if r["fits"] else "-"
    print(f"{r['gpu']:<16} {r['batch']:>5} {sps:>10} {r['memory_gb']:>10.1f} {str(r['fits']):>5}")

fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
for gpu, colour in zip(gpus, ["tab:green", "tab:blue", "tab:red"]):
    mine = [r for r in rows if r["gpu"] == gpu]
    fit = [r for r in mine if r["fits"]]
    ax_t.plot([r["batch"] for r in fit], [r["samples_per_s"] for r in fit], "o-", color=colour, label=gpu)
    ax_m.plot([r["batch"] for r in mine], [r["memory_gb"] for r in mine], "o-", color=colour, label=gpu)
    ax_m.axhline(mine[0]["capacity_gb"], color=colour, linestyle=":", linewidth=1)
for ax in (ax_t, ax_m):
    ax.set_xscale("log", base=2)
    ax.set_xticks(batches, [str(b) for b in batches])
    ax.set_xlabel("batch per GPU")
    ax.grid(True, alpha=0.3)
ax_t.set_ylabel("predicted samples/s")
ax_t.set_title("ResNet-50 training, AMP: throughput")
ax_m.set_yscale("log")
ax_m.set_ylabel("predicted memory (GB); dotted: capacity")
ax_m.set_title("memory (a point above its line does not fit)")
ax_t.legend()
fig.tight_layout()
fig.savefig(sys.argv[2] if len(sys.argv) > 2 else "docs/python_sweep.png", dpi=110)
