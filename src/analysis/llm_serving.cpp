// --mode serve: the step model (analysis/llm_predict.cpp's kernels on a tensor-parallel shard) timed over the
// batches a continuous-batching engine forms (schedule/continuous_batching.cpp).
#include "analysis/llm_serving.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "analysis/llm_step_model.h"
#include "core/error.h"
#include "core/limits.h"
#include "schedule/collectives.h"
#include "schedule/continuous_batching.h"

namespace perfcast {

namespace {

constexpr std::int64_t kDefaultRequests = 1000;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / kGiB);
  return buf;
}

// Uniform in [0, 1) from 53 bits, so that a seed gives the same stream on every standard library.
double unit(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

std::int64_t sample_length(const std::string& dist, std::int64_t mean, std::mt19937_64& g) {
  if (dist == "fixed") return mean;
  const double m = static_cast<double>(mean);
  const double v = dist == "uniform" ? m * (0.5 + unit(g)) : -m * std::log1p(-unit(g));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(v)));
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
}

// The most KV blocks one request holds: a sliding window's where the engine frees the blocks that leave it (its
// whole blocks plus serving.window_extra_blocks partly filled at its ends); 0 = no cap.
std::int64_t window_blocks(const LlmStepModel& model, const ServingProfile& profile) {
  const std::int64_t window = model.kv_cache_window();
  if (window <= 0) return 0;
  return window / static_cast<std::int64_t>(profile.block_tokens) + static_cast<std::int64_t>(profile.window_extra_blocks);
}

// Everything one simulation needs, resolved once.
struct Engine {
  const LlmStepModel& model;
  const ServingProfile& profile;
  int tp = 1, pp = 1;
  Fabric tp_fabric, node_fabric;
  bool nvlink = false;

  // One all-reduce of `bytes` over the tensor-parallel group: the engine's one-kernel NVLink all-reduce for
  // small messages (vLLM custom_all_reduce, TensorRT-LLM one/two-shot), else NCCL's ring or tree.
  double allreduce_us(double bytes) const {
    if (tp <= 1 || bytes <= 0) return 0;
    if (nvlink && bytes <= profile.custom_allreduce_max_bytes)
      return profile.custom_allreduce_latency_us +
             2.0 * (tp - 1) / tp * bytes / (tp_fabric.intra_bw_gbps * 1e3);
    return allreduce(tp_fabric, bytes).us;
  }
  // One lane's step: every stage in turn (pipeline parallel), each GPU's kernels, the all-reduces, the host.
  double step_us(const BatchShape& b, double* allreduce_total = nullptr) const {
    const double tokens = static_cast<double>(b.tokens());
    StepPart gpu = model.dense(tokens);
    gpu += model.lm_head(static_cast<double>(b.logits_rows()));
    if (b.decode_seqs > 0)
      gpu += model.decode_attention(static_cast<double>(b.decode_seqs), b.decode_kv_tokens / static_cast<double>(b.decode_seqs));
    for (const auto& c : b.prefills) gpu += model.prefill_attention(static_cast<double>(c.tokens), static_cast<double>(c.kv_end));
    // Megatron: one all-reduce after the attention output projection and one after the MLP, per layer.
    const double ar = 2.0 * model.layers() * allreduce_us(tokens * static_cast<double>(model.hidden()) * model.activation_bytes_per_element());
    if (allreduce_total) *allreduce_total = ar;
    const bool graphs = profile.cuda_graphs && tokens <= profile.cuda_graph_max_tokens;
    const double host = gpu.launches * (graphs ? model.runtime().host_overhead_per_kernel_us : profile.eager_host_us_per_kernel);
    // Pipeline stages hand the hidden states on over the node's links.
    const double p2p = pp > 1 ? (pp - 1) * (node_fabric.intra_latency_us +
                                            tokens * static_cast<double>(model.hidden()) * model.activation_bytes_per_element() /
                                                (node_fabric.intra_bw_gbps * 1e3))
                              : 0.0;
    // A step that runs prompts may expose more of the host's turnaround (vLLM's multi-step scheduling falls back
    // to single steps when prompts join).
    const double overlap = b.prefills.empty() ? profile.scheduler_overlap
                                              : std::min(profile.scheduler_overlap, profile.scheduler_overlap_with_prompts);
    return std::max(gpu.gpu_us + ar, host) + p2p + profile.scheduler_us_per_step * (1.0 - overlap);
  }
};

