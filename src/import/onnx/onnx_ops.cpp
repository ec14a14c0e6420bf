// Node -> GraphBuilder op mapping: each costed ONNX node (or fused pattern) becomes one op, or a few.
#include "import/onnx/onnx_graph_build.h"

#ifdef PERFCAST_HAVE_ONNX

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/onnx/onnx_shape_rules.h"

namespace perfcast::onnx_import {

void GraphBuild::passthrough(const ox::NodeProto& n) {
  ++uncosted_[qualified_type(n)];
  const auto acts = activations(n);
  const int id = acts.empty() ? -1 : acts[0]->id;
  const auto rules = has_subgraph(n) ? std::vector<std::optional<Shape>>{} : rule_shapes(n);
  for (int k = 0; k < n.output_size(); ++k) {
    if (n.output(k).empty()) continue;
    std::optional<Shape> s = inferred(n.output(k));
    if (!s && static_cast<std::size_t>(k) < rules.size()) s = rules[static_cast<std::size_t>(k)];
    if (!s && !acts.empty()) s = acts[0]->shape;
    if (!s) s = Shape{1};
    set_activation(n, k, id, *s, acts.empty() ? ox::TensorProto::FLOAT : acts[0]->dtype);
  }
}

void GraphBuild::emit(const ox::NodeProto& n, const Plan& plan) {
  const std::string& op = n.op_type();
  const bool ms = n.domain() == "com.microsoft";
  switch (plan.role) {
    case Role::kAttention: return attention(n, plan);
    case Role::kGelu:
    case Role::kSilu: {
      const Value& x = value(n, plan.x);
      const std::string name = op_name(n);
      const Tensor t = plan.role == Role::kGelu ? em_->b().gelu(x.tensor(), name) : em_->b().silu(x.tensor(), name);
      set_activation(n, 0, t.id, out_shape(n, 0, x.shape), x.dtype);
      return;
    }
    case Role::kRms: {
      const Value& x = value(n, plan.x);
      const Tensor t = em_->b().rms_norm(x.tensor(), op_name(n));
      const Value* w = plan.weight.empty() ? nullptr : &value(n, plan.weight);
      const std::int64_t params = own(w);
      const std::int64_t welems = w ? numel(w->shape) : 0;
      em_->patch(t.id, [=](Op& o) {
        o.params = params;
        o.weight_elems = welems;
      });
      set_activation(n, 0, t.id, out_shape(n, 0, x.shape), x.dtype);
      return;
    }
    case Role::kMse: {
      const Value& x = value(n, plan.x);
      const Tensor t = em_->b().mse_loss(x.tensor(), op_name(n));
      set_activation(n, 0, t.id, out_shape(n, 0, Shape{}), x.dtype);
      return;
    }
    case Role::kViewTranspose: {
      const Value& x = need(n, 0);
      const auto rules = rule_shapes(n);
      const Shape out = out_shape(n, 0, rules.empty() ? std::nullopt : rules[0]);
      set_activation(n, 0, em_->view(x, out, op_name(n)), out, x.dtype);
      return;
    }
    default:
      break;
  }

  if (op == "Conv") return conv(n, 0, 1, 2, false);
  if (op == "ConvTranspose") return conv(n, 0, 1, 2, true);
  if (op == "ConvInteger") return conv(n, 0, 1, -1, false);
  if (op == "QLinearConv") return conv(n, 0, 3, 8, false);
  if (op == "Gemm") return gemm(n, plan);
  if (op == "MatMul" || op == "FusedMatMul" || op == "MatMulInteger") return matmul(n, plan, 0, 1);
  if (op == "QLinearMatMul") return matmul(n, plan, 0, 3);
  if (ms && (op == "Attention" || op == "MultiHeadAttention")) return ms_attention(n);
  if (op == "MaxPool") return pool(n, PoolKind::kMax);
  if (op == "AveragePool" || op == "LpPool") return pool(n, PoolKind::kAvg);
  if (op == "GlobalAveragePool" || op == "GlobalLpPool") return global_pool(n, PoolKind::kAvg);
  if (op == "GlobalMaxPool") return global_pool(n, PoolKind::kMax);
  if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") return reduce(n);
  if (op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization" ||
      op == "GroupNormalization" || op == "SimplifiedLayerNormalization" || op == "RMSNormalization" ||
      op == "LpNormalization" || op == "MeanVarianceNormalization" || op == "SkipLayerNormalization" ||
      op == "SkipSimplifiedLayerNormalization")
    return norm(n);
  if (op == "LSTM") return rnn(n, 4, 40);
  if (op == "GRU") return rnn(n, 3, 30);
  if (op == "RNN") return rnn(n, 1, 4);
  if (op == "Gather") return gather(n);
  if (op == "SoftmaxCrossEntropyLoss" || op == "NegativeLogLikelihoodLoss") return loss(n);
  if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    const Value& x = need(n, 0);
    const Tensor t = em_->b().softmax(x.tensor(), op_name(n));
    set_activation(n, 0, t.id, out_shape(n, 0, x.shape), x.dtype);
    return;
  }
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" ||
      (op == "Cast" && attr_int(n, "to", 0) == need(n, 0).dtype)) {
    const Value& x = need(n, 0);
    const auto rules = rule_shapes(n);
    const Shape out = out_shape(n, 0, rules.empty() ? std::nullopt : rules[0]);
    if (numel(out) != numel(x.shape)) {
      if (rebatched_)
        fail(n, fmt::format("has a target shape {} that bakes in the exported batch of {}; use --batch {} or "
                            "export the model with a dynamic batch dimension",
                            shape_text(out), m_.fixed_batch_, m_.fixed_batch_));
      fail(n, fmt::format("reshapes {} ({} elements) into {}", shape_text(x.shape), numel(x.shape), shape_text(out)));
    }
    const int dtype = op == "Cast" ? static_cast<int>(attr_int(n, "to", x.dtype)) : x.dtype;
    set_activation(n, 0, em_->view(x, out, op_name(n)), out, dtype);
    return;
  }
  static const std::map<std::string, double, std::less<>> kElementwise{
      {"Relu", 1},     {"LeakyRelu", 2}, {"PRelu", 2},   {"Elu", 4},       {"Selu", 5},     {"Celu", 5},
      {"Sigmoid", 4},  {"HardSigmoid", 3}, {"HardSwish", 4}, {"Tanh", 4},  {"Softplus", 4}, {"Softsign", 3},
      {"Mish", 8},     {"Gelu", 8},      {"FastGelu", 8}, {"BiasGelu", 8}, {"QuickGelu", 5}, {"ThresholdedRelu", 2},
      {"Shrink", 2},   {"Erf", 8},       {"Exp", 4},     {"Log", 4},       {"Sqrt", 2},     {"Reciprocal", 1},
      {"Neg", 1},      {"Abs", 1},       {"Floor", 1},   {"Ceil", 1},      {"Round", 1},    {"Sin", 8},
      {"Cos", 8},      {"Tan", 8},       {"Asin", 8},    {"Acos", 8},      {"Atan", 8},     {"Sinh", 8},
      {"Cosh", 8},     {"Asinh", 8},     {"Acosh", 8},   {"Atanh", 8},     {"Sign", 1},     {"Not", 1},
      {"IsNaN", 1},    {"IsInf", 1},     {"Cast", 1},    {"CastLike", 1},  {"Clip", 2},     {"Dropout", 2},
      {"LRN", 14},     {"CumSum", 1},    {"Trilu", 1},   {"QuantizeLinear", 2}, {"DequantizeLinear", 2},
      {"Add", 1},      {"Sub", 1},       {"Mul", 1},     {"Div", 1},       {"Pow", 4},      {"Max", 1},
      {"Min", 1},      {"Sum", 1},       {"Mean", 1},    {"Equal", 1},     {"Less", 1},     {"Greater", 1},
      {"LessOrEqual", 1}, {"GreaterOrEqual", 1}, {"And", 1}, {"Or", 1},   {"Xor", 1},      {"Mod", 2},
      {"BitShift", 1}, {"Where", 1},     {"BitwiseAnd", 1}, {"BitwiseOr", 1}, {"BitwiseXor", 1}, {"BitwiseNot", 1},
      {"EyeLike", 0}};
  if (auto it = kElementwise.find(op); it != kElementwise.end()) return elementwise(n, it->second);
  static const std::set<std::string, std::less<>> kMovement{
      "Transpose", "Concat", "Split", "Slice", "Pad", "Expand", "Tile", "Resize", "Upsample", "DepthToSpace",
      "SpaceToDepth", "GatherElements", "GatherND", "ScatterND", "ScatterElements", "Scatter", "ReverseSequence",
      "TopK", "OneHot", "ConstantOfShape"};
  if (kMovement.count(op)) return data_movement(n);
  passthrough(n);
}

