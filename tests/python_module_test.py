"""`import perfcast` (python/perfcast_module.cpp) against the perfcast binary of the same build: each function
returns the binary's --json output as Python objects, and bad input raises perfcast.InputError with the message the
binary prints after "perfcast: error: ". Run by ctest with Debian's /usr/bin/python3:
    python_module_test.py <folder of perfcast.*.so> <perfcast binary> <source dir>"""
import json
import os
import subprocess
import sys
import unittest

MODULE_DIR, BINARY, SOURCE_DIR = sys.argv[1:4]
sys.path.insert(0, MODULE_DIR)
import perfcast  # noqa: E402


def cli(*args):
    """The binary's result for `perfcast <args> --json`: (exit code, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "PERFCAST_GPU_PATH"}
    r = subprocess.run([BINARY, *args, "--json"], capture_output=True, text=True, env=env, check=False)
    return r.returncode, r.stdout, r.stderr


def cli_json(*args):
    code, out, err = cli(*args)
    assert code == 0, err
    return json.loads(out)


class PythonModuleTest(unittest.TestCase):
    def test_commands_return_the_cli_json(self):
        self.assertEqual(perfcast.predict(gpu="gtx-1080-ti", model="resnet152", batch=32, precision="amp"),
                         cli_json("predict", "--gpu", "gtx-1080-ti", "--model", "resnet152", "--batch", "32",
                                  "--precision", "amp"))
        self.assertEqual(perfcast.advise(gpu="a100-sxm4-40gb", model="resnet50", batch=64, gpus=3),
                         cli_json("advise", "--gpu", "a100-sxm4-40gb", "--model", "resnet50", "--batch", "64",
                                  "--gpus", "3"))
        self.assertEqual(perfcast.compare(gpu="gtx-1080-ti:3,a100-sxm4-40gb", model="resnet152"),
                         cli_json("compare", "--gpu", "gtx-1080-ti:3,a100-sxm4-40gb", "--model", "resnet152"))
        # Underscores stand for dashes (max_gpus is --max-gpus).
        self.assertEqual(perfcast.plan(model="resnet50", deadline="24h", max_gpus=8),
                         cli_json("plan", "--model", "resnet50", "--deadline", "24h", "--max-gpus", "8"))
        self.assertEqual(perfcast.op(gpu="v100-sxm2-16gb", op="matmul", m=4096, n=4096, k=4096, precision="fp16"),
                         cli_json("op", "--gpu", "v100-sxm2-16gb", "--op", "matmul", "--m", "4096", "--n", "4096",
                                  "--k", "4096", "--precision", "fp16"))
        csv = os.path.join(SOURCE_DIR, "data", "validation", "check_pascal.csv")
        self.assertEqual(perfcast.validate(file=csv), cli_json("validate", csv))
        # A profiler trace (tests/data/kineto): what `perfcast trace FILE --json` prints.
        trace = os.path.join(SOURCE_DIR, "tests", "data", "kineto", "sampled_rank-1.json.gz")
        self.assertEqual(perfcast.trace(file=trace, gpu="a100-sxm4-40gb"),
                         cli_json("trace", trace, "--gpu", "a100-sxm4-40gb"))

    def test_flags_and_argv(self):
        expected = cli_json("predict", "--model", "resnet50", "--batch", "16", "--checkpointing")
        self.assertEqual(perfcast.predict(model="resnet50", batch=16, checkpointing=True, cuda_graphs=False), expected)
        self.assertEqual(perfcast.predict(["--model", "resnet50", "--batch", "16", "--checkpointing"]), expected)

    def test_errors_carry_the_cli_message(self):
        code, _, err = cli("predict", "--gpu", "gtx-1080-tj")
        self.assertEqual(code, 2)
        with self.assertRaises(perfcast.InputError) as caught:
            perfcast.predict(gpu="gtx-1080-tj")
        self.assertEqual("perfcast: error: " + str(caught.exception) + "\n", err)
        self.assertIn("did you mean 'gtx-1080-ti'", str(caught.exception))
        self.assertTrue(issubclass(perfcast.InputError, ValueError))
        with self.assertRaises(perfcast.InputError):
            perfcast.predict(model="resnet50", batch=object())
        with self.assertRaises(TypeError):
            perfcast.predict(["--batch", "8"], model="resnet50")
        # An argv list whose last flag lacks its value fails as `perfcast predict --model` does, not with
        # "unknown model '--json'" (the --json the module added was taken as the value).
        r = subprocess.run([BINARY, "predict", "--model"], capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 2)
        with self.assertRaises(perfcast.InputError) as dangling:
            perfcast.predict(["--model"])
        self.assertEqual("perfcast: error: " + str(dangling.exception) + "\n", r.stderr)
        # A 100 kB id comes back clipped, as the CLI prints it (core/echoed_values.h), not as a 100 kB message.
        long_id = "x" * 100000
        r = subprocess.run([BINARY, "predict", "--model", "resnet50", "--gpu", long_id], capture_output=True, text=True,
                           check=False)
        self.assertEqual(r.returncode, 2)
        with self.assertRaises(perfcast.InputError) as clipped:
            perfcast.predict(model="resnet50", gpu=long_id)
        self.assertLess(len(str(clipped.exception)), 1000)
        self.assertEqual("perfcast: error: " + str(clipped.exception) + "\n", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]], verbosity=2)