ServeMetrics run(const Engine& e, const ServeRequest& r, const std::vector<ServedRequest>& base_requests, double rate,
                 std::int64_t max_batch, std::int64_t kv_blocks) {
  // Arrivals: a Poisson stream at `rate` (its own seeded generator, so that the lengths stay the same whatever
  // the rate), or every request at time 0.
  std::vector<ServedRequest> reqs = base_requests;
  std::mt19937_64 g(r.seed ^ 0x9e3779b97f4a7c15ULL);
  double t = 0;
  for (auto& q : reqs) {
    if (rate > 0) t += -std::log1p(-unit(g)) / rate;
    q.arrival_s = t;
  }
  BatchingLimits lim;
  lim.kv_blocks = kv_blocks;
  lim.block_tokens = static_cast<std::int64_t>(e.profile.block_tokens);
  lim.max_running = max_batch;
  lim.max_batched_tokens = static_cast<std::int64_t>(e.profile.max_batched_tokens);
  lim.chunked_prefill = e.profile.chunked_prefill;
  lim.mixed_batches = e.profile.mixed_batches;
  lim.lanes = e.pp;
  lim.max_steps = input_limits().max_serving_steps;
  lim.max_blocks_per_request = window_blocks(e.model, e.profile);
  lim.decode_window = e.model.decode_window();
  const BatchingResult b = simulate_continuous_batching(reqs, lim, [&](const BatchShape& s) { return e.step_us(s) / 1e6; });

  ServeMetrics m;
  m.request_rate = rate;
  m.max_batch = max_batch;
  std::vector<double> ttft, tpot, e2e;
  double out_tokens = 0, all_tokens = 0;
  for (std::size_t i = 0; i < b.requests.size(); ++i) {
    const RequestTimes& q = b.requests[i];
    if (!q.done) continue;
    ++m.completed;
    ttft.push_back(q.ttft_s * 1e3);
    e2e.push_back(q.e2e_s * 1e3);
    if (reqs[i].output_tokens > 1) tpot.push_back(q.tpot_s * 1e3);
    out_tokens += static_cast<double>(reqs[i].output_tokens);
    all_tokens += static_cast<double>(reqs[i].output_tokens + reqs[i].input_tokens);
  }
  m.duration_s = b.end_s - b.first_arrival_s;
  if (m.duration_s > 0) {
    m.output_tokens_per_s = out_tokens / m.duration_s;
    m.requests_per_s = static_cast<double>(m.completed) / m.duration_s;
    m.total_tokens_per_s = all_tokens / m.duration_s;
  }
  m.ttft_p50_ms = percentile(ttft, 0.5);
  m.ttft_p99_ms = percentile(ttft, 0.99);
  m.tpot_p50_ms = percentile(tpot, 0.5);
  m.tpot_p99_ms = percentile(tpot, 0.99);
  m.e2e_p50_ms = percentile(e2e, 0.5);
  m.e2e_p99_ms = percentile(e2e, 0.99);
  m.steps = b.steps;
  m.mean_running = b.mean_running;
  m.peak_running = b.peak_running;
  m.preemptions = b.preemptions;
  m.truncated = b.truncated;
  return m;
}

bool meets(const ServeMetrics& m, const ServeRequest& r) {
  if (m.truncated || m.completed == 0) return false;
  if (r.slo_ttft_ms > 0 && m.ttft_p99_ms > r.slo_ttft_ms) return false;
  if (r.slo_tpot_ms > 0 && m.tpot_p99_ms > r.slo_tpot_ms) return false;
  return true;
}

