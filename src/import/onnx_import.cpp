// ONNX import: an .onnx file becomes a perfcast Graph through the GraphBuilder.
//
// Loading (model_from_onnx) parses the protobuf, checks that it is a whole ONNX model, resolves its dynamic
// dimensions and plans the few fusions exporters split into many nodes (linear + bias add, the attention core,
// erf-GELU, SiLU, RMSNorm, MSE loss). Building (ModelSource.build, once per batch) substitutes the batch and
// --dim values into the inputs, runs libonnx shape inference (in a try, error_mode 0, with data propagation),
// and walks the nodes in topological order:
//   - nodes whose inputs are all constants (initializers, Constant nodes, shapes of known tensors) are folded:
//     small integer values are evaluated (Reshape targets, Slice bounds, axes), weights keep only their shape;
//   - every other node becomes one op (a few become several, e.g. a bidirectional LSTM), with shapes from shape
//     inference when it produced a concrete shape and from the per-op rules below otherwise;
//   - a node kind with no cost rule is listed in ModelSource.uncosted ("N x OpType not costed"); its outputs
//     pass the first input through so the rest of the graph still builds.
// Parameters are initializer elements (once per initializer, however many nodes read it) in learned positions:
// weights, biases, norm scales, embedding tables; BatchNormalization running statistics, shape constants,
// integer and boolean tensors and scalars are not parameters.
//
// The batch is the first dimension of the first graph input. A symbolic batch takes ModelOptions.batch; a fixed
// one is replaced by ModelOptions.batch in every input that starts with the same value (a Reshape that bakes the
// old batch in fails with an InputError that says so). Other symbolic dimensions need --dim name=value (an
// unnamed one is addressed as input:axis). A first input of integer type with rank >= 2 is read as token ids
// [batch, seq]: the model is a sequence model and --seq sets its sequence dimension when that is symbolic.
#include "import/model_source.h"

#include "core/error.h"

#ifdef PERFCAST_HAVE_ONNX

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "graph/builder.h"

namespace perfcast {

namespace {

namespace ox = ::onnx;
using Shape = std::vector<std::int64_t>;

// ---------------------------------------------------------------------------------------------- small helpers

std::int64_t numel(const Shape& s) {
  std::int64_t p = 1;
  for (auto d : s) p *= d;
  return p;
}

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

bool is_float_type(int t) {
  return t == ox::TensorProto::FLOAT || t == ox::TensorProto::FLOAT16 || t == ox::TensorProto::DOUBLE ||
         t == ox::TensorProto::BFLOAT16 || (t >= 17 && t <= 20) || t == 23;  // FLOAT8 variants, FLOAT4E2M1
}
// Integer types quantized weights use (int8/uint8 and the 4-bit types).
bool is_weight_int_type(int t) {
  return t == ox::TensorProto::INT8 || t == ox::TensorProto::UINT8 || t == 21 || t == 22;
}
bool is_int_type(int t) {
  return t == ox::TensorProto::INT64 || t == ox::TensorProto::INT32 || t == ox::TensorProto::INT16 ||
         t == ox::TensorProto::INT8 || t == ox::TensorProto::UINT8 || t == ox::TensorProto::UINT16 ||
         t == ox::TensorProto::UINT32 || t == ox::TensorProto::UINT64;
}
int elem_bytes(int t) {
  switch (t) {
    case ox::TensorProto::DOUBLE:
    case ox::TensorProto::INT64:
    case ox::TensorProto::UINT64:
    case ox::TensorProto::COMPLEX64:
      return 8;
    case ox::TensorProto::FLOAT:
    case ox::TensorProto::INT32:
    case ox::TensorProto::UINT32:
      return 4;
    case ox::TensorProto::FLOAT16:
    case ox::TensorProto::BFLOAT16:
    case ox::TensorProto::INT16:
    case ox::TensorProto::UINT16:
      return 2;
    case ox::TensorProto::COMPLEX128:
      return 16;
    default:
      return 1;
  }
}

const ox::AttributeProto* find_attr(const ox::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::int64_t attr_int(const ox::NodeProto& n, std::string_view name, std::int64_t def) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : def;
}
std::vector<std::int64_t> attr_ints(const ox::NodeProto& n, std::string_view name) {
  const auto* a = find_attr(n, name);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}
std::string attr_string(const ox::NodeProto& n, std::string_view name, std::string def) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : def;
}

std::string node_label(const ox::NodeProto& n) {
  const std::string& name = n.name().empty() ? (n.output_size() > 0 ? n.output(0) : std::string("?")) : n.name();
  return fmt::format("node '{}' ({})", name, n.op_type());
}

// The op type as reported in notes: custom domains keep their prefix.
std::string qualified_type(const ox::NodeProto& n) {
  if (n.domain().empty() || n.domain() == "ai.onnx") return n.op_type();
  return n.domain() + "." + n.op_type();
}

bool has_subgraph(const ox::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.type() == ox::AttributeProto::GRAPH || a.type() == ox::AttributeProto::GRAPHS) return true;
  return false;
}

std::int64_t norm_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

// ---------------------------------------------------------------------------------------------- constants

