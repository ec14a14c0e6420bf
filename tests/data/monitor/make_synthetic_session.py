#!/usr/bin/env python3
"""Writes synthetic_h200_input_bound.csv: a SYNTHETIC `perfcast monitor` session (not a measurement).

The values are chosen, not measured, so that the replay tests can check the analysis against figures known by
construction (README.md in this folder lists them). Deterministic: no randomness, run it again to get the same file.

    python3 tests/data/monitor/make_synthetic_session.py > tests/data/monitor/synthetic_h200_input_bound.csv
"""

HEADER = ("time_s,gpu,name,util_gpu_pct,util_mem_pct,mem_used_mib,mem_total_mib,power_w,power_limit_w,sm_clock_mhz,"
          "sm_clock_max_mhz,mem_clock_mhz,pcie_tx_mb_per_s,pcie_rx_mb_per_s,temperature_c,throttle_mask,throttle_reasons")
ROUNDS = 40          # one round per second
JOB = range(3, 37)   # rounds 3..36 run the job on GPU 0: 3 idle rounds before it, 3 after
TOTAL_MIB = 143771   # what an H200's driver reports (the nvidia-smi reading in .library/device/KINDS.md)


def row(t, gpu, util, mem_util, used_mib, power, clock, rx, tx, temp, mask, words):
    return (f"{t:.3f},{gpu},NVIDIA H200,{util},{mem_util},{used_mib},{TOTAL_MIB},{power:.1f},700.0,{clock},1980,3201,"
            f"{tx:.1f},{rx:.1f},{temp},{mask:#x},{words}")


def main():
    print("# SYNTHETIC session, not a measurement: values chosen by tests/data/monitor/make_synthetic_session.py "
          "(see README.md there) to test perfcast monitor --replay")
    print(HEADER)
    for t in range(ROUNDS):
        if t in JOB:
            # An input-bound job: busy 40% and 50% in turn (mean 45%), 30 GiB in use, 300/340 W (mean 320 W),
            # full boost clock, 2 GB/s of host-to-GPU copies.
            busy = t % 2 == 1
            print(row(t, 0, 50 if busy else 40, 20 if busy else 16, 30720, 340.0 if busy else 300.0, 1980,
                      2000.0, 100.0, 45, 0, ""))
        else:
            print(row(t, 0, 0, 0, 512, 75.0, 345, 0.0, 0.0, 30, 0x1, "idle"))
        # GPU 1 stays idle the whole session.
        print(row(t, 1, 0, 0, 512, 74.0, 345, 0.0, 0.0, 29, 0x1, "idle"))


if __name__ == "__main__":
    main()
