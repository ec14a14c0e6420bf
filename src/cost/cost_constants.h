// Op-class constants of the cost model, loaded from data/cost_model.toml.
#pragma once

#include <string>
#include <vector>

namespace perfcast {

struct GemmTile {
  double m = 128, n = 128;
  double efficiency = 1;  // fraction of the large-GEMM rate this tile reaches
};

struct CostConstants {
  std::vector<GemmTile> tiles_cuda;
  std::vector<GemmTile> tiles_tensor;
  double ctas_per_sm = 1;
  double k_half_cuda = 24;
  double k_half_tensor = 48;
  double split_k_overhead = 0.15;
  double split_k_min_depth = 256;  // K elements each split-K slice keeps at least
  double conv_efficiency_tensor = 0.75;        // convolutions with more than one filter tap
  double conv_efficiency_tensor_1x1 = 1.0;     // pointwise (1x1) convolutions: a plain GEMM
  double winograd_fused_efficiency = 0.65;
  double dgrad_efficiency = 0.95;
  double wgrad_efficiency = 0.8;
  double depthwise_compute_efficiency = 0.25;
  double ramp_us = 1.5;
  double elementwise_compute_efficiency = 0.25;
  double reduction_bandwidth_efficiency = 1;  // softmax / layer norm rows against a plain streaming kernel
  double native_half_elementwise_efficiency = 0.5;
  double cuda_graph_host_us_per_kernel = 0.3;
  double cuda_graph_gap_us = 0.6;
  double gpu_decode_us_per_mpixel = 100;
};

// The constants predictions use: cost_model.toml with data/kernel_fit.toml's fitted values.
const CostConstants& cost_constants();
// cost_model.toml alone (the kernel fit's start values).
const CostConstants& cost_constants_prior();

}  // namespace perfcast
