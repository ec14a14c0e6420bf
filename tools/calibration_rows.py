"""The rows of one calibration file as `perfcast validate --json` predicts them, for the tools that study a regime.

Evaluation files are refused: they are frozen and nothing is chosen with them in view. They are the
data/validation/eval_*.csv files except the three that count as calibration (data/interval_setup.toml
eval_named_calibration_files: eval_cpu.csv, eval_llm_parallel.csv, eval_recsys.csv; data/validation/README.md).
Every failure is one line on stderr and exit code 2, named after the calling tool.
"""
import json
import os
import re
import subprocess
import sys


def fail(tool, message):
    print(f"{tool}: {message}", file=sys.stderr)
    sys.exit(2)


def calibration_named_eval_files():
    """The eval_*-named files that count as calibration, as data/interval_setup.toml lists them."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "data", "interval_setup.toml")) as f:
        m = re.search(r"^eval_named_calibration_files\s*=\s*\[([^\]]*)\]", f.read(), re.M)
    return set(re.findall(r'"([^"]+)"', m.group(1))) if m else set()


def validated_rows(tool, perfcast, path):
    """`perfcast validate PATH --json`'s rows, or a one-line error naming `tool`."""
    name = os.path.basename(path)
    if name.startswith("eval_") and name not in calibration_named_eval_files():
        fail(tool, f"{name} is an evaluation file: frozen, read calibration files only")
    try:
        out = subprocess.run([perfcast, "validate", path, "--json"], capture_output=True, text=True)
    except OSError as e:
        fail(tool, f"cannot run {perfcast}: {e.strerror}")
    if out.returncode != 0:
        fail(tool, (out.stderr.strip().splitlines() or [f"perfcast validate exited {out.returncode}"])[-1])
    try:
        return json.loads(out.stdout)["rows"]
    except (ValueError, KeyError):
        fail(tool, f"perfcast validate printed no JSON report for {path}")
