// PyTorch eager's own LayerNorm and softmax kernels run one CTA per row (aten/src/ATen/native/cuda/
// layer_norm_kernel.cu, SoftMax.cu): a grid of few rows waits on its loop's global loads, not on DRAM bandwidth.
// Their constants: data/cost_model.toml [row_kernels] (docs/kernel-model.md, "LayerNorm and softmax: one CTA per
// row").
#pragma once

#include <map>

#include "cost/kernel_cost.h"

namespace perfcast {

struct RowKernelConstants {
  bool enabled = false;
  double layer_norm_vector_threads = 0, layer_norm_vector_elements = 0;
  double layer_norm_moments_threads = 0, layer_norm_apply_threads = 0;
  double softmax_block_threads = 0, softmax_cached_row_bytes = 0;
  double vector_step_latency_clk = 0, scalar_step_latency_clk = 0, softmax_step_latency_clk = 0;
  double gamma_beta_block_x = 0, gamma_beta_max_threads_y = 0, gamma_beta_rows_per_thread = 0;
  double gamma_beta_partial_min_rows = 0;
  std::map<int, double> max_threads_per_sm;  // by compute capability (sm_75 -> 75)
  // Threads an SM of compute capability `sm` holds: the nearest listed architecture at or below it.
  double threads_per_sm(int sm) const;
};

// data/cost_model.toml [row_kernels], read once.
const RowKernelConstants& row_kernel_constants();

// Shortest run of a kernel of one CTA of `threads` threads per row over `rows` rows, each CTA taking `steps`
// loop steps of `step_latency_clk` cycles at the boost clock: the SMs hold threads_per_sm / threads CTAs each and
// run the rows in rounds.
double row_kernel_floor_us(const KernelCostModel& km, double rows, double steps, double threads, double step_latency_clk);

// Share of a re-read that still finds its lines in L2 after `distance` bytes of other traffic (l2_hit_share on the
// architecture's ramp, cost/l2_hit.h); 1 where the architecture has no measured fractions.
double row_reread_l2_share(double distance, const KernelCostModel& km);

// `k` (one kernel, k.launches launches) held to at least the launch floor plus `loop_floor_us` per launch.
KernelCost with_loop_floor(KernelCost k, double loop_floor_us, const KernelCostModel& km);

}  // namespace perfcast
