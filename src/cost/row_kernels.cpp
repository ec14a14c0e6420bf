#include "cost/row_kernels.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/data_files.h"
#include "core/toml_reader.h"
#include "cost/l2_hit.h"

namespace perfcast {

namespace {

RowKernelConstants load_row_kernels() {
  const auto path = data_dir() / "cost_model.toml";
  const toml::table root = parse_toml_file(path);
  TomlFields top(root, path.string());
  TomlFields f(top.table("row_kernels"), path.string() + " [row_kernels]");
  RowKernelConstants c;
  c.enabled = f.boolean("enabled");
  c.layer_norm_vector_threads = f.number("layer_norm_vector_threads");
  c.layer_norm_vector_elements = f.number("layer_norm_vector_elements");
  c.layer_norm_moments_threads = f.number("layer_norm_moments_threads");
  c.layer_norm_apply_threads = f.number("layer_norm_apply_threads");
  c.softmax_block_threads = f.number("softmax_block_threads");
  c.softmax_cached_row_bytes = f.number("softmax_cached_row_bytes");
  c.vector_step_latency_clk = f.number("vector_step_latency_clk");
  c.scalar_step_latency_clk = f.number("scalar_step_latency_clk");
  c.softmax_step_latency_clk = f.number("softmax_step_latency_clk");
  c.gamma_beta_block_x = f.number("gamma_beta_block_x");
  c.gamma_beta_max_threads_y = f.number("gamma_beta_max_threads_y");
  c.gamma_beta_rows_per_thread = f.number("gamma_beta_rows_per_thread");
  c.gamma_beta_partial_min_rows = f.number("gamma_beta_partial_min_rows");
  for (const double v : {c.gamma_beta_block_x, c.gamma_beta_max_threads_y, c.gamma_beta_rows_per_thread})
    if (!(v >= 1)) f.fail("gamma_beta_block_x", "gamma/beta tile sizes must be at least 1");
  if (!(c.gamma_beta_partial_min_rows >= 0)) f.fail("gamma_beta_partial_min_rows", "must be zero or positive");
  for (const double v : {c.layer_norm_vector_threads, c.layer_norm_vector_elements, c.layer_norm_moments_threads,
                         c.layer_norm_apply_threads, c.softmax_block_threads})
    if (!(v >= 1)) f.fail("layer_norm_vector_threads", "thread and element counts must be at least 1");
  for (const double v : {c.vector_step_latency_clk, c.scalar_step_latency_clk, c.softmax_step_latency_clk})
    if (!(v >= 0)) f.fail("vector_step_latency_clk", "step latencies must be at least 0");
  c.max_threads_per_sm = f.by_sm("max_threads_per_sm");
  for (const auto& [sm, threads] : c.max_threads_per_sm)
    if (threads < 32) f.fail("max_threads_per_sm", "entry sm_" + std::to_string(sm) + " must be at least 32 threads");
  if (c.max_threads_per_sm.empty()) f.fail("max_threads_per_sm", "must list at least one architecture");
  return c;
}

}  // namespace

double RowKernelConstants::threads_per_sm(int sm) const {
  auto it = max_threads_per_sm.upper_bound(sm);
  if (it == max_threads_per_sm.begin()) return it->second;
  return std::prev(it)->second;
}

const RowKernelConstants& row_kernel_constants() {
  static const RowKernelConstants c = load_row_kernels();
  return c;
}

double row_kernel_floor_us(const KernelCostModel& km, double rows, double steps, double threads, double step_latency_clk) {
  const double clock_mhz = km.device().boost_clock_mhz;
  if (rows <= 0 || steps <= 0 || threads <= 0 || step_latency_clk <= 0 || clock_mhz <= 0) return 0;
  const double sms = static_cast<double>(std::max(1, km.device().sm_count));
  const double resident = std::max(1.0, std::floor(row_kernel_constants().threads_per_sm(km.device().sm_version) / threads));
  const double rounds = std::ceil(std::ceil(rows / sms) / resident);
  return rounds * steps * step_latency_clk / clock_mhz;
}

double row_reread_l2_share(double distance, const KernelCostModel& km) {
  const L2HitRamp ramp = l2_hit_ramp(km);
  if (ramp.full_bytes <= 0 || ramp.zero_bytes <= 0) return 1.0;
  return l2_hit_share(distance, ramp.full_bytes, ramp.zero_bytes);
}

KernelCost with_loop_floor(KernelCost k, double loop_floor_us, const KernelCostModel& km) {
  if (loop_floor_us <= 0 || k.launches <= 0) return k;
  const double floor = km.arch().kernel_floor_us + loop_floor_us;
  if (k.time_us / k.launches < floor) {
    k.time_us = floor * k.launches;
    k.bound = Bound::kLatency;
  }
  return k;
}

}  // namespace perfcast
