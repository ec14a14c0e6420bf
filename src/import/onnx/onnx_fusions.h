// The fusion plan: how the ONNX importer folds the multi-node patterns exporters emit (linear + bias add, the
// attention core, erf-GELU, SiLU, RMSNorm, MSE loss) back into single ops (OnnxModel::plan_fusions).
#pragma once

#ifdef PERFCAST_HAVE_ONNX

#include <cstdint>
#include <string>

namespace perfcast::onnx_import {

enum class Role : std::uint8_t { kNormal, kAbsorbed, kAttention, kGelu, kSilu, kRms, kMse, kViewTranspose };

struct Plan {
  Role role = Role::kNormal;
  std::string x;          // main input of a fused op (q' for attention, the predicted tensor for MSE)
  std::string k, v;       // attention k' and v'
  std::string weight;     // RMSNorm scale
  std::string bias;       // MatMul/Gemm: the bias an absorbed Add adds
  std::string bias_out;   // ... and that Add's output name
  bool causal = false;
  bool dropout = false;  // attention: a Dropout between the softmax and the second matmul (training graphs)
};

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
