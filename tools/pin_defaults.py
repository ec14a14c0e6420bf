#!/usr/bin/env python3
"""Write the host a validation row was predicted with into its `host` column where it left it empty.

When data/defaults.toml's default host moved from desktop-6c to a cloud host (session 11), the calibration rows that
had relied on the old default were made to state it. A file without a `host` column gets one (appended last).
Usage: tools/pin_defaults.py HOST FILE...   (e.g. tools/pin_defaults.py desktop-6c data/validation/published.csv)
Every other byte of the file is kept; evaluation files (every data/validation/eval_*.csv: frozen when added, data/validation/README.md) are refused.
"""
import csv
import io
import os
import sys



def rows_of(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def write(rows, lineterminator):
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator=lineterminator).writerows(rows)
    return out.getvalue()


def frozen(path):
    name = os.path.basename(path)
    return name.startswith("eval_") and name.endswith(".csv")


def pin(path, host):
    if frozen(path):
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
