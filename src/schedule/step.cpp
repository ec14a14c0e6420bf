#include "schedule/step.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "graph/op_arithmetic.h"
#include "graph/op_kinds.h"
#include "runtime/graph_model_code.h"
#include "schedule/l2_reuse.h"

namespace perfcast {

double parameter_tensors(const Graph& graph) {
  double n = 0;
  for (const auto& op : graph.ops) {
    if (op.params <= 0 || op_kind_info(op.kind).updates_in_backward) continue;
    n += 1;
    if (second_param_elems(op) > 0) n += 1;
  }
  return n;
}

std::vector<double> parameter_tensor_elems(const Graph& graph) {
  std::vector<double> elems;
  for (const auto& op : graph.ops) {
    if (op.params <= 0 || op_kind_info(op.kind).updates_in_backward) continue;
    const double second = second_param_elems(op);
    elems.push_back(static_cast<double>(op.params) - second);
    if (second > 0) elems.push_back(second);
  }
  return elems;
}

std::vector<char> parameter_tensor_is_weight(const Graph& graph) {
  std::vector<char> weight;
  for (const auto& op : graph.ops) {
    if (op.params <= 0 || op_kind_info(op.kind).updates_in_backward) continue;
    const bool matrix = op.kind == OpKind::kMatmul || op.kind == OpKind::kConv || op.kind == OpKind::kAttention ||
                        op.kind == OpKind::kEmbedding;
    weight.push_back(matrix ? 1 : 0);
    if (second_param_elems(op) > 0) weight.push_back(0);
  }
  return weight;
}

CastWork half_weight_casts(const Graph& graph) {
  CastWork w;
  for (const auto& op : graph.ops) {
    if (op.params <= 0 || (op.kind != OpKind::kConv && op.kind != OpKind::kMatmul)) continue;
    w.elems += static_cast<double>(op.params);
    w.tensors += second_param_elems(op) > 0 ? 2.0 : 1.0;
  }
  return w;
}

namespace {

// autocast_activation_casts; a dot interaction is a bmm (lower-precision list) whose FP32 pooled vectors are cast
// down, unless `interaction_at_own_precision` (--embedding-precision runs it at the tables' precision).
CastWork activation_casts(const Graph& graph, bool fp32_softmax, bool training, bool interaction_at_own_precision) {
  const auto& ops = graph.ops;
  // Whether each op's output is FP32 under autocast (aten/src/ATen/autocast_mode.cpp: convolutions and GEMMs in the
  // lower-precision list, layer_norm / group_norm / softmax / the losses in the FP32 list, every other op runs in
  // its inputs' promoted type).
  std::vector<char> fp32(ops.size(), 0);
  CastWork w;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    bool any_fp32 = false;
    for (int in : op.inputs) any_fp32 = any_fp32 || in < 0 || fp32[static_cast<std::size_t>(in)];
    const double input_elems = op.inputs.empty() ? 0.0 : static_cast<double>(op.in_elems) / op.inputs.size();
    const auto cast_inputs = [&](bool want_fp32) {
      for (int in : op.inputs) {
        const bool is_fp32 = in < 0 || fp32[static_cast<std::size_t>(in)];
        if (is_fp32 == want_fp32) continue;
        const double elems = in < 0 ? input_elems : static_cast<double>(ops[static_cast<std::size_t>(in)].out_elems);
        w.tensors += 1;
        w.elems += elems;
        if (want_fp32) {
          w.up_tensors += 1;
          w.up_elems += elems;
        }
      }
    };
    bool out_fp32 = any_fp32;
    switch (op.kind) {
      case OpKind::kConv:
      case OpKind::kMatmul:
        cast_inputs(false);
        out_fp32 = false;
        break;
      case OpKind::kAttention:
        out_fp32 = false;
        break;
      case OpKind::kInteraction:  // its Gram products are a bmm (lower-precision list): FP32 pooled vectors cast down
        if (!interaction_at_own_precision) cast_inputs(false);
        out_fp32 = false;
        break;
      case OpKind::kNorm:
        if (op.norm == NormKind::kBatch) break;  // cuDNN batch norm takes a half input with FP32 scale and shift
        cast_inputs(true);
        out_fp32 = true;
        break;
      case OpKind::kSoftmax:
        if (!fp32_softmax) break;
        cast_inputs(true);
        out_fp32 = true;
        break;
      case OpKind::kLoss:  // an inference step computes no loss
        if (training) cast_inputs(true);
        out_fp32 = true;
        break;
      case OpKind::kEmbedding:  // an FP32 table looks up FP32 rows
        out_fp32 = true;
        break;
      case OpKind::kEmbeddingBag:  // on no autocast list: pools at its table's dtype (cost/op_cost.cpp)
        out_fp32 = op.bag.table_elem_bytes >= 4;
        break;
      case OpKind::kElementwise:
      case OpKind::kPool:
      case OpKind::kDataMovement:
      case OpKind::kOptimizer:
      case OpKind::kCount:
        break;
    }
    fp32[i] = out_fp32;
  }
  return w;
}

}  // namespace

