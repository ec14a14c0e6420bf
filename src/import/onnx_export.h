// ONNX export: a perfcast Graph written as an ONNX model (opset 17) with its structure and shapes only.
//
// Representation (chosen so that a re-import gives back the same parameters and MACs):
//   - Learned tensors (conv/linear weights, biases, norm scales, BatchNorm running statistics, embedding
//     tables, LSTM W/R/B) are initializers with their data type and dims and NO data: no raw_data and no typed
//     field, plus doc_string "perfcast: shape only, no weights". onnx.load, Netron and shape inference read such
//     a file; a runtime (or onnx.checker) refuses it, which is intended: there are no weights to run.
//   - Small constants the graph needs to be well defined (Reshape targets, axes, Resize scales, scalar factors)
//     carry real data. Boolean masks (causal attention) are shape-only too.
//   - Tied weights are one initializer read twice (Gather for the embedding, Gemm/MatMul through a Transpose
//     for the output projection), so they count once. Weights shared across layers (ALBERT) are refused.
//   - A LayerNorm without bias (MPT) has no B input; one without weight (OLMo) reads a ConstantOfShape of ones.
//   - The batch is the symbolic dimension "batch" unless a fixed batch is asked for; Reshape targets write 0
//     ("copy the input dimension") for it, so a fixed-batch file can still be re-imported at another batch.
//   - Builder ops without a single ONNX operator use the standard decompositions exporters emit (GELU as erf,
//     SiLU as x*sigmoid(x), RMSNorm as x/sqrt(mean(x^2)+eps)*w, the attention core as MatMul-Softmax-MatMul with
//     head split/merge transposes, MSE as mean((pred-target)^2)); perfcast's importer fuses them back.
//   - Losses read extra graph inputs after the model inputs: "labels" (int64) and "target" (float).
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace perfcast {

struct OnnxExportOptions {
  bool symbolic_batch = true;  // first dimension "batch"; false: the graph's own batch as a fixed size
};

struct OnnxExport {
  std::string bytes;           // serialized ModelProto
  int nodes = 0;
  int initializers = 0;
  std::int64_t weight_elems = 0;  // elements of the shape-only initializers
};

// Whether this build has libonnx (PERFCAST_WITH_ONNX found it at configure time).
bool onnx_supported();

// The graph as an ONNX model. UnsupportedError when perfcast was built without ONNX support.
OnnxExport graph_to_onnx(const Graph& graph, const OnnxExportOptions& options = {});

}  // namespace perfcast
