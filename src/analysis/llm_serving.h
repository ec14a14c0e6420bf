// Serving a decoder LLM on one node under load (--mode serve): tensor- and pipeline-parallel inference with a
// serving engine's continuous batching (vLLM, TensorRT-LLM, SGLang), over a stream of requests. Gives output
// tokens/s, requests/s, time to first token and per output token (p50, p99), the KV-cache capacity and the
// concurrency it allows; with latency targets, the highest request rate and the best batch limit that meet them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"

namespace perfcast {

struct ServeRequest {
  PredictRequest base;             // gpu, model, runtime (the engine), precision, kv_precision, interconnect
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  double request_rate = 0;         // requests per second, Poisson arrivals; 0 = every request at once (offline)
  std::int64_t input_len = 0;      // prompt tokens (mean for a distribution)
  std::int64_t output_len = 0;     // output tokens (mean)
  std::string length_dist = "fixed";  // fixed | uniform (mean +-50%) | exponential
  std::uint64_t seed = 1;          // arrivals and lengths
  std::int64_t num_requests = 0;   // 0 = 1000
  double prefix_cache_hit = 0;     // share of each prompt found in the prefix cache (0..1)
  std::int64_t max_batch = 0;      // running requests per batch; 0 = the engine's default
  double slo_ttft_ms = 0;          // p99 targets; 0 = none
  double slo_tpot_ms = 0;
};

// One simulated run.
struct ServeMetrics {
  double request_rate = 0;          // offered (0 = offline)
  std::int64_t max_batch = 0;
  std::int64_t completed = 0;
  double duration_s = 0;            // first arrival to last token
  double output_tokens_per_s = 0;
  double requests_per_s = 0;
  double total_tokens_per_s = 0;    // prompt + output tokens
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  double tpot_p50_ms = 0, tpot_p99_ms = 0;
  double e2e_p50_ms = 0, e2e_p99_ms = 0;
  std::int64_t steps = 0;
  double mean_running = 0;
  std::int64_t peak_running = 0;
  std::int64_t preemptions = 0;
  bool truncated = false;           // the step limit (data/limits.toml max_serving_steps) ended the run
};

struct SloResult {
  double ttft_ms = 0, tpot_ms = 0;              // the targets (p99; 0 = none)
  std::optional<ServeMetrics> at_max_rate;      // the highest request rate meeting them (engine's batch limit)
  std::optional<ServeMetrics> at_best_batch;    // the batch limit with the most throughput meeting them
  // Copies of this layout (tp x pp GPUs each) behind a load balancer that serve the offered rate within the targets:
  // a Poisson stream split at random over k copies is k Poisson streams of rate / k, so k = ceil(offered rate /
  // at_max_rate's rate); 1 when the offered rate meets them already, 0 without an offered rate or a rate that meets,
  // or when more copies than the largest cluster of data/limits.toml would be needed (then `note` says so).
  std::int64_t replicas_for_offered_rate = 0;
  std::string note;
};

struct ServePrediction {
  ServeRequest request;            // resolved (engine, lengths, counts, batch limit)
  std::string engine, engine_name, gpu, model, precision_note, kv_precision, interconnect;
  int gpus = 1;
  double memory_bytes_per_gpu = 0;
  double weights_bytes_per_gpu = 0;
  double buffers_bytes_per_gpu = 0;  // CUDA context, workspace, one step's activations
  double kv_cache_bytes_per_gpu = 0;
  double kv_bytes_per_token_per_gpu = 0;
  std::int64_t kv_block_tokens = 0;
  std::int64_t kv_blocks = 0;
  std::int64_t kv_capacity_tokens = 0;
  std::int64_t kv_max_concurrency = 0;   // requests of the mean length the KV cache holds at once
  std::int64_t max_batch = 0;            // the engine's running-request limit in force
  double decode_step_ms = 0;             // one decode step at the concurrency the run reached (mean)
  double allreduce_us_per_step = 0;      // tensor parallel: all-reduces of that step
  ServeMetrics metrics;
  std::optional<SloResult> slo;
  std::vector<std::string> notes;
};

// InputError for bad values (degrees, lengths beyond the model's context, weights that do not fit at this
// degree), UnsupportedError for an engine without a [serving] profile.
ServePrediction predict_serving(const ServeRequest& request);

}  // namespace perfcast
