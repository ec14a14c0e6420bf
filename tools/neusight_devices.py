"""Which catalog GPU each measured-kernel file of NeuSight's collector (shared/kernels/neusight_train) was taken on.

Each file names its board in its Device column ("Tesla P100-PCIE-16GB"); data/kernel_fit_setup.toml [devices] maps
that name to a catalog id, the one map `perfcast fit-kernels` reads too. The tools read it here instead of keeping
their own copies. A board's architecture and SM count are its data/gpus file's.
"""
import csv
import gzip
import os
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _toml(*parts):
    with open(os.path.join(ROOT, *parts), "rb") as f:
        return tomllib.load(f)


def catalog_ids():
    """data/kernel_fit_setup.toml [devices]: the files' Device column -> catalog id."""
    return _toml("data", "kernel_fit_setup.toml")["devices"]


def catalog_id(device, tool):
    """The catalog id of a Device column; one line naming the device and exit code 2 when it has none."""
    ids = catalog_ids()
    if device not in ids:
        print(f"{tool}: device '{device}' has no catalog id in data/kernel_fit_setup.toml [devices]", file=sys.stderr)
        sys.exit(2)
    return ids[device]


def device_of_file(path):
    """The Device column of a measured file's first row ('' for a file without rows)."""
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            return r["Device"]
    return ""


def board_ids(folder, tool):
    """{file name less .csv.gz: catalog id} for the measured files in `folder` (one op's folder)."""
    out = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".csv.gz"):
            out[name[: -len(".csv.gz")]] = catalog_id(device_of_file(os.path.join(folder, name)), tool)
    return out


def gpu_spec(gpu):
    """(architecture as 'sm_80', SM count) of a catalog GPU, from data/gpus/<gpu>.toml."""
    spec = _toml("data", "gpus", gpu + ".toml")
    return "sm_" + spec["compute_capability"].replace(".", ""), spec["sm_count"]
