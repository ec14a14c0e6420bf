// The cost of one engine step of a serving engine on one GPU of a tensor-parallel group, from the same kernel
// costs as --mode prefill/decode (analysis/llm_predict.cpp): weight matmuls, attention, the other ops, over the
// model's layers sharded `tensor_parallel` ways (Megatron column/row split: QKV, gate and up by columns, the
// attention output and down projections by rows, the LM head and token embedding by vocabulary; attention
// heads split, KV heads replicated when fewer than the degree). The all-reduces between the shards are the
// caller's (analysis/llm_serving.cpp, on the real interconnect).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/predict.h"

namespace perfcast {

// GPU time and kernel launches of part of a step (GPU time includes the runtime's gap per kernel).
struct StepPart {
  double gpu_us = 0;
  double launches = 0;
  StepPart& operator+=(const StepPart& o) {
    gpu_us += o.gpu_us;
    launches += o.launches;
    return *this;
  }
};

class LlmStepModel {
 public:
  // Resolves the request as --mode decode does (device, runtime, precision, KV type, model); InputError when
  // the degree does not divide the heads or exceeds them.
  LlmStepModel(const PredictRequest& request, int tensor_parallel);
  ~LlmStepModel();
  LlmStepModel(const LlmStepModel&) = delete;
  LlmStepModel& operator=(const LlmStepModel&) = delete;

  // Every op but the attention cores and the LM head, for a pass over `tokens` tokens (all layers; interpolated
  // between passes costed at powers of two up to max_tokens given to prepare()).
  StepPart dense(double tokens) const;
  // The LM head over `rows` tokens (the last position of each sequence that emits a token).
  StepPart lm_head(double rows) const;
  // Decode attention of `seqs` sequences of `mean_kv` cached positions each, all layers.
  StepPart decode_attention(double seqs, double mean_kv) const;
  // Prefill attention of `q` new tokens of one sequence ending at position `kv_end`, all layers.
  StepPart prefill_attention(double q, double kv_end) const;
  // Costs the dense passes up to this many tokens per step (call once before dense()).
  void prepare(double max_tokens);

  int layers() const;
  std::int64_t hidden() const;
  std::int64_t heads() const;
  std::int64_t kv_heads() const;
  double activation_bytes_per_element() const;
  double weight_bytes_per_gpu() const;        // the whole model's layers, sharded tp ways
  double kv_bytes_per_token_per_gpu() const;  // K and V of every layer, at the KV precision, per GPU
  double pass_buffer_bytes(double tokens) const;  // working buffers of one pass over `tokens` tokens
  // A sliding-window model on an engine that rolls or frees its cache: the most positions one sequence holds; 0 = all.
  std::int64_t kv_cache_window() const;
  // The most keys a decode step reads per sequence (the window where the engine bounds them); 0 = all cached.
  std::int64_t decode_window() const;
  // What the engine does with the model's sliding window once a sequence of `positions` passes it ("" otherwise).
  std::string window_note(std::int64_t positions) const;
  std::int64_t max_positions() const;         // the model's context length (0 = its config does not say)
  void check_context(std::int64_t positions, const std::string& what) const;  // perfcast::check_context on its model
  const std::string& model_id() const;
  const DeviceSpec& device() const;
  const RuntimeProfile& runtime() const;
  const std::string& kv_name() const;
  const std::string& precision_note() const;
  const std::vector<std::string>& notes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfcast
