#include "schedule/cpu_step.h"

#include <cmath>

#include "graph/op_arithmetic.h"

namespace perfcast {

StepCost schedule_cpu_step(const Graph& graph, const CpuCostContext& ctx, const StepOptions& options) {
  StepCost s;
  const auto& ops = graph.ops;
  const auto& m = ctx.model;
  const double params = static_cast<double>(graph.params());
  const double tensors = parameter_tensors(graph);
  s.entries.reserve(ops.size() * (options.training ? (options.checkpointing ? 3 : 2) : 1) + 4);
  // Autocast (amp-bf16): the fp32 weights are cast to bf16 copies before the forward pass.
  if (ctx.plan.mixed)
    s.entries.push_back(kernel_entry("amp.cast_weights", OpKind::kElementwise,
                                     m.streaming(params, params * (4.0 + ctx.plan.bytes.weight), tensors)));
  for (std::size_t i = 0; i < ops.size(); ++i) s.entries.push_back(cost_cpu_op(ops, i, Phase::kForward, ctx));
  if (options.training) {
    if (options.checkpointing)
      for (std::size_t i = 0; i < ops.size(); ++i)
        if (ops[i].kind != OpKind::kLoss) {
          OpCost c = cost_cpu_op(ops, i, Phase::kForward, ctx);
          c.name += ".recompute";
          s.entries.push_back(c);
        }
    for (std::size_t i = ops.size(); i-- > 0;) s.entries.push_back(cost_cpu_op(ops, i, Phase::kBackward, ctx));
    if (options.grad_accum > 1) {
      const double grad_bytes = ctx.plan.mixed ? 4.0 : ctx.plan.bytes.weight;
      const double later = (options.grad_accum - 1.0) / options.grad_accum;
      s.entries.push_back(kernel_entry("grad.accumulate", OpKind::kElementwise,
                                       m.streaming(params * later, 3.0 * grad_bytes * params * later, tensors * later),
                                       Phase::kBackward));
    }
    if (options.optimizer_step) {
      // torch.optim on CPU tensors: the for-loop implementation (foreach is chosen for CUDA tensors only), one call
      // per operation per parameter tensor; a fused update is one call per tensor.
      const Work w = options.optimizer_fused ? optimizer_work(options.optimizer, params)
                                             : unfused_optimizer_work(options.optimizer, params);
      const double calls = options.optimizer_fused ? tensors : unfused_optimizer_ops(options.optimizer) * tensors;
      s.entries.push_back(
          kernel_entry("optimizer.update", OpKind::kOptimizer, m.streaming(w.flops, w.bytes, calls), Phase::kUpdate));
    }
  }
  if (options.grad_accum > 1) {
    // The update runs once every grad_accum micro-batches: each carries its share (as schedule_step does).
    for (auto& e : s.entries)
      if (e.phase == Phase::kUpdate) repeat(e, 1.0 / options.grad_accum);
  }
  const double dispatch_us = m.runtime().dispatch_us_per_op;
  for (const auto& e : s.entries) {
    s.gpu_us += e.cost.time_us;
    s.host_us += e.cost.launches * dispatch_us;
    s.launches += e.cost.launches;
    s.flops += e.cost.flops;
    s.bytes += e.cost.bytes;
  }
  // The thread that dispatches an op waits for it (PyTorch's CPU ops run synchronously), so nothing overlaps.
  s.step_us = s.gpu_us + s.host_us;
  return s;
}

}  // namespace perfcast
