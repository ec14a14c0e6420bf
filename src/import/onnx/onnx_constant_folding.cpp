// Constant folding: nodes whose inputs are all constants; small integer values are evaluated (Reshape targets,
// Slice bounds, axes), weights keep only their shape.
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

namespace perfcast::onnx_import {

void GraphBuild::fold(const ox::NodeProto& n) {
  const std::string& op = n.op_type();
  std::vector<const Value*> in;
  for (int i = 0; i < n.input_size(); ++i) in.push_back(input(n, i));
  Value v;
  v.is_const = true;
  v.dtype = in.empty() || !in[0] ? ox::TensorProto::FLOAT : in[0]->dtype;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (in[i] && in[i]->is_const && !non_learned_input(op, static_cast<int>(i)))
      v.roots.insert(v.roots.end(), in[i]->roots.begin(), in[i]->roots.end());

  if (op == "Constant") {
    const ox::TensorProto* t = nullptr;
    if (const auto* a = find_attr(n, "value"); a && a->has_t()) t = &a->t();
    if (t) {
      v.shape.assign(t->dims().begin(), t->dims().end());
      v.dtype = t->data_type();
      v.data = tensor_data(*t);
      Root r{n.output(0), numel(v.shape), t->data_type(), v.shape.size()};
      roots_.push_back(r);
      owned_.push_back(false);
      v.roots = {static_cast<int>(roots_.size()) - 1};
    } else if (const auto* a = find_attr(n, "value_float")) {
      v.dtype = ox::TensorProto::FLOAT;
      v.data = ConstData{true, {}, {static_cast<double>(a->f())}};
    } else if (const auto* a = find_attr(n, "value_floats")) {
      v.dtype = ox::TensorProto::FLOAT;
      v.shape = {a->floats_size()};
      v.data = ConstData{true, {}, {a->floats().begin(), a->floats().end()}};
    } else if (const auto* a = find_attr(n, "value_int")) {
      v.dtype = ox::TensorProto::INT64;
      v.data = ConstData{false, {a->i()}, {}};
    } else if (const auto* a = find_attr(n, "value_ints")) {
      v.dtype = ox::TensorProto::INT64;
      v.shape = {a->ints_size()};
      v.data = ConstData{false, {a->ints().begin(), a->ints().end()}, {}};
    } else {
      fail(n, "has a value kind the importer does not read (sparse or string)");
    }
    values_[n.output(0)] = std::move(v);
    return;
  }
  if (op == "Shape" || op == "Size") {
    const Value& x = need(n, 0);
    v.roots.clear();
    v.dtype = ox::TensorProto::INT64;
    if (op == "Size") {
      v.data = ConstData{false, {numel(x.shape)}, {}};
    } else {
      const auto rank = static_cast<std::int64_t>(x.shape.size());
      std::int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", rank);
      if (start < 0) start += rank;
      if (end < 0) end += rank;
      start = std::clamp<std::int64_t>(start, 0, rank);
      end = std::clamp<std::int64_t>(end, start, rank);
      v.data = ConstData{false, Shape(x.shape.begin() + start, x.shape.begin() + end), {}};
      v.shape = {end - start};
    }
    values_[n.output(0)] = std::move(v);
    return;
  }

  const auto rules = rule_shapes(n);
  for (int k = 0; k < n.output_size(); ++k) {
    if (n.output(k).empty()) continue;
    Value out = v;
    std::optional<Shape> s = inferred(n.output(k));
    if (!s && static_cast<std::size_t>(k) < rules.size()) s = rules[static_cast<std::size_t>(k)];
    out.dtype = out_dtype(n, k, v.dtype);
    if (op == "Cast") out.dtype = static_cast<int>(attr_int(n, "to", out.dtype));
    if (k == 0 && s) out.data = evaluate(n, in, *s);
    if (k == 0 && !s) {
      // Shape only known once evaluated (ConstantOfShape, Range, Reshape of a constant).
      out.data = evaluate(n, in, Shape{-1});
    }
    if (s) out.shape = *s;
    else if (out.data && op == "Range") out.shape = {static_cast<std::int64_t>(out.data->size())};
    else if (!out.data) out.shape = {};  // unknown; only an error if an op needs it
    values_[n.output(k)] = std::move(out);
  }
}

namespace {

namespace eval {

ConstData apply_unary(const ConstData& a, const std::function<double(double)>& f, bool to_int) {
  ConstData r;
  r.real = a.real && !to_int;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double y = f(a.at(k));
    if (r.real) r.f.push_back(y);
    else r.i.push_back(a.real ? static_cast<std::int64_t>(y) : static_cast<std::int64_t>(std::llround(y)));
  }
  return r;
}

// Broadcasting N-ary evaluation over small tensors.
std::optional<ConstData> apply_nary(const std::vector<const ConstData*>& xs, const std::vector<Shape>& shapes,
                                    const Shape& out, bool real,
                                    const std::function<double(const std::vector<double>&)>& f,
                                    const std::function<std::int64_t(const std::vector<std::int64_t>&)>& fi) {
  const std::int64_t total = numel(out);
  if (total < 0 || total > kMaxConstElems || std::any_of(out.begin(), out.end(), [](std::int64_t d) { return d < 0; }))
    return std::nullopt;
  ConstData r;
  r.real = real;
  const std::size_t rank = out.size();
  for (const auto& s : shapes)
    if (s.size() > rank) return std::nullopt;
  std::vector<std::vector<std::int64_t>> strides;
  for (const auto& s : shapes) {
    std::vector<std::int64_t> st(rank, 0);
    std::int64_t acc = 1;
    for (std::size_t k = s.size(); k-- > 0;) {
      const std::size_t o = rank - s.size() + k;
      st[o] = s[k] == 1 ? 0 : acc;
      acc *= s[k];
    }
    strides.push_back(std::move(st));
  }
  std::vector<std::int64_t> idx(rank, 0);
  std::vector<double> args(xs.size());
  std::vector<std::int64_t> iargs(xs.size());
  for (std::int64_t e = 0; e < total; ++e) {
    std::int64_t rem = e;
    for (std::size_t k = rank; k-- > 0;) {
      idx[k] = rem % out[k];
      rem /= out[k];
    }
    for (std::size_t x = 0; x < xs.size(); ++x) {
      std::int64_t off = 0;
      for (std::size_t k = 0; k < rank; ++k) off += idx[k] * strides[x][k];
      args[x] = xs[x]->at(static_cast<std::size_t>(off));
      iargs[x] = xs[x]->iat(static_cast<std::size_t>(off));
    }
    if (real) r.f.push_back(f(args));
    else r.i.push_back(fi(iargs));
  }
  return r;
}

}  // namespace eval

}  // namespace

