// A whole run's time, money and energy, and the hardware it powers beside its GPUs' boards. analysis/cloud.cpp
// computes them (cost_of_run, powered_hardware); compare's rows, plan's options (analysis/) and a training layout
// (schedule/llm_parallel.h ParallelTrainingCost) each hold one RunCost, so the fields live here, below both.
#pragma once

#include <optional>
#include <string>

namespace perfcast {

// Which hardware a run powers beside the boards of the GPUs it uses (one rule for predict, compare and plan):
// - on rented instances (compare, plan), each instance is powered whole, as it is billed whole: its share of its
//   server's host (host_power_w for all of its GPUs) and, at the board's at-rest power, every GPU of it the run leaves
//   idle (one GPU's job on an 8-GPU instance still powers the other seven and the host beside all eight);
// - with no instance (predict, or a compare row the catalog cannot rent), the GPUs used and their share of their
//   server's host: what a cloud instance of exactly that many GPUs is.
enum class HostRule { kWholeInstances, kGpuShare };

struct PoweredHardware {
  HostRule rule = HostRule::kGpuShare;
  int gpus_used = 1;
  int gpus_powered = 1;       // the instances' GPUs (whole), or the GPUs used
  std::string server;         // the server class the host share is of ("" = the generic rule)
  double host_w = 0;          // the host beside gpus_powered GPUs (host_power_w)
  double idle_gpu_w = 0;      // all the powered GPUs the run leaves idle, at the board's at-rest power (data/power.toml)
  // The server's draw with the used GPUs drawing `gpus_w` together: they, the idle GPUs and the host.
  double server_w(double gpus_w) const { return gpus_w + host_w + idle_gpu_w; }
};

// A run's time, money and energy: compare's rows (run_cost), plan's options (PlanOption::run) and a training layout
// (ParallelTrainingCost::run) hold one each.
struct RunCost {
  double samples = 0;             // processed in the whole run (all epochs), or tokens for a training layout
  double hours = 0;
  double usd = 0;                 // on demand, of the billed hours
  std::optional<double> spot_usd;
  double energy_kwh = 0;          // GPU boards, or a CPU's package (cpu_package_power_w)
  double power_w = 0;             // all GPUs together, or the CPU's sockets
  PoweredHardware powered;        // the rule, the host and the idle GPUs of the instances (powered_hardware)
  double server_energy_kwh = 0;   // GPUs used + the idle GPUs of the instances + host
  double pue = 1;
  double facility_energy_kwh = 0; // server x PUE
  double billed_hours = 0;        // per instance, with the provider's minimum and increment (0: no instance)
};

}  // namespace perfcast
