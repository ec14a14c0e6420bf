// ONNX export of a perfcast Graph (structure and shapes, no weights); the representation is described in
// onnx_export.h. Builder ops store their geometry but not every attribute that produced it (pool windows, the
// permutation of a transpose, the axis of a concat), so those are recovered from the shapes: any choice that
// reproduces the shapes reproduces the costs.
#include "import/onnx_export.h"

#include "core/error.h"

#ifdef PERFCAST_HAVE_ONNX

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

namespace perfcast {

namespace {

namespace ox = ::onnx;
using Shape = std::vector<std::int64_t>;

constexpr int kOpset = 17;
constexpr const char* kShapeOnly = "perfcast: shape only, no weights";

std::int64_t numel(const Shape& s) {
  std::int64_t p = 1;
  for (auto d : s) p *= d;
  return p;
}

std::optional<Shape> broadcast2(const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r, 1);
  for (std::size_t k = 0; k < r; ++k) {
    const std::int64_t x = k + a.size() >= r ? a[k + a.size() - r] : 1;
    const std::int64_t y = k + b.size() >= r ? b[k + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[k] = std::max(x, y);
  }
  return out;
}

// Output size of a pooling window along one axis (floor mode, symmetric padding).
std::int64_t pooled(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p) { return (in + 2 * p - k) / s + 1; }

struct PoolGeometry {
  Shape kernel, stride, pad;
};

// Pads and strides that turn `in` into `out` with a window of `k` (floor mode), preferring small padding.
std::optional<std::pair<std::int64_t, std::int64_t>> solve_axis(std::int64_t in, std::int64_t out, std::int64_t k) {
  for (std::int64_t p = 0; p < std::max<std::int64_t>(k, 1); ++p)
    for (std::int64_t s = 1; s <= std::max<std::int64_t>(in + 2 * p, 1); ++s)
      if (in + 2 * p >= k && pooled(in, k, s, p) == out) return std::make_pair(s, p);
  return std::nullopt;
}

// Window shapes with `window` elements over `sd` axes, the most even first.
void factorizations(std::int64_t window, std::size_t sd, Shape& cur, std::vector<Shape>& out) {
  if (cur.size() + 1 == sd) {
    cur.push_back(window);
    out.push_back(cur);
    cur.pop_back();
    return;
  }
  for (std::int64_t f = 1; f <= window; ++f) {
    if (window % f) continue;
    cur.push_back(f);
    factorizations(window / f, sd, cur, out);
    cur.pop_back();
  }
}

std::optional<PoolGeometry> recover_pool(const Shape& in, const Shape& out, std::int64_t window) {
  const std::size_t sd = in.size() - 2;
  std::vector<Shape> kernels;
  Shape cur;
  factorizations(std::max<std::int64_t>(window, 1), sd, cur, kernels);
  std::stable_sort(kernels.begin(), kernels.end(), [](const Shape& a, const Shape& b) {
    return *std::max_element(a.begin(), a.end()) - *std::min_element(a.begin(), a.end()) <
           *std::max_element(b.begin(), b.end()) - *std::min_element(b.begin(), b.end());
  });
  for (const auto& k : kernels) {
    PoolGeometry g;
    bool ok = true;
    for (std::size_t i = 0; i < sd && ok; ++i) {
      auto sp = solve_axis(in[2 + i], out[2 + i], k[i]);
      if (!sp) ok = false;
      else {
        g.kernel.push_back(k[i]);
        g.stride.push_back(sp->first);
        g.pad.push_back(sp->second);
      }
    }
    if (ok) return g;
  }
  return std::nullopt;
}

class Writer {
 public:
  Writer(const Graph& g, const OnnxExportOptions& o) : g_(g), opts_(o) {}

  OnnxExport run();