void GraphBuild::conv(const ox::NodeProto& n, int xi, int wi, int bi, bool transposed) {
  const Value& x = need(n, xi);
  const Value& w = need(n, wi);
  const Value* bias = bi >= 0 ? input(n, bi) : nullptr;
  const std::size_t rank = x.shape.size();
  if (rank < 3 || rank > 5 || w.shape.size() != rank) return passthrough(n);
  const auto sd = rank - 2;
  const std::int64_t group = attr_int(n, "group", 1);
  std::vector<std::int64_t> kernel = attr_ints(n, "kernel_shape");
  if (kernel.empty()) kernel.assign(w.shape.begin() + 2, w.shape.end());
  std::vector<std::int64_t> strides = attr_ints(n, "strides"), dil = attr_ints(n, "dilations"),
                            pads = attr_ints(n, "pads"), out_pad = attr_ints(n, "output_padding"),
                            out_sh = attr_ints(n, "output_shape");
  strides.resize(sd, 1);
  dil.resize(sd, 1);
  pads.resize(2 * sd, 0);
  out_pad.resize(sd, 0);
  if (kernel.size() != sd) fail(n, "has a kernel_shape that does not match its input rank");
  if (group <= 0 || std::any_of(strides.begin(), strides.end(), [](std::int64_t v) { return v <= 0; }) ||
      std::any_of(dil.begin(), dil.end(), [](std::int64_t v) { return v <= 0; }) ||
      std::any_of(kernel.begin(), kernel.end(), [](std::int64_t v) { return v <= 0; }))
    fail(n, "has a non-positive group, stride, dilation or kernel size");
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  const std::int64_t c_out = transposed ? w.shape[1] * group : w.shape[0];
  Shape out{x.shape[0], c_out};
  std::vector<std::int64_t> pb(sd, 0);
  for (std::size_t i = 0; i < sd; ++i) {
    const std::int64_t in = x.shape[2 + i];
    std::int64_t o;
    if (transposed) {
      const std::int64_t span = (kernel[i] - 1) * dil[i] + 1;
      if (out_sh.size() >= sd) o = out_sh[out_sh.size() - sd + i];
      else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") o = in * strides[i];
      else o = strides[i] * (in - 1) + out_pad[i] + span - pads[i] - pads[i + sd];
      pb[i] = pads[i];
    } else {
      o = window_out(in, kernel[i], strides[i], dil[i], pads[i], pads[i + sd], auto_pad, false);
      pb[i] = pad_begin(in, o, kernel[i], strides[i], dil[i], pads[i], auto_pad);
    }
    if (o <= 0) fail(n, fmt::format("gives a non-positive output size along spatial axis {}", i));
    out.push_back(o);
  }
  out = out_shape(n, 0, out);
  const std::string name = op_name(n);
  const Dims k(kernel.begin(), kernel.end()), s(strides.begin(), strides.end());
  Tensor t;
  if (transposed) {
    t = em_->b().conv_transpose(x.tensor(), c_out, k, s, Dims(pb.begin(), pb.end()), bias != nullptr, name);
  } else {
    if (x.shape[1] % group != 0 || c_out % group != 0)
      fail(n, fmt::format("has {} input and {} output channels, not divisible by {} groups", x.shape[1], c_out, group));
    // Symmetric padding keeps the builder's own output size positive; the exact ONNX size is patched in.
    Dims sym;
    for (std::size_t i = 0; i < sd; ++i) sym.push_back(std::max(pads[i], pads[i + sd]));
    t = em_->b().conv(x.tensor(), c_out, k, s, sym, Dims(dil.begin(), dil.end()), group, bias != nullptr, name);
  }
  const std::int64_t params = own(&w, true) + own(bias, true);
  const std::int64_t welems = numel(w.shape) + (bias ? numel(bias->shape) : 0);
  em_->patch(t.id, [=](Op& o) {
    o.out_shape = out;
    for (std::size_t i = 0; i < sd && 2 + i < out.size(); ++i) {
      o.conv.out[i] = out[2 + i];
      o.conv.pad[i] = pb[i];
      o.conv.dilation[i] = dil[i];
    }
    o.conv.groups = group;
    o.conv.c_out = c_out;
    o.params = params;
    o.weight_elems = welems;
  });
  set_activation(n, 0, t.id, out, x.dtype);
}

