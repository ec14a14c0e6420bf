// Loading an ONNX model: parsing and validating the ModelProto, resolving its symbolic dimensions (batch,
// sequence, --dim values).
#include "import/onnx/onnx_reader.h"

#ifdef PERFCAST_HAVE_ONNX

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

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
#include <cstring>
#include <filesystem>
#include <fstream>
#include <queue>
#include <sstream>

#include "core/limits.h"

namespace perfcast::onnx_import {

void OnnxModel::load() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path_, ec)) throw InputError(fmt::format("ONNX model '{}' does not exist", path_));
  if (fs::is_directory(path_, ec)) throw InputError(fmt::format("ONNX model '{}' is a directory, not a file", path_));
  const auto size = fs::file_size(path_, ec);
  if (!ec && size > static_cast<std::uintmax_t>(input_limits().max_file_bytes))
    fail(fmt::format("is {} bytes, over the limit of {} (data/limits.toml max_file_bytes; keep weights as external data)",
                     size, input_limits().max_file_bytes));
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read ONNX model '{}'", path_));
  if (in.peek() == std::ifstream::traits_type::eof()) fail("is empty");
  // Parsed from the stream: a copy of the file's bytes beside the parsed message would double the peak memory
  // (a BERT-base export with its 440 MB of weights peaked at 870 MB).
  const bool parsed = model_.ParseFromIstream(&in);
  if (!parsed) {
    // Protobuf gives no reason; tell a text file (a common mistake) from a damaged binary by the first bytes.
    std::ifstream head(path_, std::ios::binary);
    std::string probe(512, '\0');
    head.read(probe.data(), static_cast<std::streamsize>(probe.size()));
    probe.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, head.gcount())));
    std::size_t printable = 0;
    for (const char ch : probe) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f)) ++printable;
    }
    if (!probe.empty() && printable == probe.size()) fail("is a text file, not a binary ONNX protobuf");
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
  // A declared size past 64 bits is stripped too: check_nodes then refuses it with the file and tensor named.
  auto strip = [](ox::TensorProto& t) {
    std::int64_t elems = 1;
    for (std::int64_t d : t.dims())
      if (d < 0 || __builtin_mul_overflow(elems, d, &elems)) elems = INT64_MAX;
    const bool small_int = is_int_type(t.data_type()) && elems <= 4096;
    if (small_int || elems <= 64) return;
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

namespace {

// Attributes whose values a shape rule (libonnx's or perfcast's) divides by, multiplies or indexes with: each must
// hold whole positive (or non-negative) numbers of a plausible size before shape inference sees them. Operators
// with windows: convolutions and pools.
bool has_window(const std::string& op) {
  static const std::set<std::string, std::less<>> kOps{
      "Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool", "MaxUnpool",
      "DeformConv", "MaxRoiPool", "Im2Col", "Col2Im"};
  return kOps.count(op) > 0;
}

}  // namespace

void OnnxModel::check_nodes() {
  const InputLimits& lim = input_limits();
  const auto& g = model_.graph();
  if (g.node_size() > lim.max_graph_nodes)
    fail(fmt::format("has {} nodes, over the limit of {} (data/limits.toml max_graph_nodes)", g.node_size(),
                     lim.max_graph_nodes));
  // Declared sizes: ranks, dimensions and element totals before any product is taken over them.
  auto check_dims = [&](const std::string& what, const auto& dims) {
    if (static_cast<std::int64_t>(dims.size()) > lim.max_rank)
      fail(fmt::format("has {} of rank {}, over the limit of {} (data/limits.toml max_rank)", what, dims.size(),
                       lim.max_rank));
    std::int64_t total = 1;
    for (std::int64_t d : dims) {
      if (d < 0 || d > lim.max_dim)
        fail(fmt::format("has {} with a dimension of {} (dimensions are 0 to {}, data/limits.toml max_dim)", what, d,
                         lim.max_dim));
      total = d == 0 ? 0 : total;
      if (total > 0 && d > 0 && total > lim.max_elements / d)
        fail(fmt::format("has {} of more than {} elements (data/limits.toml max_elements)", what, lim.max_elements));
      total *= d;
    }
  };
  for (const auto& t : g.initializer()) check_dims(fmt::format("initializer '{}'", t.name()), t.dims());
  for (const auto& in : g.input())
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape()) {
      std::vector<std::int64_t> dims;
      for (const auto& d : in.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : 1);
      check_dims(fmt::format("input '{}'", in.name()), dims);
    }

  // Declared ranks (graph inputs and initializers), for the window operators' checks below.
  std::map<std::string, int> declared_rank;
  for (const auto& t : g.initializer()) declared_rank[t.name()] = t.dims_size();
  for (const auto& in : g.input())
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
      declared_rank[in.name()] = in.type().tensor_type().shape().dim_size();

  std::map<std::string, int> opsets;
  for (const auto& o : model_.opset_import()) opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
  for (const auto& n : g.node()) {
    if (n.output_size() == 0) fail(fmt::format("is malformed: {} has no outputs", node_label(n)));
    for (const auto& a : n.attribute()) {
      const std::int64_t values = std::max({a.ints_size(), a.floats_size(), a.strings_size(), a.tensors_size()});
      if (values > lim.max_attribute_values)
        fail(fmt::format("is malformed: {} attribute '{}' has {} values, over the limit of {} "
                         "(data/limits.toml max_attribute_values)", node_label(n), a.name(), values,
                         lim.max_attribute_values));
      if (a.has_t()) check_dims(fmt::format("{} attribute '{}'", node_label(n), a.name()), a.t().dims());
    }
    // The operator's schema (input and output counts, required attributes and their types), as libonnx's checker
    // would: its shape inference assumes a node that passed.
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    if (auto it = opsets.find(domain); it != opsets.end()) {
      if (const auto* schema = ox::OpSchemaRegistry::Schema(n.op_type(), it->second, domain)) {
        try {
          schema->Verify(n);
        } catch (const std::exception& e) {
          std::string why = e.what();
          why = why.substr(0, why.find('\n'));
          fail(fmt::format("is malformed: {}: {}", node_label(n), why));
        }
      }
    }
    if (has_window(n.op_type())) {
      for (const char* name : {"kernel_shape", "strides", "dilations", "pads", "output_padding", "output_shape"}) {
        const bool positive = std::string_view(name) == "kernel_shape" || std::string_view(name) == "strides" ||
                              std::string_view(name) == "dilations";
        for (std::int64_t v : attr_ints(n, name))
          if (v < (positive ? 1 : 0) || v > lim.max_window)
            fail(fmt::format("is malformed: {} attribute '{}' holds {} ({} to {}, data/limits.toml max_window)",
                             node_label(n), name, v, positive ? 1 : 0, lim.max_window));
      }
      // Data and weights are [N, C, spatial...] and [C_out, C_in / group, kernel...]: libonnx's ConvTranspose rule
      // reads the weight's second dimension without checking its rank (a SIGSEGV found by fuzz_onnx).
      std::vector<int> tensors{0};
      if (n.op_type() == "Conv" || n.op_type() == "ConvTranspose" || n.op_type() == "ConvInteger" ||
          n.op_type() == "DeformConv")
        tensors.push_back(1);
      if (n.op_type() == "QLinearConv") tensors.push_back(3);
      for (int i : tensors)
        if (i < n.input_size())
          if (auto it = declared_rank.find(n.input(i)); it != declared_rank.end() && it->second < 3)
            fail(fmt::format("is malformed: {} input '{}' has rank {}; it needs a batch or output-channel, a channel "
                             "and at least one spatial dimension", node_label(n), n.input(i), it->second));
      if (const auto* a = find_attr(n, "group"); a && (a->i() < 1 || a->i() > lim.max_dim))
        fail(fmt::format("is malformed: {} attribute 'group' holds {}", node_label(n), a->i()));
    }
    // DepthToSpace/SpaceToDepth divide by their blocksize; DequantizeLinear's block_size 0 means per-tensor.
    for (const auto& [name, least] : {std::pair{"blocksize", 1}, {"block_size", 0}})
      if (const auto* a = find_attr(n, name); a && (a->i() < least || a->i() > lim.max_window))
        fail(fmt::format("is malformed: {} attribute '{}' holds {} ({} to {}, data/limits.toml max_window)",
                         node_label(n), name, a->i(), least, lim.max_window));
  }
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
  // Kahn's algorithm over tensor names, taking the lowest ready node index first: a sorted file keeps its order,
  // and any order (a reversed 100,000-node chain) costs O(edges log nodes), with no recursion.
  std::unordered_map<std::string, std::vector<int>> readers;  // undefined tensor -> nodes waiting for it
  std::vector<int> waiting(static_cast<std::size_t>(n), 0);
  for (int k = 0; k < n; ++k) {
    std::set<std::string> pending;
    for (const auto& i : g.node(k).input())
      if (!i.empty() && !defined.count(i)) pending.insert(i);
    for (const auto& i : pending) readers[i].push_back(k);
    waiting[static_cast<std::size_t>(k)] = static_cast<int>(pending.size());
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int k = 0; k < n; ++k)
    if (waiting[static_cast<std::size_t>(k)] == 0) ready.push(k);
  while (!ready.empty()) {
    const int k = ready.top();
    ready.pop();
    done[static_cast<std::size_t>(k)] = true;
    order_.push_back(k);
    for (const auto& o : g.node(k).output()) {
      if (o.empty()) continue;
      producer_[o] = k;
      if (!defined.insert(o).second) continue;  // a second producer of a name releases no reader again
      if (auto it = readers.find(o); it != readers.end()) {
        for (int r : it->second)
          if (--waiting[static_cast<std::size_t>(r)] == 0) ready.push(r);
        readers.erase(it);
      }
    }
  }
  if (static_cast<int>(order_.size()) < n) fail("is malformed: its nodes form a cycle");
  for (const auto& out : g.output())
    if (!defined.count(out.name()))
      fail(fmt::format("is truncated or malformed: graph output '{}' is never computed", out.name()));
}

