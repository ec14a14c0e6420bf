// Kernels of a decoder language model's inference passes (prefill and decode) as the serving runtimes run them.
// Each weight matmul takes the kernel path the runtime takes for its weight type and token count (llama.cpp:
// mat-vec kernels on the quantized blocks, int8 dp4a tile kernels, or dequantize + cuBLAS; serving engines:
// fp16/bf16/fp8 tensor-core GEMMs and weight-only int8/int4 GEMMs), attention reads the KV cache at its
// precision, and every other op is costed by cost_op. Kernel times come from KernelCostModel like every other
// kernel's; analysis/llm_predict.cpp schedules the passes (schedule_pass) and sizes their memory (estimate_memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "cost/quantization.h"
#include "device/architecture.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "runtime/llm_model_code.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

// A decoder language model's shape, read from its graph (llm_shape_of).
struct LlmShape {
  int layers = 0;
  std::int64_t heads = 0, kv_heads = 0, head_dim = 0, hidden = 0, vocab = 0;
  std::int64_t experts = 0;       // 0 = dense
  double experts_per_tok = 0;
  bool tied = false;              // LM head shares the token embedding
  std::int64_t positions = 0;     // learned positions (GPT-2); 0 = rotary
  std::int64_t window = 0;        // sliding-window attention's window (AttentionGeometry::window); 0 = none
};

// What the kernels of one inference pass depend on: the device and its cost model, the runtime, the weights'
// storage type, the model's shape, and the pipes and KV-cache element size the request resolved to.
struct LlmKernelContext {
  const DeviceSpec& device;
  const ArchitectureProfile& arch;
  const KernelCostModel& km;
  const RuntimeProfile& runtime;
  const WeightPrecision& weights;
  const LlmShape& shape;
  PrecisionPlan plan;       // activations/norm weights for the streaming ops
  double kv_bytes = 2;      // per KV element
  Pipe float_pipe = Pipe::kFp32;   // fp16/bf16/fp32 GEMMs of the serving engines
  std::optional<Pipe> half_pipe;   // llama.cpp's cuBLAS fp16 path (tensor cores)
  // The eager Python code that runs the passes (data/llm_code), null for engines that run compiled or C++ code;
  // its host work is scaled by host_scale (reference / the host's single-thread speed).
  const LlmModelCode* code = nullptr;
  double host_scale = 1;
  std::int64_t static_kv_len = 0;  // a static cache's preallocated positions (code->kv_cache_static)
};

// How one weight tensor is stored.
struct WeightFormat {
  std::string type;  // block type or precision name
  double bits = 16;
};

// A matmul against a weight matrix (not attention's activation products).
// The decoder block an op belongs to ("blk.3.attn_q", "h.3.attn.q" -> 3; -1 outside the blocks) and, into
// `local` when given, its name inside the block (the whole name outside).
int llm_block_of(const std::string& name, std::string* local);

bool is_weight_matmul(const Op& op);
// What a weight tensor is, from its op's name ("blk.3.attn_v", "h.3.attn.q"); `layer` gets its block index.
TensorRole tensor_role(const std::string& name, int* layer);
// The model's shape; InputError when the graph has no attention blocks or LM head.
LlmShape llm_shape_of(const Graph& g);

// The storage type of an op's weights under the request's weight precision (GGUF mixes types per tensor).
WeightFormat weight_format(const Op& op, const LlmKernelContext& c);
// Kernels of one weight matmul: `tokens` rows over `groups` weight matrices of [k x n] (the experts touched).
std::vector<OpCost> weight_matmul_kernels(const Op& op, const WeightFormat& wf, double tokens, double groups,
                                          const LlmKernelContext& c);
// Whether the engine bounds a sliding-window model's (window > 0) reads by the window: it skips the keys outside it
// or no longer caches them (RuntimeProfile llm_window_attention / llm_window_kv_cache).
bool window_bounds_reads(std::int64_t window, const RuntimeProfile& runtime);
// Whether its KV cache stops at the window (llm_window_kv_cache: the engine rolls or frees the positions leaving it).
bool window_caps_cache(std::int64_t window, const RuntimeProfile& runtime);
// A sliding-window model on an engine that bounds its reads (window_bounds_reads): q new tokens per sequence after kv_len - q cached
// positions read the last window - 1 + q keys at most (a decode step: the window); kv_len otherwise.
std::int64_t attended_keys(std::int64_t q, std::int64_t kv_len, std::int64_t window, const RuntimeProfile& runtime);
// Positions one sequence's KV cache holds after `positions` tokens: at most the window where the engine's cache rolls
// or frees the positions that leave it (llm_window_kv_cache); all of them otherwise.
std::int64_t cached_positions(std::int64_t positions, std::int64_t window, const RuntimeProfile& runtime);
// Attention of an op's q new tokens per sequence against `kv_len` cached positions (the new ones included).
std::vector<OpCost> kv_attention_kernels(const Op& op, std::int64_t kv_len, const LlmKernelContext& c);
// One forward pass of `graph` (its seq tokens per sequence) against `kv_len` cached positions; `all_logits` runs
// the LM head on every token; dense_only leaves out the attention cores and the LM head (the serving step model
// costs those per request).
std::vector<OpCost> llm_forward_pass(const Graph& graph, std::int64_t kv_len, bool all_logits,
                                     const LlmKernelContext& c, bool dense_only = false);
// Bytes of the graph's weights as stored (quantized types at their bits per weight; norms, biases and routers
// in the runtime's small-tensor type).
double stored_weight_bytes(const Graph& g, const LlmKernelContext& c);

}  // namespace perfcast
