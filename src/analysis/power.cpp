// Board power and energy of a step: each kernel draws the board's at-rest power plus what it keeps busy (SM pipes at
// the sustained clock, DRAM at the bandwidth it moves), at least the clocks-up power and at most the board limit;
// waits inside the step draw the clocks-up power (the board with its clocks up and no kernel, above the at-rest
// idle power: data/power.toml clocks_up_activity).
// Constants: data/power.toml and sm_power_w in data/architectures.toml.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "analysis/predict.h"
#include "core/data_files.h"
#include "core/error.h"
#include "core/nearest_sm.h"
#include "core/toml_reader.h"
#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/catalog.h"

namespace perfcast {

namespace {

// data/power.toml; every value is read from the file (no defaults here).
struct PowerConstants {
  double memory_kernel_sm_activity = 0;             // architectures without a reading of their own
  std::map<int, double> memory_kernel_sm_activity_by_sm;  // sm version -> measured on a board of it
  double shape_activity_floor = 0;
  double clocks_up_activity = 0;         // board with clocks at boost and no kernel, share of the dynamic power
  std::map<int, double> idle_fraction;  // sm version -> fraction of rated TDP
  std::map<std::string, double> dram_pj_per_bit;
};

std::map<std::string, double> numbers_of(const toml::table& t) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : t)
    if (auto d = v.value<double>()) out[std::string(k.str())] = *d;
  return out;
}

// The sm_XX = number entries of a table whose `sources` sit beside them (TomlFields::by_sm takes no other keys).
std::map<int, double> sm_numbers_of(const toml::table& t) {
  std::map<int, double> out;
  for (const auto& [k, v] : numbers_of(t))
    if (k.rfind("sm_", 0) == 0) out[std::stoi(k.substr(3))] = v;
  return out;
}

PowerConstants load_constants() {
  const auto path = data_dir() / "power.toml";
  const toml::table root = parse_toml_file(path);
  TomlFields top(root, path.string());
  PowerConstants c;
  TomlFields d(top.table("defaults"), path.string() + " [defaults]");
  c.memory_kernel_sm_activity = d.number("memory_kernel_sm_activity");
  c.shape_activity_floor = d.number("shape_activity_floor");
  c.clocks_up_activity = d.number("clocks_up_activity");
  c.idle_fraction = sm_numbers_of(top.table("idle_fraction"));
  c.dram_pj_per_bit = numbers_of(top.table("dram_pj_per_bit"));
  c.memory_kernel_sm_activity_by_sm = sm_numbers_of(top.table("memory_kernel_sm_activity"));
  if (c.idle_fraction.empty()) top.fail("idle_fraction", "needs at least one sm_XX entry");
  return c;
}

const PowerConstants& power_constants() {
  static const PowerConstants c = load_constants();
  return c;
}

// Idle fraction of the nearest architecture at or below this SM version.
// Older than every listed one: the oldest listed.
double idle_fraction(const PowerConstants& c, int sm) {
  const auto* e = nearest_sm_at_or_below(c.idle_fraction, sm, [](const auto& kv) { return kv.first; });
  return e ? e->second : c.idle_fraction.begin()->second;
}

// SM activity of a memory-bound kernel: the nearest architecture at or below this SM version with a reading of its
// own, else the [defaults] value.
double memory_kernel_sm_activity(const PowerConstants& c, int sm) {
  const auto* e = nearest_sm_at_or_below(c.memory_kernel_sm_activity_by_sm, sm, [](const auto& kv) { return kv.first; });
  return e ? e->second : c.memory_kernel_sm_activity;
}

double rated_tdp(const Prediction& p) {
  try {
    return find_gpu(p.request.gpu).tdp_w;
  } catch (const InputError&) {
    return p.device.tdp_w;
  }
}

}  // namespace