// Values of a small constant tensor (shape arithmetic needs them; weights keep only their shape).
struct ConstData {
  bool real = false;
  std::vector<std::int64_t> i;
  std::vector<double> f;
  std::size_t size() const { return real ? f.size() : i.size(); }
  double at(std::size_t k) const { return real ? f[k] : static_cast<double>(i[k]); }
  std::int64_t iat(std::size_t k) const { return real ? static_cast<std::int64_t>(f[k]) : i[k]; }
  std::vector<std::int64_t> ints() const {
    std::vector<std::int64_t> out(size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = iat(k);
    return out;
  }
};

constexpr std::int64_t kMaxConstElems = 1 << 16;

template <typename T>
void read_raw(const std::string& raw, std::size_t count, std::vector<T>& out) {
  out.resize(count);
  std::memcpy(out.data(), raw.data(), count * sizeof(T));
}

std::optional<ConstData> tensor_data(const ox::TensorProto& t) {
  if (t.data_location() == ox::TensorProto::EXTERNAL) return std::nullopt;
  Shape dims(t.dims().begin(), t.dims().end());
  const std::int64_t n = numel(dims);
  if (n < 0 || n > kMaxConstElems) return std::nullopt;
  const auto count = static_cast<std::size_t>(n);
  ConstData d;
  const std::string& raw = t.raw_data();
  const bool has_raw = t.has_raw_data();
  auto raw_ok = [&](std::size_t width) { return has_raw && raw.size() == count * width; };
  switch (t.data_type()) {
    case ox::TensorProto::FLOAT: {
      d.real = true;
      std::vector<float> v;
      if (raw_ok(4)) read_raw(raw, count, v);
      else if (static_cast<std::size_t>(t.float_data_size()) == count) v.assign(t.float_data().begin(), t.float_data().end());
      else return std::nullopt;
      d.f.assign(v.begin(), v.end());
      return d;
    }
    case ox::TensorProto::DOUBLE: {
      d.real = true;
      if (raw_ok(8)) read_raw(raw, count, d.f);
      else if (static_cast<std::size_t>(t.double_data_size()) == count) d.f.assign(t.double_data().begin(), t.double_data().end());
      else return std::nullopt;
      return d;
    }
    case ox::TensorProto::INT64: {
      if (raw_ok(8)) read_raw(raw, count, d.i);
      else if (static_cast<std::size_t>(t.int64_data_size()) == count) d.i.assign(t.int64_data().begin(), t.int64_data().end());
      else return std::nullopt;
      return d;
    }
    case ox::TensorProto::INT32: {
      std::vector<std::int32_t> v;
      if (raw_ok(4)) read_raw(raw, count, v);
      else if (static_cast<std::size_t>(t.int32_data_size()) == count) v.assign(t.int32_data().begin(), t.int32_data().end());
      else return std::nullopt;
      d.i.assign(v.begin(), v.end());
      return d;
    }
    case ox::TensorProto::BOOL:
    case ox::TensorProto::UINT8:
    case ox::TensorProto::INT8: {
      if (raw_ok(1)) {
        d.i.resize(count);
        for (std::size_t k = 0; k < count; ++k)
          d.i[k] = t.data_type() == ox::TensorProto::INT8 ? static_cast<std::int64_t>(static_cast<std::int8_t>(raw[k]))
                                                          : static_cast<std::int64_t>(static_cast<std::uint8_t>(raw[k]));
      } else if (static_cast<std::size_t>(t.int32_data_size()) == count) {
        d.i.assign(t.int32_data().begin(), t.int32_data().end());
      } else {
        return std::nullopt;
      }
      return d;
    }
    default:
      return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------- values

// What a tensor name stands for while building: an activation (output of op `id`, -1 = graph input) or a
// constant (folded; `roots` are the initializers it derives from, for parameter counting).
struct Value {
  bool is_const = false;
  int id = -1;
  Shape shape;
  int dtype = ox::TensorProto::FLOAT;
  std::optional<ConstData> data;
  std::vector<int> roots;
  Tensor tensor() const { return Tensor{id, shape}; }
};

// An initializer or Constant-node tensor that may hold learned parameters.
struct Root {
  std::string name;
  std::int64_t elems = 0;
  int dtype = 0;
  std::size_t rank = 0;
};

// ---------------------------------------------------------------------------------------------- fusion plan

enum class Role : std::uint8_t { kNormal, kAbsorbed, kAttention, kGelu, kSilu, kRms, kMse, kViewTranspose };

struct Plan {
  Role role = Role::kNormal;
  std::string x;          // main input of a fused op (q' for attention, the predicted tensor for MSE)
  std::string k, v;       // attention k' and v'
  std::string weight;     // RMSNorm scale
  std::string bias;       // MatMul/Gemm: the bias an absorbed Add adds
  std::string bias_out;   // ... and that Add's output name
  bool causal = false;
};

// Input positions that never hold learned parameters (shapes, axes, indices, quantization scales, running
// statistics, initial states).
bool non_learned_input(const std::string& op, int index) {
  static const std::map<std::string, std::set<int>, std::less<>> kPositions{
      {"Reshape", {1}},        {"Expand", {1}},          {"Tile", {1}},          {"Slice", {1, 2, 3, 4}},
      {"Squeeze", {1}},        {"Unsqueeze", {1}},       {"Pad", {1, 2, 3}},     {"Resize", {1, 2, 3}},
      {"Upsample", {1}},       {"DequantizeLinear", {1, 2}}, {"QuantizeLinear", {1, 2}}, {"Clip", {1, 2}},
      {"Gather", {1}},         {"GatherElements", {1}},  {"GatherND", {1}},      {"ScatterND", {1}},
      {"ReduceMean", {1}},     {"ReduceSum", {1}},       {"ReduceMax", {1}},     {"ReduceMin", {1}},
      {"ReduceProd", {1}},     {"ReduceL2", {1}},        {"Split", {1}},         {"TopK", {1}},
      {"Where", {0}},          {"BatchNormalization", {3, 4}}, {"LSTM", {4, 5, 6}}, {"GRU", {4, 5}},
      {"RNN", {4, 5}},         {"Dropout", {1, 2}},      {"OneHot", {1, 2}},     {"ConstantOfShape", {0}},
      {"Range", {0, 1, 2}},    {"CumSum", {1}},          {"Trilu", {1}},         {"Mod", {1}},
  };
  const auto it = kPositions.find(op);
  return it != kPositions.end() && it->second.count(index) > 0;
}

// ---------------------------------------------------------------------------------------------- the emitter

// GraphBuilder plus the corrections the builder's fixed formulas cannot express (ONNX padding, broadcasting,
// parameters from initializers): patches applied to ops once the graph is finished.
class Emitter {
 public:
  Emitter(std::string model_id, std::int64_t batch) : b_(std::move(model_id), batch) {}

  GraphBuilder& b() { return b_; }

  std::string unique(std::string name) {
    if (name.empty()) name = "op";
    std::string n = name;
    for (int k = 1; !names_.insert(n).second; ++k) n = name + "#" + std::to_string(k);
    return n;
  }

  void patch(int id, std::function<void(Op&)> f) { patches_.emplace_back(id, std::move(f)); }

  // An op of `kind` with everything set explicitly: created through a builder call of that kind (for its
  // name, order and defaults), then overwritten.
  int generic(OpKind kind, std::vector<int> inputs, Shape out, std::int64_t in_elems, double flops_per_elem,
              const std::string& name, bool saves_input, bool saves_output, bool is_view = false) {
    const int first = inputs.empty() ? -1 : inputs[0];
    const Tensor h1{first, {1, 1, 1}};
    const Tensor h2{first, {1, 1}};
    Tensor t;
    switch (kind) {
      case OpKind::kDataMovement: t = b_.upsample(h1, 1, name); break;
      case OpKind::kPool: t = b_.avg_pool(h1, {1}, {1}, {0}, false, name); break;
      case OpKind::kSoftmax: t = b_.softmax(h1, name); break;
      case OpKind::kNorm: t = b_.layer_norm(h1, name); break;
      case OpKind::kLoss: t = b_.cross_entropy(h1, name); break;
      case OpKind::kMatmul: t = b_.matmul(h2, h2, name); break;
      case OpKind::kEmbedding: t = b_.embedding(h2, 1, 1, name); break;
      default: t = b_.relu(h1, false, name); break;
    }
    patch(t.id, [=](Op& op) {
      op.inputs = inputs;
      op.out_shape = out;
      op.in_elems = in_elems;
      op.flops_per_out_elem = flops_per_elem;
      op.saves_input = saves_input;
      op.saves_output = saves_output;
      op.in_place = false;
      op.is_view = is_view;
      op.params = 0;
      op.weight_elems = 0;
    });
    return t.id;
  }

  // A view (reshape/flatten/squeeze): no kernel, no traffic.
  int view(const Value& x, const Shape& out, const std::string& name) {
    if (numel(out) != numel(x.shape))
      throw InputError(fmt::format("'{}' reshapes {} elements into {}", name, numel(x.shape), shape_text(out)));
    if (out.empty()) return generic(OpKind::kDataMovement, {x.id}, out, 0, 0, name, false, false, true);
    const Tensor h{x.id, {out[0], numel(x.shape) / out[0]}};
    return b_.reshape(h, Shape(out.begin() + 1, out.end()), name).id;
  }

  Graph finish() {
    Graph g = b_.finish();
    for (auto& [id, f] : patches_) {
      Op& op = g.ops[static_cast<std::size_t>(id)];
      f(op);
      op.out_elems = numel(op.out_shape);
      op.needs_input_grad = std::any_of(op.inputs.begin(), op.inputs.end(), [](int i) { return i >= 0; });
    }
    return g;
  }

 private:
  GraphBuilder b_;
  std::set<std::string> names_;
  std::vector<std::pair<int, std::function<void(Op&)>>> patches_;
};

// ---------------------------------------------------------------------------------------------- shape rules

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

// ---------------------------------------------------------------------------------------------- the model

struct InputDim {
  std::int64_t value = 0;  // > 0 when fixed
  std::string param;       // name of a symbolic dimension ("" with value 0: unnamed)
};

struct GraphInput {
  std::string name;
  int dtype = ox::TensorProto::FLOAT;
  std::vector<InputDim> dims;
};

class OnnxModel {
 public:
  OnnxModel(std::string path, ImportOptions options) : path_(std::move(path)), options_(std::move(options)) {
    load();
    check_structure();
    resolve_inputs();
    plan_fusions();
  }

  Graph build(const ModelOptions& o) const;

  const std::string& path() const { return path_; }
  bool sequence() const { return sequence_; }
  std::int64_t default_seq() const { return default_seq_; }
  std::int64_t natural_batch() const { return fixed_batch_ > 0 ? fixed_batch_ : 1; }
  std::vector<std::string> uncosted() const {
    std::vector<std::string> out;
    for (const auto& [type, count] : uncosted_) out.push_back(fmt::format("{} x {} not costed", count, type));
    return out;
  }
  std::string family() const { return family_; }
  std::string description() const { return description_; }

  // Filled by the first build (the node kinds do not depend on the batch).
  void note_uncosted(const std::map<std::string, int>& counts) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!uncosted_done_) {
      uncosted_ = counts;
      uncosted_done_ = true;
    }
  }
  void set_family(std::string f, std::string d) {
    family_ = std::move(f);
    description_ = std::move(d);
  }

 private:
  friend class GraphBuild;

  void load();
  void check_structure();
  void resolve_inputs();
  void plan_fusions();

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("ONNX model '{}' {}", path_, what));
  }

  std::string path_;
  ImportOptions options_;
  ox::ModelProto model_;  // value_info and output shapes cleared, large initializer data dropped
  std::vector<int> order_;  // node indices in topological order
  std::set<std::string> initializer_names_;
  std::vector<GraphInput> inputs_;  // graph inputs that are not initializers
  std::map<std::string, std::int64_t> dim_values_;  // resolved --dim values by dimension name
  std::string batch_param_;         // symbolic batch dimension name ("" when fixed or unnamed)
  std::int64_t fixed_batch_ = 0;    // > 0 when the first input has a fixed first dimension
  bool has_batch_ = true;           // false when the first input is a scalar
  bool sequence_ = false;
  std::string seq_param_;           // symbolic sequence dimension of a token-id input
  std::int64_t fixed_seq_ = 0;
  std::int64_t default_seq_ = 0;
  std::vector<Plan> plans_;         // by node index
  std::map<std::string, int> producer_;  // tensor name -> node index
  std::string family_ = "onnx";
  std::string description_;

  mutable std::mutex mutex_;
  mutable bool uncosted_done_ = false;
  mutable std::map<std::string, int> uncosted_;
};

