// The Emitter: a GraphBuilder plus the per-op patches the ONNX importer applies once the graph is finished.
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

namespace perfcast::onnx_import {

// GraphBuilder plus the corrections the builder's fixed formulas cannot express (ONNX padding, broadcasting,
// parameters from initializers): patches applied to ops once the graph is finished.
class Emitter {
 public:
  // An empty graph for `model_id` at `batch`.
  Emitter(std::string model_id, std::int64_t batch) : b_(std::move(model_id), batch) {}

  // The underlying builder.
  GraphBuilder& b() { return b_; }

  // `name` made unique among the op names so far ("name#k").
  std::string unique(std::string name) {
    if (name.empty()) name = "op";
    std::string n = name;
    for (int k = 1; !names_.insert(n).second; ++k) n = name + "#" + std::to_string(k);
    return n;
  }

  // Queues a correction applied to op `id` by finish().
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
      case OpKind::kElementwise:
      // The importer's handlers emit the kinds above through here; the others have builder calls of their own
      // (conv, attention) or no ONNX form, and take the elementwise defaults.
      case OpKind::kConv:
      case OpKind::kAttention:
      case OpKind::kOptimizer:
      case OpKind::kEmbeddingBag:
      case OpKind::kInteraction:
      case OpKind::kCount:
        t = b_.relu(h1, false, name);
        break;
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

  // The finished graph with every patch applied.
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

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