void check_request_values(const ServeRequest& r) {
  const auto& lim = input_limits();
  if (r.tensor_parallel < 1 || r.pipeline_parallel < 1) throw InputError("--tp and --pp must be at least 1");
  if (static_cast<std::int64_t>(r.tensor_parallel) * r.pipeline_parallel > lim.max_gpus_per_node)
    throw InputError("--tp " + std::to_string(r.tensor_parallel) + " x --pp " + std::to_string(r.pipeline_parallel) +
                     " GPUs exceed one node (data/limits.toml max_gpus_per_node " + std::to_string(lim.max_gpus_per_node) +
                     "); --mode serve models one node");
  if (r.base.gpus * r.base.nodes > 1)
    throw InputError("--mode serve takes its GPUs from --tp x --pp; leave --gpus and --nodes at 1");
  if (r.input_len < 1 || r.output_len < 1) throw InputError("--input-len and --output-len must be at least 1");
  check_limit("--input-len", r.input_len, lim.max_seq, "max_seq");
  check_limit("--output-len", r.output_len, lim.max_seq, "max_seq");
  if (!std::isfinite(r.request_rate) || r.request_rate < 0)
    throw InputError("--request-rate must be a positive number of requests per second, or inf");
  if (!(r.prefix_cache_hit >= 0 && r.prefix_cache_hit <= 1)) throw InputError("--prefix-cache-hit must be within 0..1");
  if (r.num_requests < 0) throw InputError("--num-requests must be positive");
  check_limit("--num-requests", r.num_requests, lim.max_serving_requests, "max_serving_requests");
  if (r.max_batch < 0) throw InputError("--max-batch must be positive");
  if (!(r.slo_ttft_ms >= 0 && r.slo_tpot_ms >= 0 && std::isfinite(r.slo_ttft_ms) && std::isfinite(r.slo_tpot_ms)))
    throw InputError("--slo-ttft and --slo-tpot are positive times in milliseconds");
  if (r.length_dist != "fixed" && r.length_dist != "uniform" && r.length_dist != "exponential")
    throw_unknown("length distribution", r.length_dist, {"fixed", "uniform", "exponential"});
}

}  // namespace