 private:
  // ---- proto helpers
  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int k = 1; !names_.insert(n).second; ++k) n = base + "_" + std::to_string(k);
    return n;
  }
  ox::NodeProto* node(const std::string& type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                      const std::string& name) {
    auto* n = gp_->add_node();
    n->set_op_type(type);
    std::string unique = name;
    for (int k = 1; !node_names_.insert(unique).second; ++k) unique = name + "_" + std::to_string(k);
    n->set_name(unique);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    ++nodes_;
    return n;
  }
  static void set_ints(ox::NodeProto* n, const std::string& name, const Shape& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void set_int(ox::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::INT);
    a->set_i(v);
  }
  static void set_float(ox::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void set_string(ox::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(ox::AttributeProto::STRING);
    a->set_s(v);
  }
  // A learned tensor: dims only.
  std::string weight(const std::string& base, const Shape& dims, int dtype = ox::TensorProto::FLOAT) {
    auto* t = gp_->add_initializer();
    const std::string name = fresh(base);
    t->set_name(name);
    t->set_data_type(dtype);
    for (auto d : dims) t->add_dims(d);
    t->set_doc_string(kShapeOnly);
    ++initializers_;
    weight_elems_ += numel(dims);
    return name;
  }
  std::string const_ints(const std::string& base, const Shape& values) {
    auto* t = gp_->add_initializer();
    const std::string name = fresh(base);
    t->set_name(name);
    t->set_data_type(ox::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
    ++initializers_;
    return name;
  }
  std::string const_floats(const std::string& base, const std::vector<float>& values, bool scalar) {
    auto* t = gp_->add_initializer();
    const std::string name = fresh(base);
    t->set_name(name);
    t->set_data_type(ox::TensorProto::FLOAT);
    if (!scalar) t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_float_data(v);
    ++initializers_;
    return name;
  }
  void set_shape(ox::ValueInfoProto* vi, const Shape& s, int dtype) {
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* shape = tt->mutable_shape();
    for (std::size_t k = 0; k < s.size(); ++k) {
      auto* d = shape->add_dim();
      if (k == 0 && opts_.symbolic_batch && s[0] == g_.batch) d->set_dim_param("batch");
      else d->set_dim_value(s[k]);
    }
  }
  // Records the ONNX tensor holding op `id`'s output, with its shape for value_info / graph outputs.
  void produce(int id, const std::string& name, const Shape& shape, int dtype = ox::TensorProto::FLOAT) {
    out_name_[static_cast<std::size_t>(id)] = name;
    tensor_shape_[name] = {shape, dtype};
  }
  // A Reshape to `shape` (its first dimension is the batch and is written as 0: copy it).
  std::string reshape(const std::string& x, const Shape& shape, const std::string& name, bool keep_batch = true) {
    Shape target = shape;
    if (keep_batch && !target.empty()) target[0] = 0;
    const std::string out = fresh(name);
    node("Reshape", {x, const_ints(name + ".shape", target)}, {out}, name);
    return out;
  }

  // ---- inputs
  Shape input_shape(const Op& op, std::size_t i) const;
  std::string input(const Op& op, std::size_t i);
  std::string graph_input(const Shape& shape, int dtype, bool loss_input, const std::string& base);

  // ---- ops
  bool lstm_at(std::size_t i) const;
  void write_op(std::size_t i);
  void conv(int id, const Op& op);
  void linear(int id, const Op& op);
  void grouped_linear(int id, const Op& op, const std::string& x, const Shape& xs, std::int64_t experts);
  void lstm(std::size_t i);
  void attention(int id, const Op& op);
  void elementwise(int id, const Op& op);
  void norm(int id, const Op& op);
  void pool(int id, const Op& op);
  void data_movement(int id, const Op& op);
  void loss(int id, const Op& op);

  const Graph& g_;
  OnnxExportOptions opts_;
  ox::ModelProto model_;
  ox::GraphProto* gp_ = nullptr;
  std::set<std::string> names_, node_names_;  // tensor and node names
  std::vector<std::string> out_name_;
  std::map<std::string, std::pair<Shape, int>> tensor_shape_;
  std::map<std::pair<Shape, int>, std::string> inputs_by_shape_;
  std::vector<std::pair<std::string, std::pair<Shape, int>>> model_inputs_, loss_inputs_;
  struct Table {
    std::string name;
    std::int64_t vocab = 0, dim = 0;
  };
  std::vector<Table> tables_;
  std::vector<int> consumers_;
  int nodes_ = 0, initializers_ = 0;
  std::int64_t weight_elems_ = 0;
};

Shape Writer::input_shape(const Op& op, std::size_t i) const {
  const int src = op.inputs[i];
  if (src >= 0) return g_.ops[static_cast<std::size_t>(src)].out_shape;
  switch (op.kind) {
    case OpKind::kConv: {
      Shape s{op.conv.n, op.conv.c_in};
      for (int k = 0; k < op.conv.spatial_dims; ++k) s.push_back(op.conv.in[static_cast<std::size_t>(k)]);
      return s;
    }
    case OpKind::kMatmul: {
      Shape s = op.out_shape;
      if (i == 0 || op.mm.weight_operand) {
        s.back() = op.mm.k;
        return s;
      }
      s[s.size() - 2] = op.mm.k;
      return s;
    }
    case OpKind::kEmbedding:
      return Shape(op.out_shape.begin(), op.out_shape.end() - 1);
    case OpKind::kAttention:
      if (i == 0) return op.out_shape;
      return {op.attn.batch, op.attn.kv_len, op.attn.kv_heads * op.attn.head_dim};
    case OpKind::kPool: {
      // Input size from the elements read, spread evenly over the spatial axes.
      Shape s = op.out_shape;
      const double ratio = static_cast<double>(op.in_elems) / static_cast<double>(std::max<std::int64_t>(1, numel(s)));
      const double per_axis = std::pow(ratio, 1.0 / static_cast<double>(std::max<std::size_t>(1, s.size() - 2)));
      for (std::size_t k = 2; k < s.size(); ++k) s[k] = static_cast<std::int64_t>(std::llround(static_cast<double>(s[k]) * per_axis));
      return s;
    }
    case OpKind::kLoss:
      return {op.out_shape[0], op.in_elems / std::max<std::int64_t>(1, op.out_shape[0])};
    case OpKind::kElementwise:
    case OpKind::kNorm:
    case OpKind::kSoftmax:
    case OpKind::kDataMovement:
    case OpKind::kOptimizer:
    case OpKind::kEmbeddingBag:
    case OpKind::kInteraction:
    case OpKind::kCount:
      return op.out_shape;
  }
  return op.out_shape;
}

std::string Writer::graph_input(const Shape& shape, int dtype, bool loss_input, const std::string& base) {
  auto key = std::make_pair(shape, dtype);
  if (!loss_input)
    if (auto it = inputs_by_shape_.find(key); it != inputs_by_shape_.end()) return it->second;
  const std::string name = fresh(base);
  (loss_input ? loss_inputs_ : model_inputs_).push_back({name, key});
  if (!loss_input) inputs_by_shape_[key] = name;
  return name;
}

std::string Writer::input(const Op& op, std::size_t i) {
  const int src = op.inputs[i];
  if (src >= 0) return out_name_[static_cast<std::size_t>(src)];
  const bool ids = op.kind == OpKind::kEmbedding;
  const int dtype = ids ? ox::TensorProto::INT64 : ox::TensorProto::FLOAT;
  return graph_input(input_shape(op, i), dtype, false, ids ? "input_ids" : "input");
}

// The three ops GraphBuilder::lstm emits: input projection, recurrent GEMM per step, gate kernel per step.
bool Writer::lstm_at(std::size_t i) const {
  if (i + 2 >= g_.ops.size()) return false;
  const Op& ih = g_.ops[i];
  const Op& hh = g_.ops[i + 1];
  const Op& cell = g_.ops[i + 2];
  const int id = static_cast<int>(i);
  return ih.kind == OpKind::kMatmul && ih.mm.weight_operand && ih.inputs.size() == 1 && ih.repeats == 1 &&
         hh.kind == OpKind::kMatmul && hh.repeats > 1 && hh.inputs == std::vector<int>{id} &&
         cell.kind == OpKind::kElementwise && cell.repeats > 1 && cell.inputs == std::vector<int>{id + 1} &&
         !cell.out_shape.empty() && ih.mm.n == 4 * cell.out_shape.back() && consumers_[i] == 1 &&
         consumers_[i + 1] == 1;
}

OnnxExport Writer::run() {
  model_.set_ir_version(8);
  model_.set_producer_name("perfcast");
  model_.set_doc_string(fmt::format("{}: graph structure and shapes only, no weights (initializers carry dims and "
                                    "no data)", g_.model_id));
  auto* opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  auto* meta = model_.add_metadata_props();
  meta->set_key("perfcast.weights");
  meta->set_value("none: shape-only initializers");
  gp_ = model_.mutable_graph();
  gp_->set_name(g_.model_id);

  out_name_.assign(g_.ops.size(), "");
  consumers_.assign(g_.ops.size(), 0);
  for (const auto& op : g_.ops)
    for (int i : op.inputs)
      if (i >= 0) ++consumers_[static_cast<std::size_t>(i)];
  for (const auto& op : g_.ops) names_.insert(op.name);

  for (std::size_t i = 0; i < g_.ops.size(); ++i) {
    if (lstm_at(i)) {
      lstm(i);
      i += 2;
      continue;
    }
    write_op(i);
  }

  // Graph inputs (model inputs first: the importer reads the batch from the first), outputs and shapes.
  for (const auto* list : {&model_inputs_, &loss_inputs_})
    for (const auto& [name, key] : *list) {
      auto* vi = gp_->add_input();
      vi->set_name(name);
      set_shape(vi, key.first, key.second);
    }
  std::set<std::string> outputs;
  for (std::size_t i = 0; i < g_.ops.size(); ++i) {
    if (consumers_[i] > 0 || out_name_[i].empty() || outputs.count(out_name_[i])) continue;
    // Only the last op of a multi-op pattern names its tensor.
    if (i + 1 < g_.ops.size() && out_name_[i + 1] == out_name_[i]) continue;
    outputs.insert(out_name_[i]);
    auto* vi = gp_->add_output();
    vi->set_name(out_name_[i]);
    const auto& [shape, dtype] = tensor_shape_.at(out_name_[i]);
    set_shape(vi, shape, dtype);
  }
  for (const auto& [name, sd] : tensor_shape_) {
    if (outputs.count(name)) continue;
    auto* vi = gp_->add_value_info();
    vi->set_name(name);
    set_shape(vi, sd.first, sd.second);
  }
  OnnxExport out;
  if (!model_.SerializeToString(&out.bytes)) throw InputError("cannot serialize the ONNX model of " + g_.model_id);
  out.nodes = nodes_;
  out.initializers = initializers_;
  out.weight_elems = weight_elems_;
  return out;
}

void Writer::write_op(std::size_t i) {
  const Op& op = g_.ops[i];
  const int id = static_cast<int>(i);
  switch (op.kind) {
    case OpKind::kConv: return conv(id, op);
    case OpKind::kMatmul: return linear(id, op);
    case OpKind::kAttention: return attention(id, op);
    case OpKind::kElementwise: return elementwise(id, op);
    case OpKind::kNorm: return norm(id, op);
    case OpKind::kPool: return pool(id, op);
    case OpKind::kSoftmax: {
      auto* n = node("Softmax", {input(op, 0)}, {op.name}, op.name);
      set_int(n, "axis", -1);
      return produce(id, op.name, op.out_shape);
    }
    case OpKind::kEmbedding: {
      const std::int64_t dim = op.out_shape.back();
      std::string table;
      if (op.params > 0) {
        table = weight(op.name + ".weight", {op.params / dim, dim});
        tables_.push_back({table, op.params / dim, dim});
      } else {
        // A lookup into a table another op owns (shared vocabulary): the first table of this width.
        for (const auto& t : tables_)
          if (t.dim == dim) {
            table = t.name;
            break;
          }
        if (table.empty()) table = weight(op.name + ".weight", {0, dim});
      }
      node("Gather", {table, input(op, 0)}, {op.name}, op.name);
      return produce(id, op.name, op.out_shape);
    }
    case OpKind::kDataMovement: return data_movement(id, op);
    case OpKind::kLoss: return loss(id, op);
    case OpKind::kEmbeddingBag:
    case OpKind::kInteraction:
      // Table-batched lookups and the dot interaction are framework ops (FBGEMM, custom kernels) with no plain
      // ONNX form, and tables of billions of rows would not fit an ONNX file.
      throw InputError("ONNX export does not cover recommendation models ('" + g_.model_id + "': op '" + op.name +
                       "' is " + std::string(op_kind_name(op.kind)) + ")");
    case OpKind::kOptimizer:
    case OpKind::kCount:
      return;
  }
}

void Writer::conv(int id, const Op& op) {
  const auto& c = op.conv;
  const auto sd = static_cast<std::size_t>(c.spatial_dims);
  Shape kernel(c.kernel.begin(), c.kernel.begin() + static_cast<std::ptrdiff_t>(sd));
  Shape w = c.transposed ? Shape{c.c_in, c.c_out / c.groups} : Shape{c.c_out, c.c_in / c.groups};
  w.insert(w.end(), kernel.begin(), kernel.end());
  std::vector<std::string> ins{input(op, 0), weight(op.name + ".weight", w)};
  if (c.bias) ins.push_back(weight(op.name + ".bias", {c.c_out}));
  auto* n = node(c.transposed ? "ConvTranspose" : "Conv", ins, {op.name}, op.name);
  Shape pads(c.pad.begin(), c.pad.begin() + static_cast<std::ptrdiff_t>(sd));
  pads.insert(pads.end(), c.pad.begin(), c.pad.begin() + static_cast<std::ptrdiff_t>(sd));
  set_ints(n, "kernel_shape", kernel);
  set_ints(n, "strides", Shape(c.stride.begin(), c.stride.begin() + static_cast<std::ptrdiff_t>(sd)));
  set_ints(n, "pads", pads);
  set_ints(n, "dilations", Shape(c.dilation.begin(), c.dilation.begin() + static_cast<std::ptrdiff_t>(sd)));
  set_int(n, "group", c.groups);
  produce(id, op.name, op.out_shape);
}

void Writer::linear(int id, const Op& op) {
  const auto& m = op.mm;
  if (!m.weight_operand || op.inputs.size() >= 2) {
    // Product of two activations.
    if (op.inputs.size() < 2) throw InputError(fmt::format("cannot export matmul '{}' with one operand", op.name));
    node("MatMul", {input(op, 0), input(op, 1)}, {op.name}, op.name);
    return produce(id, op.name, op.out_shape);
  }
  const std::string x = input(op, 0);
  const Shape xs = input_shape(op, 0);
  if (m.batch > 1) return grouped_linear(id, op, x, xs, m.batch);
  // Switch Transformers' experts (build_switch): one op launched once per expert (repeats) that owns every expert's
  // weights; written as the grouped experts above, so that the file holds all of them (not one expert's [k, n]).
  if (op.repeats > 1 && op.params == op.repeats * (m.k * m.n + (m.bias ? m.n : 0)))
    return grouped_linear(id, op, x, xs, op.repeats);
  const std::int64_t bias_elems = m.bias ? m.n : 0;
  const bool tied = op.params == bias_elems && op.weight_elems > bias_elems;
  std::string table;
  if (tied)
    for (const auto& t : tables_)
      if (t.vocab == m.n && t.dim == m.k) table = t.name;
  // Weights another layer holds (ALBERT's layers share one layer's): written per layer, the file would count them
  // once per layer.
  if (!tied && op.params < op.weight_elems)
    throw UnsupportedError(fmt::format("cannot export '{}': its weights are shared with another layer (as ALBERT's "
                                       "layers share theirs), which this exporter writes once per op",
                                       op.name));
  const std::string bias = m.bias ? weight(op.name + ".bias", {m.n}) : "";
  if (xs.size() == 2) {
    std::vector<std::string> ins{x, table.empty() ? weight(op.name + ".weight", {m.n, m.k}) : table};
    if (m.bias) ins.push_back(bias);
    auto* n = node("Gemm", ins, {op.name}, op.name);
    set_int(n, "transB", 1);
    return produce(id, op.name, op.out_shape);
  }
  std::string w;
  if (table.empty()) {
    w = weight(op.name + ".weight", {m.k, m.n});
  } else {
    w = fresh(op.name + ".weight_t");
    auto* t = node("Transpose", {table}, {w}, op.name + "/transpose_weight");
    set_ints(t, "perm", {1, 0});
  }
  if (!m.bias) {
    node("MatMul", {x, w}, {op.name}, op.name);
  } else {
    const std::string mm = fresh(op.name + "/matmul");
    node("MatMul", {x, w}, {mm}, op.name);
    node("Add", {mm, bias}, {op.name}, op.name + "/bias");
  }
  produce(id, op.name, op.out_shape);
}

// Experts of a mixture-of-experts layer: `experts` weight matrices, each applied to its share of the rows. The rows
// are regrouped as [experts, rows per expert, k] (padded up to a multiple of the expert count) for one batched
// MatMul with [experts, k, n] weights.
void Writer::grouped_linear(int id, const Op& op, const std::string& x, const Shape& xs, std::int64_t experts) {
  const auto& m = op.mm;
  const std::int64_t e = experts, rows = numel(xs) / m.k;
  std::string src = x;
  if (rows % e != 0) {
    src = reshape(x, {-1, m.k}, op.name + "/rows", false);
    const std::string padded = fresh(op.name + "/pad_rows");
    node("Pad", {src, const_ints(op.name + ".pads", {0, 0, e - rows % e, 0})}, {padded}, op.name + "/pad_rows");
    src = padded;
  }
  const std::string grouped = reshape(src, {e, -1, m.k}, op.name + "/by_expert", false);
  const std::string prod = fresh(op.name + "/experts");
  node("MatMul", {grouped, weight(op.name + ".weight", {e, m.k, m.n})}, {prod}, op.name);
  std::string y = prod;
  if (m.bias) {
    y = fresh(op.name + "/bias");
    node("Add", {prod, weight(op.name + ".bias", {e, 1, m.n})}, {y}, op.name + "/bias");
  }
  if (rows % e != 0) {
    const std::string flat = reshape(y, {-1, m.n}, op.name + "/flat", false);
    y = fresh(op.name + "/unpad");
    node("Slice", {flat, const_ints(op.name + ".starts", {0}), const_ints(op.name + ".ends", {rows}),
                   const_ints(op.name + ".axes", {0})},
         {y}, op.name + "/unpad");
  }
  Shape back = op.out_shape;
  back[0] = -1;
  node("Reshape", {y, const_ints(op.name + ".out_shape", back)}, {op.name}, op.name + "/out");
  produce(id, op.name, op.out_shape);
}

void Writer::lstm(std::size_t i) {
  const Op& ih = g_.ops[i];
  const Op& cell = g_.ops[i + 2];
  const std::int64_t h = cell.out_shape.back(), in = ih.mm.k;
  const std::string x = input(ih, 0);
  const std::string base = cell.name.size() > 5 && cell.name.ends_with(".cell") ? cell.name.substr(0, cell.name.size() - 5)
                                                                                 : cell.name;
  std::vector<std::string> ins{x, weight(base + ".W", {1, 4 * h, in}), weight(base + ".R", {1, 4 * h, h})};
  if (ih.mm.bias) ins.push_back(weight(base + ".B", {1, 8 * h}));
  const std::string y = fresh(base + ".Y");
  auto* n = node("LSTM", ins, {y}, base);
  set_int(n, "hidden_size", h);
  set_int(n, "layout", 1);
  set_string(n, "direction", base.ends_with(".bwd") ? "reverse" : "forward");
  // Y is [N, S, directions, h]; drop the directions axis.
  const std::string out = cell.name;
  node("Reshape", {y, const_ints(base + ".Y_shape", {0, 0, h})}, {out}, base + "/squeeze_directions");
  for (std::size_t k = i; k < i + 3; ++k) produce(static_cast<int>(k), out, cell.out_shape);
}

void Writer::attention(int id, const Op& op) {
  const auto& a = op.attn;
  const std::string& name = op.name;
  const std::int64_t h = a.heads, kvh = a.kv_heads, d = a.head_dim;
  if (kvh <= 0 || h % kvh != 0) throw InputError(fmt::format("attention '{}' has {} heads over {} KV heads", name, h, kvh));
  auto split = [&](const std::string& x, std::int64_t heads, const Shape& perm, const std::string& tag) {
    std::string r = reshape(x, {0, 0, heads, d}, name + "/split_" + tag, false);
    if (heads != h) {
      // Grouped-query attention: repeat each KV head for its query group, as repeat_kv does.
      const std::string r5 = reshape(r, {0, 0, heads, 1, d}, name + "/group_" + tag, false);
      const std::string e = fresh(name + "/repeat_" + tag);
      node("Expand", {r5, const_ints(name + "/repeat_" + tag + ".shape", {1, 1, 1, h / heads, 1})}, {e},
           name + "/repeat_" + tag);
      r = reshape(e, {0, 0, h, d}, name + "/merge_" + tag, false);
    }
    const std::string t = fresh(name + "/heads_" + tag);
    auto* n = node("Transpose", {r}, {t}, name + "/heads_" + tag);
    set_ints(n, "perm", perm);
    return t;
  };
  const std::string q = split(input(op, 0), h, {0, 2, 1, 3}, "q");
  const std::string k = split(input(op, 1), kvh, {0, 2, 3, 1}, "k");
  const std::string v = split(input(op, 2), kvh, {0, 2, 1, 3}, "v");
  const std::string scores = fresh(name + "/scores");
  node("MatMul", {q, k}, {scores}, name + "/qk");
  std::string s = fresh(name + "/scaled");
  node("Mul", {scores, const_floats(name + ".scale", {static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))}, true)},
       {s}, name + "/scale");
  if (a.causal) {
    const std::string masked = fresh(name + "/masked");
    node("Where",
         {weight(name + ".causal_mask", {a.q_len, a.kv_len}, ox::TensorProto::BOOL), s,
          const_floats(name + ".neg_inf", {-INFINITY}, true)},
         {masked}, name + "/causal_mask");
    s = masked;
  }
  std::string probs = fresh(name + "/probs");
  set_int(node("Softmax", {s}, {probs}, name + "/softmax"), "axis", -1);
  if (a.dropout) {  // attention dropout (training); the importer folds it back into the attention core
    const std::string dropped = fresh(name + "/dropped");
    node("Dropout", {probs}, {dropped}, name + "/dropout");
    probs = dropped;
  }
  const std::string ctx = fresh(name + "/context");
  node("MatMul", {probs, v}, {ctx}, name);  // the node the importer names the fused attention after
  const std::string merged = fresh(name + "/merge");
  set_ints(node("Transpose", {ctx}, {merged}, name + "/merge_heads"), "perm", {0, 2, 1, 3});
  node("Reshape", {merged, const_ints(name + ".out_shape", {0, 0, h * d})}, {name}, name + "/merge_view");
  produce(id, name, op.out_shape);
}

