#pragma once
// The board power limits the driver accepts for a --power-limit what-if (nvidia-smi -pl refuses others). Read with
// the other data/power.toml constants in device/board_power.cpp, the one reader of that file.
#include "device/device_spec.h"

namespace perfcast {

struct PowerLimitRange {
  double min_w = 0;
  double max_w = 0;
  bool from_board_file = false;  // nvidia-smi's published Min/Max Power Limit, not derived from the TDP
};

// The board file's power_limit_min_w / power_limit_max_w where it gives both, else data/power.toml [power_limit]'s
// fractions of its TDP.
PowerLimitRange power_limit_range(const DeviceSpec& device);

}  // namespace perfcast
