#pragma once
// Board power of one running kernel (data/power.toml, sm_power_w and the power curve in data/architectures.toml):
//   P = P_idle + (P_full - P_idle) x curve(clock) x activity + P_dram x dram_share.
// One place for the terms: the power report charges each kernel with them (analysis/power.cpp), and the kernel
// model's clock under the limit solves them for the clock at which the kernel's draw meets the limit
// (cost/kernel_cost.cpp, where data/power.toml [kernel_clock] whole_board_draw is on).
#include <string>
#include <vector>

#include "device/architecture.h"
#include "device/device_spec.h"

namespace perfcast {

// What a kernel keeps busy, as the power model reads it: shares of the kernel's time at the clock asked.
struct KernelLoad {
  Pipe pipe = Pipe::kFp32;
  double compute_us = 0;        // math time per launch at boost (scales as 1 / clock)
  double memory_us = 0;         // DRAM time per launch (does not depend on the SM clock)
  double floor_us = 0;          // launch / latency floor per launch
  double shape_efficiency = 1;  // how well a GEMM's tile grid fills the SMs (1 for streaming kernels)
};

class BoardPower {
 public:
  // `device.tdp_w` is the limit (--power-limit replaces it); the idle power follows the rated TDP.
  BoardPower(const DeviceSpec& device, const ArchitectureProfile& arch);

  double limit_w() const { return limit_w_; }
  double idle_w() const { return idle_w_; }  // at rest: clocks down, no process
  double dynamic_full_w() const { return dynamic_full_w_; }  // full compute load at boost, less the idle power
  double dram_w() const { return dram_w_; }  // DRAM interface at the achievable bandwidth
  bool memory_type_known() const { return memory_type_known_; }  // dram_pj_per_bit has the board's memory type
  // The board with its clocks at `clock` (of boost) and no kernel: what waits inside a running step draw.
  double clocks_up_w(double clock) const;

  // SM activity of a kernel busy computing `compute_share` and moving DRAM `dram_share` of its time
  // (a tensor pipe charged with tensor_power_fraction).
  double activity(Pipe pipe, double compute_share, double dram_share, double shape_efficiency) const;
  // Board draw at `clock` of a kernel of this activity and DRAM share (neither floored at the clocks-up power nor
  // capped at the limit: the power report does both).
  double kernel_w(double clock, double activity, double dram_share) const;
  // Board draw of `load` running at `clock`: its shares taken at that clock.
  double load_w(const KernelLoad& load, double clock) const;
  // The highest clock (of boost, at most 1) at which `load` draws no more than `limit_w`.
  double clock_at_limit(const KernelLoad& load, double limit_w) const;

  // data/power.toml [kernel_clock] whole_board_draw: the kernel model's clock from this draw (on) or from the full
  // load x the pipes' busy share alone (off).
  static bool whole_board_clock();

 private:
  const PowerCurve& curve_;
  double limit_w_ = 0, idle_w_ = 0, dynamic_full_w_ = 0, dram_w_ = 0;
  double memory_activity_ = 0, shape_floor_ = 0, clocks_up_activity_ = 0;
  bool memory_type_known_ = false;
};

// Names of the memory types data/power.toml prices (for the unknown-type message).
std::vector<std::string> priced_memory_types();

}  // namespace perfcast