void OnnxModel::find_position_table() {
  if (!sequence_) return;
  const auto& g = model_.graph();
  const auto initializer = [&](const std::string& name) -> const ox::TensorProto* {
    for (const auto& t : g.initializer())
      if (t.name() == name) return &t;
    return nullptr;
  };
  const auto elements = [](const auto& dims) {
    std::int64_t n = 1;
    for (const auto d : dims) n *= d;
    return n;
  };
  for (const auto& node : g.node()) {
    if (node.op_type() != "Gather" || !node.domain().empty() || node.input_size() < 2) continue;
    const ox::TensorProto* table = initializer(node.input(0));
    if (!table || table->dims_size() != 2) continue;
    const std::int64_t rows = table->dims(0);
    // Up the index chain through the ops that carry positions unchanged in value (a slice of them, a reshape, a cast).
    std::string t = node.input(1);
    for (int hops = 0; hops < 16; ++hops) {
      if (const ox::TensorProto* buffer = initializer(t)) {
        if (is_int_type(buffer->data_type()) && elements(buffer->dims()) == rows) position_rows_ = std::max(position_rows_, rows);
        break;
      }
      const auto it = producer_.find(t);
      if (it == producer_.end()) break;
      const ox::NodeProto& p = g.node(it->second);
      if (p.op_type() == "Range") {
        position_rows_ = std::max(position_rows_, rows);
        break;
      }
      if (p.op_type() == "Constant") {
        const ox::AttributeProto* v = find_attr(p, "value");
        if (v && v->has_t() && is_int_type(v->t().data_type()) && elements(v->t().dims()) == rows)
          position_rows_ = std::max(position_rows_, rows);
        break;
      }
      static const std::set<std::string> carriers{"Slice", "Unsqueeze", "Squeeze", "Reshape", "Expand", "Cast", "Identity"};
      if (!carriers.count(p.op_type()) || p.input_size() < 1) break;
      t = p.input(0);
    }
  }
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
        if (sequence_ && name == seq_param_ && options_.seq > 0 && options_.seq != options_.dims.at(name))
          fail(fmt::format("has '{}' as its sequence dimension; --dim {}={} and --seq {} disagree: give one", name,
                           name, options_.dims.at(name), options_.seq));
        dim_values_[name] = options_.dims.at(name);
      } else if (sequence_ && name == seq_param_ && options_.seq > 0) {
        dim_values_[name] = options_.seq;
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
    for (const auto& m : missing) flags.push_back((sequence_ && m == seq_param_ ? "--seq N (or --dim " : "--dim ") + m +
                                                  (sequence_ && m == seq_param_ ? "=N)" : "=N"));
    fail(fmt::format("has dynamic dimension{} {} with no value; pass {}", missing.size() > 1 ? "s" : "",
                     fmt::format("'{}'", fmt::join(missing, "', '")), fmt::join(flags, " ")));
  }
  if (sequence_) default_seq_ = fixed_seq_ > 0 ? fixed_seq_ : dim_values_.at(seq_param_);
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