// Registers the output of a linear layer, with the Add the plan folded into it (bias) when present.
void GraphBuild::finish_bias(const ox::NodeProto& n, const Plan& plan, int id, const Shape& out,
                             std::int64_t n_features) {
  set_activation(n, 0, id, out, values_.at(n.input(0)).dtype);
  if (plan.bias.empty()) return;
  const Value& b = value(n, plan.bias);
  Value v = values_.at(n.output(0));
  if (numel(b.shape) == n_features) {
    const std::int64_t params = own(&b);
    em_->patch(id, [=](Op& o) {
      o.mm.bias = true;
      o.params += params;
      o.weight_elems += n_features;
    });
  } else {
    // Not a per-feature bias after all: an ordinary broadcast add.
    const std::int64_t params = own(&b);
    const Tensor t = em_->b().add(v.tensor(), v.tensor(), em_->unique(plan.bias_out));
    const Shape s = broadcast({v.shape, b.shape}).value_or(v.shape);
    em_->patch(t.id, [=](Op& o) {
      o.inputs = {v.id};
      o.in_elems = numel(v.shape);
      o.out_shape = s;
      o.params = params;
      o.weight_elems = numel(b.shape);
    });
    v.id = t.id;
    v.shape = s;
  }
  values_[plan.bias_out] = v;
}