CastWork autocast_activation_casts(const Graph& graph, bool fp32_softmax, bool training) {
  return activation_casts(graph, fp32_softmax, training, false);
}

namespace {

// An entry the framework issues as a call of its own: not fused into another op (a skipped view still runs).
bool entry_runs(const OpCost& e, const Op* op) {
  return e.fusion == Fusion::kNone || (op && op->is_view && e.fusion == Fusion::kSkipped);
}

}  // namespace

double entry_host_us(const OpCost& e, const Op* op, EntrySource from, const RuntimeProfile& rt,
                     const StepOptions& options, double tensors) {
  const bool runs = entry_runs(e, op);
  const bool library = op && op_kind_info(op->kind).library_call && !e.cost.framework_kernel;
  // An embedding layer per table is that many framework ops (graph nodes, autograd nodes) for one entry.
  const double framework_ops =
      op && op->kind == OpKind::kEmbeddingBag ? static_cast<double>(std::max<std::int64_t>(1, op->bag.lookup_ops)) : 1.0;
  switch (from) {
    case EntrySource::kForward:
      if (!runs) return 0;
      return framework_ops * (rt.host_op_us + (options.training ? rt.host_autograd_op_us : 0.0)) +
             (library ? rt.host_library_call_us : 0.0);
    case EntrySource::kRecompute:  // a checkpoint replays its forward without recording autograd nodes
      return runs ? rt.host_op_us + (library ? rt.host_library_call_us : 0.0) : 0.0;
    case EntrySource::kBackward:
      if (!runs || (e.cost.launches <= 0 && !(op && op->is_view))) return 0;
      return framework_ops * rt.host_backward_op_us + (library ? rt.host_library_call_us : 0.0);
    case EntrySource::kAccumulateGrad:  // the engine runs an AccumulateGrad node per parameter tensor every backward
      return rt.host_accumulate_grad_us * tensors;
    case EntrySource::kAccumulate:  // the later micro-batches' AccumulateGrad nodes, unless kAccumulateGrad has them
      return rt.host_accumulate_grad_us > 0
                 ? 0.0
                 : rt.host_backward_op_us * tensors * (options.grad_accum - 1.0) / options.grad_accum;
    case EntrySource::kZeroGrad:  // zero_grad()'s Python loop: one zeroing call per parameter tensor
      return rt.host_op_us * tensors;
    case EntrySource::kUnscale:  // one multi-tensor unscale-and-check call
      return rt.host_optimizer_op_us;
    case EntrySource::kOptimizer: {
      // A for-loop update issues every operation per tensor, a foreach update one call per operation over the
      // tensor list, a fused update one call.
      const bool per_tensor = !options.optimizer_fused && rt.optimizer_tensors_per_launch <= 1;
      const double calls = options.optimizer_fused ? 1.0
                           : per_tensor            ? unfused_optimizer_ops(options.optimizer) * tensors
                                                   : unfused_optimizer_ops(options.optimizer);
      return rt.host_optimizer_op_us * calls;
    }
    case EntrySource::kCast:  // aten::to from autocast's dispatch wrapper: a framework op without Python
      return e.cost.launches * rt.host_inline_op_us;
    case EntrySource::kCastBackward:
      return e.cost.launches * rt.host_backward_op_us;
    case EntrySource::kClip:  // the clip's Python-level calls, one clip per parameter tensor
      return rt.host_optimizer_op_us * rt.per_tensor.clip_per_tensor_host_ops * tensors;
    case EntrySource::kOther:
      return 0;
  }
  return 0;
}

