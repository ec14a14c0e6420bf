// The elementwise passes over the score matrix between the two GEMMs of unfused attention, shared by the GPU
// (op_cost.cpp) and CPU (cpu_cost.cpp) cost paths so both count the same eager chain.
#pragma once

#include "cost/op_cost.h"
#include "cost/precision.h"
#include "graph/op.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

// Bytes per score element over all passes, and the number of passes (framework calls / kernels).
// Of those, `up_cast_bytes_per_elem` over `up_cast_kernels` passes are casts from half up to FP32, which PyTorch's
// autocast runs on ATen's dynamic-cast copy kernel ([memory] dynamic_cast_copy_efficiency).
struct ScorePasses {
  double bytes_per_elem = 0;
  double kernels = 1;
  double up_cast_bytes_per_elem = 0;
  double up_cast_kernels = 0;
};

// The runtime's chain for this phase: one fused softmax, or each step of the textbook code as its own pass.
ScorePasses score_passes(const AttentionGeometry& attn, Phase phase, const RuntimeProfile& runtime,
                         const PrecisionPlan& plan, bool training);

}  // namespace perfcast
