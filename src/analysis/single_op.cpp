#include "analysis/single_op.h"

#include <limits>

#include "core/error.h"
#include "cost/op_cost.h"
#include "device/catalog.h"
#include "graph/builder.h"

namespace perfcast {

namespace {

// Dimensions a single kernel can have: each below 2^31 (cuBLAS/cuDNN take int), element counts below 2^40.
constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
constexpr double kMaxElems = 1099511627776.0;

// The rule in the words of the command line's own check of the flag (cli/number_flags.h, cmd_op.cpp's shape flags),
// so that one rule reads as one message; 0 is a flag not given (a CSV cell left empty).
std::int64_t dim(std::int64_t v, const char* name, std::int64_t min = 1) {
  const std::string rule =
      "a whole number (digits only) from " + std::to_string(min) + " to " + std::to_string(kMaxDim);
  if (v == 0 && min > 0) throw InputError(std::string("op: --") + name + " is needed: " + rule);
  if (v < min || v > kMaxDim)
    throw InputError(std::string("--") + name + " takes " + rule + ", got '" + std::to_string(v) + "'");
  return v;
}

void check_elems(double elems, const char* what) {
  if (elems > kMaxElems) throw InputError(std::string("op: the ") + what + " has more than 2^40 elements");
}

// Builds the single-op graph; returns it with the op's index.
Graph build(const OpSpec& s) {
  if (s.op == "matmul" || s.op == "linear") {
    const std::int64_t m = dim(s.m, "m"), n = dim(s.n, "n"), k = dim(s.k, "k"), b = dim(s.batch_count, "batch-count");
    check_elems(static_cast<double>(b) * static_cast<double>(m) * static_cast<double>(std::max(n, k)), "matmul");
    if (s.op == "linear") {
      GraphBuilder g("op", b);
      const Tensor x = g.input({m, k});
      g.linear(x, n, s.bias);
      return g.finish();
    }
    GraphBuilder g("op", b);
    const Tensor a = g.input({m, k});
    const Tensor w = g.input({k, n});
    g.matmul(a, w);
    return g.finish();
  }
  if (s.op == "conv2d") {
    const std::int64_t n = dim(s.conv_n, "conv-n"), c = dim(s.conv_c, "conv-c"), h = dim(s.conv_h, "conv-h"),
                       w = dim(s.conv_w, "conv-w"), k = dim(s.conv_k, "conv-k"), r = dim(s.conv_r, "conv-r"),
                       sk = dim(s.conv_s, "conv-s");
    const std::int64_t ph = dim(s.pad_h, "pad-h", 0), pw = dim(s.pad_w, "pad-w", 0);
    const std::int64_t sh = dim(s.stride_h, "stride-h"), sw = dim(s.stride_w, "stride-w");
    if (h + 2 * ph < r || w + 2 * pw < sk) throw InputError("op: the filter is larger than the padded input");
    check_elems(static_cast<double>(n) * static_cast<double>(std::max(c, k)) * static_cast<double>(h) *
                    static_cast<double>(w), "convolution");
    GraphBuilder g("op", n);
    const Tensor x = g.input({c, h, w});
    g.conv(x, k, {r, sk}, {sh, sw}, {ph, pw});
    return g.finish();
  }
  if (s.op == "conv3d") {
    // The zoo's 3D convolution (nodule3d's Conv3d layers): the same builder call with three spatial dimensions.
    const std::int64_t n = dim(s.conv_n, "conv-n"), c = dim(s.conv_c, "conv-c"), d = dim(s.conv_d, "conv-d"),
                       h = dim(s.conv_h, "conv-h"), w = dim(s.conv_w, "conv-w"), k = dim(s.conv_k, "conv-k"),
                       t = dim(s.conv_t, "conv-t"), r = dim(s.conv_r, "conv-r"), sk = dim(s.conv_s, "conv-s");
    const std::int64_t pd = dim(s.pad_d, "pad-d", 0), ph = dim(s.pad_h, "pad-h", 0), pw = dim(s.pad_w, "pad-w", 0);
    const std::int64_t sd = dim(s.stride_d, "stride-d"), sh = dim(s.stride_h, "stride-h"), sw = dim(s.stride_w, "stride-w");
    if (d + 2 * pd < t || h + 2 * ph < r || w + 2 * pw < sk) throw InputError("op: the filter is larger than the padded input");
    check_elems(static_cast<double>(n) * static_cast<double>(std::max(c, k)) * static_cast<double>(d) *
                    static_cast<double>(h) * static_cast<double>(w), "convolution");
    GraphBuilder g("op", n);
    const Tensor x = g.input({c, d, h, w});
    g.conv(x, k, {t, r, sk}, {sd, sh, sw}, {pd, ph, pw});
    return g.finish();
  }
  if (s.op == "elementwise" || s.op == "softmax" || s.op == "layernorm") {
    const std::int64_t rows = dim(s.rows, "rows"), cols = dim(s.cols, "cols");
    check_elems(static_cast<double>(rows) * static_cast<double>(cols), "tensor");
    GraphBuilder g("op", rows);
    const Tensor x = g.input({cols});
    if (s.op == "softmax") {
      g.softmax(x);
    } else if (s.op == "layernorm") {
      g.layer_norm(x);
    } else {
      const std::string& f = s.function;
      if (f == "add" || f == "mul" || f == "div" || f == "pow") {
        const Tensor y = g.input({cols});
        f == "add" ? g.add(x, y) : g.mul(x, y);  // div and pow move the same bytes as mul
      } else if (f == "relu") {
        g.relu(x, false);
      } else if (f == "gelu") {
        g.gelu(x);
      } else if (f == "tanh") {
        g.tanh(x);
      } else if (f == "scale") {
        g.relu(x, false);  // x * c: one read, one write, one operation per element, as an out-of-place ReLU
      } else {
        throw_unknown("elementwise function", f, {"add", "mul", "div", "pow", "relu", "gelu", "tanh", "scale"});
      }
    }
    return g.finish();
  }
  if (s.op == "attention") {
    const std::int64_t b = dim(s.batch_count, "batch-count"), heads = dim(s.heads, "heads"), q = dim(s.m, "m"),
                       kv = dim(s.n, "n"), d = dim(s.k, "k");
    check_elems(static_cast<double>(b) * static_cast<double>(heads) * static_cast<double>(q) * static_cast<double>(kv),
                "score matrix");
    GraphBuilder g("op", b);
    const Tensor tq = g.input({q, heads * d});
    const Tensor tk = g.input({kv, heads * d});
    g.attention(tq, tk, tk, heads, heads, s.causal, false);
    return g.finish();
  }
  throw_unknown("op", s.op, {"matmul", "linear", "conv2d", "conv3d", "elementwise", "softmax", "layernorm", "attention"});
}

KernelCost minus(KernelCost a, const KernelCost& b) {
  a.time_us = std::max(0.0, a.time_us - b.time_us);
  a.flops = std::max(0.0, a.flops - b.flops);
  a.bytes = std::max(0.0, a.bytes - b.bytes);
  a.compute_us = std::max(0.0, a.compute_us - b.compute_us);
  a.memory_us = std::max(0.0, a.memory_us - b.memory_us);
  a.launches = std::max(0.0, a.launches - b.launches);
  return a;
}

}  // namespace

OpContext op_context(const std::string& gpu, const std::string& runtime, const std::string& precision,
                     double power_limit_w, bool training) {
  OpContext c{find_gpu(gpu), {}, find_runtime(runtime), {}, {}, false};
  if (power_limit_w > 0) c.device.tdp_w = power_limit_w;
  c.arch = architecture_for(c.device);
  c.plan = resolve_precision(precision, c.device, c.arch, c.runtime, "", training);
  c.conv_autotune = c.runtime.conv_autotune;
  return c;
}

PreparedOp prepare_op(const OpSpec& spec) {
  if (spec.direction != "fwd" && spec.direction != "bwd" && spec.direction != "bwd_data" && spec.direction != "bwd_filter")
    throw_unknown("direction", spec.direction, {"fwd", "bwd", "bwd_data", "bwd_filter"});
  if (spec.direction == "bwd_filter" && spec.op != "conv2d" && spec.op != "conv3d" && spec.op != "linear")
    throw InputError("op: --direction bwd_filter applies to conv2d, conv3d and linear (ops with weights)");
  PreparedOp p{build(spec), 0, spec.direction};
  p.index = p.graph.ops.size();
  for (std::size_t i = 0; i < p.graph.ops.size(); ++i)
    if (!p.graph.ops[i].is_view) p.index = i;
  PERFCAST_ASSERT(p.index < p.graph.ops.size(), "every single-op graph has one costed op");
  return p;
}

OpPrediction predict_prepared(PreparedOp& prepared, const OpContext& ctx, const KernelCostModel& kernels) {
  const bool fwd = prepared.direction == "fwd";
  CostContext cc{kernels, ctx.runtime, ctx.plan, !fwd};
  cc.forced_conv_algorithm = ctx.forced_conv_algorithm;
  cc.conv_autotune = ctx.conv_autotune;
  std::vector<Op>& ops = prepared.graph.ops;
  const std::size_t index = prepared.index;
  OpPrediction p;
  if (fwd) {
    p.cost = cost_op(ops, index, Phase::kForward, cc).cost;
    return p;
  }
  Op& op = ops[index];
  op.needs_input_grad = prepared.direction != "bwd_filter";
  const KernelCost both = cost_op(ops, index, Phase::kBackward, cc).cost;
  if (prepared.direction != "bwd_data" || op.params == 0) {
    p.cost = both;
    return p;
  }
  // The data gradient alone: both gradients less the weight gradient alone.
  op.needs_input_grad = false;
  p.cost = minus(both, cost_op(ops, index, Phase::kBackward, cc).cost);
  op.needs_input_grad = true;
  return p;
}

OpPrediction predict_op(const OpSpec& spec, const OpContext& ctx, const KernelCostModel& kernels) {
  PreparedOp p = prepare_op(spec);
  return predict_prepared(p, ctx, kernels);
}

OpPrediction predict_op(const OpSpec& spec, const OpContext& ctx) {
  const KernelCostModel kernels(ctx.device, ctx.arch);
  return predict_op(spec, ctx, kernels);
}

}  // namespace perfcast
