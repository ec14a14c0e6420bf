// How a serving engine batches requests (the optional [serving] table of data/runtimes/<id>.toml): its
// scheduler's cost per step, CUDA graphs, the paged KV cache's block size, chunked prefill and its batch limits,
// and how much memory it gives the KV cache. Read by the continuous-batching simulation (--mode serve).
#pragma once

#include <optional>
#include <string>
#include <toml++/toml.h>

namespace perfcast {

struct ServingProfile {
  double scheduler_us_per_step = 0;    // host time per engine step (scheduling, input preparation, sampling output)
  double scheduler_overlap = 0;        // share of that time hidden behind the previous step's GPU work (0..1)
  double scheduler_overlap_with_prompts = 0;  // the same for a step that runs prompts (at most scheduler_overlap)
  bool cuda_graphs = false;            // steps up to cuda_graph_max_tokens replay captured CUDA graphs
  double cuda_graph_max_tokens = 0;    // largest step (tokens) with a captured graph
  double eager_host_us_per_kernel = 0; // host launch cost per kernel outside a CUDA graph
  double block_tokens = 0;             // tokens per paged KV-cache block
  bool chunked_prefill = false;        // long prompts split over steps beside the running decodes
  bool mixed_batches = false;          // prompts and decodes share a step (else a step is all prompts or all decodes)
  double max_batched_tokens = 0;       // tokens one step may schedule (prefill chunks + one per decode)
  double max_running_requests = 0;     // requests in the running batch (vLLM max_num_seqs)
  std::string kv_memory_rule;          // "total": memory_fraction of the GPU for weights+KV; "free": of what is left
  double kv_memory_fraction = 0;
  double custom_allreduce_max_bytes = 0;  // all-reduces up to this size use the engine's one-kernel NVLink all-reduce
  double custom_allreduce_latency_us = 0; // its fixed cost per call
  // Blocks a sequence holds beyond window / block_tokens where the engine frees the blocks that leave a sliding
  // window (runtime llm_window_kv_cache): the partly filled blocks at the window's two ends.
  double window_extra_blocks = 0;
  bool operator==(const ServingProfile&) const = default;
};

// The [serving] table of a runtime file (std::nullopt when it has none); InputError naming the file and key.
std::optional<ServingProfile> read_serving_table(const toml::table& runtime_file, const std::string& where);

}  // namespace perfcast
