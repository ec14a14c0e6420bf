#include "device/board_power.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/data_files.h"
#include "core/nearest_sm.h"
#include "core/toml_reader.h"
#include "device/power_limit.h"

namespace perfcast {

namespace {

// data/power.toml; every value is read from the file (no defaults here).
struct PowerConstants {
  double memory_kernel_sm_activity = 0;                   // architectures without a reading of their own
  std::map<int, double> memory_kernel_sm_activity_by_sm;  // sm version -> measured on a board of it
  double shape_activity_floor = 0;
  double clocks_up_activity = 0;        // board with clocks at boost and no kernel, share of the dynamic power
  std::map<int, double> idle_fraction;  // sm version -> fraction of rated TDP
  std::map<std::string, double> dram_pj_per_bit;
  bool whole_board_clock = false;       // [kernel_clock] whole_board_draw
  double power_limit_min_fraction = 0;  // [power_limit] min_fraction_of_tdp
  double power_limit_max_fraction = 0;  // [power_limit] max_fraction_of_tdp
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
  TomlFields k(top.table("kernel_clock"), path.string() + " [kernel_clock]");
  c.whole_board_clock = k.boolean("whole_board_draw");
  TomlFields l(top.table("power_limit"), path.string() + " [power_limit]");
  c.power_limit_min_fraction = l.number("min_fraction_of_tdp");
  c.power_limit_max_fraction = l.number("max_fraction_of_tdp");
  if (!(c.power_limit_min_fraction > 0 && c.power_limit_min_fraction <= c.power_limit_max_fraction))
    l.fail("min_fraction_of_tdp", "must be positive and at most max_fraction_of_tdp");
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

}  // namespace

BoardPower::BoardPower(const DeviceSpec& device, const ArchitectureProfile& arch) : curve_(arch.power) {
  const PowerConstants& c = power_constants();
  limit_w_ = device.tdp_w;
  const double rated = device.rated_tdp_w > 0 ? device.rated_tdp_w : device.tdp_w;
  const double ratio = device.boost_clock_mhz / arch.sm_power_clock_mhz;
  const double full = static_cast<double>(device.sm_count) * arch.sm_power_w * curve_.at_clock(ratio);
  idle_w_ = std::min(idle_fraction(c, device.sm_version) * rated, 0.9 * limit_w_);
  dynamic_full_w_ = std::max(0.0, full - idle_w_);
  const auto pj = c.dram_pj_per_bit.find(device.memory_type);
  memory_type_known_ = pj != c.dram_pj_per_bit.end();
  // GB/s x 8 bit x pJ/bit = mW x 1e3.
  dram_w_ = memory_type_known_ ? device.mem_bw_gbps * arch.dram_efficiency * 8.0 * pj->second * 1e-3 : 0.0;
  memory_activity_ = memory_kernel_sm_activity(c, device.sm_version);
  shape_floor_ = c.shape_activity_floor;
  clocks_up_activity_ = c.clocks_up_activity;
}

bool BoardPower::whole_board_clock() { return power_constants().whole_board_clock; }

std::vector<std::string> priced_memory_types() {
  std::vector<std::string> out;
  for (const auto& [type, _] : power_constants().dram_pj_per_bit) out.push_back(type);
  return out;
}

PowerLimitRange power_limit_range(const DeviceSpec& device) {
  if (device.power_limit_min_w > 0 && device.power_limit_max_w > 0)
    return {device.power_limit_min_w, device.power_limit_max_w, true};
  const PowerConstants& c = power_constants();
  return {device.tdp_w * c.power_limit_min_fraction, device.tdp_w * c.power_limit_max_fraction, false};
}

double BoardPower::clocks_up_w(double clock) const {
  return std::min(idle_w_ + dynamic_full_w_ * curve_.at_clock(clock) * clocks_up_activity_, 0.9 * limit_w_);
}

double BoardPower::activity(Pipe pipe, double compute_share, double dram_share, double shape_efficiency) const {
  const double shape = shape_floor_ + (1 - shape_floor_) * std::clamp(shape_efficiency, 0.0, 1.0);
  return std::max(curve_.charged_activity(pipe, compute_share * shape), memory_activity_ * dram_share);
}

double BoardPower::kernel_w(double clock, double activity, double dram_share) const {
  return idle_w_ + dynamic_full_w_ * curve_.at_clock(clock) * activity + dram_w_ * dram_share;
}

double BoardPower::load_w(const KernelLoad& load, double clock) const {
  const double compute = clock > 0 ? load.compute_us / clock : 0.0;
  const double t = std::max({compute, load.memory_us, load.floor_us});
  if (t <= 0) return idle_w_;
  const double uc = std::clamp(compute / t, 0.0, 1.0), um = std::clamp(load.memory_us / t, 0.0, 1.0);
  return kernel_w(clock, activity(load.pipe, uc, um, load.shape_efficiency), um);
}

double BoardPower::clock_at_limit(const KernelLoad& load, double limit_w) const {
  if (limit_w <= 0 || load_w(load, 1.0) <= limit_w) return 1.0;
  // The draw rises with the clock (curve exponent >= 1: slower math keeps the SMs busier for longer, but each
  // busy cycle costs less by more), and at a clock near 0 it is the idle power, under the limit: bisect.
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (lo + hi);
    (load_w(load, mid) > limit_w ? hi : lo) = mid;
  }
  return lo;
}

}  // namespace perfcast