void Writer::elementwise(int id, const Op& op) {
  const std::string& name = op.name;
  auto scalar = [&](const std::string& tag, float v) { return const_floats(name + "." + tag, {v}, true); };
  if (op.inputs.size() >= 2) {
    // Binary: the builder's mul keeps its inputs for backward, its add does not.
    std::vector<std::string> ins;
    for (std::size_t k = 0; k < 2; ++k) {
      std::string x = input(op, k);
      const Shape s = input_shape(op, k);
      if (!broadcast2(s, op.out_shape) || *broadcast2(s, op.out_shape) != op.out_shape) {
        // Make the smaller operand broadcast along the axes it lacks ([N,S,H] against [N,T,S*H] -> [N,1,S*H]).
        const Shape& out = op.out_shape;
        Shape t(out.size(), 1);
        std::int64_t rem = numel(s);
        if (!s.empty() && s[0] == out[0]) {
          t[0] = out[0];
          rem /= out[0];
        }
        for (std::size_t j = out.size(); j-- > 1;)
          if (out[j] > 1 && rem >= out[j] && rem % out[j] == 0) {
            t[j] = out[j];
            rem /= out[j];
          }
        if (rem == 1) x = reshape(x, t, name + "/broadcast_" + std::to_string(k), t[0] == out[0]);
      }
      ins.push_back(x);
    }
    node(op.saves_input ? "Mul" : "Add", ins, {name}, name);
    return produce(id, name, op.out_shape);
  }
  const std::string x = input(op, 0);
  const double f = op.flops_per_out_elem;
  if (f == 1 && op.saves_output) {
    node("Relu", {x}, {name}, name);
  } else if (f == 1 && !op.saves_input && !op.saves_output && !op.in_place) {
    // The builder's scale (times a constant: Gemma's embedding scale, soft-capping's divide and multiply); the
    // graph keeps no factor, the file writes 1.
    auto* n = node("Mul", {x, scalar("factor", 1.0f)}, {name}, name);
    n->set_doc_string("perfcast scale by a constant, factor not kept");
  } else if (f == 2 && op.in_place) {
    node("Clip", {x, scalar("min", 0), scalar("max", 6)}, {name}, name);
  } else if (f == 2 && op.saves_mask) {
    node("Dropout", {x}, {name}, name);
  } else if (f == 8 && op.saves_input && !op.saves_output) {
    // GELU, erf form: x * 0.5 * (1 + erf(x / sqrt(2))).
    const std::string d = fresh(name + "/div"), e = fresh(name + "/erf"), a = fresh(name + "/add"),
                      m = fresh(name + "/mul");
    node("Div", {x, scalar("sqrt2", static_cast<float>(std::sqrt(2.0)))}, {d}, name + "/div");
    node("Erf", {d}, {e}, name + "/erf");
    node("Add", {e, scalar("one", 1)}, {a}, name + "/add");
    node("Mul", {x, a}, {m}, name + "/mul");
    node("Mul", {m, scalar("half", 0.5f)}, {name}, name);
  } else if (f == 5 && op.saves_input) {
    const std::string s = fresh(name + "/sigmoid");
    node("Sigmoid", {x}, {s}, name + "/sigmoid");
    node("Mul", {x, s}, {name}, name);
  } else if (f == 4 && op.saves_output) {
    node(name.find("sigmoid") != std::string::npos ? "Sigmoid" : "Tanh", {x}, {name}, name);
  } else if (f == 4 && op.saves_input) {
    node("HardSwish", {x}, {name}, name);
  } else if (f == 3 && op.saves_input) {
    node("HardSigmoid", {x}, {name}, name);
  } else if (op.saves_input && op.saves_output && f >= 6 && std::fmod(f - 4, 2) == 0) {
    auto* n = node("LRN", {x}, {name}, name);
    set_int(n, "size", static_cast<std::int64_t>((f - 4) / 2));
  } else {
    // No ONNX operator matches this kernel: keep the tensor flowing.
    auto* n = node("Identity", {x}, {name}, name);
    n->set_doc_string(fmt::format("perfcast elementwise op, {} flops per element", f));
  }
  produce(id, name, op.out_shape);
}

