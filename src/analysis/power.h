// What each kernel of a step draws from the board (analysis/power.cpp): the one per-kernel power rule behind
// apply_power (predict, compare, plan, advise) and the training layouts' power (analysis/llm_parallel_prediction.cpp).
#pragma once

#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/board_power.h"
#include "device/device_spec.h"

namespace perfcast {

class KernelDraw {
 public:
  // `arch` must outlive this object (BoardPower keeps its power curve). InputError when data/power.toml prices no
  // DRAM of the board's memory type.
  KernelDraw(const DeviceSpec& device, const ArchitectureProfile& arch);

  double limit_w() const { return limit_w_; }  // the board limit in force (--power-limit already replaced the TDP)
  // The board inside a running step with no kernel: clocks up (GPU Boost keeps P0 between kernels).
  double wait_w() const { return clocks_up_w_; }
  // The board's clock (of boost) while a kernel the kernel model clocked at `kernel_clock` runs.
  double board_clock(double kernel_clock) const;
  // What a kernel of this cost draws while it runs: its SM pipes at its clock and the DRAM share it moves, at least
  // the wait power and at most the limit.
  double kernel_w(const KernelCost& cost) const;

 private:
  BoardPower board_;
  double limit_w_ = 0, clocks_up_w_ = 0, measured_cap_ = 1;
  bool relative_to_measured_ = false;
};

}  // namespace perfcast