void OnnxModel::load() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path_, ec)) throw InputError(fmt::format("ONNX model '{}' does not exist", path_));
  if (fs::is_directory(path_, ec)) throw InputError(fmt::format("ONNX model '{}' is a directory, not a file", path_));
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read ONNX model '{}'", path_));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) fail("is empty");
  const bool parsed = model_.ParseFromString(bytes);
  if (!parsed) {
    // Protobuf gives no reason; tell a text file (a common mistake) from a damaged binary.
    const std::size_t probe = std::min<std::size_t>(bytes.size(), 512);
    std::size_t printable = 0;
    for (std::size_t k = 0; k < probe; ++k) {
      const auto c = static_cast<unsigned char>(bytes[k]);
      if (c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f)) ++printable;
    }
    if (printable == probe) fail("is a text file, not a binary ONNX protobuf");
    fail("is truncated or not an ONNX file (protobuf parsing failed)");
  }
  if (!model_.has_graph() || model_.graph().node_size() == 0)
    fail("is not an ONNX model or is truncated: it has no graph nodes");
  if (model_.ir_version() <= 0) fail("is not an ONNX model or is truncated: it has no IR version");
  if (model_.opset_import_size() == 0) fail("is truncated or malformed: it has no opset_import");

  // Shapes are recomputed per batch; declared ones would clash with the substituted batch.
  auto* g = model_.mutable_graph();
  g->clear_value_info();
  for (auto& out : *g->mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  // Weights only need their shapes: drop large payloads so per-batch copies stay cheap.
  auto strip = [](ox::TensorProto& t) {
    const Shape dims(t.dims().begin(), t.dims().end());
    const bool small_int = is_int_type(t.data_type()) && numel(dims) <= 4096;
    if (small_int || numel(dims) <= 64) return;
    t.clear_raw_data();
    t.clear_float_data();
    t.clear_double_data();
    t.clear_int32_data();
    t.clear_int64_data();
    t.clear_uint64_data();
  };
  for (auto& t : *g->mutable_initializer()) strip(t);
  for (auto& n : *g->mutable_node())
    if (n.op_type() == "Constant")
      for (auto& a : *n.mutable_attribute())
        if (a.name() == "value" && a.has_t()) strip(*a.mutable_t());
}

