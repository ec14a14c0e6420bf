#pragma once
// How a board's power follows its clock, and what a busy tensor pipe draws against a busy CUDA-core pipe, per
// architecture (data/architectures.toml power_clock_exponent, tensor_power_fraction; docs/calibration.md,
// "Ada and Hopper FP32 kernels, session 16"). The power model's board watts at boost come from
// ArchitectureProfile::sm_power_w; this curve (ArchitectureProfile::power, read with the other architecture values)
// says how the clock trades against them.
#include "device/device_spec.h"

namespace perfcast {

struct PowerCurve {
  // Board power under a fixed load goes as clock^clock_exponent: 3 where voltage follows the clock (P ~ f V^2,
  // V ~ f), lower where a power-limited board runs near its voltage floor.
  double clock_exponent = 3;
  // Board power per unit of tensor-pipe activity over the CUDA-core pipes' (1 = the same).
  double tensor_power_fraction = 1;

  // Board power at clock factor f (of boost) relative to at boost.
  double at_clock(double f) const;
  // Clock factor at which a load drawing load_w at boost draws limit_w; 1 when it fits (or no limit is known).
  double clock_at_power(double limit_w, double load_w) const;
  // The activity (busy share of the pipe at boost) the power model charges for `activity` on `pipe`.
  double charged_activity(Pipe pipe, double activity) const;
};

}  // namespace perfcast
