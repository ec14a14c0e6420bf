// How a framework runs a graph: its dispatch overhead, what it fuses, its algorithm and precision defaults,
// its memory overheads. Loaded from data/runtimes/<id>.toml.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

struct RuntimeProfile {
  std::string id;
  std::string name;
  double host_overhead_per_kernel_us = 8;  // CPU time per kernel dispatch
  double gpu_gap_per_kernel_us = 1;        // device idle between dependent kernels
  bool fuse_elementwise_chains = false;    // elementwise/norm chains run as one kernel
  bool fuse_epilogue = false;              // bias/activation/residual fused into the producing conv/GEMM
  bool fold_bn_inference = false;          // inference batch norm folded into conv weights
  bool conv_autotune = true;               // fastest algorithm per layer (Winograd where it wins)
  bool tf32_conv_default = false;          // "fp32" convolutions run as TF32 on sm_80+
  bool tf32_matmul_default = false;        // "fp32" matmuls run as TF32 on sm_80+
  bool nchw_tensor_core_transposes = false;  // NCHW<->NHWC transposes around tensor-core convolutions
  double library_efficiency = 1;            // conv/GEMM kernel rate of its cuDNN/cuBLAS generation vs cuDNN 7+
  double optimizer_kernels_per_tensor = 1;   // optimizer launches per parameter tensor
  double context_bytes = 5e8;
  double workspace_bytes = 2.7e8;
  double allocator_overhead = 1.0;
  std::map<std::string, std::string> sources;
};

const std::vector<RuntimeProfile>& runtime_catalog();

// InputError with the nearest id when unknown.
const RuntimeProfile& find_runtime(std::string_view id);

}  // namespace perfcast