void OnnxModel::check_structure() {
  const auto& g = model_.graph();
  std::set<std::string> defined;
  for (const auto& t : g.initializer()) {
    defined.insert(t.name());
    initializer_names_.insert(t.name());
  }
  for (const auto& in : g.input()) defined.insert(in.name());
  // Topological order (files are usually sorted already; keep their order where possible).
  const int n = g.node_size();
  std::vector<bool> done(static_cast<std::size_t>(n), false);
  order_.reserve(static_cast<std::size_t>(n));
  std::set<std::string> produced_anywhere;
  for (const auto& node : g.node())
    for (const auto& o : node.output())
      if (!o.empty()) produced_anywhere.insert(o);
  for (const auto& node : g.node())
    for (const auto& i : node.input())
      if (!i.empty() && !defined.count(i) && !produced_anywhere.count(i))
        fail(fmt::format("is truncated or malformed: {} reads '{}', which nothing defines", node_label(node), i));
  bool progress = true;
  while (static_cast<int>(order_.size()) < n && progress) {
    progress = false;
    for (int k = 0; k < n; ++k) {
      if (done[static_cast<std::size_t>(k)]) continue;
      const auto& node = g.node(k);
      const bool ready = std::all_of(node.input().begin(), node.input().end(),
                                     [&](const std::string& i) { return i.empty() || defined.count(i) > 0; });
      if (!ready) continue;
      done[static_cast<std::size_t>(k)] = true;
      order_.push_back(k);
      for (const auto& o : node.output())
        if (!o.empty()) {
          defined.insert(o);
          producer_[o] = k;
        }
      progress = true;
    }
  }
  if (static_cast<int>(order_.size()) < n) fail("is malformed: its nodes form a cycle");
  for (const auto& out : g.output())
    if (!defined.count(out.name()))
      fail(fmt::format("is truncated or malformed: graph output '{}' is never computed", out.name()));
}

void OnnxModel::resolve_inputs() {
  const auto& g = model_.graph();
  for (const auto& in : g.input()) {
    if (initializer_names_.count(in.name())) continue;  // IR < 4 lists initializers as inputs too
    if (!in.type().has_tensor_type())
      fail(fmt::format("has input '{}' that is not a tensor (sequences and maps are not supported)", in.name()));
    const auto& tt = in.type().tensor_type();
    if (!tt.has_shape()) fail(fmt::format("has input '{}' without a shape", in.name()));
    GraphInput gi;
    gi.name = in.name();
    gi.dtype = tt.elem_type();
    for (const auto& d : tt.shape().dim()) {
      InputDim id;
      if (d.has_dim_value()) {
        id.value = d.dim_value();
        if (id.value <= 0)
          fail(fmt::format("has input '{}' with a dimension of size {}", in.name(), id.value));
      } else if (d.has_dim_param()) {
        id.param = d.dim_param();
      }
      gi.dims.push_back(id);
    }
    inputs_.push_back(std::move(gi));
  }
  if (inputs_.empty()) fail("has no graph inputs (everything is constant)");

  // The batch: the first dimension of the first input.
  const GraphInput& first = inputs_.front();
  if (first.dims.empty()) {
    has_batch_ = false;
  } else if (first.dims[0].value > 0) {
    fixed_batch_ = first.dims[0].value;
  } else {
    batch_param_ = first.dims[0].param;  // "" for an unnamed batch dimension
  }

  // Token ids [batch, seq]: a sequence model.
  if (is_int_type(first.dtype) && first.dims.size() >= 2) {
    sequence_ = true;
    if (first.dims[1].value > 0) fixed_seq_ = first.dims[1].value;
    else seq_param_ = first.dims[1].param.empty() ? first.name + ":1" : first.dims[1].param;
  }

  // Every other dynamic dimension needs --dim.
  std::vector<std::string> known, missing;
  for (const auto& gi : inputs_) {
    for (std::size_t a = 0; a < gi.dims.size(); ++a) {
      const InputDim& d = gi.dims[a];
      if (d.value > 0) continue;
      const bool batch_like = a == 0 && (d.param == batch_param_ || (d.param.empty() && batch_param_.empty()));
      if (batch_like && has_batch_ && fixed_batch_ == 0) continue;
      const std::string name = d.param.empty() ? fmt::format("{}:{}", gi.name, a) : d.param;
      if (std::find(known.begin(), known.end(), name) == known.end()) known.push_back(name);
      if (options_.dims.count(name)) {
        dim_values_[name] = options_.dims.at(name);
      } else if (std::find(missing.begin(), missing.end(), name) == missing.end()) {
        missing.push_back(name);
      }
    }
  }
  for (const auto& [name, value] : options_.dims) {
    if (!batch_param_.empty() && name == batch_param_)
      fail(fmt::format("has '{}' as its batch dimension; set it with --batch, not --dim", name));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    if (known.empty())
      fail(fmt::format("has no dynamic dimension '{}' (its only dynamic dimension is the batch)", name));
    throw_unknown(fmt::format("dynamic dimension of ONNX model '{}'", path_), name, known);
  }
  if (!missing.empty()) {
    std::vector<std::string> flags;
    for (const auto& m : missing) flags.push_back("--dim " + m + "=N");
    fail(fmt::format("has dynamic dimension{} {} with no value; pass {}", missing.size() > 1 ? "s" : "",
                     fmt::format("'{}'", fmt::join(missing, "', '")), fmt::join(flags, " ")));
  }
  if (sequence_) default_seq_ = fixed_seq_ > 0 ? fixed_seq_ : dim_values_.at(seq_param_);
}

// ---------------------------------------------------------------------------------------------- fusion planning

