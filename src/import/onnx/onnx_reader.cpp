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
#include <sstream>

namespace perfcast::onnx_import {

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

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
