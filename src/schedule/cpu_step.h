// One training or inference step on a CPU: forward, backward (reverse order) and the optimizer update as op calls
// on the same cores that dispatch them, so the framework's per-op time adds to the compute instead of hiding
// behind it as a GPU's launches do.
#pragma once

#include "cost/cpu_cost.h"
#include "graph/graph.h"
#include "schedule/step.h"

namespace perfcast {

// StepCost with gpu_us = the ops' compute and memory time on the cores, host_us = the framework's dispatch of
// every call, step_us = their sum.
StepCost schedule_cpu_step(const Graph& graph, const CpuCostContext& ctx, const StepOptions& options);

}  // namespace perfcast
