#include "schedule/cpu_step.h"

#include <cmath>

#include "graph/op_arithmetic.h"
#include "schedule/step.h"

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
  // The framework's issue cost per entry: its measured per-op host costs (the same keys and rules as the GPU
  // path, docs/host-model.md) when the framework has them, else the CPU profile's dispatch per call. Entries are
  // forward ops, backward ops in reverse, then the casts, accumulation and update pushed above.
  const double dispatch_us = m.runtime().dispatch_us_per_op;
  const RuntimeProfile* fh = ctx.framework_host;
  const std::size_t n = ops.size();
  const std::size_t first_op = ctx.plan.mixed ? 1 : 0;
  const std::size_t recompute_end = first_op + n + (options.training && options.checkpointing ? n - 1 : 0);
  for (std::size_t k = 0; k < s.entries.size(); ++k) {
    auto& e = s.entries[k];
    if (fh) {
      const Op* op = nullptr;
      EntrySource from = EntrySource::kOther;
      if (k >= first_op && k < first_op + n) {
        op = &ops[k - first_op];
        from = EntrySource::kForward;
      } else if (k >= first_op + n && k < recompute_end) {
        from = EntrySource::kRecompute;  // op unknown here: recompute entries skip the loss
      } else if (options.training && k >= recompute_end && k < recompute_end + n) {
        op = &ops[n - 1 - (k - recompute_end)];
        from = EntrySource::kBackward;
      } else if (e.phase == Phase::kUpdate) {
        from = EntrySource::kOptimizer;
      }
      const double framework = from == EntrySource::kRecompute
                                   ? (e.cost.launches > 0 ? fh->host_op_us * e.cost.launches : 0.0)
                                   : entry_host_us(e, op, from, *fh, options, tensors);
      e.host_us += framework * options.host_time_scale;
    } else {
      e.host_us += e.cost.launches * dispatch_us;
    }
  }
  if (fh) {
    // A graph whose eager model code is counted (data/graph_code) charges its layers' calls, not one op each.
    charge_model_code_layers(s.entries, first_op, graph, *fh, options.host_time_scale);
    // The loop's own Python once per step; in training the engine's AccumulateGrad node per parameter tensor.
    s.host_us += fh->host_step_us * options.host_time_scale;
    if (options.training) s.host_us += fh->host_accumulate_grad_us * tensors * options.host_time_scale;
  }
  for (const auto& e : s.entries) {
    s.gpu_us += e.cost.time_us;
    s.host_us += e.host_us;
    s.launches += e.cost.launches;
    s.flops += e.cost.flops;
    s.bytes += e.cost.bytes;
  }
  // The thread that dispatches an op waits for it (PyTorch's CPU ops run synchronously), so nothing overlaps.
  s.step_us = s.gpu_us + s.host_us;
  return s;
}

}  // namespace perfcast