void OnnxModel::plan_fusions() {
  const auto& g = model_.graph();
  const int n = g.node_size();
  plans_.assign(static_cast<std::size_t>(n), Plan{});
  std::map<std::string, std::vector<int>> consumers;
  for (int k = 0; k < n; ++k)
    for (const auto& i : g.node(k).input())
      if (!i.empty()) consumers[i].push_back(k);
  std::set<std::string> graph_outputs;
  for (const auto& o : g.output()) graph_outputs.insert(o.name());

  // Constness (values are not needed here, only whether a tensor is known before any input arrives).
  std::set<std::string> is_const(initializer_names_.begin(), initializer_names_.end());
  for (int k : order_) {
    const auto& node = g.node(k);
    bool c = !has_subgraph(node);
    if (node.op_type() != "Shape" && node.op_type() != "Size")
      for (const auto& i : node.input())
        if (!i.empty() && !is_const.count(i)) c = false;
    if (c)
      for (const auto& o : node.output()) is_const.insert(o);
  }
  auto constant = [&](const std::string& t) { return is_const.count(t) > 0; };
  auto single = [&](const std::string& t) {
    auto it = consumers.find(t);
    return it != consumers.end() && it->second.size() == 1 && !graph_outputs.count(t);
  };
  auto only_consumer = [&](const std::string& t) -> int { return single(t) ? consumers[t][0] : -1; };
  auto prod = [&](const std::string& t) -> int {
    auto it = producer_.find(t);
    return it == producer_.end() ? -1 : it->second;
  };
  std::vector<bool> claimed(static_cast<std::size_t>(n), false);
  auto free = [&](int k) { return k >= 0 && !claimed[static_cast<std::size_t>(k)]; };
  auto node = [&](int k) -> const ox::NodeProto& { return g.node(k); };
  auto is = [&](int k, std::initializer_list<std::string_view> types) {
    if (k < 0) return false;
    for (auto t : types)
      if (node(k).op_type() == t) return true;
    return false;
  };
  // The operand of a binary node that is not `t` (or "" when both are `t`).
  auto other = [&](int k, const std::string& t) -> std::string {
    const auto& nd = node(k);
    if (nd.input_size() != 2) return "";
    return nd.input(0) == t ? nd.input(1) : nd.input(0);
  };
  auto claim = [&](std::initializer_list<int> ks) {
    for (int k : ks)
      if (k >= 0) claimed[static_cast<std::size_t>(k)] = true;
  };
  auto absorb = [&](int k) {
    claimed[static_cast<std::size_t>(k)] = true;
    plans_[static_cast<std::size_t>(k)].role = Role::kAbsorbed;
  };

  // Attention core: MatMul(q', k') -> [Mul|Div by a constant, Add mask, Where mask, Cast]* -> Softmax
  // -> [Dropout|Cast] -> MatMul(., v').
  for (int s : order_) {
    if (!is(s, {"Softmax"}) || !free(s)) continue;
    std::vector<int> chain;
    bool causal = false;
    int m1 = -1;
    std::string t = node(s).input(0);
    for (int depth = 0; depth < 8; ++depth) {
      const int p = prod(t);
      if (!free(p) || !single(t)) break;
      const auto& pn = node(p);
      if (pn.op_type() == "MatMul" && !constant(pn.input(0)) && !constant(pn.input(1))) {
        m1 = p;
        break;
      }
      if (is(p, {"Mul", "Div"}) && pn.input_size() == 2 && constant(pn.input(1)) && !constant(pn.input(0))) {
        t = pn.input(0);
      } else if (is(p, {"Mul"}) && pn.input_size() == 2 && constant(pn.input(0)) && !constant(pn.input(1))) {
        t = pn.input(1);
      } else if (is(p, {"Add"}) && pn.input_size() == 2) {
        // The score operand is the one a MatMul (possibly through scaling) produces.
        auto leads_to_matmul = [&](const std::string& x) {
          int q = prod(x);
          for (int hop = 0; hop < 4 && q >= 0; ++hop) {
            if (is(q, {"MatMul"})) return true;
            if (!is(q, {"Mul", "Div", "Cast"})) return false;
            q = prod(node(q).input(0));
          }
          return false;
        };
        const bool first = leads_to_matmul(pn.input(0));
        const std::string mask = first ? pn.input(1) : pn.input(0);
        if (constant(mask)) causal = true;
        t = first ? pn.input(0) : pn.input(1);
      } else if (is(p, {"Where"}) && pn.input_size() == 3) {
        causal = true;
        t = constant(pn.input(1)) ? pn.input(2) : pn.input(1);
      } else if (is(p, {"Cast"})) {
        t = pn.input(0);
      } else {
        break;
      }
      chain.push_back(p);
    }
    if (m1 < 0 || !single(node(m1).output(0))) continue;
    int after = only_consumer(node(s).output(0));
    std::vector<int> tail;
    while (after >= 0 && free(after) && is(after, {"Dropout", "Cast"})) {
      tail.push_back(after);
      after = only_consumer(node(after).output(0));
    }
    if (after < 0 || !free(after) || !is(after, {"MatMul"})) continue;
    const std::string probs = tail.empty() ? node(s).output(0) : node(tail.back()).output(0);
    if (node(after).input(0) != probs || constant(node(after).input(1))) continue;
    const int m2 = after;
    Plan& pl = plans_[static_cast<std::size_t>(m2)];
    pl.role = Role::kAttention;
    pl.x = node(m1).input(0);
    pl.k = node(m1).input(1);
    pl.v = node(m2).input(1);
    pl.causal = causal;
    claim({m2});
    absorb(m1);
    absorb(s);
    for (int c : chain) absorb(c);
    for (int c : tail) absorb(c);
    // Head split/merge transposes next to the core are layouts the attention kernel reads and writes directly.
    for (const std::string& operand : {pl.x, pl.k, pl.v}) {
      const int p = prod(operand);
      if (free(p) && is(p, {"Transpose"}) && single(operand)) {
        plans_[static_cast<std::size_t>(p)].role = Role::kViewTranspose;
        claim({p});
      }
    }
    const int out_t = only_consumer(node(m2).output(0));
    if (free(out_t) && is(out_t, {"Transpose"})) {
      plans_[static_cast<std::size_t>(out_t)].role = Role::kViewTranspose;
      claim({out_t});
    }
  }

  // GELU (erf form): x / sqrt2 -> Erf -> + 1 -> * x -> * 0.5 (the 0.5 may also come first).
  for (int e : order_) {
    if (!is(e, {"Erf"}) || !free(e)) continue;
    const int p = prod(node(e).input(0));
    if (!free(p) || !is(p, {"Div", "Mul"}) || !single(node(e).input(0)) || node(p).input_size() != 2) continue;
    if (!constant(node(p).input(1)) && !constant(node(p).input(0))) continue;
    const std::string x = constant(node(p).input(1)) ? node(p).input(0) : node(p).input(1);
    if (constant(x)) continue;
    const int a = only_consumer(node(e).output(0));
    if (!free(a) || !is(a, {"Add"}) || !constant(other(a, node(e).output(0)))) continue;
    const int m = only_consumer(node(a).output(0));
    if (!free(m) || !is(m, {"Mul"})) continue;
    const std::string xm = other(m, node(a).output(0));
    int half = -1;
    if (xm != x) {
      half = prod(xm);
      if (!free(half) || !is(half, {"Mul"}) || !single(xm) || other(half, x).empty() || !constant(other(half, x)))
        continue;
    }
    int last = m;
    const int m2 = only_consumer(node(m).output(0));
    if (half < 0 && free(m2) && is(m2, {"Mul"}) && constant(other(m2, node(m).output(0)))) last = m2;
    for (int k : {p, e, a, half, m})
      if (k >= 0 && k != last) absorb(k);
    Plan& pl = plans_[static_cast<std::size_t>(last)];
    pl.role = Role::kGelu;
    pl.x = x;
    claim({last});
  }

  // SiLU / Swish: x * Sigmoid(x).
  for (int s : order_) {
    if (!is(s, {"Sigmoid"}) || !free(s)) continue;
    const std::string x = node(s).input(0);
    if (constant(x)) continue;
    const int m = only_consumer(node(s).output(0));
    if (!free(m) || !is(m, {"Mul"}) || other(m, node(s).output(0)) != x) continue;
    absorb(s);
    Plan& pl = plans_[static_cast<std::size_t>(m)];
    pl.role = Role::kSilu;
    pl.x = x;
    claim({m});
  }

  // RMSNorm: x / sqrt(mean(x^2) + eps) [* w], also as x * reciprocal(sqrt(...)).
  for (int r : order_) {
    if (!is(r, {"ReduceMean"}) || !free(r)) continue;
    const int p = prod(node(r).input(0));
    if (!free(p) || !single(node(r).input(0))) continue;
    std::string x;
    if (is(p, {"Pow"}) && constant(node(p).input(1))) x = node(p).input(0);
    else if (is(p, {"Mul"}) && node(p).input(0) == node(p).input(1)) x = node(p).input(0);
    else continue;
    if (constant(x)) continue;
    const int a = only_consumer(node(r).output(0));
    if (!free(a) || !is(a, {"Add"}) || !constant(other(a, node(r).output(0)))) continue;
    const int q = only_consumer(node(a).output(0));
    if (!free(q) || !is(q, {"Sqrt"})) continue;
    int d = only_consumer(node(q).output(0));
    int rc = -1;
    if (free(d) && is(d, {"Reciprocal"})) {
      rc = d;
      d = only_consumer(node(rc).output(0));
      if (!free(d) || !is(d, {"Mul"}) || other(d, node(rc).output(0)) != x) continue;
    } else if (!free(d) || !is(d, {"Div"}) || node(d).input(0) != x || node(d).input(1) != node(q).output(0)) {
      continue;
    }
    int last = d;
    std::string weight;
    const int w = only_consumer(node(d).output(0));
    if (free(w) && is(w, {"Mul"}) && constant(other(w, node(d).output(0)))) {
      last = w;
      weight = other(w, node(d).output(0));
    }
    for (int k : {p, r, a, q, rc, d})
      if (k >= 0 && k != last) absorb(k);
    Plan& pl = plans_[static_cast<std::size_t>(last)];
    pl.role = Role::kRms;
    pl.x = x;
    pl.weight = weight;
    claim({last});
  }

  // MSE loss: mean((pred - target)^2) over every axis.
  for (int r : order_) {
    if (!is(r, {"ReduceMean"}) || !free(r) || attr_int(node(r), "keepdims", 1) != 0) continue;
    if (node(r).input_size() > 1 || find_attr(node(r), "axes")) continue;
    const int sq = prod(node(r).input(0));
    if (!free(sq) || !single(node(r).input(0))) continue;
    std::string d;
    if (is(sq, {"Mul"}) && node(sq).input(0) == node(sq).input(1)) d = node(sq).input(0);
    else if (is(sq, {"Pow"}) && constant(node(sq).input(1))) d = node(sq).input(0);
    else continue;
    const int sub = prod(d);
    if (!free(sub) || !is(sub, {"Sub"}) || constant(node(sub).input(0))) continue;
    if (consumers[d].size() != (is(sq, {"Mul"}) ? 2u : 1u) || graph_outputs.count(d)) continue;
    absorb(sub);
    absorb(sq);
    Plan& pl = plans_[static_cast<std::size_t>(r)];
    pl.role = Role::kMse;
    pl.x = node(sub).input(0);
    claim({r});
  }

  // Linear layer bias: MatMul/Gemm with a constant weight, then Add of a constant vector.
  for (int m : order_) {
    if (!free(m) || !is(m, {"MatMul", "Gemm"})) continue;
    const auto& mn = node(m);
    if (mn.input_size() < 2 || !constant(mn.input(1)) || constant(mn.input(0))) continue;
    if (mn.op_type() == "Gemm" && mn.input_size() > 2 && !mn.input(2).empty()) continue;
    const int a = only_consumer(mn.output(0));
    if (!free(a) || !is(a, {"Add"})) continue;
    const std::string b = other(a, mn.output(0));
    if (b.empty() || !constant(b)) continue;
    // Only a direct initializer or Constant of rank 1 (a per-feature bias).
    const ox::TensorProto* bt = nullptr;
    for (const auto& t : g.initializer())
      if (t.name() == b) bt = &t;
    const int bp = prod(b);
    if (!bt && bp >= 0 && is(bp, {"Constant"}))
      if (const auto* va = find_attr(node(bp), "value"); va && va->has_t()) bt = &va->t();
    if (!bt || bt->dims_size() != 1) continue;
    absorb(a);
    Plan& pl = plans_[static_cast<std::size_t>(m)];
    pl.bias = b;
    pl.bias_out = node(a).output(0);
    claim({m});
  }
}

