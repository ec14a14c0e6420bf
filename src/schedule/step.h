// One training or inference step as a sequence of kernels: forward, backward (reverse order), optimizer
// update and mixed-precision bookkeeping, with the host dispatch running ahead of the GPU.
#pragma once

#include <vector>

#include "cost/op_cost.h"
#include "graph/graph.h"

namespace perfcast {

struct StepOptions {
  bool training = true;
  bool optimizer_step = true;  // include the weight update (train only)
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
  bool checkpointing = false;  // backward recomputes the forward pass of each checkpointed segment
  bool optimizer_fused = true;  // one pass over weights, gradients and state (else one pass per elementwise op)
  int grad_accum = 1;           // micro-batches per weight update: the update runs once every grad_accum steps
};

struct StepCost {
  std::vector<OpCost> entries;  // every op in every phase, in execution order
  double gpu_us = 0;            // kernel time plus inter-kernel gaps
  double host_us = 0;           // CPU dispatch time for all launches
  double step_us = 0;           // the step: the GPU waits for the host when dispatch is slower
  double launches = 0;
  double flops = 0;
  double bytes = 0;
};

StepCost schedule_step(const Graph& graph, const CostContext& ctx, const StepOptions& options);

// Parameter tensors (weights and biases counted separately), for per-tensor optimizer and cast kernels.
double parameter_tensors(const Graph& graph);

}  // namespace perfcast