void Writer::norm(int id, const Op& op) {
  const std::string& name = op.name;
  const std::string x = input(op, 0);
  const Shape& s = op.out_shape;
  switch (op.norm) {
    case NormKind::kBatch: {
      const std::int64_t c = s.size() > 1 ? s[1] : s[0];
      auto* n = node("BatchNormalization",
                     {x, weight(name + ".weight", {c}), weight(name + ".bias", {c}), weight(name + ".running_mean", {c}),
                      weight(name + ".running_var", {c})},
                     {name}, name);
      set_float(n, "epsilon", 1e-5f);
      break;
    }
    case NormKind::kLayer: {
      // A LayerNorm without bias (MPT) leaves out the optional B; one without weight either (OLMo) reads a fixed
      // scale of ones made by ConstantOfShape, not a learned tensor.
      const std::int64_t c = s.back();
      std::vector<std::string> ins{x};
      if (op.params == 0) {
        const std::string ones = fresh(name + ".ones");
        auto* fill = node("ConstantOfShape", {const_ints(name + ".scale_shape", {c})}, {ones}, name + "/ones");
        auto* a = fill->add_attribute();
        a->set_name("value");
        a->set_type(ox::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(ox::TensorProto::FLOAT);
        a->mutable_t()->add_dims(1);
        a->mutable_t()->add_float_data(1.0f);
        ins.push_back(ones);
      } else {
        ins.push_back(weight(name + ".weight", {c}));
        if (op.params != c) ins.push_back(weight(name + ".bias", {c}));
      }
      auto* n = node("LayerNormalization", ins, {name}, name);
      set_int(n, "axis", -1);
      set_float(n, "epsilon", 1e-5f);
      break;
    }
    case NormKind::kGroup: {
      const std::int64_t c = s.size() > 1 ? s[1] : s[0];
      auto* n = node("GroupNormalization", {x, weight(name + ".weight", {c}), weight(name + ".bias", {c})}, {name}, name);
      set_int(n, "num_groups", c % 32 == 0 ? 32 : 1);
      break;
    }
    case NormKind::kRms: {
      const std::int64_t c = s.back();
      const std::string sq = fresh(name + "/square"), mean = fresh(name + "/mean"), eps = fresh(name + "/add_eps"),
                        rms = fresh(name + "/rms");
      node("Pow", {x, const_floats(name + ".two", {2}, true)}, {sq}, name + "/square");
      auto* r = node("ReduceMean", {sq}, {mean}, name + "/mean");
      set_ints(r, "axes", {-1});
      set_int(r, "keepdims", 1);
      node("Add", {mean, const_floats(name + ".eps", {1e-6f}, true)}, {eps}, name + "/add_eps");
      node("Sqrt", {eps}, {rms}, name + "/sqrt");
      if (op.params > 0) {
        const std::string normed = fresh(name + "/normalized");
        node("Div", {x, rms}, {normed}, name + "/div");
        node("Mul", {normed, weight(name + ".weight", {c})}, {name}, name);
      } else {
        node("Div", {x, rms}, {name}, name);
      }
      break;
    }
  }
  produce(id, name, op.out_shape);
}

void Writer::pool(int id, const Op& op) {
  const std::string& name = op.name;
  const std::string x = input(op, 0);
  const Shape in = input_shape(op, 0);
  const Shape& out = op.out_shape;
  const auto window = static_cast<std::int64_t>(std::llround(op.flops_per_out_elem));
  const bool is_max = op.pool == PoolKind::kMax;
  if (in.size() < 3 || in.size() != out.size())
    throw InputError(fmt::format("cannot export pool '{}': input {} and output ranks differ", name, in.size()));
  const Shape in_sp(in.begin() + 2, in.end());
  const bool global = std::all_of(out.begin() + 2, out.end(), [](std::int64_t d) { return d == 1; }) &&
                      window == numel(in_sp);
  if (global) {
    node(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x}, {name}, name);
    return produce(id, name, out);
  }
  const auto geom = recover_pool(in, out, window);
  if (!geom)
    throw InputError(fmt::format("cannot export pool '{}': no window of {} elements maps its input to its output", name,
                                 window));
  auto* n = node(is_max ? "MaxPool" : "AveragePool", {x}, {name}, name);
  Shape pads = geom->pad;
  pads.insert(pads.end(), geom->pad.begin(), geom->pad.end());
  set_ints(n, "kernel_shape", geom->kernel);
  set_ints(n, "strides", geom->stride);
  set_ints(n, "pads", pads);
  produce(id, name, out);
}