void GraphBuild::gemm(const ox::NodeProto& n, const Plan& plan) {
  const Value& a = need(n, 0);
  const Value& b = need(n, 1);
  const Value* c = input(n, 2);
  if (a.shape.size() != 2 || b.shape.size() != 2) fail(n, "needs 2-D operands");
  const bool ta = attr_int(n, "transA", 0) != 0, tb = attr_int(n, "transB", 0) != 0;
  const std::int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  const std::int64_t nn = tb ? b.shape[0] : b.shape[1];
  const Shape out = out_shape(n, 0, Shape{m, nn});
  const std::string name = op_name(n);
  int id;
  if (b.is_const && !a.is_const) {
    const bool const_bias = c && c->is_const;
    const Tensor t = em_->b().linear(Tensor{a.id, {m, k}}, nn, const_bias, name);
    const std::int64_t params = own(&b, true) + (const_bias ? own(c) : 0);
    const std::int64_t welems = numel(b.shape) + (const_bias ? numel(c->shape) : 0);
    em_->patch(t.id, [=](Op& o) {
      o.params = params;
      o.weight_elems = welems;
      o.out_shape = out;
    });
    id = t.id;
    if (!c || c->is_const) return finish_bias(n, plan, id, out, nn);
  } else {
    const Tensor t = em_->b().matmul(Tensor{a.id, {m, k}}, Tensor{b.id, {k, nn}}, name);
    const Value* w = a.is_const ? &a : b.is_const ? &b : nullptr;
    const std::int64_t params = own(w, true);
    std::vector<int> ins;
    for (const Value* v : {&a, &b})
      if (!v->is_const) ins.push_back(v->id);
    em_->patch(t.id, [=](Op& o) {
      o.inputs = ins;
      o.params = params;
      if (w) {
        o.weight_elems = numel(w->shape);
        o.mm.weight_operand = true;
      }
    });
    id = t.id;
    if (!c) return finish_bias(n, plan, id, out, nn);
    if (c->is_const) {
      const std::int64_t bp = own(c);
      em_->patch(id, [=](Op& o) {
        o.mm.bias = true;
        o.params += bp;
        o.weight_elems += numel(c->shape);
      });
      return finish_bias(n, plan, id, out, nn);
    }
  }
  // An activation C: a separate add.
  const Tensor sum = em_->b().add(Tensor{id, out}, c->tensor(), op_name(n, ".add_c"));
  em_->patch(sum.id, [=](Op& o) { o.out_shape = out; });
  set_activation(n, 0, sum.id, out, a.dtype);
}

