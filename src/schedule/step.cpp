#include "schedule/step.h"

#include <cmath>

namespace perfcast {

double parameter_tensors(const Graph& graph) {
  double n = 0;
  for (const auto& op : graph.ops) {
    if (op.params <= 0) continue;
    n += 1;
    if ((op.kind == OpKind::kConv && op.conv.bias) || (op.kind == OpKind::kMatmul && op.mm.bias) ||
        (op.kind == OpKind::kNorm && op.norm != NormKind::kRms))
      n += 1;
  }
  return n;
}

StepCost schedule_step(const Graph& graph, const CostContext& ctx, const StepOptions& options) {
  StepCost s;
  const auto& ops = graph.ops;
  const double params = static_cast<double>(graph.params());
  const double tensors = parameter_tensors(graph);
  const auto& km = ctx.kernels;
  // Forward, recompute and backward entries plus a few for casts, accumulation and the update.
  s.entries.reserve(ops.size() * (options.training ? (options.checkpointing ? 3 : 2) : 1) + 8);

  // Mixed precision: fp32 master weights are cast to the compute precision before the forward pass.
  if (ctx.plan.mixed)
    s.entries.push_back(kernel_entry("amp.cast_weights", OpKind::kElementwise,
                                     km.streaming(params, params * (4.0 + ctx.plan.bytes.weight), tensors)));
  for (std::size_t i = 0; i < ops.size(); ++i) s.entries.push_back(cost_op(ops, i, Phase::kForward, ctx));
  if (options.training) {
    // Checkpointing recomputes the forward pass (except the loss) once during backward.
    if (options.checkpointing)
      for (std::size_t i = 0; i < ops.size(); ++i)
        if (ops[i].kind != OpKind::kLoss) {
          OpCost c = cost_op(ops, i, Phase::kForward, ctx);
          c.name += ".recompute";
          s.entries.push_back(c);
        }
    for (std::size_t i = ops.size(); i-- > 0;) s.entries.push_back(cost_op(ops, i, Phase::kBackward, ctx));
    if (options.grad_accum > 1) {
      // Accumulating micro-batches: each backward after the first adds its gradients into the accumulators
      // (PyTorch's AccumulateGrad grad += new, TensorFlow's assign_add into accumulation variables): read both,
      // write one, in the parameters' precision (fp32 masters under mixed precision).
      const double grad_bytes = ctx.plan.mixed ? 4.0 : ctx.plan.bytes.weight;
      const double later = (options.grad_accum - 1.0) / options.grad_accum;
      s.entries.push_back(kernel_entry("grad.accumulate", OpKind::kElementwise,
                                       km.streaming(params * later, 3.0 * grad_bytes * params * later, tensors * later),
                                       Phase::kBackward));
    }
    if (ctx.plan.mixed)
      // Loss scaling: gradients are unscaled, checked for inf/nan and cast to fp32 for the master update.
      s.entries.push_back(kernel_entry("amp.unscale_grads", OpKind::kElementwise,
                                       km.streaming(2.0 * params, params * (ctx.plan.bytes.weight + 4.0), tensors),
                                       Phase::kUpdate));
    if (options.optimizer_step) {
      const Work w = options.optimizer_fused ? optimizer_work(options.optimizer, params)
                                             : unfused_optimizer_work(options.optimizer, params);
      // Fused: the runtime's launches per tensor. Unfused: every operation of the update launches over the
      // tensors, a group of optimizer_tensors_per_launch at a time (1 for a per-tensor loop).
      const double launches = options.optimizer_fused
                                  ? std::max(1.0, tensors * ctx.runtime.optimizer_kernels_per_tensor)
                                  : unfused_optimizer_ops(options.optimizer) *
                                        std::ceil(tensors / std::max(1.0, ctx.runtime.optimizer_tensors_per_launch));
      s.entries.push_back(
          kernel_entry("optimizer.update", OpKind::kOptimizer, km.streaming(w.flops, w.bytes, launches), Phase::kUpdate));
    }
  }
  if (options.grad_accum > 1) {
    // Gradient accumulation: the update phase (unscale, optimizer) runs once per grad_accum micro-batches, so each
    // micro-batch step carries 1/grad_accum of it.
    const double share = 1.0 / options.grad_accum;
    for (auto& e : s.entries)
      if (e.phase == Phase::kUpdate) {
        e.cost.time_us *= share;
        e.cost.compute_us *= share;
        e.cost.memory_us *= share;
        e.cost.flops *= share;
        e.cost.bytes *= share;
        e.cost.launches *= share;
      }
  }
  for (const auto& e : s.entries) {
    s.gpu_us += e.cost.time_us + e.cost.launches * ctx.runtime.gpu_gap_per_kernel_us;
    s.host_us += e.cost.launches * ctx.runtime.host_overhead_per_kernel_us;
    s.launches += e.cost.launches;
    s.flops += e.cost.flops;
    s.bytes += e.cost.bytes;
  }
  s.step_us = std::max(s.gpu_us, s.host_us);
  return s;
}

}  // namespace perfcast