void Writer::data_movement(int id, const Op& op) {
  const std::string& name = op.name;
  const Shape& out = op.out_shape;
  if (op.inputs.size() >= 2) {
    // Concat: the axis along which the inputs add up.
    std::vector<Shape> shapes;
    std::vector<std::size_t> graph_inputs;
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      shapes.push_back(input_shape(op, k));
      if (op.inputs[k] < 0) graph_inputs.push_back(k);
    }
    if (!graph_inputs.empty()) {
      // A graph input joins along the axis where the computed inputs fall short of the output.
      for (std::size_t a = 1; a < out.size(); ++a) {
        std::int64_t known = 0;
        for (std::size_t k = 0; k < shapes.size(); ++k)
          if (op.inputs[k] >= 0) known += shapes[k].size() == out.size() ? shapes[k][a] : 0;
        const auto missing = static_cast<std::int64_t>(graph_inputs.size());
        if (known < out[a] && (out[a] - known) % missing == 0) {
          for (auto k : graph_inputs) shapes[k][a] = (out[a] - known) / missing;
          break;
        }
      }
    }
    std::vector<std::string> ins;
    for (std::size_t k = 0; k < op.inputs.size(); ++k)
      ins.push_back(op.inputs[k] >= 0 ? input(op, k) : graph_input(shapes[k], ox::TensorProto::FLOAT, false, "input"));
    // An input larger than the output off the axis is centre-cropped first (U-Net skip connections).
    std::int64_t axis = -1;
    for (std::size_t a = 1; a < out.size() && axis < 0; ++a) {
      std::int64_t sum = 0;
      bool ok = true;
      for (const auto& s : shapes) {
        if (s.size() != out.size()) ok = false;
        else {
          sum += s[a];
          for (std::size_t b = 0; b < out.size(); ++b)
            if (b != a && s[b] < out[b]) ok = false;
        }
      }
      if (ok && sum == out[a]) axis = static_cast<std::int64_t>(a);
    }
    if (axis < 0) throw InputError(fmt::format("cannot export concat '{}': no axis joins its inputs", name));
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      Shape starts, ends, axes;
      for (std::size_t b = 1; b < out.size(); ++b) {
        if (static_cast<std::int64_t>(b) == axis || shapes[k][b] == out[b]) continue;
        const std::int64_t off = (shapes[k][b] - out[b]) / 2;
        starts.push_back(off);
        ends.push_back(off + out[b]);
        axes.push_back(static_cast<std::int64_t>(b));
      }
      if (axes.empty()) continue;
      const std::string crop = fresh(name + "/crop_" + std::to_string(k));
      node("Slice", {ins[k], const_ints(crop + ".starts", starts), const_ints(crop + ".ends", ends),
                     const_ints(crop + ".axes", axes)},
           {crop}, name + "/crop_" + std::to_string(k));
      ins[k] = crop;
    }
    set_int(node("Concat", ins, {name}, name), "axis", axis);
    return produce(id, name, out);
  }
  const std::string x = input(op, 0);
  const Shape in = input_shape(op, 0);
  if (op.is_view) {
    node("Reshape", {x, const_ints(name + ".shape", [&] {
                        Shape t = out;
                        if (!t.empty()) t[0] = 0;
                        return t;
                      }())},
         {name}, name);
    return produce(id, name, out);
  }
  if (numel(in) == numel(out) && !in.empty() && !out.empty()) {
    // A transpose: find the permutation (after a free reshape when the ranks differ).
    const Shape inner_in(in.begin() + 1, in.end()), inner_out(out.begin() + 1, out.end());
    const std::size_t r = inner_out.size();
    std::vector<std::size_t> sigma(r);
    std::iota(sigma.begin(), sigma.end(), 0);
    // Candidates: channels-last first, then every permutation.
    std::vector<std::vector<std::size_t>> candidates;
    if (r >= 2) {
      std::vector<std::size_t> cl;
      for (std::size_t k = 1; k < r; ++k) cl.push_back(k);
      cl.push_back(0);
      candidates.push_back(cl);
    }
    do candidates.push_back(sigma);
    while (r <= 6 && std::next_permutation(sigma.begin(), sigma.end()));
    auto mergeable = [&](const Shape& target) {
      // `target` groups consecutive axes of inner_in.
      std::size_t src = 0;
      for (auto t : target) {
        std::int64_t acc = 1;
        while (src < inner_in.size() && acc < t) acc *= inner_in[src++];
        if (acc != t) return false;
      }
      return src == inner_in.size();
    };
    std::optional<std::vector<std::size_t>> found;
    for (int pass = 0; pass < 2 && !found; ++pass)
      for (const auto& p : candidates) {
        // The pre-transpose layout R = inner_out permuted by the inverse: out[j] = R[p[j]].
        Shape rshape(r);
        for (std::size_t j = 0; j < r; ++j) rshape[p[j]] = inner_out[j];
        const bool identity = std::is_sorted(p.begin(), p.end());
        if (pass == 0 && identity) continue;  // prefer a real permutation
        if ((inner_in.size() == r && rshape == inner_in) || (inner_in.size() != r && mergeable(rshape))) {
          found = p;
          break;
        }
      }
    std::vector<std::size_t> p = found.value_or(std::vector<std::size_t>(r));
    if (!found) std::iota(p.begin(), p.end(), 0);
    Shape rshape(r);
    for (std::size_t j = 0; j < r; ++j) rshape[p[j]] = inner_out[j];
    std::string src = x;
    if (rshape != inner_in) {
      Shape full{in[0]};
      full.insert(full.end(), rshape.begin(), rshape.end());
      src = reshape(x, full, name + "/view");
    }
    Shape perm{0};
    for (auto k : p) perm.push_back(static_cast<std::int64_t>(k) + 1);
    set_ints(node("Transpose", {src}, {name}, name), "perm", perm);
    return produce(id, name, out);
  }
  if (in.size() == out.size()) {
    // Up- or down-sampling by copy: nearest-neighbour Resize.
    std::vector<float> scales;
    for (std::size_t k = 0; k < in.size(); ++k) scales.push_back(static_cast<float>(out[k]) / static_cast<float>(in[k]));
    auto* n = node("Resize", {x, "", const_floats(name + ".scales", scales, false)}, {name}, name);
    set_string(n, "mode", "nearest");
    set_string(n, "coordinate_transformation_mode", "asymmetric");
    set_string(n, "nearest_mode", "floor");
    return produce(id, name, out);
  }
  throw InputError(fmt::format("cannot export data-movement op '{}' from {} to {} elements", name, numel(in), numel(out)));
}

