// GraphBuild: one build of an OnnxModel at a given batch (substitution, shape inference, constant folding and
// the node -> GraphBuilder op mapping).
#pragma once

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

#include "import/onnx/onnx_common.h"
#include "import/onnx/onnx_emitter.h"
#include "import/onnx/onnx_reader.h"

namespace perfcast::onnx_import {

class GraphBuild {
 public:
  // A build of `m` with options `o` (batch, --seq).
  GraphBuild(const OnnxModel& m, const ModelOptions& o) : m_(m), opts_(o) {}
  // Substitutes, infers shapes, walks the nodes and returns the finished graph.
  Graph run();

 private:
  // ---- setup
  void substitute_and_infer();
  void infer_shapes_isolated();  // libonnx shape inference in a child process
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

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
