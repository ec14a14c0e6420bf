#!/usr/bin/env python3
"""Re-runs `perfcast validate` with some data-file constants overridden, to see how the error responds.

Usage: tools/what_if_constants.py CSV [file.toml:table.key=value ...]
  e.g. tools/what_if_constants.py data/validation/published.csv architectures.toml:sm_61.dram_efficiency=0.72

Copies data/ to a temporary folder, applies the overrides with a line edit, and prints overall, per-GPU and
per-runtime median/mean APE and bias. Used to check the sensitivity of the model to its constants (see
docs/calibration.md); it never writes to data/.
"""
import json, os, re, shutil, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
csv = sys.argv[1]
tmp = tempfile.mkdtemp()
data = os.path.join(tmp, "data")
shutil.copytree(os.path.join(root, "data"), data)
for ov in sys.argv[2:]:
    f, rest = ov.split(":", 1)
    key, val = rest.split("=", 1)
    path = os.path.join(data, f)
    text = open(path).read()
    section, _, name = key.rpartition(".")
    lines = text.split("\n")
    cur = ""
    for i, line in enumerate(lines):
        m = re.match(r"^\[([^\]]+)\]", line)
        if m:
            cur = m.group(1)
        if cur == section and re.match(rf"^{re.escape(name)}\s*=", line):
            lines[i] = f"{name} = {val}"
            break
    else:
        sys.exit(f"no {key} in {f}")
    open(path, "w").write("\n".join(lines))
env = dict(os.environ, PERFCAST_DATA=data)
out = subprocess.run([os.path.join(root, "build/release/perfcast"), "validate", csv, "--json"],
                     env=env, capture_output=True, text=True, check=True).stdout
j = json.loads(out)
o = j["overall"]
print(f"overall rows {o['rows']} median {o['median_ape_pct']:.1f} mean {o['mean_ape_pct']:.1f} "
      f"bias {o['median_bias_pct']:+.1f} within2x {o['within_2x']:.2f}")
for group in ("by_gpu", "by_runtime"):
    for k, v in j[group].items():
        print(f"  {k:16} n={v['rows']:3} median {v['median_ape_pct']:5.1f} mean {v['mean_ape_pct']:6.1f} bias {v['median_bias_pct']:+6.1f}")
shutil.rmtree(tmp)
