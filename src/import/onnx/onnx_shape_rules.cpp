// Shape rules of the ONNX importer: broadcasting, convolution/pooling windows and the per-op output shapes used
// where ONNX shape inference gives none.
#include "import/onnx/onnx_shape_rules.h"

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

#include "import/onnx/onnx_graph_build.h"

namespace perfcast::onnx_import {

std::optional<Shape> broadcast(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    for (std::size_t k = 0; k < s.size(); ++k) {
      const std::size_t o = rank - s.size() + k;
      if (s[k] == out[o] || s[k] == 1) continue;
      if (out[o] == 1) out[o] = s[k];
      else return std::nullopt;
    }
  }
  return out;
}

// Output spatial size of a convolution or pooling window along one axis (ONNX rules).
std::int64_t window_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pb,
                        std::int64_t pe, const std::string& auto_pad, bool ceil_mode) {
  const std::int64_t span = (k - 1) * d + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (in + s - 1) / s;
  if (auto_pad == "VALID") return (in - span) / s + 1;
  const std::int64_t num = in + pb + pe - span;
  if (!ceil_mode) return num / s + 1;
  std::int64_t o = (num + s - 1) / s + 1;
  if ((o - 1) * s >= in + pb) --o;  // the last window must start inside the input or the left padding
  return o;
}

// Padding at the start of one axis, after auto_pad.
std::int64_t pad_begin(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t s, std::int64_t d,
                       std::int64_t explicit_pad, const std::string& auto_pad) {
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return auto_pad == "VALID" ? 0 : explicit_pad;
  const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
  return auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
}