void GraphBuild::matmul(const ox::NodeProto& n, const Plan& plan, int ai, int bi) {
  const Value& a = need(n, ai);
  const Value& b = need(n, bi);
  Shape as = a.shape, bs = b.shape;
  if (as.empty() || bs.empty()) fail(n, "has a scalar operand");
  // FusedMatMul (com.microsoft) transposes the last two axes of either operand.
  auto swap_last = [](Shape& s) {
    if (s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
  };
  if (attr_int(n, "transA", 0)) swap_last(as);
  if (attr_int(n, "transB", 0)) swap_last(bs);
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const std::int64_t m = as[as.size() - 2], nn = bs.back();
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const Shape batch_dims = broadcast({ab, bb}).value_or(numel(ab) >= numel(bb) ? ab : bb);
  Shape rule = batch_dims;
  if (!a_vec) rule.push_back(m);
  if (!b_vec) rule.push_back(nn);
  const Shape out = out_shape(n, 0, rule);
  const std::string name = op_name(n);
  if (b.is_const && !a.is_const && bs.size() == 2) {
    // A linear layer: [..., k] x [k, n] weights.
    const Tensor t = em_->b().linear(Tensor{a.id, as}, nn, false, name);
    const std::int64_t params = own(&b, true);
    const std::int64_t welems = numel(b.shape);
    em_->patch(t.id, [=](Op& o) {
      o.params = params;
      o.weight_elems = welems;
      o.out_shape = out;
    });
    return finish_bias(n, plan, t.id, out, nn);
  }
  const Tensor t = em_->b().matmul(Tensor{a.id, as}, Tensor{b.id, bs}, name);
  const Value* w = b.is_const ? &b : a.is_const ? &a : nullptr;
  const std::int64_t params = own(w, true);
  std::vector<int> ins;
  std::int64_t in_elems = 0;
  for (const Value* v : {&a, &b})
    if (!v->is_const) {
      ins.push_back(v->id);
      in_elems += numel(v->shape);
    }
  const std::int64_t batch = std::max<std::int64_t>(1, numel(batch_dims));
  em_->patch(t.id, [=](Op& o) {
    o.inputs = ins;
    o.in_elems = in_elems;
    o.mm.batch = batch;
    o.out_shape = out;
    o.params = params;
    if (w) {
      o.weight_elems = numel(w->shape);
      o.mm.weight_operand = true;
    }
  });
  finish_bias(n, plan, t.id, out, nn);
}

void GraphBuild::attention(const ox::NodeProto& n, const Plan& plan) {
  const Value& q = value(n, plan.x);
  const Value& k = value(n, plan.k);
  const Value& v = need(n, 1);
  const std::size_t r = q.shape.size();
  if (r < 2 || k.shape.size() != r || v.shape.size() != r) fail(n, "has attention operands of different ranks");
  const std::int64_t sq = q.shape[r - 2], d = q.shape[r - 1], skv = k.shape[r - 1], dv = v.shape[r - 1];
  std::int64_t batch = 1, heads = 1, kv_heads = 1;
  if (r >= 4) {
    batch = numel(Shape(q.shape.begin(), q.shape.end() - 3));
    heads = q.shape[r - 3];
    kv_heads = k.shape[r - 3];
  } else if (r == 3) {
    batch = q.shape[0];
  }
  const Tensor tq{q.id, {batch, sq, heads * d}}, tk{k.id, {batch, skv, kv_heads * d}},
      tv{v.id, {batch, skv, kv_heads * dv}};
  const Tensor t = em_->b().attention(tq, tk, tv, heads, kv_heads, plan.causal, false, op_name(n), plan.dropout);
  Shape rule(q.shape.begin(), q.shape.end() - 1);
  rule.push_back(dv);
  const Shape out = out_shape(n, 0, rule);
  if (numel(out) != numel(t.shape)) em_->patch(t.id, [=](Op& o) { o.out_shape = out; });
  set_activation(n, 0, t.id, out, q.dtype);
}

// com.microsoft Attention (fused QKV projection + core) and MultiHeadAttention (core on projected q, k, v).
void GraphBuild::ms_attention(const ox::NodeProto& n) {
  const Value& x = need(n, 0);
  const std::int64_t heads = attr_int(n, "num_heads", 1);
  const bool causal = attr_int(n, "unidirectional", 0) != 0;
  if (x.shape.size() != 3) return passthrough(n);
  const std::int64_t batch = x.shape[0], s = x.shape[1];
  if (n.op_type() == "Attention") {
    const Value& w = need(n, 1);
    const Value* b = input(n, 2);
    if (w.shape.size() != 2) return passthrough(n);
    const std::int64_t qkv = w.shape.back();
    const Tensor proj = em_->b().linear(x.tensor(), qkv, b != nullptr, op_name(n, ".qkv"));
    const std::int64_t params = own(&w, true) + own(b);
    em_->patch(proj.id, [=](Op& o) { o.params = params; });
    const std::int64_t hidden = qkv / 3;
    const Tensor part{proj.id, {batch, s, hidden}};
    const Tensor t = em_->b().attention(part, part, part, heads, heads, causal, false, op_name(n));
    set_activation(n, 0, t.id, out_shape(n, 0, Shape{batch, s, hidden}), x.dtype);
    return;
  }
  const Value* k = input(n, 1);
  const Value* v = input(n, 2);
  if (!k || !v || k->shape.size() != 3 || v->shape.size() != 3) return passthrough(n);
  const Tensor t = em_->b().attention(x.tensor(), k->tensor(), v->tensor(), heads, heads, causal, false, op_name(n));
  set_activation(n, 0, t.id, out_shape(n, 0, Shape{batch, s, v->shape[2]}), x.dtype);
}

void GraphBuild::pool(const ox::NodeProto& n, PoolKind kind) {
  const Value& x = need(n, 0);
  const std::size_t rank = x.shape.size();
  if (rank < 3 || rank > 5) return passthrough(n);
  const auto sd = rank - 2;
  std::vector<std::int64_t> kernel = attr_ints(n, "kernel_shape"), strides = attr_ints(n, "strides"),
                            pads = attr_ints(n, "pads"), dil = attr_ints(n, "dilations");
  if (kernel.size() != sd) fail(n, "needs a kernel_shape with one entry per spatial axis");
  strides.resize(sd, 1);
  pads.resize(2 * sd, 0);
  dil.resize(sd, 1);
  for (std::size_t i = 0; i < sd; ++i)
    if (kernel[i] <= 0 || strides[i] <= 0 || dil[i] <= 0) fail(n, "has a non-positive kernel size, stride or dilation");
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  const bool ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  Shape rule{x.shape[0], x.shape[1]};
  for (std::size_t i = 0; i < sd; ++i)
    rule.push_back(window_out(x.shape[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[i + sd], auto_pad, ceil_mode));
  const Shape out = out_shape(n, 0, rule);
  Dims sym;
  for (std::size_t i = 0; i < sd; ++i) sym.push_back(std::min(std::max(pads[i], pads[i + sd]), kernel[i] - 1));
  const Dims k(kernel.begin(), kernel.end()), s(strides.begin(), strides.end());
  const std::string name = op_name(n);
  const Tensor t = kind == PoolKind::kMax ? em_->b().max_pool(x.tensor(), k, s, sym, false, name)
                                          : em_->b().avg_pool(x.tensor(), k, s, sym, false, name);
  em_->patch(t.id, [=](Op& o) { o.out_shape = out; });
  set_activation(n, 0, t.id, out, x.dtype);
  if (n.output_size() > 1) set_activation(n, 1, t.id, out, ox::TensorProto::INT64);  // MaxPool indices
}

void GraphBuild::global_pool(const ox::NodeProto& n, PoolKind kind) {
  const Value& x = need(n, 0);
  if (x.shape.size() < 3) return passthrough(n);
  const std::string name = op_name(n);
  Tensor t;
  if (kind == PoolKind::kAvg) {
    t = em_->b().global_avg_pool(x.tensor(), name);
  } else {
    const Dims k(x.shape.begin() + 2, x.shape.end());
    t = em_->b().max_pool(x.tensor(), k, k, {0}, false, name);
  }
  set_activation(n, 0, t.id, out_shape(n, 0, t.shape), x.dtype);
}

void GraphBuild::reduce(const ox::NodeProto& n) {
  const Value& x = need(n, 0);
  const auto rules = rule_shapes(n);
  const Shape out = out_shape(n, 0, rules.empty() ? std::nullopt : rules[0]);
  const std::int64_t in = numel(x.shape), o = std::max<std::int64_t>(1, numel(out));
  const std::string& op = n.op_type();
  const OpKind kind = OpKind::kPool;
  const int id = em_->generic(kind, {x.id}, out, in, static_cast<double>(in) / static_cast<double>(o), op_name(n),
                              true, op == "ReduceMax" || op == "ReduceMin");
  const bool is_max = op == "ReduceMax" || op == "ReduceMin" || op == "ArgMax" || op == "ArgMin";
  em_->patch(id, [=](Op& op_) { op_.pool = is_max ? PoolKind::kMax : PoolKind::kAvg; });
  set_activation(n, 0, id, out, op == "ArgMax" || op == "ArgMin" ? ox::TensorProto::INT64 : x.dtype);
}

void GraphBuild::norm(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  Value x = need(n, 0);
  const std::string name = op_name(n);
  Tensor t;
  std::int64_t params = 0, welems = 0;
  auto learn = [&](int k) {
    const Value* v = input(n, k);
    if (!v) return;
    params += own(v);
    welems += numel(v->shape);
  };
  if (x.shape.size() < 2 && (op == "BatchNormalization" || op == "InstanceNormalization" || op == "GroupNormalization"))
    return passthrough(n);
  if (op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") {
    const Value& skip = need(n, 1);
    const Tensor sum = em_->b().add(x.tensor(), skip.tensor(), op_name(n, ".skip_add"));
    x.id = sum.id;
    learn(4);  // bias
  }
  if (op == "BatchNormalization") {
    t = em_->b().batch_norm(x.tensor(), name);
    learn(1);
    learn(2);
  } else if (op == "InstanceNormalization") {
    t = em_->b().group_norm(x.tensor(), x.shape[1], name);
    learn(1);
    learn(2);
  } else if (op == "GroupNormalization") {
    const std::int64_t g = attr_int(n, "num_groups", 1);
    t = em_->b().group_norm(x.tensor(), g > 0 && x.shape[1] % g == 0 ? g : 1, name);
    learn(1);
    learn(2);
  } else if (op == "LayerNormalization" || op == "SkipLayerNormalization") {
    t = em_->b().layer_norm(x.tensor(), name);
    learn(op == "LayerNormalization" ? 1 : 2);
    learn(op == "LayerNormalization" ? 2 : 3);
  } else if (op == "MeanVarianceNormalization") {
    t = em_->b().layer_norm(x.tensor(), name);
  } else {  // RMS-style: SimplifiedLayerNormalization, RMSNormalization, LpNormalization
    t = em_->b().rms_norm(x.tensor(), name);
    if (op != "LpNormalization") learn(op == "SkipSimplifiedLayerNormalization" ? 2 : 1);
  }
  em_->patch(t.id, [=](Op& o) {
    o.params = params;
    o.weight_elems = welems;
  });
  set_activation(n, 0, t.id, out_shape(n, 0, x.shape), x.dtype);
  // Extra outputs (running statistics, mean / inverse std-dev) come from the same kernel.
  for (int k = 1; k < n.output_size(); ++k) {
    if (n.output(k).empty()) continue;
    Shape s;
    if (op == "BatchNormalization") {
      s = {x.shape[1]};
    } else if (op == "LayerNormalization") {
      const std::int64_t axis = std::max<std::int64_t>(0, norm_axis(attr_int(n, "axis", -1), x.shape.size()));
      s = x.shape;
      for (std::size_t a = static_cast<std::size_t>(axis); a < s.size(); ++a) s[a] = 1;
    } else {
      s = x.shape;
    }
    if (auto inf = inferred(n.output(k))) s = *inf;
    set_activation(n, k, t.id, s, x.dtype);
  }
}

void GraphBuild::rnn(const ox::NodeProto& n, int gates, double cell_flops) {
  const Value& x = need(n, 0);
  const Value& w = need(n, 1);
  const Value& r = need(n, 2);
  const Value* b = input(n, 3);
  const Value* peep = n.op_type() == "LSTM" ? input(n, 7) : nullptr;
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3) return passthrough(n);
  const bool batch_first = attr_int(n, "layout", 0) != 0;
  const std::int64_t s = batch_first ? x.shape[1] : x.shape[0], nb = batch_first ? x.shape[0] : x.shape[1];
  const std::int64_t in = x.shape[2];
  std::int64_t h = attr_int(n, "hidden_size", 0);
  if (h <= 0) h = r.shape.back();
  const std::string direction = attr_string(n, "direction", "forward");
  const int dirs = direction == "bidirectional" ? 2 : 1;
  const std::int64_t g = gates;
  const std::int64_t w_params = own(&w, true), r_params = own(&r, true), b_params = own(b), p_params = own(peep);
  const std::int64_t ih_total = w_params + b_params / 2, hh_total = r_params + (b_params - b_params / 2) + p_params;
  const bool has_bias = b != nullptr;
  int last = -1;
  for (int d = 0; d < dirs; ++d) {
    const std::string suffix = dirs == 1 ? "" : (d == 0 ? ".forward" : ".reverse");
    const Tensor t = em_->b().lstm(Tensor{x.id, {nb, s, in}}, h, op_name(n, suffix));
    const std::int64_t ih = d == dirs - 1 ? ih_total - (dirs - 1) * (ih_total / dirs) : ih_total / dirs;
    const std::int64_t hh = d == dirs - 1 ? hh_total - (dirs - 1) * (hh_total / dirs) : hh_total / dirs;
    em_->patch(t.id - 2, [=](Op& o) {
      o.mm.n = g * h;
      o.mm.bias = has_bias;
      o.out_shape = {nb, s, g * h};
      o.params = ih;
      o.weight_elems = in * g * h + (has_bias ? g * h : 0);
    });
    em_->patch(t.id - 1, [=](Op& o) {
      o.mm.n = g * h;
      o.mm.k = h;
      o.mm.bias = has_bias;
      o.out_shape = {nb, s, g * h};
      o.in_elems = nb * s * h;
      o.params = hh;
      o.weight_elems = h * g * h + (has_bias ? g * h : 0);
    });
    em_->patch(t.id, [=](Op& o) {
      o.flops_per_out_elem = cell_flops;
      o.in_elems = nb * s * g * h;
    });
    last = t.id;
  }
  const Shape y = batch_first ? Shape{nb, s, dirs, h} : Shape{s, dirs, nb, h};
  const Shape state = batch_first ? Shape{nb, dirs, h} : Shape{dirs, nb, h};
  set_activation(n, 0, last, out_shape(n, 0, y), x.dtype);
  for (int k = 1; k < n.output_size(); ++k) set_activation(n, k, last, out_shape(n, k, state), x.dtype);
}

void GraphBuild::gather(const ox::NodeProto& n) {
  const Value& data = need(n, 0);
  const Value& idx = need(n, 1);
  const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), data.shape.size());
  if (axis < 0 || axis >= static_cast<std::int64_t>(data.shape.size())) fail(n, "has an axis outside its data's rank");
  Shape rule(data.shape.begin(), data.shape.begin() + axis);
  rule.insert(rule.end(), idx.shape.begin(), idx.shape.end());
  rule.insert(rule.end(), data.shape.begin() + axis + 1, data.shape.end());
  const Shape out = out_shape(n, 0, rule);
  if (data.is_const && !idx.is_const && axis == 0 && !data.shape.empty()) {
    // An embedding table lookup.
    const std::int64_t vocab = data.shape[0], dim = numel(Shape(data.shape.begin() + 1, data.shape.end()));
    const Tensor ids{idx.id, idx.shape.empty() ? Shape{1} : idx.shape};
    const Tensor t = em_->b().embedding(ids, vocab, dim, op_name(n));
    const std::int64_t params = own(&data, true);
    em_->patch(t.id, [=](Op& o) {
      o.params = params;
      o.out_shape = out;
    });
    set_activation(n, 0, t.id, out, data.dtype);
    return;
  }
  std::vector<int> ins;
  std::int64_t in_elems = numel(out);
  for (const Value* v : {&data, &idx})
    if (!v->is_const) ins.push_back(v->id);
  if (!idx.is_const) in_elems += numel(idx.shape);
  const int id = em_->generic(OpKind::kDataMovement, ins, out, in_elems, 0, op_name(n), false, false);
  set_activation(n, 0, id, out, data.dtype);
}

