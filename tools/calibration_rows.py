"""The rows of one calibration file as `perfcast validate --json` predicts them, for the tools that study a regime.

Evaluation files (data/validation/eval_*.csv) are refused: they are frozen and nothing is chosen with them in view.
Every failure is one line on stderr and exit code 2, named after the calling tool.
"""
import json
import os
import subprocess
import sys


def fail(tool, message):
    print(f"{tool}: {message}", file=sys.stderr)
    sys.exit(2)


def validated_rows(tool, perfcast, path):
    """`perfcast validate PATH --json`'s rows, or a one-line error naming `tool`."""
    if os.path.basename(path).startswith("eval_"):
        fail(tool, "evaluation files are frozen; read calibration files only")
    try:
        out = subprocess.run([perfcast, "validate", path, "--json"], capture_output=True, text=True)
    except OSError as e:
        fail(tool, f"cannot run {perfcast}: {e.strerror}")
    if out.returncode != 0:
        fail(tool, (out.stderr.strip().splitlines() or [f"perfcast validate exited {out.returncode}"])[-1])
    return json.loads(out.stdout)["rows"]