// Output shapes by the ONNX operator definitions, for the ops shape inference may leave open.
std::vector<std::optional<Shape>> GraphBuild::rule_shapes(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  std::vector<const Value*> in;
  for (int i = 0; i < n.input_size(); ++i) in.push_back(input(n, i));
  auto shape = [&](std::size_t k) -> const Shape& { return in[k]->shape; };
  auto data = [&](std::size_t k) -> std::optional<std::vector<std::int64_t>> {
    if (k >= in.size() || !in[k] || !in[k]->data) return std::nullopt;
    return in[k]->data->ints();
  };
  using R = std::vector<std::optional<Shape>>;
  if (in.empty() || !in[0]) return {};
  const Shape& x = shape(0);
  const std::size_t rank = x.size();

  static const std::set<std::string, std::less<>> kSame{
      "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus",
      "Softsign", "Mish", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "ThresholdedRelu", "Shrink", "Erf", "Exp",
      "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos",
      "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Not", "IsNaN", "IsInf", "Cast", "CastLike",
      "Identity", "Dropout", "Clip", "Softmax", "LogSoftmax", "Hardmax", "CumSum", "Trilu", "QuantizeLinear",
      "DequantizeLinear", "LRN", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
      "GroupNormalization", "LpNormalization", "MeanVarianceNormalization", "SimplifiedLayerNormalization",
      "RMSNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "ReverseSequence",
      "ScatterND", "ScatterElements", "Scatter", "EyeLike", "BitwiseNot"};
  static const std::set<std::string, std::less<>> kBroadcast{
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "And", "Or", "Xor", "Mod", "BitShift", "Where", "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  if (kSame.count(op)) return R{x};
  if (kBroadcast.count(op)) {
    std::vector<Shape> shapes;
    for (const Value* v : in)
      if (v) shapes.push_back(v->shape);
    if (auto b = broadcast(shapes)) return R{*b};
    // Not broadcastable: the larger operand's shape (what the builder assumes).
    Shape best = x;
    for (const auto& s : shapes)
      if (numel(s) > numel(best)) best = s;
    return R{best};
  }
  if (op == "Reshape") {
    auto target = data(1);
    if (!target) {
      if (auto s = find_attr(n, "shape")) target = std::vector<std::int64_t>(s->ints().begin(), s->ints().end());
      else return {};
    }
    Shape out = *target;
    const bool allow_zero = attr_int(n, "allowzero", 0) != 0;
    std::int64_t known = 1;
    int infer_at = -1;
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out[k] == 0 && !allow_zero) out[k] = k < rank ? x[k] : 1;
      if (out[k] == -1) infer_at = static_cast<int>(k);
      else known *= out[k];
    }
    if (infer_at >= 0) out[static_cast<std::size_t>(infer_at)] = known == 0 ? 0 : numel(x) / known;
    return R{out};
  }
  if (op == "Flatten") {
    std::int64_t axis = norm_axis(attr_int(n, "axis", 1), rank);
    axis = std::clamp<std::int64_t>(axis, 0, static_cast<std::int64_t>(rank));
    return R{Shape{numel(Shape(x.begin(), x.begin() + axis)), numel(Shape(x.begin() + axis, x.end()))}};
  }
  if (op == "Squeeze" || op == "Unsqueeze") {
    std::vector<std::int64_t> axes = attr_ints(n, "axes");
    if (axes.empty() && in.size() > 1) {
      auto d = data(1);
      if (!d) return {};
      axes = *d;
    }
    if (op == "Squeeze") {
      std::set<std::int64_t> drop;
      for (auto a : axes) drop.insert(norm_axis(a, rank));
      Shape out;
      for (std::size_t k = 0; k < rank; ++k)
        if (!(axes.empty() ? x[k] == 1 : drop.count(static_cast<std::int64_t>(k)) > 0)) out.push_back(x[k]);
      return R{out};
    }
    const std::size_t out_rank = rank + axes.size();
    std::set<std::int64_t> add;
    for (auto a : axes) add.insert(norm_axis(a, out_rank));
    if (add.size() != axes.size() || *add.begin() < 0 || *add.rbegin() >= static_cast<std::int64_t>(out_rank)) return {};
    Shape out;
    std::size_t src = 0;
    for (std::size_t k = 0; k < out_rank; ++k) out.push_back(add.count(static_cast<std::int64_t>(k)) ? 1 : x[src++]);
    return R{out};
  }
  if (op == "Transpose") {
    std::vector<std::int64_t> perm = attr_ints(n, "perm");
    if (perm.empty())
      for (std::size_t k = rank; k-- > 0;) perm.push_back(static_cast<std::int64_t>(k));
    if (perm.size() != rank) return {};
    Shape out;
    for (auto p : perm) {
      const std::int64_t a = norm_axis(p, rank);
      if (a < 0 || a >= static_cast<std::int64_t>(rank)) return {};
      out.push_back(x[static_cast<std::size_t>(a)]);
    }
    return R{out};
  }
  auto bad_axis = [&](std::int64_t a, std::size_t r) { return a < 0 || a >= static_cast<std::int64_t>(r); };
  if (op == "Concat") {
    const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), rank);
    if (bad_axis(axis, rank)) return {};
    Shape out = x;
    out[static_cast<std::size_t>(axis)] = 0;
    for (const Value* v : in)
      if (v && v->shape.size() == rank) out[static_cast<std::size_t>(axis)] += v->shape[static_cast<std::size_t>(axis)];
    return R{out};
  }
  if (op == "Gather") {
    if (in.size() < 2 || !in[1]) return {};
    const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), rank);
    if (bad_axis(axis, rank)) return {};
    Shape out(x.begin(), x.begin() + axis);
    out.insert(out.end(), shape(1).begin(), shape(1).end());
    out.insert(out.end(), x.begin() + axis + 1, x.end());
    return R{out};
  }
  if (op == "GatherElements") return in.size() > 1 && in[1] ? R{shape(1)} : R{};
  if (op == "Slice") {
    std::vector<std::int64_t> starts, ends, axes, steps;
    if (in.size() >= 3) {
      auto s = data(1), e = data(2);
      if (!s || !e) return {};
      starts = *s;
      ends = *e;
      if (auto a = data(3)) axes = *a;
      if (auto st = data(4)) steps = *st;
    } else {
      starts = attr_ints(n, "starts");
      ends = attr_ints(n, "ends");
      axes = attr_ints(n, "axes");
    }
    if (axes.empty())
      for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
    Shape out = x;
    for (std::size_t k = 0; k < starts.size() && k < ends.size() && k < axes.size(); ++k) {
      const auto ax = static_cast<std::size_t>(norm_axis(axes[k], rank));
      if (ax >= rank) return {};
      const std::int64_t dim = x[ax];
      const std::int64_t step = k < steps.size() ? steps[k] : 1;
      if (step == 0) return {};
      std::int64_t s = starts[k], e = ends[k];
      if (s < 0) s += dim;
      if (e < 0) e += dim;
      if (step > 0) {
        s = std::clamp<std::int64_t>(s, 0, dim);
        e = std::clamp<std::int64_t>(e, 0, dim);
        out[ax] = e > s ? (e - s + step - 1) / step : 0;
      } else {
        s = std::clamp<std::int64_t>(s, -1, dim - 1);
        e = std::clamp<std::int64_t>(e, -1, dim - 1);
        out[ax] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
      }
    }
    return R{out};
  }
  if (op == "Split") {
    const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), rank);
    if (bad_axis(axis, rank)) return {};
    std::vector<std::int64_t> sizes = attr_ints(n, "split");
    if (sizes.empty())
      if (auto d = data(1)) sizes = *d;
    const auto outs = static_cast<std::int64_t>(n.output_size());
    const std::int64_t dim = x[static_cast<std::size_t>(axis)];
    if (sizes.empty()) {
      const std::int64_t parts = attr_int(n, "num_outputs", outs);
      const std::int64_t each = (dim + parts - 1) / parts;
      for (std::int64_t k = 0; k < outs; ++k) sizes.push_back(std::min(each, dim - k * each));
    }
    R out;
    for (auto s : sizes) {
      Shape o = x;
      o[static_cast<std::size_t>(axis)] = s;
      out.push_back(o);
    }
    return out;
  }
  if (op == "ConstantOfShape") {
    if (auto d = data(0)) return R{Shape(*d)};
    return {};
  }
  if (op == "Expand") {
    auto d = data(1);
    if (!d) return {};
    if (auto b = broadcast({x, *d})) return R{*b};
    return {};
  }
  if (op == "Tile") {
    auto d = data(1);
    if (!d || d->size() != rank) return {};
    Shape out = x;
    for (std::size_t k = 0; k < rank; ++k) out[k] *= (*d)[k];
    return R{out};
  }
  if (op == "Pad") {
    std::vector<std::int64_t> pads = attr_ints(n, "pads");
    if (pads.empty())
      if (auto d = data(1)) pads = *d;
    std::vector<std::int64_t> axes;
    if (auto d = data(3)) axes = *d;
    if (axes.empty())
      for (std::size_t k = 0; k < rank; ++k) axes.push_back(static_cast<std::int64_t>(k));
    if (pads.size() != 2 * axes.size()) return {};
    Shape out = x;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const std::int64_t a = norm_axis(axes[k], rank);
      if (bad_axis(a, rank)) return {};
      out[static_cast<std::size_t>(a)] += pads[k] + pads[k + axes.size()];
    }
    return R{out};
  }
  if (op == "Resize" || op == "Upsample") {
    // sizes (input 3) or scales (input 2; Upsample: input 1 or the scales attribute).
    if (op == "Resize" && in.size() > 3 && in[3] && in[3]->data && in[3]->data->size() == rank)
      return R{in[3]->data->ints()};
    const Value* sv = op == "Resize" ? (in.size() > 2 ? in[2] : nullptr) : (in.size() > 1 ? in[1] : nullptr);
    std::vector<double> scales;
    if (sv && sv->data)
      for (std::size_t k = 0; k < sv->data->size(); ++k) scales.push_back(sv->data->at(k));
    if (scales.empty())
      if (const auto* a = find_attr(n, "scales")) scales.assign(a->floats().begin(), a->floats().end());
    if (scales.size() != rank) return {};
    Shape out = x;
    for (std::size_t k = 0; k < rank; ++k)
      out[k] = static_cast<std::int64_t>(std::floor(static_cast<double>(x[k]) * scales[k] + 1e-9));
    return R{out};
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    const std::int64_t b = attr_int(n, "blocksize", 1);
    if (rank != 4) return {};
    if (op == "DepthToSpace") return R{Shape{x[0], x[1] / (b * b), x[2] * b, x[3] * b}};
    return R{Shape{x[0], x[1] * b * b, x[2] / b, x[3] / b}};
  }
  if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
    std::vector<std::int64_t> axes;
    if (op == "ArgMax" || op == "ArgMin") axes = {attr_int(n, "axis", 0)};
    else axes = attr_ints(n, "axes");
    if (axes.empty() && in.size() > 1 && in[1]) {
      auto d = data(1);
      if (!d) return {};
      axes = *d;
    }
    const bool keep = attr_int(n, "keepdims", 1) != 0;
    if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) return R{x};
    std::set<std::int64_t> red;
    for (auto a : axes) red.insert(norm_axis(a, rank));
    Shape out;
    for (std::size_t k = 0; k < rank; ++k) {
      const bool r = axes.empty() || red.count(static_cast<std::int64_t>(k)) > 0;
      if (!r) out.push_back(x[k]);
      else if (keep) out.push_back(1);
    }
    return R{out};
  }
  if (op == "TopK") {
    auto k = data(1);
    if (!k || k->empty()) return {};
    Shape out = x;
    const std::int64_t axis = norm_axis(attr_int(n, "axis", -1), rank);
    if (bad_axis(axis, rank)) return {};
    out[static_cast<std::size_t>(axis)] = (*k)[0];
    return R{out, out};
  }
  if (op == "OneHot") {
    auto d = data(1);
    if (!d || d->empty()) return {};
    Shape out = x;
    const std::int64_t axis = norm_axis(attr_int(n, "axis", -1), rank + 1);
    if (bad_axis(axis, rank + 1)) return {};
    out.insert(out.begin() + axis, (*d)[0]);
    return R{out};
  }
  return {};
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
