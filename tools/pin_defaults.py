#!/usr/bin/env python3
"""Write the host a validation row was predicted with into its `host` column where it left it empty.

When data/defaults.toml's default host moved from desktop-6c to a cloud host (session 11), the calibration rows that
had relied on the old default were made to state it. A file without a `host` column gets one (appended last).
Usage: tools/pin_defaults.py HOST FILE...   (e.g. tools/pin_defaults.py desktop-6c data/validation/published.csv)
Every other byte of the file is kept; frozen evaluation files (FROZEN below, the list data/validation/README.md gives) are refused.
"""
import csv
import io
import sys

FROZEN = ("eval_torchvision_b12.csv", "eval_cpu.csv", "eval_gpu_fresh.csv", "eval_cpu_fresh.csv", "eval_gpu_s12.csv", "eval_cpu_s12.csv", "eval_gpu_s13.csv", "eval_gpu_s16.csv", "eval_gpu_s17.csv", "eval_gpu_s18.csv", "eval_gpu_s18b.csv", "eval_gpu_s19.csv", "eval_gpu_s20.csv", "eval_gpu_s21.csv", "eval_cpu_s21.csv", "eval_gpu_s22.csv", "eval_gpu_s23.csv", "eval_gpu_s24.csv", "eval_gpu_s24b.csv", "eval_gpu_s25.csv", "eval_gpu_s26.csv", "eval_gpu_s26b.csv", "eval_gpu_s27.csv", "eval_gpu_s27b.csv", "eval_cpu_s27.csv", "eval_gpu_s27c.csv", "eval_gpu_s28.csv", "eval_gpu_s28c.csv", "eval_gpu_s28b.csv", "eval_cpu_s28.csv", "eval_gpu_s28d.csv", "eval_gpu_s29.csv", "eval_gpu_s29b.csv", "eval_cpu_s29.csv", "eval_gpu_s29c.csv", "eval_gpu_s30.csv", "eval_gpu_s30b.csv", "eval_gpu_s30c.csv", "eval_gpu_s31.csv", "eval_gpu_s31b.csv", "eval_gpu_s31c.csv", "eval_gpu_s32.csv", "eval_gpu_s32b.csv", "eval_gpu_s32c.csv", "eval_gpu_s33.csv", "eval_gpu_s33b.csv", "eval_gpu_s33c.csv", "eval_gpu_s34.csv", "eval_gpu_s34b.csv", "eval_cpu_s34.csv", "eval_gpu_s35.csv", "eval_gpu_s35b.csv", "eval_gpu_s36.csv", "eval_cpu_s36.csv", "eval_gpu_s36b.csv", "eval_gpu_s37b.csv", "eval_gpu_s37.csv", "eval_gpu_s37c.csv", "eval_gpu_s38.csv", "eval_cpu_s38.csv", "eval_gpu_s38b.csv")


def rows_of(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def write(rows, lineterminator):
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator=lineterminator).writerows(rows)
    return out.getvalue()


def pin(path, host):
    if path.endswith(FROZEN):
        sys.exit(f"{path}: a frozen evaluation file is never edited")
    with open(path, newline="") as f:
        text = f.read()
    term = "\r\n" if "\r\n" in text else "\n"
    rows = rows_of(text)
    # Rewriting must reproduce the file byte for byte before any cell changes, or the edit would touch other rows.
    if write(rows, term) != text:
        sys.exit(f"{path}: the csv module does not reproduce the file byte for byte; edit it by hand")
    header = rows[0]
    if "host" not in header:
        header.append("host")
        for r in rows[1:]:
            if r:
                r.append("")
    col = header.index("host")
    n = 0
    for r in rows[1:]:
        if r and not r[col]:
            r[col] = host
            n += 1
    with open(path, "w", newline="") as f:
        f.write(write(rows, term))
    print(f"{path}: {n} rows now state host {host}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for p in sys.argv[2:]:
        pin(p, sys.argv[1])
