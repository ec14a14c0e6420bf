#include "cost/op_cost.h"

#include <algorithm>

#include "graph/op_arithmetic.h"

namespace perfcast {

std::string_view phase_name(Phase p) {
  static constexpr std::string_view kNames[] = {"forward", "backward", "update"};
  return kNames[static_cast<int>(p)];
}

namespace {

bool is_pointwise(const Op& op) { return op.kind == OpKind::kElementwise && op.repeats == 1; }

bool is_depthwise(const ConvGeometry& c) { return c.groups > 1 && c.groups == c.c_in && c.c_out / c.groups <= 4; }

bool winograd_eligible(const ConvGeometry& c) {
  return c.spatial_dims == 2 && !c.transposed && c.groups == 1 && c.kernel[0] == 3 && c.kernel[1] == 3 &&
         c.stride[0] == 1 && c.stride[1] == 1 && c.dilation[0] == 1 && c.dilation[1] == 1 && c.c_in >= 16;
}

// Pipe for CUDA-core work in this precision (depthwise convs, elementwise math).
Pipe cuda_pipe_for(const PrecisionPlan& plan, const DeviceSpec& d) {
  if (plan.bytes.act <= 2 && !plan.mixed && d.peak(Pipe::kFp16) >= d.peak(Pipe::kFp32)) return Pipe::kFp16;
  return Pipe::kFp32;
}

KernelCost conv_cost(const Op& op, Phase phase, const CostContext& ctx) {
  const auto& c = op.conv;
  const auto& km = ctx.kernels;
  const auto& cc = cost_constants();
  const ElemBytes eb = ctx.plan.bytes;
  const Pipe pipe = ctx.plan.conv_pipe;
  const double in_b = static_cast<double>(op.in_elems) * eb.act, out_b = static_cast<double>(op.out_elems) * eb.act;
  const double w_b = static_cast<double>(op.weight_elems) * eb.weight;
  const MatmulGeometry fwd = conv_as_gemm(c);
  const double flops = 2.0 * static_cast<double>(fwd.batch * fwd.m) * static_cast<double>(fwd.n) * static_cast<double>(fwd.k);

  if (is_depthwise(c)) {
    const double passes = phase == Phase::kForward ? 1.0 : (op.needs_input_grad ? 2.0 : 1.0);
    return km.streaming(flops * passes, (in_b + out_b + w_b) * passes, passes, cuda_pipe_for(ctx.plan, km.device()),
                        cc.depthwise_compute_efficiency);
  }
  const bool tensor = is_tensor_pipe(pipe);
  const double wino = (!tensor && ctx.runtime.conv_autotune && winograd_eligible(c)) ? cc.winograd_speedup : 1.0;
  // Tensor-core convolutions on an NCHW framework pay a layout transpose of input and output.
  const double transpose_bytes = (tensor && ctx.runtime.nchw_tensor_core_transposes) ? 2.0 * (in_b + out_b) : 0.0;

  if (phase == Phase::kForward) {
    KernelCost k = km.gemm(fwd, pipe, flops / wino, in_b + out_b + w_b + transpose_bytes, 1.0);
    k.flops = flops;
    return k;
  }
  // Weight gradient: [c_out/g] x [c_in/g * k] with depth N*out_pixels.
  MatmulGeometry wg{fwd.batch, fwd.n, fwd.k, fwd.m, true, false};
  KernelCost k = km.gemm(wg, pipe, flops, in_b + out_b + w_b + transpose_bytes, cc.wgrad_efficiency);
  if (op.needs_input_grad) {
    // Data gradient: [N*in_pixels] x [c_in/g] with depth c_out/g * k (a transposed convolution).
    const std::int64_t kernel_volume = fwd.k / std::max<std::int64_t>(1, c.c_in / c.groups);
    MatmulGeometry dg{fwd.batch, fwd.m, c.c_in / c.groups, fwd.n * kernel_volume, true, false};
    KernelCost d = km.gemm(dg, pipe, flops / wino, in_b + out_b + w_b + transpose_bytes, cc.dgrad_efficiency);
    k.flops += flops;
    k.bytes += d.bytes;
    k.compute_us += d.compute_us;
    k.memory_us += d.memory_us;
    k.time_us += d.time_us;
    k.launches += d.launches;
  }
  return k;
}

KernelCost matmul_cost(const Op& op, Phase phase, const CostContext& ctx) {
  const auto& g = op.mm;
  const auto& km = ctx.kernels;
  const ElemBytes eb = ctx.plan.bytes;
  const Pipe pipe = ctx.plan.matmul_pipe;
  const double reps = static_cast<double>(op.repeats);
  const double a_b = static_cast<double>(op.in_elems) * eb.act, out_b = static_cast<double>(op.out_elems) * eb.act;
  const double w_b = static_cast<double>(op.weight_elems) * eb.weight;
  const double flops = 2.0 * static_cast<double>(g.batch * g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  if (phase == Phase::kForward) return km.gemm(g, pipe, flops * reps, a_b + out_b + w_b * reps, 1.0, reps);
  // dB = A^T dY: [k x n] with depth m; dA = dY B^T: [m x k] with depth n.
  MatmulGeometry wg{g.batch, g.k, g.n, g.m, g.weight_operand, false};
  KernelCost k = km.gemm(wg, pipe, flops * reps, a_b + out_b + w_b * reps, cost_constants().wgrad_efficiency, reps);
  if (op.needs_input_grad) {
    MatmulGeometry dg{g.batch, g.m, g.k, g.n, true, false};
    KernelCost d = km.gemm(dg, pipe, flops * reps, a_b + out_b + w_b * reps, cost_constants().dgrad_efficiency, reps);
    k.flops += d.flops;
    k.bytes += d.bytes;
    k.compute_us += d.compute_us;
    k.memory_us += d.memory_us;
    k.time_us += d.time_us;
    k.launches += d.launches;
  }
  return k;
}

KernelCost attention_cost(const Op& op, Phase phase, const CostContext& ctx) {
  const auto& a = op.attn;
  const auto& km = ctx.kernels;
  const Work w = phase == Phase::kForward ? forward_work(op, ctx.plan.bytes, ctx.training) : backward_work(op, ctx.plan.bytes);
  const MatmulGeometry scores{a.batch * a.heads, a.q_len, a.kv_len, a.head_dim, false, false};
  if (a.fused) return km.gemm(scores, ctx.plan.matmul_pipe, w.flops, w.bytes, 0.7);
  // Unfused: QK^T and PV GEMMs plus a softmax pass over the score matrix (x2-3 kernels in backward).
  const double gemm_flops = 4.0 * static_cast<double>(a.batch * a.heads) * static_cast<double>(a.q_len) *
                            static_cast<double>(a.kv_len) * static_cast<double>(a.head_dim) *
                            (phase == Phase::kForward ? 1.0 : 2.0);
  const double score_bytes = static_cast<double>(a.batch * a.heads * a.q_len * a.kv_len) * ctx.plan.bytes.act;
  KernelCost k = km.gemm(scores, ctx.plan.matmul_pipe, gemm_flops, w.bytes - 2.0 * score_bytes, 1.0,
                         phase == Phase::kForward ? 2.0 : 4.0);
  KernelCost s = km.streaming(w.flops - gemm_flops, 2.0 * score_bytes, phase == Phase::kForward ? 1.0 : 1.0);
  k.flops += s.flops;
  k.bytes += s.bytes;
  k.memory_us += s.memory_us;
  k.time_us += s.time_us;
  k.launches += s.launches;
  return k;
}

}  // namespace

Fusion fusion_of(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training) {
  const Op& op = ops[index];
  if (op.is_view) return Fusion::kSkipped;
  if (!training && op.kind == OpKind::kLoss) return Fusion::kSkipped;
  if (!training && op.kind == OpKind::kElementwise && op.name.find("dropout") != std::string::npos)
    return Fusion::kSkipped;
  if (!training && op.kind == OpKind::kNorm && op.norm == NormKind::kBatch && runtime.fold_bn_inference &&
      !op.inputs.empty() && op.inputs[0] >= 0 && ops[op.inputs[0]].kind == OpKind::kConv)
    return Fusion::kFolded;
  if (index == 0 || op.inputs.empty() || op.inputs[0] < 0) return Fusion::kNone;
  // Find the producer, looking through ops removed in this mode.
  std::size_t prev = static_cast<std::size_t>(op.inputs[0]);
  while (prev > 0 && fusion_of(ops, prev, runtime, training) == Fusion::kFolded) prev = static_cast<std::size_t>(ops[prev].inputs[0]);
  const Op& producer = ops[prev];
  if (!is_pointwise(op)) return Fusion::kNone;
  if (runtime.fuse_epilogue && (producer.kind == OpKind::kConv || producer.kind == OpKind::kMatmul)) return Fusion::kIntoPrevious;
  if (runtime.fuse_elementwise_chains &&
      (is_pointwise(producer) || producer.kind == OpKind::kNorm || (runtime.fuse_epilogue && producer.kind == OpKind::kConv)))
    return Fusion::kIntoPrevious;
  return Fusion::kNone;
}

OpCost cost_op(const std::vector<Op>& ops, std::size_t index, Phase phase, const CostContext& ctx) {
  const Op& op = ops[index];
  OpCost out;
  out.name = op.name;
  out.kind = op.kind;
  out.phase = phase;
  out.fusion = fusion_of(ops, index, ctx.runtime, ctx.training);
  if (out.fusion == Fusion::kSkipped || out.fusion == Fusion::kFolded) {
    out.cost.launches = 0;
    out.cost.time_us = 0;
    return out;
  }
  const auto& km = ctx.kernels;
  switch (op.kind) {
    case OpKind::kConv:
      out.cost = conv_cost(op, phase, ctx);
      return out;
    case OpKind::kMatmul:
      out.cost = matmul_cost(op, phase, ctx);
      return out;
    case OpKind::kAttention:
      out.cost = attention_cost(op, phase, ctx);
      return out;
    default:
      break;
  }
  Work w = phase == Phase::kForward ? forward_work(op, ctx.plan.bytes, ctx.training) : backward_work(op, ctx.plan.bytes);
  double launches = static_cast<double>(op.repeats);
  if (out.fusion == Fusion::kIntoPrevious) {
    // The producer's output stays on chip: neither its write nor this op's read reaches DRAM.
    const double intermediate = static_cast<double>(ops[op.inputs[0]].out_elems) * ctx.plan.bytes.act;
    w.bytes = std::max(0.0, w.bytes - 2.0 * intermediate);
    launches = 0;
  }
  // Batch norm in training computes statistics in a reduction kernel and applies them in a second one.
  if (op.kind == OpKind::kNorm && ctx.training && launches > 0) launches = phase == Phase::kForward ? 2 : 2;
  out.cost = km.streaming(w.flops, w.bytes, launches, cuda_pipe_for(ctx.plan, km.device()));
  return out;
}

}  // namespace perfcast
