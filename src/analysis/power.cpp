// Board power and energy of a step: each kernel draws the board's at-rest power plus what it keeps busy (SM pipes at
// the sustained clock, DRAM at the bandwidth it moves), at least the clocks-up power and at most the board limit;
// waits inside the step draw the clocks-up power (the board with its clocks up and no kernel, above the at-rest
// idle power: data/power.toml clocks_up_activity).
// The terms are device/board_power.h's (data/power.toml and sm_power_w in data/architectures.toml), the same ones
// the kernel model's clock under the limit is solved with.
#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/power.h"

#include "analysis/predict.h"
#include "core/error.h"
#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/board_power.h"

namespace perfcast {

KernelDraw::KernelDraw(const DeviceSpec& device, const ArchitectureProfile& arch) : board_(device, arch) {
  if (!board_.memory_type_known())
    throw_unknown("memory_type of " + device.id, device.memory_type, priced_memory_types());
  limit_w_ = board_.limit_w();  // --power-limit already replaced the TDP
  // A card measured by tools/calibrate reports the clock it sustained. Where its measured efficiencies drive the
  // kernel times, the kernel model's clock is relative to that measured point (1 unless --power-limit is lower), so
  // the clock relative to boost is the product; otherwise the kernel clock is relative to boost and the measured
  // clock caps it.
  if (device.measured && device.measured->sustained_clock_mhz && device.boost_clock_mhz > 0)
    measured_cap_ = *device.measured->sustained_clock_mhz / device.boost_clock_mhz;
  relative_to_measured_ =
      device.measured && (device.measured->gemm_efficiency_cuda || device.measured->gemm_efficiency_tensor);
  // Inside a running step the board stays at P0 with its clocks up between kernels (GPU Boost drops them only
  // seconds after the work stops), so a wait draws more than the board at rest: the clock tree and leakage at the
  // boost voltage. No kernel draws less than that either.
  clocks_up_w_ = board_.clocks_up_w(board_clock(1.0));
}

double KernelDraw::board_clock(double kernel_clock) const {
  const double c = std::clamp(kernel_clock, 0.0, 1.0);
  return relative_to_measured_ ? c * measured_cap_ : std::min(c, measured_cap_);
}

// Each kernel runs at the clock the kernel model gave it (its own load against the limit: a tensor-pipe GEMM on a
// power-limited board below boost, a memory-bound kernel at boost) and draws power for what it keeps busy, a tensor
// pipe charged with the architecture's tensor_power_fraction as the clock model charges it.
double KernelDraw::kernel_w(const KernelCost& cost) const {
  const double t = cost.time_us;
  // Entries repeated a fraction of a time (an update's share per micro-batch) keep their per-launch figures.
  const double per_launch = cost.launches > 0 ? t / cost.launches : t;
  const double uc = std::isfinite(cost.compute_us) ? std::clamp(cost.compute_us / per_launch, 0.0, 1.0) : 0.0;
  const double um = std::clamp(cost.memory_us / per_launch, 0.0, 1.0);
  const double activity = board_.activity(cost.pipe, uc, um, cost.shape_efficiency);
  return std::min(limit_w_, std::max(clocks_up_w_, board_.kernel_w(board_clock(cost.clock_factor), activity, um)));
}

void apply_power(Prediction& p) {
  if (p.step.entries.empty() || p.step_us <= 0) return;
  // architecture_of's profile unless the card carries measured efficiencies (no copy in the common case).
  std::optional<ArchitectureProfile> measured_arch;
  if (p.device.measured) measured_arch = architecture_for(p.device);
  const ArchitectureProfile& arch = measured_arch ? *measured_arch : architecture_of(p.device);
  const KernelCostModel km(p.device, arch);
  const KernelDraw draw(p.device, arch);
  const double limit = draw.limit_w();
  const double clocks_up = draw.wait_w();

  double energy_uj = 0, busy_us = 0, clock_us = 0, peak = clocks_up;
  for (const auto& e : p.step.entries) {
    const double t = e.cost.time_us;
    if (t <= 0) continue;
    const double w = draw.kernel_w(e.cost);
    energy_uj += w * t;
    busy_us += t;
    clock_us += draw.board_clock(e.cost.clock_factor) * t;
    peak = std::max(peak, w);
  }
  // The clock a monitor would average over the busy time (the full-load clock when nothing ran).
  const double f = busy_us > 0 ? clock_us / busy_us : draw.board_clock(km.compute_clock_factor());
  busy_us = std::min(busy_us, p.step_us);
  energy_uj += clocks_up * (p.step_us - busy_us);

  PowerCost pc;
  pc.clock_factor = f;
  pc.limit_w = limit;
  pc.wait_power_w = clocks_up;
  pc.peak_power_w = peak;
  pc.energy_per_step_j = energy_uj * 1e-6;
  pc.avg_power_w = energy_uj / p.step_us;
  pc.busy_share = busy_us / p.step_us;
  const double batch = static_cast<double>(std::max<std::int64_t>(1, p.request.batch));
  pc.energy_per_sample_j = pc.energy_per_step_j / batch;  // every GPU does one batch per step
  pc.samples_per_joule = pc.energy_per_sample_j > 0 ? 1.0 / pc.energy_per_sample_j : 0;
  p.power = pc;
}

}  // namespace perfcast
