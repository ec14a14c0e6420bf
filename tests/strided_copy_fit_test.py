#!/usr/bin/env python3
"""data/cost_model.toml says [memory] strided_copy_elements_per_sm_clk is fitted by tools/fit_strided_copy.py to the
H200 profile: the tool, reading the board's TOML with a TOML parser, still prints the shipped sm_90 value.

    tests/strided_copy_fit_test.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tomllib


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sys.path.insert(0, os.path.join(root, "tools"))
    from fit_strided_copy import toml_number  # noqa: E402

    gpu = os.path.join(root, "data", "gpus", "h200-sxm-141gb.toml")
    # NVIDIA's H200 SXM: 132 SMs (the H100 SXM's GH100 configuration); keys in a table are read from it.
    assert toml_number(gpu, "sm_count") == 132, toml_number(gpu, "sm_count")
    with open(gpu, "rb") as f:
        assert toml_number(gpu, "measured.dram_efficiency") == tomllib.load(f)["measured"]["dram_efficiency"]
    try:
        toml_number(gpu, "no_such_key")
        raise AssertionError("no KeyError for a missing key")
    except KeyError:
        pass

    out = subprocess.run([sys.executable, os.path.join(root, "tools", "fit_strided_copy.py")], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"strided_copy_elements_per_sm_clk = ([0-9.]+)", out)
    assert m, out
    with open(os.path.join(root, "data", "cost_model.toml"), "rb") as f:
        shipped = tomllib.load(f)["memory"]["strided_copy_elements_per_sm_clk"]["sm_90"]
    assert float(m.group(1)) == shipped, (m.group(1), shipped)
    print("ok")


if __name__ == "__main__":
    main()
