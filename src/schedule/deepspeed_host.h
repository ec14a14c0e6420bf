// DeepSpeed ZeRO's host work per micro-batch: the Python its engine runs beside the framework's own ops (module
// hooks, parameter fetches and releases under stage 3, gradient hooks under stage 2 and 3), counted from DeepSpeed's
// source (data/llm_training.toml [deepspeed]) and priced at the runtime's measured per-call host costs. The parallel
// step (schedule/llm_parallel.cpp) adds it to the host side of each micro-batch's forward and backward.
#pragma once

#include "schedule/llm_parallel.h"

namespace perfcast {

struct DeepSpeedHostCost {
  double forward_us = 0;            // one micro-batch's forward, on the busiest stage
  double backward_us = 0;           // one micro-batch's backward (full recomputation's replayed forward included)
  double allgather_launches = 0;    // ZeRO-3 parameter fetches (all_gather_coalesced calls) per micro-batch
};

// `t`: the counts (module calls, parameter tensors) and prices of one block and of the rest of the model, `layers`:
// the blocks on the busiest stage. Zero unless `t.deepspeed` and a ZeRO stage (not FSDP) is set.
DeepSpeedHostCost deepspeed_host(const LayerTimes& t, const ParallelLayout& l, double layers,
                                 const LlmTrainingConstants& c);

}  // namespace perfcast
