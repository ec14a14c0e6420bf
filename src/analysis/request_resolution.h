// The parts of a PredictRequest that name catalog entries or options, resolved the same way for every kind of
// prediction (analysis/predict.cpp for training and inference, analysis/llm_predict.cpp for language models).
#pragma once

#include "analysis/predict.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"
#include "schedule/memory.h"

namespace perfcast {

// The request's GPU with --power-limit as its board limit; InputError when the limit is far above the TDP.
DeviceSpec device_for(const PredictRequest& r);

// The request's runtime profile with --cuda-graphs applied (dispatch overhead and gaps of a captured graph).
RuntimeProfile runtime_for(const PredictRequest& r);

// The request's optimizer; without --optimizer, AdamW for sequence models and SGD with momentum otherwise.
OptimizerKind optimizer_for(const PredictRequest& r, bool sequence_model);

// What the memory estimate needs from the request: mode, optimizer step and state, checkpointing.
MemoryOptions memory_options(const PredictRequest& r, OptimizerKind optimizer);

// The model's graph as `runtime` executes it: a runtime with fused multi-head attention keeps scores on chip.
Graph graph_as_run(const ModelSource& model, const ModelOptions& options, const RuntimeProfile& runtime);

// --precision int8 on a runtime without CUDA INT8 convolution kernels (PyTorch eager, TensorFlow): UnsupportedError
// naming the engines that have them, when the graph has convolutions.
void check_int8_convolutions(const Graph& graph, const RuntimeProfile& runtime, const DeviceSpec& device);

}  // namespace perfcast