std::optional<ConstData> GraphBuild::evaluate(const ox::NodeProto& n, const std::vector<const Value*>& in,
                                              const Shape& out) {
  const std::string& op = n.op_type();
  for (const Value* v : in)
    if (v && !v->data) {
      // Shape-only inputs are fine for ops that only need the shape of a data-less input.
      if (!(op == "ConstantOfShape" && v == in[0])) return std::nullopt;
    }
  auto a = [&](std::size_t k) -> const ConstData& { return *in[k]->data; };
  if (in.empty() || !in[0]) return std::nullopt;
  if (op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Dropout")
    return a(0);
  if (op == "Cast") {
    const int to = static_cast<int>(attr_int(n, "to", 1));
    ConstData r = a(0);
    if (is_float_type(to) && !r.real) {
      r.real = true;
      r.f.assign(r.i.begin(), r.i.end());
      r.i.clear();
    } else if (!is_float_type(to) && r.real) {
      r.real = false;
      for (double x : r.f) r.i.push_back(to == ox::TensorProto::BOOL ? (x != 0) : static_cast<std::int64_t>(x));
      r.f.clear();
    }
    return r;
  }
  if (op == "ConstantOfShape") {
    if (!in[0]->data) return std::nullopt;
    Shape s = in[0]->data->ints();
    if (numel(s) > kMaxConstElems) return std::nullopt;
    ConstData r;
    double fill = 0;
    bool real = true;
    if (const auto* va = find_attr(n, "value"); va && va->has_t()) {
      if (auto d = tensor_data(va->t()); d && d->size() == 1) {
        fill = d->at(0);
        real = d->real;
      }
    }
    r.real = real;
    if (real) r.f.assign(static_cast<std::size_t>(numel(s)), fill);
    else r.i.assign(static_cast<std::size_t>(numel(s)), static_cast<std::int64_t>(fill));
    return r;
  }
  if (op == "Range") {
    if (in.size() < 3 || !in[1] || !in[2]) return std::nullopt;
    const bool real = a(0).real || a(1).real || a(2).real;
    const double start = a(0).at(0), limit = a(1).at(0), delta = a(2).at(0);
    if (delta == 0) return std::nullopt;
    const double count = std::max(0.0, std::ceil((limit - start) / delta));
    if (count > static_cast<double>(kMaxConstElems)) return std::nullopt;
    ConstData r;
    r.real = real;
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(count); ++k) {
      const double x = start + static_cast<double>(k) * delta;
      if (real) r.f.push_back(x);
      else r.i.push_back(static_cast<std::int64_t>(x));
    }
    return r;
  }
  if (op == "Concat") {
    ConstData r;
    r.real = false;
    for (const Value* v : in)
      if (v && v->data && v->data->real) r.real = true;
    const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), in[0]->shape.size());
    if (axis != 0) return std::nullopt;
    for (const Value* v : in) {
      if (!v) continue;
      for (std::size_t k = 0; k < v->data->size(); ++k) {
        if (r.real) r.f.push_back(v->data->at(k));
        else r.i.push_back(v->data->iat(k));
      }
    }
    return r;
  }
  if (op == "Gather") {
    if (in.size() < 2 || !in[1]) return std::nullopt;
    const Shape& ds = in[0]->shape;
    const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), ds.size());
    if (axis != 0 || ds.empty()) return std::nullopt;
    const std::int64_t block = numel(Shape(ds.begin() + 1, ds.end()));
    ConstData r;
    r.real = a(0).real;
    for (std::size_t k = 0; k < a(1).size(); ++k) {
      std::int64_t row = a(1).iat(k);
      if (row < 0) row += ds[0];
      if (row < 0 || row >= ds[0]) return std::nullopt;
      for (std::int64_t e = 0; e < block; ++e) {
        const auto off = static_cast<std::size_t>(row * block + e);
        if (r.real) r.f.push_back(a(0).at(off));
        else r.i.push_back(a(0).iat(off));
      }
    }
    return r;
  }
  if (op == "Slice") {
    if (in[0]->shape.size() != 1) return std::nullopt;
    std::vector<std::int64_t> starts, ends, steps;
    if (in.size() >= 3 && in[1] && in[2]) {
      starts = a(1).ints();
      ends = a(2).ints();
      if (in.size() >= 4 && in[3] && a(3).ints() != std::vector<std::int64_t>{0}) return std::nullopt;
      if (in.size() >= 5 && in[4]) steps = a(4).ints();
    } else {
      starts = attr_ints(n, "starts");
      ends = attr_ints(n, "ends");
    }
    if (starts.size() != 1 || ends.size() != 1) return std::nullopt;
    const std::int64_t len = in[0]->shape[0];
    const std::int64_t step = steps.empty() ? 1 : steps[0];
    if (step == 0) return std::nullopt;
    auto clampi = [&](std::int64_t x, std::int64_t lo, std::int64_t hi) {
      if (x < 0) x += len;
      return std::clamp(x, lo, hi);
    };
    ConstData r;
    r.real = a(0).real;
    if (step > 0) {
      for (std::int64_t k = clampi(starts[0], 0, len), e = clampi(ends[0], 0, len); k < e; k += step)
        r.real ? r.f.push_back(a(0).at(static_cast<std::size_t>(k))) : r.i.push_back(a(0).iat(static_cast<std::size_t>(k)));
    } else {
      for (std::int64_t k = clampi(starts[0], -1, len - 1), e = clampi(ends[0], -1, len - 1); k > e; k += step)
        r.real ? r.f.push_back(a(0).at(static_cast<std::size_t>(k))) : r.i.push_back(a(0).iat(static_cast<std::size_t>(k)));
    }
    return r;
  }
  static const std::map<std::string, std::function<double(double)>, std::less<>> kUnary{
      {"Neg", [](double x) { return -x; }},          {"Abs", [](double x) { return std::fabs(x); }},
      {"Floor", [](double x) { return std::floor(x); }}, {"Ceil", [](double x) { return std::ceil(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }},  {"Reciprocal", [](double x) { return 1.0 / x; }},
      {"Not", [](double x) { return x == 0 ? 1.0 : 0.0; }}, {"Relu", [](double x) { return std::max(0.0, x); }},
      {"Exp", [](double x) { return std::exp(x); }},    {"Log", [](double x) { return std::log(x); }},
  };
  if (auto it = kUnary.find(op); it != kUnary.end() && in.size() == 1) return eval::apply_unary(a(0), it->second, false);
  struct Binary {
    std::function<double(double, double)> f;
    bool to_int;  // comparison: result is boolean
  };
  static const std::map<std::string, Binary, std::less<>> kBinary{
      {"Add", {[](double x, double y) { return x + y; }, false}},
      {"Sub", {[](double x, double y) { return x - y; }, false}},
      {"Mul", {[](double x, double y) { return x * y; }, false}},
      {"Div", {[](double x, double y) { return y == 0 ? 0.0 : x / y; }, false}},
      {"Mod", {[](double x, double y) { return y == 0 ? 0.0 : std::fmod(x, y); }, false}},
      {"Pow", {[](double x, double y) { return std::pow(x, y); }, false}},
      {"Min", {[](double x, double y) { return std::min(x, y); }, false}},
      {"Max", {[](double x, double y) { return std::max(x, y); }, false}},
      {"Equal", {[](double x, double y) { return x == y ? 1.0 : 0.0; }, true}},
      {"Less", {[](double x, double y) { return x < y ? 1.0 : 0.0; }, true}},
      {"Greater", {[](double x, double y) { return x > y ? 1.0 : 0.0; }, true}},
      {"LessOrEqual", {[](double x, double y) { return x <= y ? 1.0 : 0.0; }, true}},
      {"GreaterOrEqual", {[](double x, double y) { return x >= y ? 1.0 : 0.0; }, true}},
      {"And", {[](double x, double y) { return (x != 0 && y != 0) ? 1.0 : 0.0; }, true}},
      {"Or", {[](double x, double y) { return (x != 0 || y != 0) ? 1.0 : 0.0; }, true}},
  };
  if (auto it = kBinary.find(op); it != kBinary.end() && in.size() == 2 && in[1]) {
    const bool real = !it->second.to_int && (a(0).real || a(1).real);
    const auto& f = it->second.f;
    const bool div_int = op == "Div" && !real;
    return eval::apply_nary(
        {&a(0), &a(1)}, {in[0]->shape, in[1]->shape}, out, real,
        [&](const std::vector<double>& x) { return f(x[0], x[1]); },
        [&](const std::vector<std::int64_t>& x) {
          if (div_int) return x[1] == 0 ? std::int64_t{0} : x[0] / x[1];
          if (op == "Mod") return x[1] == 0 ? std::int64_t{0} : x[0] % x[1];
          return static_cast<std::int64_t>(f(static_cast<double>(x[0]), static_cast<double>(x[1])));
        });
  }
  if (op == "Where" && in.size() == 3 && in[1] && in[2]) {
    const bool real = a(1).real || a(2).real;
    return eval::apply_nary(
        {&a(0), &a(1), &a(2)}, {in[0]->shape, in[1]->shape, in[2]->shape}, out, real,
        [](const std::vector<double>& x) { return x[0] != 0 ? x[1] : x[2]; },
        [](const std::vector<std::int64_t>& x) { return x[0] != 0 ? x[1] : x[2]; });
  }
  if ((op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") &&
      in[0]->shape.size() <= 1) {
    ConstData r;
    r.real = a(0).real;
    double acc = op == "ReduceProd" ? 1 : op == "ReduceSum" ? 0 : a(0).size() ? a(0).at(0) : 0;
    for (std::size_t k = 0; k < a(0).size(); ++k) {
      const double x = a(0).at(k);
      acc = op == "ReduceProd" ? acc * x : op == "ReduceSum" ? acc + x : op == "ReduceMax" ? std::max(acc, x) : std::min(acc, x);
    }
    if (r.real) r.f = {acc};
    else r.i = {static_cast<std::int64_t>(acc)};
    return r;
  }
  if (op == "Expand" && a(0).size() == 1 && numel(out) > 0 && numel(out) <= kMaxConstElems) {
    ConstData r = a(0);
    if (r.real) r.f.assign(static_cast<std::size_t>(numel(out)), r.f[0]);
    else r.i.assign(static_cast<std::size_t>(numel(out)), r.i[0]);
    return r;
  }
  return std::nullopt;
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
