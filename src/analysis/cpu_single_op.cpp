#include "analysis/cpu_single_op.h"

#include "analysis/predict.h"
#include "core/error.h"
#include "cost/cpu_cost.h"
#include "device/cpu_catalog.h"
#include "runtime/cpu_runtime.h"

namespace perfcast {

CpuOpPrediction predict_cpu_op(const OpSpec& spec, const std::string& cpu_id, const std::string& runtime,
                               const std::string& precision, int cores) {
  const CpuSpec* whole = cpu_by_id(cpu_id);
  if (!whole) throw InputError("'" + cpu_id + "' is not a CPU id (perfcast cpus)");
  if (spec.direction == "bwd_data" || spec.direction == "bwd_filter")
    throw UnsupportedError("op on a CPU: --direction fwd or bwd (the CPU path costs an op's backward calls together)");
  PreparedOp prepared = prepare_op(spec);
  const bool forward = prepared.direction == "fwd";
  // bwd: both gradients, the input's included (as the GPU path's bwd).
  if (!forward) prepared.graph.ops[prepared.index].needs_input_grad = true;
  CpuOpPrediction p;
  p.cpu = cpu_instance_share(*whole, cpu_instance_split(*whole, 1, cores));
  const CpuRuntimeProfile& crt = find_cpu_runtime(runtime);
  p.runtime = crt.id;
  std::string math;
  p.plan = cpu_precision_plan(precision, p.cpu, crt, !forward, math);
  const CpuCostModel model(p.cpu, crt, cpu_cost_constants(), math);
  const RuntimeProfile fusion = crt.as_runtime();
  CpuCostContext ctx{model, fusion, p.plan, !forward};
  // As in a model pass: weights that overflow the caches stream from DRAM on every call.
  ctx.weight_bytes = static_cast<double>(prepared.graph.params()) * p.plan.bytes.weight;
  const OpCost c = cost_cpu_op(prepared.graph.ops, prepared.index, forward ? Phase::kForward : Phase::kBackward, ctx);
  p.cost = c.cost;
  p.fork_join_us = c.host_us;
  return p;
}

}  // namespace perfcast