ServePrediction predict_serving(const ServeRequest& request) {
  ServeRequest r = request;
  check_request_values(r);
  if (r.num_requests == 0) r.num_requests = kDefaultRequests;
  r.base.mode = Mode::kServe;
  const int tp = r.tensor_parallel, pp = r.pipeline_parallel;

  LlmStepModel model(r.base, tp);
  const RuntimeProfile& runtime = model.runtime();
  if (!runtime.serving)
    throw UnsupportedError("runtime '" + runtime.id + "' has no continuous-batching profile ([serving] in data/runtimes/" +
                               runtime.id + ".toml); --engine takes vllm, tensorrt-llm or sglang",
                           {"serving.no_engine_profile", {{"runtime", runtime.id}}});
  const ServingProfile& profile = *runtime.serving;
  const DeviceSpec& device = model.device();
  if (pp > model.layers() || model.layers() % pp != 0)
    throw InputError("--pp " + std::to_string(pp) + " does not divide the " + std::to_string(model.layers()) + " layers of " +
                     model.model_id());
  const std::int64_t positions = model.max_positions();
  model.check_context(r.input_len + r.output_len, "--input-len " + std::to_string(r.input_len) + " + --output-len " +
                                                     std::to_string(r.output_len) + " = " +
                                                     std::to_string(r.input_len + r.output_len) + " tokens");

  ServePrediction p;
  p.engine = runtime.id;
  p.engine_name = runtime.name;
  p.gpu = device.id;
  p.model = model.model_id();
  p.precision_note = model.precision_note();
  p.kv_precision = model.kv_name();
  p.gpus = tp * pp;
  p.notes = model.notes();
  if (const std::string w = model.window_note(r.input_len + r.output_len); !w.empty()) p.notes.push_back(w);

  // Links: the tensor-parallel group and the pipeline stages inside one node.
  Engine e{model, profile, tp, pp, {}, {}, false};
  e.node_fabric = resolve_fabric(device, tp * pp, 1, r.base.interconnect, "");
  e.tp_fabric = resolve_fabric(device, tp, 1, r.base.interconnect, "");
  p.interconnect = e.node_fabric.intra_id;
  e.nvlink = e.tp_fabric.intra_id.rfind("nvlink", 0) == 0 || e.tp_fabric.intra_id == "nvswitch";

  // Memory per GPU: weights (its shard of its stage's layers), the context, workspace and one step's buffers;
  // the engine gives the KV cache what its rule leaves.
  const double mem = device.memory_bytes();
  p.memory_bytes_per_gpu = mem;
  p.weights_bytes_per_gpu = model.weight_bytes_per_gpu() / pp;
  model.prepare(profile.max_batched_tokens);
  p.buffers_bytes_per_gpu = runtime.context_bytes + runtime.workspace_bytes + model.pass_buffer_bytes(profile.max_batched_tokens);
  const double usable = profile.kv_memory_fraction * mem;
  if (p.weights_bytes_per_gpu + p.buffers_bytes_per_gpu >= usable) {
    // The smallest degree that would hold the weights, for the message.
    const double whole = p.weights_bytes_per_gpu * tp * pp;
    const int need = static_cast<int>(std::ceil(whole / std::max(1.0, usable - p.buffers_bytes_per_gpu)));
    throw InputError(model.model_id() + " does not fit on " + device.id + " at --tp " + std::to_string(tp) + " --pp " +
                     std::to_string(pp) + ": " + gib(p.weights_bytes_per_gpu) + " GiB of weights and " +
                     gib(p.buffers_bytes_per_gpu) + " GiB of buffers per GPU, " + gib(usable) + " GiB usable (" +
                     profile.kv_memory_rule + " rule, fraction " + std::to_string(profile.kv_memory_fraction).substr(0, 4) +
                     "); try at least " + std::to_string(std::max(need, tp * pp + 1)) + " GPUs (--tp x --pp)");
  }
  p.kv_cache_bytes_per_gpu = profile.kv_memory_rule == "total"
                                 ? usable - p.weights_bytes_per_gpu - p.buffers_bytes_per_gpu
                                 : profile.kv_memory_fraction * (mem - p.weights_bytes_per_gpu - p.buffers_bytes_per_gpu);
  p.kv_bytes_per_token_per_gpu = model.kv_bytes_per_token_per_gpu() / pp;
  p.kv_block_tokens = static_cast<std::int64_t>(profile.block_tokens);
  p.kv_blocks = static_cast<std::int64_t>(p.kv_cache_bytes_per_gpu / (p.kv_bytes_per_token_per_gpu * profile.block_tokens));
  p.kv_capacity_tokens = p.kv_blocks * p.kv_block_tokens;
  const std::int64_t cap_blocks = window_blocks(model, profile);
  const std::int64_t all_blocks = (r.input_len + r.output_len + p.kv_block_tokens - 1) / p.kv_block_tokens;
  const std::int64_t per_request_blocks = cap_blocks > 0 ? std::min(all_blocks, cap_blocks) : all_blocks;
  p.kv_max_concurrency = p.kv_blocks / per_request_blocks;
  if (p.kv_max_concurrency < 1)
    throw InputError("one request of " + std::to_string(r.input_len + r.output_len) + " tokens needs " +
                     std::to_string(per_request_blocks) + " KV blocks; " + model.model_id() + " on " + device.id +
                     " at --tp " + std::to_string(tp) + " --pp " + std::to_string(pp) + " has room for " +
                     std::to_string(p.kv_blocks) + " (" + std::to_string(p.kv_capacity_tokens) + " tokens)");
  p.max_batch = r.max_batch > 0 ? r.max_batch : static_cast<std::int64_t>(profile.max_running_requests);
  r.max_batch = p.max_batch;

  // The requests: lengths drawn once from the seed (clamped to the model's context and to what the KV cache can
  // hold for one request), prefix-cache hits as whole blocks of the prompt.
  std::vector<ServedRequest> reqs(static_cast<std::size_t>(r.num_requests));
  std::mt19937_64 g(r.seed);
  // A request whose cache stops at the window needs no more of the pool past it.
  const std::int64_t most = std::min(positions > 0 ? positions : std::numeric_limits<std::int64_t>::max(),
                                     cap_blocks > 0 ? std::numeric_limits<std::int64_t>::max() : p.kv_capacity_tokens);
  bool clamped = false;
  for (auto& q : reqs) {
    q.input_tokens = sample_length(r.length_dist, r.input_len, g);
    q.output_tokens = sample_length(r.length_dist, r.output_len, g);
    if (q.input_tokens + q.output_tokens > most) {
      clamped = true;
      q.input_tokens = std::max<std::int64_t>(1, std::min(q.input_tokens, most / 2));
      q.output_tokens = std::max<std::int64_t>(1, std::min(q.output_tokens, most - q.input_tokens));
    }
    q.cached_tokens = static_cast<std::int64_t>(r.prefix_cache_hit * static_cast<double>(q.input_tokens)) /
                      p.kv_block_tokens * p.kv_block_tokens;
  }
  if (clamped) p.notes.push_back("some sampled lengths were cut to fit the model's context or the KV cache");

  p.metrics = run(e, r, reqs, r.request_rate, p.max_batch, p.kv_blocks);
  if (p.metrics.truncated)
    p.notes.push_back("the simulation stopped at " + std::to_string(p.metrics.steps) +
                      " engine steps (data/limits.toml max_serving_steps): figures cover the requests finished by then");
  {
    BatchShape b;
    b.decode_seqs = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(p.metrics.mean_running)));
    b.decode_kv_tokens = static_cast<double>(b.decode_seqs) * static_cast<double>(r.input_len + r.output_len / 2);
    p.decode_step_ms = e.step_us(b, &p.allreduce_us_per_step) / 1e3;
  }

  if (r.slo_ttft_ms > 0 || r.slo_tpot_ms > 0) {
    SloResult s;
    s.ttft_ms = r.slo_ttft_ms;
    s.tpot_ms = r.slo_tpot_ms;
    // Highest rate: the offline run bounds it; bisection over the rate (12 halvings, 0.03% of the bound).
    const ServeMetrics offline = r.request_rate == 0 ? p.metrics : run(e, r, reqs, 0, p.max_batch, p.kv_blocks);
    double lo = 0, hi = std::max(offline.requests_per_s, 1e-6) * 1.05;
    std::optional<ServeMetrics> best;
    for (int i = 0; i < 12; ++i) {
      const double mid = 0.5 * (lo + hi);
      const ServeMetrics m = run(e, r, reqs, mid, p.max_batch, p.kv_blocks);
      if (meets(m, r)) {
        lo = mid;
        best = m;
      } else {
        hi = mid;
      }
    }
    s.at_max_rate = best;
    // Best batch limit at the offered rate (offline when none): powers of two up to the engine's limit.
    std::vector<std::int64_t> limits;
    for (std::int64_t b = 1; b < p.max_batch; b *= 2) limits.push_back(b);
    limits.push_back(p.max_batch);
    for (const std::int64_t b : limits) {
      const ServeMetrics m = run(e, r, reqs, r.request_rate, b, p.kv_blocks);
      if (meets(m, r) && (!s.at_best_batch || m.output_tokens_per_s > s.at_best_batch->output_tokens_per_s)) s.at_best_batch = m;
    }
    if (!s.at_max_rate) s.note = "no request rate meets the targets at this layout";
    if (r.request_rate > 0 && s.at_max_rate && s.at_max_rate->request_rate > 0) {
      // In double: a huge offered rate makes a quotient past any integer. More GPUs than the largest cluster the
      // limits admit (max_nodes x max_gpus_per_node) is no answer: leave the count unset and say so.
      const double copies = s.at_best_batch ? 1.0 : std::max(1.0, std::ceil(r.request_rate / s.at_max_rate->request_rate));
      const auto& lim = input_limits();
      const double most = std::floor(static_cast<double>(lim.max_nodes * lim.max_gpus_per_node) / std::max(1, p.gpus));
      if (copies <= most) {
        s.replicas_for_offered_rate = static_cast<std::int64_t>(copies);
      } else {
        s.note = fmt::format("the offered {:g} requests/s needs more than {:g} copies of this layout ({} GPUs, the largest "
                             "cluster data/limits.toml admits)",
                             r.request_rate, most, lim.max_nodes * lim.max_gpus_per_node);
      }
    }
    p.slo = s;
  }
  p.request = r;
  return p;
}

}  // namespace perfcast