void apply_power(Prediction& p) {
  if (p.step.entries.empty() || p.step_us <= 0) return;
  const PowerConstants& c = power_constants();
  // architecture_of's profile unless the card carries measured efficiencies (no copy in the common case).
  std::optional<ArchitectureProfile> measured_arch;
  if (p.device.measured) measured_arch = architecture_for(p.device);
  const ArchitectureProfile& arch = measured_arch ? *measured_arch : architecture_of(p.device);
  const KernelCostModel km(p.device, arch);
  const double limit = p.device.tdp_w;  // --power-limit already replaced it
  const double rated = rated_tdp(p);
  const double ratio = p.device.boost_clock_mhz / arch.sm_power_clock_mhz;
  const PowerCurve& curve = arch.power;
  const double full = static_cast<double>(p.device.sm_count) * arch.sm_power_w * curve.at_clock(ratio);
  const double idle = std::min(idle_fraction(c, p.device.sm_version) * rated, 0.9 * limit);
  // A card measured by tools/calibrate reports the clock it sustained. Where its measured efficiencies drive the
  // kernel times, the kernel model's clock is relative to that measured point (1 unless --power-limit is lower), so
  // the clock relative to boost is the product; otherwise the kernel clock is relative to boost and the measured
  // clock caps it.
  double measured_cap = 1.0;
  if (p.device.measured && p.device.measured->sustained_clock_mhz && p.device.boost_clock_mhz > 0)
    measured_cap = *p.device.measured->sustained_clock_mhz / p.device.boost_clock_mhz;
  const bool relative_to_measured =
      p.device.measured && (p.device.measured->gemm_efficiency_cuda || p.device.measured->gemm_efficiency_tensor);
  const auto board_clock = [&](double kernel_clock) {
    const double c = std::clamp(kernel_clock, 0.0, 1.0);
    return relative_to_measured ? c * measured_cap : std::min(c, measured_cap);
  };
  const double dynamic_full = std::max(0.0, full - idle);
  // Inside a running step the board stays at P0 with its clocks up between kernels (GPU Boost drops them only
  // seconds after the work stops), so a wait draws more than the board at rest: the clock tree and leakage at the
  // boost voltage. No kernel draws less than that either.
  const double clocks_up =
      std::min(idle + dynamic_full * curve.at_clock(board_clock(1.0)) * c.clocks_up_activity, 0.9 * limit);
  const auto pj = c.dram_pj_per_bit.find(p.device.memory_type);
  if (pj == c.dram_pj_per_bit.end()) {
    std::vector<std::string> known;
    for (const auto& [type, _] : c.dram_pj_per_bit) known.push_back(type);
    throw_unknown("memory_type of " + p.device.id, p.device.memory_type, known);
  }
  const double pj_per_bit = pj->second;
  const double memory_activity = memory_kernel_sm_activity(c, p.device.sm_version);
  // DRAM interface power at the achievable bandwidth (GB/s x 8 bit x pJ/bit = mW x 1e3).
  const double dram_w = p.device.mem_bw_gbps * arch.dram_efficiency * 8.0 * pj_per_bit * 1e-3;

  // Each kernel runs at the clock the kernel model gave it (its own load against the limit: a tensor-pipe GEMM
  // on a power-limited board below boost, a memory-bound kernel at boost) and draws power for what it keeps busy,
  // a tensor pipe charged with the architecture's tensor_power_fraction as the clock model charges it.
  double energy_uj = 0, busy_us = 0, clock_us = 0, peak = clocks_up;
  for (const auto& e : p.step.entries) {
    const double t = e.cost.time_us;
    if (t <= 0) continue;
    // Entries repeated a fraction of a time (an update's share per micro-batch) keep their per-launch figures.
    const double per_launch = e.cost.launches > 0 ? t / e.cost.launches : t;
    const double uc = std::isfinite(e.cost.compute_us) ? std::clamp(e.cost.compute_us / per_launch, 0.0, 1.0) : 0.0;
    const double um = std::clamp(e.cost.memory_us / per_launch, 0.0, 1.0);
    const double shape = c.shape_activity_floor + (1 - c.shape_activity_floor) * std::clamp(e.cost.shape_efficiency, 0.0, 1.0);
    const double activity =
        std::max(curve.charged_activity(e.cost.pipe, uc * shape), memory_activity * um);
    const double clock = board_clock(e.cost.clock_factor);
    const double w = std::min(limit, std::max(clocks_up, idle + dynamic_full * curve.at_clock(clock) * activity + dram_w * um));
    energy_uj += w * t;
    busy_us += t;
    clock_us += clock * t;
    peak = std::max(peak, w);
  }
  // The clock a monitor would average over the busy time (the full-load clock when nothing ran).
  const double f = busy_us > 0 ? clock_us / busy_us : board_clock(km.compute_clock_factor());
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
