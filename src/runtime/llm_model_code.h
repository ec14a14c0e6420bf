// The Python code an eager LLM inference runs (data/llm_code/<id>.toml): how many Python-level torch calls,
// kernels and nn.Module calls each decoder layer, each forward pass and each generated token cost, counted from
// the code's source (Hugging Face transformers' modeling and generate code, gpt-fast's model.py). The graph the
// zoo builds has one op per tensor operation the model needs; the eager code issues several per op (an RMSNorm is
// eight torch calls), and its host time, not the GPU, sets the pace at small batch (docs/host-model.md).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

struct LlmModelCode {
  std::string id;
  std::string name;
  double python_ops_per_layer = 0;      // Python-level torch calls per decoder layer (views included)
  double kernels_per_layer = 0;         // kernels those calls launch
  double module_calls_per_layer = 0;    // nn.Module __call__s per layer
  double python_ops_per_forward = 0;    // outside the layers: embedding, rotary tables, mask, final norm, head
  double kernels_per_forward = 0;
  double module_calls_per_forward = 0;
  double loop_python_ops_per_token = 0; // the generate loop's own calls per generated token
  double loop_kernels_per_token = 0;
  double syncs_per_token = 0;           // host reads of a GPU value per token (the loop cannot run ahead)
  double kv_cache_copies_per_layer = 0; // full read-and-write passes over the layer's K and V cache per pass
  double kv_cache_copies_per_extra_group = 0; // more copies per query head beyond one per KV head (GQA expansions)
  bool kv_cache_static = false;         // the copies run over the preallocated length, not the positions so far
  // Its cache keeps at most a sliding-window model's window per layer (transformers' DynamicSlidingWindowLayer);
  // false: every position (a static cache, or a cache that only grows).
  bool kv_cache_window = false;
  std::map<std::string, std::string> sources;
};

const std::vector<LlmModelCode>& llm_model_code_catalog();

// InputError naming the nearest id when unknown.
const LlmModelCode& find_llm_model_code(std::string_view id);

}  // namespace perfcast