namespace {

// The clip and update entries of a per-tensor clip (entries[clip_at] and, unfused, the update after it) as the host
// runs them: tensor by tensor, each clip reading its coefficient on the host before the tensor's update is issued,
// so the host cannot run ahead. A tensor takes the longer of the host's calls for its clip and update and the GPU's
// kernels for them (the GPU runs a tensor's update while the host issues the next clip); the group starts after a
// sync and the tensors follow one another.
EntrySync clip_lockstep(const std::vector<OpCost>& entries, std::size_t clip_at, const Graph& graph, double grad_bytes,
                        const StepOptions& options, const CostContext& ctx) {
  const RuntimeProfile& rt = ctx.runtime;
  const auto& km = ctx.kernels;
  const std::vector<double> tensor_elems = parameter_tensor_elems(graph);
  const std::vector<char> is_weight = parameter_tensor_is_weight(graph);
  const double tensors = static_cast<double>(tensor_elems.size());
  const bool with_update = clip_at + 1 < entries.size() && entries[clip_at + 1].name == "optimizer.update";
  // The harness's own per-tensor update (a Python loop over the parameters) or the runtime's, spread evenly.
  const bool own_update = with_update && rt.per_tensor.update_per_tensor_kernels > 0;
  const double clip_host = entries[clip_at].host_us / tensors;
  double update_host = 0, update_launches = 0;
  if (with_update && !own_update) {
    update_host = entries[clip_at + 1].host_us / tensors;
    update_launches = entries[clip_at + 1].cost.launches / tensors;
  }
  double total = 0;
  for (std::size_t t = 0; t < tensor_elems.size(); ++t) {
    const double n = tensor_elems[t];
    double host = clip_host;
    double gpu = km.streaming(n, rt.per_tensor.clip_per_tensor_grad_passes * grad_bytes * n, rt.per_tensor.clip_per_tensor_kernels).time_us +
                 rt.per_tensor.clip_per_tensor_kernels * rt.gpu_gap_per_kernel_us;
    if (own_update) {
      const double d = is_weight[t] ? 1.0 : 0.0;
      const double kernels = rt.per_tensor.update_per_tensor_kernels + d * rt.per_tensor.update_decay_kernels;
      const double calls = rt.per_tensor.update_per_tensor_host_ops + d * rt.per_tensor.update_decay_kernels;
      const double passes = rt.per_tensor.update_per_tensor_passes + d * rt.per_tensor.update_decay_passes;
      host += (rt.host_optimizer_op_us * calls + kernels * rt.host_overhead_per_kernel_us) * options.host_time_scale;
      gpu += km.streaming(n * kernels, passes * grad_bytes * n, kernels).time_us + kernels * rt.gpu_gap_per_kernel_us;
    } else if (with_update) {
      host += update_host;
      const Work w = unfused_optimizer_work(options.optimizer, n);
      gpu += km.streaming(w.flops, w.bytes, update_launches).time_us + update_launches * rt.gpu_gap_per_kernel_us;
    }
    total += std::max(host, gpu);
  }
  // With gradient accumulation the update, and its clip, run once every grad_accum steps.
  const double share = 1.0 / std::max(1, options.grad_accum);
  return {true, with_update ? 2 : 1, total * share, tensors * share};
}

}  // namespace

// A graph that names its eager model code (Graph::model_code): each layer of that code issues its counted torch
// calls (host_inline_op_us each) and module calls (host_module_call_us each), not one host_op_us per graph op. The
// layer's count replaces the per-op charge of its graph ops that run, spread evenly over them; their library setup,
// autograd recording and launches stay as entry_host_us charged them. `first` is the forward entry of ops[0].
void charge_model_code_layers(std::vector<OpCost>& entries, std::size_t first, const Graph& graph,
                              const RuntimeProfile& rt, double host_time_scale) {
  if (!rt.count_model_code_calls || graph.model_code.empty()) return;
  const GraphModelCode& code = find_graph_model_code(graph.model_code);
  const auto& ops = graph.ops;
  int layers = 0;
  for (const auto& op : ops) layers = std::max(layers, op.code_layer + 1);
  std::vector<double> running(static_cast<std::size_t>(layers), 0.0);
  std::vector<char> fused(static_cast<std::size_t>(layers), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const int l = ops[i].code_layer;
    if (l < 0) continue;
    if (entry_runs(entries[first + i], &ops[i])) running[static_cast<std::size_t>(l)] += 1;
    if (ops[i].kind == OpKind::kAttention && ops[i].attn.fused) fused[static_cast<std::size_t>(l)] = 1;
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const int l = ops[i].code_layer;
    OpCost& e = entries[first + i];
    if (l < 0 || !entry_runs(e, &ops[i])) continue;
    const LayerCodeCounts& c = fused[static_cast<std::size_t>(l)] ? code.sdpa : code.eager;
    const double layer_us = c.python_ops * rt.host_inline_op_us + c.module_calls * rt.host_module_call_us;
    e.host_us += (layer_us / running[static_cast<std::size_t>(l)] - rt.host_op_us) * host_time_scale;
  }
}