// ---------------------------------------------------------------------------------------------- one build

class GraphBuild {
 public:
  GraphBuild(const OnnxModel& m, const ModelOptions& o) : m_(m), opts_(o) {}
  Graph run();

 private:
  // ---- setup
  void substitute_and_infer();
  void seed_values();
  void process(int k);

  // ---- values
  const Value* input(const ox::NodeProto& n, int k) const {
    if (k >= n.input_size() || n.input(k).empty()) return nullptr;
    auto it = values_.find(n.input(k));
    if (it == values_.end())
      throw InputError(fmt::format("ONNX model '{}': {} reads '{}' before it is computed", m_.path(), node_label(n),
                                   n.input(k)));
    return &it->second;
  }
  const Value& need(const ox::NodeProto& n, int k) const {
    const Value* v = input(n, k);
    if (!v) fail(n, fmt::format("needs input {}", k));
    return *v;
  }
  std::optional<Shape> inferred(const std::string& name) const {
    auto it = inferred_.find(name);
    if (it == inferred_.end()) return std::nullopt;
    return it->second;
  }
  // The shape of output `k`: shape inference when it gave a concrete one, else `rule`.
  Shape out_shape(const ox::NodeProto& n, int k, const std::optional<Shape>& rule) const {
    if (k < n.output_size())
      if (auto s = inferred(n.output(k))) return *s;
    if (rule) {
      for (auto d : *rule)
        if (d <= 0)
          fail(n, fmt::format("gives output '{}' the shape {}; empty tensors are not supported",
                              k < n.output_size() ? n.output(k) : "?", shape_text(*rule)));
      return *rule;
    }
    const std::string out = k < n.output_size() ? n.output(k) : "?";
    for (int i = 1; i < n.input_size(); ++i)
      if (const Value* v = input(n, i); v && !v->is_const)
        fail(n, fmt::format("output '{}': its shape depends on the values of '{}', which are only known at run time",
                            out, n.input(i)));
    fail(n, fmt::format("output '{}': cannot determine its shape", out));
  }
  // A tensor a fused pattern reads.
  const Value& value(const ox::NodeProto& n, const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) fail(n, fmt::format("reads '{}' before it is computed", name));
    return it->second;
  }
  int out_dtype(const ox::NodeProto& n, int k, int fallback) const {
    if (k < n.output_size()) {
      auto it = inferred_types_.find(n.output(k));
      if (it != inferred_types_.end() && it->second != 0) return it->second;
    }
    return fallback;
  }
  void set_activation(const ox::NodeProto& n, int k, int id, const Shape& shape, int dtype) {
    if (k >= n.output_size() || n.output(k).empty()) return;
    Value v;
    v.id = id;
    v.shape = shape;
    v.dtype = out_dtype(n, k, dtype);
    values_[n.output(k)] = std::move(v);
  }
  // Parameters the op reading `v` owns: its initializers not yet owned by an earlier op.
  std::int64_t own(const Value* v, bool allow_int = false) {
    if (!v || !v->is_const) return 0;
    std::int64_t total = 0;
    for (int r : v->roots) {
      const Root& root = roots_[static_cast<std::size_t>(r)];
      if (owned_[static_cast<std::size_t>(r)] || root.rank == 0) continue;
      if (!is_float_type(root.dtype) && !(allow_int && is_weight_int_type(root.dtype))) continue;
      owned_[static_cast<std::size_t>(r)] = true;
      total += root.elems;
    }
    return total;
  }
  std::vector<const Value*> activations(const ox::NodeProto& n) const {
    std::vector<const Value*> out;
    for (int k = 0; k < n.input_size(); ++k)
      if (const Value* v = input(n, k); v && !v->is_const) out.push_back(v);
    return out;
  }
  [[noreturn]] void fail(const ox::NodeProto& n, const std::string& what) const {
    throw InputError(fmt::format("ONNX model '{}': {} {}", m_.path(), node_label(n), what));
  }
  std::string op_name(const ox::NodeProto& n, const std::string& suffix = "") {
    std::string base = !n.name().empty() ? n.name() : (n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : n.op_type());
    return em_->unique(base + suffix);
  }
  std::vector<std::int64_t> int_input(const ox::NodeProto& n, int k) const {
    const Value* v = input(n, k);
    if (!v) return {};
    if (!v->data) fail(n, fmt::format("input '{}' must be a constant the importer can evaluate", n.input(k)));
    return v->data->ints();
  }

  // ---- constant folding
  void fold(const ox::NodeProto& n);
  std::optional<ConstData> evaluate(const ox::NodeProto& n, const std::vector<const Value*>& in, const Shape& out);
  std::vector<std::optional<Shape>> rule_shapes(const ox::NodeProto& n);

  // ---- op emitters
  void emit(const ox::NodeProto& n, const Plan& plan);
  void passthrough(const ox::NodeProto& n);
  void conv(const ox::NodeProto& n, int xi, int wi, int bi, bool transposed);
  void matmul(const ox::NodeProto& n, const Plan& plan, int ai, int bi);
  void gemm(const ox::NodeProto& n, const Plan& plan);
  void attention(const ox::NodeProto& n, const Plan& plan);
  void ms_attention(const ox::NodeProto& n);
  void pool(const ox::NodeProto& n, PoolKind kind);
  void global_pool(const ox::NodeProto& n, PoolKind kind);
  void reduce(const ox::NodeProto& n);
  void norm(const ox::NodeProto& n);
  void rnn(const ox::NodeProto& n, int gates, double cell_flops);
  void gather(const ox::NodeProto& n);
  void elementwise(const ox::NodeProto& n, double flops);
  void data_movement(const ox::NodeProto& n);
  void loss(const ox::NodeProto& n);
  void finish_bias(const ox::NodeProto& n, const Plan& plan, int id, const Shape& out, std::int64_t n_features);

  const OnnxModel& m_;
  ModelOptions opts_;
  std::int64_t batch_ = 1;
  bool rebatched_ = false;
  ox::ModelProto proto_;
  std::unordered_map<std::string, Shape> inferred_;
  std::unordered_map<std::string, int> inferred_types_;
  std::unordered_map<std::string, Value> values_;
  std::vector<Root> roots_;
  std::vector<bool> owned_;
  std::unique_ptr<Emitter> em_;
  std::map<std::string, int> uncosted_;
  std::int64_t input_bytes_ = 0;
};

