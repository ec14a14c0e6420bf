#include "runtime/serving_profile.h"

#include "core/error.h"
#include "core/toml_reader.h"

namespace perfcast {

std::optional<ServingProfile> read_serving_table(const toml::table& runtime_file, const std::string& where) {
  const auto* t = runtime_file["serving"].as_table();
  if (!runtime_file["serving"]) return std::nullopt;
  if (!t) throw InputError(where + ": serving must be a table ([serving])");
  const TomlFields f(*t, where + " [serving]");
  ServingProfile s;
  s.scheduler_us_per_step = f.number("scheduler_us_per_step");
  s.scheduler_overlap = f.number("scheduler_overlap");
  s.scheduler_overlap_with_prompts = f.number_or("scheduler_overlap_with_prompts", s.scheduler_overlap);
  if (s.scheduler_overlap_with_prompts < 0 || s.scheduler_overlap_with_prompts > 1)
    f.fail("scheduler_overlap_with_prompts", "must be within 0..1");
  s.cuda_graphs = f.boolean("cuda_graphs");
  s.cuda_graph_max_tokens = f.number("cuda_graph_max_tokens");
  s.eager_host_us_per_kernel = f.number("eager_host_us_per_kernel");
  s.block_tokens = f.number("block_tokens");
  s.chunked_prefill = f.boolean("chunked_prefill");
  s.mixed_batches = f.boolean("mixed_batches");
  s.max_batched_tokens = f.number("max_batched_tokens");
  s.max_running_requests = f.number("max_running_requests");
  s.kv_memory_rule = f.text("kv_memory_rule");
  s.kv_memory_fraction = f.number("kv_memory_fraction");
  s.custom_allreduce_max_bytes = f.number("custom_allreduce_max_bytes");
  s.custom_allreduce_latency_us = f.number("custom_allreduce_latency_us");
  s.window_extra_blocks = f.number_or("window_extra_blocks", s.window_extra_blocks);
  if (!(s.window_extra_blocks >= 0 && s.window_extra_blocks <= 1e3)) f.fail("window_extra_blocks", "must be 0 to 1000");
  if (s.scheduler_us_per_step < 0 || s.scheduler_overlap < 0 || s.scheduler_overlap > 1)
    f.fail("scheduler_overlap", "scheduler_us_per_step must be >= 0 and scheduler_overlap within 0..1");
  if (s.cuda_graph_max_tokens < 0 || s.eager_host_us_per_kernel < 0 || s.custom_allreduce_max_bytes < 0 ||
      s.custom_allreduce_latency_us < 0)
    f.fail("cuda_graph_max_tokens", "counts, sizes and times must not be negative");
  if (!(s.block_tokens >= 1 && s.block_tokens <= 1e6)) f.fail("block_tokens", "must be 1 to 1e6");
  if (!(s.max_batched_tokens >= 1 && s.max_batched_tokens <= 1e7)) f.fail("max_batched_tokens", "must be 1 to 1e7");
  if (!(s.max_running_requests >= 1 && s.max_running_requests <= 1e6)) f.fail("max_running_requests", "must be 1 to 1e6");
  if (s.kv_memory_rule != "total" && s.kv_memory_rule != "free") f.fail("kv_memory_rule", "must be \"total\" or \"free\"");
  if (!(s.kv_memory_fraction > 0 && s.kv_memory_fraction <= 1)) f.fail("kv_memory_fraction", "must be within (0, 1]");
  f.refuse_unknown_keys();
  return s;
}

}  // namespace perfcast