StepCost schedule_step(const Graph& graph, const CostContext& ctx, const StepOptions& options) {
  StepCost s;
  const auto& ops = graph.ops;
  // Embedding tables are updated by their own backward kernels (op_cost): the dense update, AMP casts and loss
  // scaling cover the other parameters.
  const double params = static_cast<double>(graph.dense_params());
  const double tensors = parameter_tensors(graph);
  const auto& km = ctx.kernels;
  const RuntimeProfile& rt = ctx.runtime;
  // Forward, recompute and backward entries plus a few for casts, accumulation and the update.
  s.entries.reserve(ops.size() * (options.training ? (options.checkpointing ? 3 : 2) : 1) + 8);
  std::vector<EntrySync> marks;
  marks.reserve(s.entries.capacity());
  std::vector<EntryOrigin> origin;
  origin.reserve(s.entries.capacity());
  const auto push = [&](OpCost e, const Op* op, EntrySource from, bool sync_before = false) {
    e.host_us = (entry_host_us(e, op, from, rt, options, tensors) + e.cost.launches * rt.host_overhead_per_kernel_us) *
                options.host_time_scale;
    s.entries.push_back(std::move(e));
    marks.push_back({sync_before});
    origin.push_back({op ? static_cast<int>(op - ops.data()) : -1,
                      from == EntrySource::kForward || from == EntrySource::kRecompute});
  };

  // Mixed precision: the FP32 master weights of the half ops are cast to the compute precision before the forward
  // pass; under autocast each cast is a framework op, and activations crossing between FP32 and half ops are cast
  // too (lumped here: the host and GPU sums are what the timeline needs).
  const bool autocast = ctx.plan.mixed && rt.autocast_per_op_casts;
  // Other mixed-precision runtimes keep the earlier count, a cast per parameter tensor: their host costs per op
  // were fitted with it, and their cast rules (TensorFlow's graph rewrite, MXNet's amp_cast) were not read here.
  const CastWork weight_casts = autocast        ? half_weight_casts(graph)
                                : ctx.plan.mixed ? CastWork{params, tensors}
                                                 : CastWork{};
  const CastWork act_casts =
      autocast ? activation_casts(graph, rt.autocast_softmax_fp32 && ctx.plan.bytes.act < 4.0, options.training,
                                  ctx.embedding_plan != nullptr)
               : CastWork{};
  if (ctx.plan.mixed && weight_casts.tensors > 0)
    push(kernel_entry("amp.cast_weights", OpKind::kElementwise,
                      km.streaming(weight_casts.elems, weight_casts.elems * (4.0 + ctx.plan.bytes.weight),
                                   weight_casts.tensors)),
         nullptr, autocast ? EntrySource::kCast : EntrySource::kOther);
  // A cast from half up to FP32 runs ATen's dynamic-cast copy (Copy.cu direct_copy_kernel_cuda: only FP32 -> half
  // and -> bfloat16 have a vectorized gpu_kernel_nocast path on CUDA; the others go through gpu_kernel's
  // unrolled_elementwise_kernel with LoadWithCast / StoreWithCast) at [memory] dynamic_cast_copy_efficiency of the
  // streaming rate; a cast down runs the vectorized float16_copy_kernel_cuda / bfloat16_copy_kernel_cuda.
  const double copy_share = km.constants().dynamic_cast_copy_efficiency;
  const auto casts = [&](double down_elems, double down_tensors, double up_elems, double up_tensors) {
    const double width = 4.0 + ctx.plan.bytes.act;
    KernelCost k = km.streaming(down_elems, down_elems * width, down_tensors);
    if (up_tensors > 0) {
      KernelCost up = km.streaming(up_elems, up_elems * width, up_tensors, Pipe::kFp32, -1, 0, copy_share);
      if (down_tensors > 0)
        accumulate(k, up);
      else
        k = up;
    }
    return k;
  };
  if (act_casts.tensors > 0)
    push(kernel_entry("amp.cast_activations", OpKind::kElementwise,
                      casts(act_casts.elems - act_casts.up_elems, act_casts.tensors - act_casts.up_tensors,
                            act_casts.up_elems, act_casts.up_tensors)),
         nullptr, EntrySource::kCast);
  const std::size_t forward_first = s.entries.size();
  for (std::size_t i = 0; i < ops.size(); ++i) push(cost_op(ops, i, Phase::kForward, ctx), &ops[i], EntrySource::kForward);
  charge_model_code_layers(s.entries, forward_first, graph, rt, options.host_time_scale);
  if (options.training) {
    // Checkpointing recomputes the forward pass (except the loss) once during backward.
    if (options.checkpointing)
      for (std::size_t i = 0; i < ops.size(); ++i)
        if (ops[i].kind != OpKind::kLoss) {
          OpCost c = cost_op(ops, i, Phase::kForward, ctx);
          c.name += ".recompute";
          push(std::move(c), &ops[i], EntrySource::kRecompute);
        }
    for (std::size_t i = ops.size(); i-- > 0;) push(cost_op(ops, i, Phase::kBackward, ctx), &ops[i], EntrySource::kBackward);
    if (autocast) {
      // Every forward cast records a ToCopyBackward0 node that casts its gradient back: the weights' gradients
      // reach their FP32 leaves this way (torch/csrc/autograd/generated: _to_copy's backward).
      // A cast down's gradient is cast up (the dynamic-cast copy), a cast up's is cast down.
      const double up_n = weight_casts.tensors + act_casts.tensors - act_casts.up_tensors;
      const double up_elems = weight_casts.elems + act_casts.elems - act_casts.up_elems;
      push(kernel_entry("amp.cast_grads", OpKind::kElementwise,
                        casts(act_casts.up_elems, act_casts.up_tensors, up_elems, up_n), Phase::kBackward),
           nullptr, EntrySource::kCastBackward);
    }
    // Gradients in the parameters' precision (fp32 masters under mixed precision).
    const double grad_bytes = ctx.plan.mixed ? 4.0 : ctx.plan.bytes.weight;
    if (rt.host_accumulate_grad_us > 0 || rt.zero_grad_kernels_per_tensor > 0) {
      // The leaves' AccumulateGrad nodes (torch/csrc/autograd/functions/accumulate_grad.h): into a gradient that
      // zero_grad() kept (zeroed, not set to None) the first micro-batch adds with a kernel per tensor; into None
      // it takes the new gradient without one. Later micro-batches add in grad.accumulate below.
      const double first = 1.0 / options.grad_accum;
      const double adds = rt.zero_grad_kernels_per_tensor > 0 ? first : 0.0;
      push(kernel_entry("autograd.accumulate_grad", OpKind::kElementwise,
                        km.streaming(params * adds, 3.0 * grad_bytes * params * adds, tensors * adds), Phase::kBackward),
           nullptr, EntrySource::kAccumulateGrad);
    }
    if (options.grad_accum > 1) {
      // Accumulating micro-batches: each backward after the first adds its gradients into the accumulators
      // (PyTorch's AccumulateGrad grad += new, TensorFlow's assign_add into accumulation variables): read both,
      // write one, in the parameters' precision (fp32 masters under mixed precision).
      const double later = (options.grad_accum - 1.0) / options.grad_accum;
      push(kernel_entry("grad.accumulate", OpKind::kElementwise,
                        km.streaming(params * later, 3.0 * grad_bytes * params * later, tensors * later),
                        Phase::kBackward),
           nullptr, EntrySource::kAccumulate);
    }
    if (ctx.plan.mixed)
      // Loss scaling: gradients are unscaled, checked for inf/nan and cast to fp32 for the master update.
      // Under autocast the gradients are FP32 already (amp.cast_grads): GradScaler unscales them in place; so are
      // the FP32 variables' gradients where a runtime casts its variables per read (TensorFlow).
      // A scaler that unscales each gradient as it is computed does it every micro-batch (a backward entry).
      push(kernel_entry("amp.unscale_grads", OpKind::kElementwise,
                        km.streaming(2.0 * params, params * ((autocast || rt.amp_fp32_variables ? 4.0 : ctx.plan.bytes.weight) + 4.0), tensors),
                        rt.amp_unscale_per_micro_batch && options.grad_accum > 1 ? Phase::kBackward : Phase::kUpdate),
           nullptr, EntrySource::kUnscale);
    if (options.optimizer_step && rt.zero_grad_kernels_per_tensor > 0)
      // zero_grad() without set_to_none (the default before PyTorch 2.0) fills every gradient with zeros, a kernel
      // per tensor, once per update.
      push(kernel_entry("optimizer.zero_grad", OpKind::kElementwise,
                        km.streaming(0, grad_bytes * params, tensors * rt.zero_grad_kernels_per_tensor), Phase::kUpdate),
           nullptr, EntrySource::kZeroGrad);
    // A loop whose unfused optimizer clips each gradient with torch.nn.utils.clip_grad_norm_ before updating its
    // parameter (NVIDIA's 2019-2020 BertAdam, data/harnesses): per tensor a norm, the coefficient's scalar kernels,
    // its read on the host (PyTorch 1.x: `if clip_coef < 1`) and the scaling.
    const bool clip_per_tensor =
        options.optimizer_step && !options.optimizer_fused && rt.per_tensor.clip_per_tensor_kernels > 0 && tensors > 0;
    const std::size_t clip_at = s.entries.size();
    if (clip_per_tensor)
      push(kernel_entry("optimizer.clip_grad_norm", OpKind::kOptimizer,
                        km.streaming(params, rt.per_tensor.clip_per_tensor_grad_passes * grad_bytes * params,
                                     rt.per_tensor.clip_per_tensor_kernels * tensors),
                        Phase::kUpdate),
           nullptr, EntrySource::kClip);
    // A loop that updates each tensor with its own in-place ops (a harness's Python optimizer, e.g. BertAdam):
    // its kernels, calls and passes per tensor replace the runtime's grouping of the unfused update.
    const bool own_update =
        options.optimizer_step && !options.optimizer_fused && rt.per_tensor.update_per_tensor_kernels > 0 && tensors > 0;
    if (own_update) {
      const std::vector<double> elems = parameter_tensor_elems(graph);
      const std::vector<char> is_weight = parameter_tensor_is_weight(graph);
      double kernels = 0, calls = 0, flops = 0, bytes = 0;
      for (std::size_t t = 0; t < elems.size(); ++t) {
        const double d = is_weight[t] ? 1.0 : 0.0;
        const double k = rt.per_tensor.update_per_tensor_kernels + d * rt.per_tensor.update_decay_kernels;
        kernels += k;
        calls += rt.per_tensor.update_per_tensor_host_ops + d * rt.per_tensor.update_decay_kernels;
        flops += k * elems[t];  // one operation per element per kernel
        bytes += (rt.per_tensor.update_per_tensor_passes + d * rt.per_tensor.update_decay_passes) * grad_bytes * elems[t];
      }
      push(kernel_entry("optimizer.update", OpKind::kOptimizer, km.streaming(flops, bytes, kernels), Phase::kUpdate),
           nullptr, EntrySource::kOptimizer);
      s.entries.back().host_us =
          (rt.host_optimizer_op_us * calls + kernels * rt.host_overhead_per_kernel_us) * options.host_time_scale;
    } else if (options.optimizer_step) {
      const Work w = options.optimizer_fused ? optimizer_work(options.optimizer, params)
                                             : unfused_optimizer_work(options.optimizer, params);
      // Fused: the runtime's launches per tensor. Unfused: every operation of the update launches over the
      // tensors, a group of optimizer_tensors_per_launch at a time (1 for a per-tensor loop).
      const double launches = options.optimizer_fused
                                  ? std::max(1.0, tensors * rt.optimizer_kernels_per_tensor)
                                  : unfused_optimizer_ops(options.optimizer) *
                                        std::ceil(tensors / std::max(1.0, rt.optimizer_tensors_per_launch));
      // PyTorch's GradScaler.step reads found_inf with .item() before it lets the optimizer run: a sync, once
      // per update (with accumulation the update's share is small and the sync is left out).
      const bool sync = ctx.plan.mixed && rt.amp_sync_before_update && options.grad_accum == 1;
      push(kernel_entry("optimizer.update", OpKind::kOptimizer, km.streaming(w.flops, w.bytes, launches), Phase::kUpdate),
           nullptr, EntrySource::kOptimizer, sync);
    }
    if (clip_per_tensor)
      marks[clip_at] = clip_lockstep(s.entries, clip_at, graph, grad_bytes, options, ctx);
  }
  // Kernels that read what the kernel before them just wrote find it in L2 on GPUs that hold it.
  apply_l2_reuse(s.entries, origin, ops, km, ctx.plan.bytes.act);
  if (options.grad_accum > 1) {
    // Gradient accumulation: the update phase (unscale, optimizer) runs once per grad_accum micro-batches, so each
    // micro-batch step carries 1/grad_accum of it.
    for (auto& e : s.entries)
      if (e.phase == Phase::kUpdate) repeat(e, 1.0 / options.grad_accum);
  }
  for (const auto& e : s.entries) {
    s.launches += e.cost.launches;
    s.flops += e.cost.flops;
    s.bytes += e.cost.bytes;
  }
  run_host_timeline(s, marks, rt.host_step_us * options.host_time_scale, rt.syncs_per_step, rt.gpu_gap_per_kernel_us);
  return s;
}