void GraphBuild::substitute_and_infer() {
  proto_ = m_.model_;
  const std::int64_t seq = opts_.seq;
  if (m_.sequence_ && seq > 0 && m_.fixed_seq_ > 0 && seq != m_.fixed_seq_)
    throw InputError(fmt::format("ONNX model '{}' has a fixed sequence length of {}; it cannot run --seq {}", m_.path(),
                                 m_.fixed_seq_, seq));
  std::map<std::string, std::int64_t> values = m_.dim_values_;
  if (m_.sequence_ && seq > 0 && !m_.seq_param_.empty()) values[m_.seq_param_] = seq;
  if (!m_.has_batch_ && opts_.batch != 1)
    throw InputError(fmt::format("ONNX model '{}' has a scalar first input and no batch dimension; use --batch 1",
                                 m_.path()));
  batch_ = m_.has_batch_ ? opts_.batch : 1;
  rebatched_ = m_.fixed_batch_ > 0 && batch_ != m_.fixed_batch_;

  auto* g = proto_.mutable_graph();
  std::size_t gi = 0;
  for (auto& in : *g->mutable_input()) {
    if (m_.initializer_names_.count(in.name())) continue;
    const GraphInput& spec = m_.inputs_[gi++];
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int a = 0; a < shape->dim_size(); ++a) {
      auto* d = shape->mutable_dim(a);
      const InputDim& id = spec.dims[static_cast<std::size_t>(a)];
      std::int64_t v = id.value;
      if (a == 0 && m_.has_batch_) {
        const bool is_batch = m_.fixed_batch_ > 0 ? id.value == m_.fixed_batch_
                                                  : (id.value == 0 && id.param == m_.batch_param_);
        if (is_batch) v = batch_;
      }
      if (v <= 0) {
        const std::string name = id.param.empty() ? fmt::format("{}:{}", spec.name, a) : id.param;
        auto it = values.find(name);
        PERFCAST_ASSERT(it != values.end(), "resolve_inputs rejected unresolved dimensions");
        v = it->second;
      }
      d->clear_dim_param();
      d->set_dim_value(v);
    }
  }
  try {
    ox::ShapeInferenceOptions options(false, 0, true);
    ox::shape_inference::InferShapes(proto_, ox::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    // libonnx gave up part way (unknown domain, a schema newer than it knows): what it inferred before
    // stays, the per-op rules fill the rest.
  }
  auto collect = [&](const ox::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return;
    const auto& tt = vi.type().tensor_type();
    inferred_types_[vi.name()] = tt.elem_type();
    if (!tt.has_shape()) return;
    Shape s;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() <= 0) return;
      s.push_back(d.dim_value());
    }
    inferred_[vi.name()] = std::move(s);
  };
  for (const auto& vi : g->value_info()) collect(vi);
  for (const auto& vi : g->output()) collect(vi);
}

