#!/usr/bin/env python3
"""tools/pair_regimes.py's counterfactuals follow issue 13's definitions (data/what_if_pairs.toml): ratio error =
|predicted / measured - 1|, wrong side = one ratio reaches the 1.15 gain and the other does not; a row's bias is its
predicted / measured throughput - 1. Three hand-made pairs, the expected figures worked out by hand below; a fourth,
at the batch each run chose, counts only under --each-runs-batch. The wrong-side floor: pairs whose rows agree but for
data, host, source and notes form one setup, and a setup with measured ratios on both sides of 1.15 leaves
min(above, below) of them on the wrong side under any one predicted ratio.

    tests/pair_regimes_test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

HEADER = "gpu,model,runtime,mode,precision,batch,seq,runtime_version\n"


def pair(file, gpu, lines, measured, predicted, from_bias, to_bias):
    return {"varied": "precision", "from": "fp32", "to": "fp16", "file": file, "gpu": gpu, "line_from": lines[0],
            "line_to": lines[1], "runtime": "pytorch", "mode": "train", "model": "resnet50", "batch": "16",
            "measured": measured, "predicted": predicted, "error_pct": abs(predicted / measured - 1) * 100,
            "wrong_side": (measured >= 1.15) != (predicted >= 1.15), "from_bias_pct": from_bias,
            "to_bias_pct": to_bias}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    tmp = tempfile.mkdtemp()
    with open(os.path.join(tmp, "a.csv"), "w") as f:
        f.write(HEADER + "t4,resnet50,pytorch,train,fp32,16,,1.0\n" * 4)
    with open(os.path.join(tmp, "b.csv"), "w") as f:
        f.write(HEADER + "v100-pcie-16gb,resnet50,pytorch,train,fp32,16,,1.0\n" * 2)
    # P1: 20% off, right side; P2: 18.2% off, wrong side (1.10 measured, 1.30 predicted); P3: 5% off.
    pairs = [pair("a.csv", "t4", (2, 3), 2.0, 2.4, -10.0, 8.0), pair("a.csv", "t4", (4, 5), 1.10, 1.30, 0.0, 100 * (1.30 / 1.10 - 1)),
             pair("b.csv", "v100-pcie-16gb", (2, 3), 3.0, 3.15, 0.0, 5.0)]
    each = pair("b.csv", "v100-pcie-16gb", (2, 3), 1.30, 1.10, 0.0, -15.4)
    each["varied"] = "precision+batch"
    pairs.append(each)
    js = os.path.join(tmp, "pairs.json")
    with open(js, "w") as f:
        json.dump({"pairs": pairs}, f)
    env = dict(os.environ, PERFCAST_DATA=os.path.join(root, "data"))
    out = subprocess.run([sys.executable, os.path.join(root, "tools", "pair_regimes.py"), "--json", js, tmp],
                         check=True, capture_output=True, text=True, env=env).stdout
    assert "3 same-batch precision pairs: median / wrong side  18.2 / 1" in out, out
    # data/gpus: the T4 is Turing, the V100 Volta.
    rows = {l.split(" | ")[0].lstrip("| "): l for l in out.splitlines() if l.startswith("| a ") or l.startswith("| b ")}
    a, b = rows["a turing pytorch 1.0"], rows["b volta pytorch 1.0"]
    # Regime a exact: errors 0, 0, 5 -> 0.0, none wrong. Its fp32 rows exact: predicted = measured x (1 + half bias):
    # 2.16 (8%), 1.30 (18.2%, still wrong) -> median 8.0, 1 wrong. Its half rows exact: measured / (1 + fp32 bias):
    # 2.222 (11.1%), 1.10 (0%) -> errors 11.1, 0, 5 -> 5.0, none wrong.
    assert "|   0.0 / 0 |   8.0 / 1 |   5.0 / 0 |" in a, a
    # Regime b exact: errors 20, 18.2, 0 -> 18.2, 1 wrong.
    assert "|  18.2 / 1 |" in b, b
    # The listing keeps pairs over 15% or on the wrong side: P1 and P2, not P3.
    listing = out.split("Wrong-side floor")[0]
    assert listing.count("| a.csv |") == 2 and "| b.csv |" not in listing, out
    # P1 and P2 read identical rows of a.csv (one setup) and measure 2.0 and 1.10, either side of 1.15: one of them is
    # on the wrong side whatever ratio the setup is given. P3 is a setup alone. Floor 1 of 3; P2 is wrong now.
    assert "Wrong-side floor: 2 setups" in out and "at least 1 of 3 pairs on the wrong side (now 1)" in out, out
    # The each-run's-batch pair alone: 1.30 measured, 1.10 predicted, 15.4% off and on the wrong side.
    out = subprocess.run([sys.executable, os.path.join(root, "tools", "pair_regimes.py"), "--json", js, "--each-runs-batch",
                          tmp], check=True, capture_output=True, text=True, env=env).stdout
    assert "1 each-run's-batch precision pairs: median / wrong side  15.4 / 1" in out, out
    print("ok")


if __name__ == "__main__":
    main()
