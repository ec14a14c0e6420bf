// A precision's note narrowed to the graph it runs: the TF32-by-default note names only the op kinds the graph has
// (cost/precision.cpp). Notes never change a prediction: the plan's pipes and bytes stay as resolve_precision chose.
#pragma once

#include "cost/precision.h"
#include "graph/graph.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

// The op kinds a graph runs on the precision's pipes.
struct MathOpsPresent {
  bool convolutions = true;  // OpKind::kConv (plan.conv_pipe)
  bool matmuls = true;       // OpKind::kMatmul, kAttention, kInteraction (plan.matmul_pipe)
};
MathOpsPresent math_ops_present(const Graph& graph);

// The plan's note narrowed to `present`: the note of a runtime that runs fp32 convolutions and/or matmuls as TF32
// by default names only the kinds present, and goes where neither is (BERT under PyTorch: no convolution, and
// fp32 matmuls stay FP32). Other notes stay.
void note_only_present_ops(PrecisionPlan& plan, const RuntimeProfile& runtime, MathOpsPresent present);

}  // namespace perfcast