void GraphBuild::elementwise(const ox::NodeProto& n, double flops) {
  const std::string& op = n.op_type();
  const auto acts = activations(n);
  const auto rules = rule_shapes(n);
  if (acts.empty()) return passthrough(n);
  const Value& x = *acts[0];
  const Shape out = out_shape(n, 0, rules.empty() ? std::nullopt : rules[0]);
  const std::string name = op_name(n);
  std::int64_t params = 0, welems = 0;
  static const std::set<std::string, std::less<>> kLearnedOperand{"Add", "Sub", "Mul", "Div", "PRelu", "BiasGelu"};
  for (int k = 0; k < n.input_size(); ++k) {
    const Value* v = input(n, k);
    if (!v || !v->is_const || non_learned_input(op, k)) continue;
    if (kLearnedOperand.count(op)) params += own(v);
    welems += numel(v->shape);
  }
  int id;
  int dtype = x.dtype;
  if (op == "Relu") id = em_->b().relu(x.tensor(), false, name).id;
  else if (op == "Sigmoid") id = em_->b().sigmoid(x.tensor(), name).id;
  else if (op == "Tanh") id = em_->b().tanh(x.tensor(), name).id;
  else if (op == "Gelu" || op == "FastGelu" || op == "BiasGelu") id = em_->b().gelu(x.tensor(), name).id;
  else if (op == "Dropout") id = em_->b().dropout(x.tensor(), name).id;
  else if (op == "Clip") id = em_->b().relu6(x.tensor(), name).id;
  else if (op == "LRN") id = em_->b().lrn(x.tensor(), attr_int(n, "size", 5), name).id;
  else if ((op == "Add" || op == "Mul") && acts.size() == 2)
    id = (op == "Add" ? em_->b().add(x.tensor(), acts[1]->tensor(), name) : em_->b().mul(x.tensor(), acts[1]->tensor(), name)).id;
  else {
    // Nonlinear binaries keep their inputs for backward; linear ones (add, sub, casts) do not.
    static const std::set<std::string, std::less<>> kSavesInput{"Mul", "Div", "Pow", "Max", "Min", "PRelu", "LeakyRelu",
                                                                "Elu", "Selu", "Celu", "Erf", "Sqrt", "Softplus", "Mish",
                                                                "HardSwish", "HardSigmoid", "QuickGelu", "Log"};
    std::vector<int> ins;
    std::int64_t in_elems = 0;
    for (const Value* v : acts) {
      ins.push_back(v->id);
      in_elems += numel(v->shape);
    }
    id = em_->generic(OpKind::kElementwise, ins, out, in_elems, flops, name, kSavesInput.count(op) > 0,
                      op == "Exp" || op == "Sigmoid");
    if (op == "Cast" || op == "CastLike") dtype = static_cast<int>(attr_int(n, "to", x.dtype));
    static const std::set<std::string, std::less<>> kBool{"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                                          "And", "Or", "Xor", "Not", "IsNaN", "IsInf"};
    if (kBool.count(op)) dtype = ox::TensorProto::BOOL;
  }
  std::int64_t in_elems = 0;
  std::vector<int> ins;
  for (const Value* v : acts) {
    ins.push_back(v->id);
    in_elems += numel(v->shape);
  }
  em_->patch(id, [=](Op& o) {
    o.inputs = ins;
    o.in_elems = in_elems;
    o.out_shape = out;
    o.params = params;
    o.weight_elems = welems;
  });
  set_activation(n, 0, id, out, out_dtype(n, 0, dtype));
  if (op == "Dropout" && n.output_size() > 1) set_activation(n, 1, id, out, ox::TensorProto::BOOL);
}

void GraphBuild::data_movement(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  const auto acts = activations(n);
  if (acts.empty()) return passthrough(n);
  const auto rules = rule_shapes(n);
  std::vector<Shape> outs;
  for (int k = 0; k < n.output_size(); ++k)
    outs.push_back(out_shape(n, k, static_cast<std::size_t>(k) < rules.size() ? rules[static_cast<std::size_t>(k)]
                                                                              : std::nullopt));
  const Value& x = *acts[0];
  const std::string name = op_name(n);
  int id;
  if (op == "Transpose") {
    const Shape& o = outs[0];
    if (o.empty()) {
      id = em_->view(x, o, name);
    } else {
      const Tensor h{x.id, {o[0], numel(x.shape) / o[0]}};
      id = em_->b().transpose(h, Shape(o.begin() + 1, o.end()), name).id;
    }
  } else if (op == "Concat") {
    std::vector<int> ins;
    std::int64_t in_elems = 0, params = 0;
    for (int k = 0; k < n.input_size(); ++k) {
      const Value* v = input(n, k);
      if (!v) continue;
      in_elems += numel(v->shape);
      if (v->is_const) params += own(v);  // e.g. a learned class token
      else ins.push_back(v->id);
    }
    id = em_->generic(OpKind::kDataMovement, ins, outs[0], in_elems, 0, name, false, false);
    em_->patch(id, [=](Op& o) { o.params = params; });
  } else {
    // Slices and gathers read what they write; the rest read their whole input.
    std::int64_t out_total = 0;
    for (const auto& s : outs) out_total += numel(s);
    const bool reads_output_only = op == "Slice" || op == "GatherElements" || op == "GatherND" || op == "TopK";
    std::vector<int> ins;
    std::int64_t in_elems = 0;
    for (const Value* v : acts) {
      ins.push_back(v->id);
      in_elems += numel(v->shape);
    }
    if (reads_output_only) in_elems = out_total;
    const Shape main = outs.size() == 1 ? outs[0] : Shape{out_total};
    id = em_->generic(OpKind::kDataMovement, ins, main, in_elems, 0, name, false, false);
  }
  for (int k = 0; k < n.output_size(); ++k)
    set_activation(n, k, id, outs[static_cast<std::size_t>(k)],
                   op == "TopK" && k == 1 ? ox::TensorProto::INT64 : x.dtype);
}

void GraphBuild::loss(const ox::NodeProto& n) {
  const Value& scores = need(n, 0);
  if (scores.shape.size() < 2) return passthrough(n);
  const Tensor t = em_->b().cross_entropy(scores.tensor(), op_name(n));
  const Value* labels = input(n, 1);
  const std::string reduction = attr_string(n, "reduction", "mean");
  const Shape out = out_shape(n, 0, reduction == "none" && labels ? labels->shape : Shape{});
  set_activation(n, 0, t.id, out, scores.dtype);
  if (n.output_size() > 1) set_activation(n, 1, t.id, scores.shape, scores.dtype);
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