void Writer::loss(int id, const Op& op) {
  const std::string& name = op.name;
  const std::string x = input(op, 0);
  const Shape pred = input_shape(op, 0);
  if (op.in_elems == 2 * numel(pred)) {
    // MSE: mean((pred - target)^2).
    const std::string target = graph_input(pred, ox::TensorProto::FLOAT, true, "target");
    const std::string d = fresh(name + "/diff"), sq = fresh(name + "/square");
    node("Sub", {x, target}, {d}, name + "/diff");
    node("Mul", {d, d}, {sq}, name + "/square");
    set_int(node("ReduceMean", {sq}, {name}, name), "keepdims", 0);
  } else {
    // Cross-entropy over the last axis, flattened to [rows, classes] as torch.nn.functional.cross_entropy exports.
    const Shape labels_shape(pred.begin(), pred.end() - 1);
    std::string labels = graph_input(labels_shape, ox::TensorProto::INT64, true, "labels");
    std::string scores = x;
    if (pred.size() > 2) {
      scores = fresh(name + "/rows");
      node("Reshape", {x, const_ints(name + ".rows_shape", {-1, pred.back()})}, {scores}, name + "/rows");
      const std::string flat = fresh(name + "/labels_flat");
      node("Reshape", {labels, const_ints(name + ".labels_shape", {-1})}, {flat}, name + "/labels_flat");
      labels = flat;
    }
    set_string(node("SoftmaxCrossEntropyLoss", {scores, labels}, {name}, name), "reduction", "mean");
  }
  produce(id, name, {});
}

}  // namespace

bool onnx_supported() { return true; }

OnnxExport graph_to_onnx(const Graph& graph, const OnnxExportOptions& options) {
  Writer w(graph, options);
  return w.run();
}

}  // namespace perfcast

#else  // !PERFCAST_HAVE_ONNX

namespace perfcast {

bool onnx_supported() { return false; }

OnnxExport graph_to_onnx(const Graph& graph, const OnnxExportOptions&) {
  throw UnsupportedError("perfcast was built without ONNX support (PERFCAST_WITH_ONNX off, or libonnx-dev and "
                         "libprotobuf-dev missing at configure time); cannot export '" + graph.model_id + "'");
}

}  // namespace perfcast

#endif  // PERFCAST_HAVE_ONNX
