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
//
// The importer lives in src/import/onnx/: onnx_reader (loading, validation, symbolic dimensions), onnx_fusions
// (the fusion plan), onnx_graph_build and onnx_constant_folding (one build), onnx_ops (node -> op mapping),
// onnx_shape_rules (the per-op shape fallback). This file is the entry point.
#include "import/model_source.h"

#include "core/error.h"

#ifdef PERFCAST_HAVE_ONNX

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "import/onnx/onnx_reader.h"

namespace perfcast {

ModelSource model_from_onnx(const std::string& path, const ImportOptions& options) {
  auto model = std::make_shared<onnx_import::OnnxModel>(path, options);
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
  // A learned position table: its rows are the context (check_context), as transformers' lookup fails past them.
  m.max_positions = model->position_table_rows();
  m.learned_positions = m.max_positions > 0;
  std::shared_ptr<const onnx_import::OnnxModel> shared = model;
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
