// The parts of a PredictRequest that name catalog entries or options, resolved the same way for every kind of
// prediction (analysis/predict.cpp for training and inference, analysis/llm_predict.cpp for language models).
#pragma once

#include <optional>

#include "analysis/predict.h"
#include "cost/attention_kernels.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"
#include "schedule/memory.h"

namespace perfcast {

// What importing the request's model takes from it: its --dim values, and --seq for an ONNX model's symbolic
// sequence dimension.
ImportOptions import_options(const PredictRequest& r);

// The request's model (resolve_model), its context checked (check_context) against the positions one sequence of
// the request runs: --context + --seq, the model's default --seq when none is given. Every prediction path resolves
// its model here, so that each refuses the same sequences with the same message.
ModelSource model_for(const PredictRequest& r);

// The most GPUs one server with this interconnect holds (data/scale_limits.toml [gpus_per_node]); none for an
// interconnect the file does not bound. --gpus and a price file's instances are held to it alike.
std::optional<int> max_gpus_per_node(const std::string& interconnect);

// The request's GPU with --power-limit as its board limit; InputError when the limit is far above the TDP.
DeviceSpec device_for(const PredictRequest& r);

// The request's runtime profile with --cuda-graphs applied (dispatch overhead and gaps of a captured graph).
RuntimeProfile runtime_for(const PredictRequest& r);

// CPU time on the request's host (--host, else the default) per unit of the runtime files' host costs, which are
// quoted for the reference host: reference single-thread score / the host's.
double host_time_scale(const PredictRequest& r);

// The request's optimizer; without --optimizer, AdamW for sequence models and SGD with momentum otherwise.
OptimizerKind optimizer_for(const PredictRequest& r, bool sequence_model);

// What the memory estimate needs from the request: mode, optimizer step and state, checkpointing.
MemoryOptions memory_options(const PredictRequest& r, OptimizerKind optimizer);

// The request's --attention on this GPU and precision (data/attention.toml). InputError when the runtime is not
// PyTorch's or its --runtime-version predates scaled_dot_product_attention.
struct AttentionPlan {
  AttentionImpl impl = AttentionImpl::kRuntime;  // kRuntime: the runtime profile decides (fused_attention)
  AttentionTarget target;  // where the core runs: the --attention dispatch, and ONNX Runtime's fused MHA rules
  // TensorRT-LLM's generation kernel (--attention xqa | mmha): whether grouped query heads share the KV reads;
  // none: the runtime's llm_decode_shared_kv (its version rules).
  std::optional<bool> decode_shared_kv;
};
AttentionPlan attention_plan_for(const PredictRequest& r, const RuntimeProfile& runtime, const DeviceSpec& device,
                                 bool training);

// The model's graph as `runtime` executes it: a runtime with fused multi-head attention keeps scores on chip;
// with --attention each core runs the kernel the plan selects (UnsupportedError for flash that cannot run, or
// sdpa/flash on a model whose code only has eager attention).
Graph graph_as_run(const ModelSource& model, const ModelOptions& options, const RuntimeProfile& runtime,
                   const AttentionPlan& attention = {});

// What --attention ran in `graph` for reports ("--attention sdpa: FlashAttention-2 for 12 attention cores");
// "" when the runtime decides.
std::string attention_note(const AttentionPlan& attention, const Graph& graph);

// Serving (prefill/decode): whether the plan's kernel for the model's attention keeps scores on chip; the
// runtime's llm_fused_attention when the plan is kRuntime.
bool serving_attention_fused(const AttentionPlan& attention, const ModelSource& model, const Graph& probe,
                             const RuntimeProfile& runtime);

// --precision int8 on a runtime without CUDA INT8 convolution kernels (PyTorch eager, TensorFlow): UnsupportedError
// naming the engines that have them, when the graph has convolutions.
void check_int8_convolutions(const Graph& graph, const RuntimeProfile& runtime, const DeviceSpec& device);

}  // namespace perfcast