StepCost schedule_pass(std::vector<OpCost> entries, const RuntimeProfile& runtime, double syncs, double host_time_scale) {
  StepCost s;
  s.entries = std::move(entries);
  for (auto& e : s.entries) {
    e.host_us += e.cost.launches * runtime.host_overhead_per_kernel_us * host_time_scale;
    s.launches += e.cost.launches;
    s.flops += e.cost.flops;
    s.bytes += e.cost.bytes;
  }
  run_host_timeline(s, {}, 0, syncs, runtime.gpu_gap_per_kernel_us);
  return s;
}

StepCost append_phase(StepCost first, StepCost second) {
  StepCost s = std::move(first);
  for (auto& e : second.entries) s.entries.push_back(std::move(e));
  s.gpu_us += second.gpu_us;
  s.host_us += second.host_us;
  s.step_us += second.step_us;
  s.gpu_wait_us += second.gpu_wait_us;
  s.syncs += second.syncs;
  s.launches += second.launches;
  s.flops += second.flops;
  s.bytes += second.bytes;
  return s;
}

void run_host_timeline(StepCost& s, const std::vector<EntrySync>& sync, double host_step_us, double syncs_per_step,
                       double gpu_gap_per_kernel_us) {
  // The host starts the step with its own bookkeeping, then issues each entry; an entry's first kernel may start
  // once it is issued and the GPU is free, its last once the host has issued it.
  double host = host_step_us, host_busy = host_step_us, gpu = 0, gpu_busy = 0, syncs = syncs_per_step;
  for (std::size_t k = 0; k < s.entries.size(); ++k) {
    const OpCost& e = s.entries[k];
    const double g = e.cost.time_us + e.cost.launches * gpu_gap_per_kernel_us;
    if (k < sync.size() && sync[k].lockstep_entries > 0) {
      // Lock step: the host waits for the GPU, then both take the group's time, each busy for its own share.
      const std::size_t end = std::min(s.entries.size(), k + static_cast<std::size_t>(sync[k].lockstep_entries));
      for (std::size_t j = k; j < end; ++j) {
        gpu_busy += s.entries[j].cost.time_us + s.entries[j].cost.launches * gpu_gap_per_kernel_us;
        host_busy += s.entries[j].host_us;
        if (j > k && j < sync.size() && sync[j].before) syncs += 1;  // e.g. GradScaler's read inside the group
      }
      host = gpu = std::max(host, gpu) + sync[k].lockstep_us;
      syncs += sync[k].lockstep_syncs;
      k = end - 1;
      continue;
    }
    if (k < sync.size() && sync[k].before) {
      host = std::max(host, gpu);
      syncs += 1;
    }
    gpu_busy += g;
    host_busy += e.host_us;
    if (e.cost.launches <= 0) {
      host += e.host_us;
      gpu += g;
      continue;
    }
    const double launches = std::max(1.0, e.cost.launches);
    const double per_launch = e.host_us / launches;
    const double start = std::max(gpu, host + per_launch);
    gpu = std::max(start + g, host + e.host_us + g / launches);
    host += e.host_us;
  }
  s.gpu_us = gpu_busy;
  s.host_us = host_busy;
  s.syncs = syncs;
  // A step that ends in a synchronisation cannot overlap the next step's host work with this step's kernels: the
  // step is the whole timeline. Without one the host runs ahead and the slower of the two sets the pace.
  s.step_us = syncs_per_step > 0 ? std::max(host, gpu) : std::max(gpu_busy, host_busy);
  s.gpu_wait_us = std::max(0.0, s.step_us - gpu_busy);
}

}  // namespace perfcast