void GraphBuild::seed_values() {
  const auto& g = proto_.graph();
  auto add_root = [&](const std::string& name, const ox::TensorProto& t) {
    Root r;
    r.name = name;
    r.dtype = t.data_type();
    r.rank = static_cast<std::size_t>(t.dims_size());
    r.elems = numel(Shape(t.dims().begin(), t.dims().end()));
    roots_.push_back(r);
    owned_.push_back(false);
    return static_cast<int>(roots_.size()) - 1;
  };
  for (const auto& t : g.initializer()) {
    Value v;
    v.is_const = true;
    v.shape.assign(t.dims().begin(), t.dims().end());
    v.dtype = t.data_type();
    v.data = tensor_data(t);
    v.roots = {add_root(t.name(), t)};
    values_[t.name()] = std::move(v);
  }
  for (const auto& in : g.input()) {
    if (m_.initializer_names_.count(in.name())) continue;
    Value v;
    v.id = -1;
    for (const auto& d : in.type().tensor_type().shape().dim()) v.shape.push_back(d.dim_value());
    v.dtype = in.type().tensor_type().elem_type();
    const std::int64_t bytes = numel(v.shape) * elem_bytes(v.dtype);
    input_bytes_ += bytes;
    values_[in.name()] = std::move(v);
  }
}

Graph GraphBuild::run() {
  substitute_and_infer();
  em_ = std::make_unique<Emitter>(m_.path(), batch_);
  seed_values();
  if (m_.sequence_) em_->b().set_sequence(opts_.seq > 0 ? opts_.seq : m_.default_seq_);
  for (int k : m_.order_) {
    const auto& n = proto_.graph().node(k);
    try {
      process(k);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      if (msg.rfind("ONNX model", 0) == 0) throw;
      throw InputError(fmt::format("ONNX model '{}': {}: {}", m_.path(), node_label(n), msg));
    }
  }
  Graph graph = em_->finish();
  graph.input_bytes_per_sample = input_bytes_ / std::max<std::int64_t>(1, batch_);
  m_.note_uncosted(uncosted_);
  return graph;
}

void GraphBuild::process(int k) {
  const auto& n = proto_.graph().node(k);
  const Plan& plan = m_.plans_[static_cast<std::size_t>(k)];
  if (plan.role == Role::kAbsorbed) return;
  if (plan.role != Role::kNormal && plan.role != Role::kViewTranspose) {
    emit(n, plan);  // a fused pattern: its inner tensors were never materialised
    return;
  }
  if (has_subgraph(n)) {
    passthrough(n);
    return;
  }
  bool all_const = true;
  for (int i = 0; i < n.input_size(); ++i)
    if (const Value* v = input(n, i); v && !v->is_const) all_const = false;
  if (n.op_type() == "Shape" || n.op_type() == "Size" || all_const) {
    fold(n);
    return;
  }
  emit(n, plan);
}

// ---------------------------------------------------------------------------------------------- folding

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

// ---------------------------------------------------------------------------------------------- emitters

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
  const Tensor t = em_->b().attention(tq, tk, tv, heads, kv_heads, plan.causal, false, op_name(n));
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

}  // namespace

Graph OnnxModel::build(const ModelOptions& o) const {
  if (o.batch <= 0) throw InputError("batch must be positive");
  GraphBuild b(*this, o);
  return b.run();
}

ModelSource model_from_onnx(const std::string& path, const ImportOptions& options) {
  auto model = std::make_shared<OnnxModel>(path, options);
  // One build at the model's own batch validates every node and fills the uncosted notes.
  const Graph g = model->build(ModelOptions{model->natural_batch(), 0});
  bool conv = false;
  for (const auto& op : g.ops) conv = conv || op.kind == OpKind::kConv;
  std::string family = "onnx";
  if (model->sequence()) family = "transformer";
  else if (conv && g.ops.front().kind == OpKind::kConv && g.ops.front().conv.spatial_dims == 3) family = "cnn3d";
  else if (conv) family = "cnn";
  const std::string name = std::filesystem::path(path).filename().string();
  model->set_family(family, fmt::format("ONNX model {}: {} ops, {:.2f} M parameters{}", name, g.ops.size(),
                                        static_cast<double>(g.params()) / 1e6,
                                        model->sequence() ? fmt::format(", {} tokens per sample", model->default_seq())
                                                          : std::string()));
  ModelSource m;
  m.id = path;
  m.family = model->family();
  m.description = model->description();
  m.sequence = model->sequence();
  m.default_seq = model->default_seq();
  m.uncosted = model->uncosted();
  std::shared_ptr<const OnnxModel> shared = model;
  m.build = [shared](const ModelOptions& opts) { return shared->build(opts); };
  return m;
}

}  // namespace perfcast

#else  // !PERFCAST_HAVE_ONNX

namespace perfcast {

ModelSource model_from_onnx(const std::string& path, const ImportOptions&) {
  throw UnsupportedError("perfcast was built without ONNX support (PERFCAST_WITH_ONNX off, or libonnx-dev and "
                         "libprotobuf-dev missing at configure time); cannot read '" + path + "'");
}

}  // namespace perfcast

#endif  // PERFCAST_HAVE_ONNX
