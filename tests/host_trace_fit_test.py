#!/usr/bin/env python3
"""docs/host-trace-fit.md is what tools/host_trace_costs.py prints for tests/data/kineto, and the per-op keys of
data/runtimes/pytorch.toml are its fit rounded to whole microseconds (docs/host-model.md).

Usage: host_trace_fit_test.py SOURCE_DIR
"""
import glob, os, re, subprocess, sys, tomllib

root = sys.argv[1]
traces = sorted(glob.glob(os.path.join(root, "tests/data/kineto/*.json.gz")))
out = subprocess.run([sys.executable, os.path.join(root, "tools/host_trace_costs.py")] +
                     [os.path.relpath(t, root) for t in traces], cwd=root, capture_output=True, text=True,
                     check=True).stdout
doc = open(os.path.join(root, "docs/host-trace-fit.md")).read()
if out != doc:
    sys.exit("docs/host-trace-fit.md is stale: rerun tools/host_trace_costs.py --markdown docs/host-trace-fit.md "
             "tests/data/kineto/*.json.gz")
with open(os.path.join(root, "data/runtimes/pytorch.toml"), "rb") as f:
    rt = tomllib.load(f)
fitted = dict(re.findall(r"^\| (host_\w+) \| ([0-9.]+) \|", out, re.M))
if len(fitted) != 7:
    sys.exit(f"expected seven fitted keys, found {sorted(fitted)}")
for key, value in fitted.items():
    if abs(rt[key] - float(value)) > 1.0:
        sys.exit(f"pytorch.toml {key} = {rt[key]} but the traces fit {value}")
print("ok:", ", ".join(f"{k}={v}" for k, v in fitted.items()))
