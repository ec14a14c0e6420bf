#include "cli/serving_flags.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "analysis/cloud.h"
#include "cli/number_flags.h"
#include "core/error.h"
#include "core/limits.h"

namespace perfcast::cli {

namespace {

// --request-rate: requests per second, or "inf" / "max" (0) for every request at once.
double request_rate_flag(const std::string& text) {
  if (text == "inf" || text == "max") return 0;
  // Below data/limits.toml min_request_rate no request waits for another, and the arrival times would swamp the
  // step times in double precision.
  const double least = input_limits().min_request_rate;
  const std::string rule = fmt::format("a number of at least {:g} (data/limits.toml min_request_rate) or 'inf'", least);
  return number_flag(text, "--request-rate", {least, false, std::numeric_limits<double>::max(), rule});
}

// A latency target in milliseconds, read by the duration parser --deadline uses (parse_duration): a bare number is
// milliseconds (as --help says), or a number with any of its units, "500ms", "0.5 s", "0.5sec".
double latency_ms(const std::string& text, const char* flag) {
  return parse_duration(text, flag, 1e-3, 1e-3, "500 (ms), 500ms or 0.5s");
}

}  // namespace

std::string ServingFlags::first_given() const {
  for (const auto& [flag, option] : options)
    if (option->count() > 0) return flag;
  return "";
}

ServeRequest ServingFlags::to_request(const PredictRequest& base, bool runtime_given) const {
  ServeRequest r;
  r.base = base;
  r.tensor_parallel = base.tensor_parallel;
  r.pipeline_parallel = base.pipeline_parallel;
  if (!engine.empty()) {
    if (runtime_given && base.runtime != engine)
      throw InputError("--engine " + engine + " and --runtime " + base.runtime + " disagree: give one");
    r.base.runtime = engine;
  } else if (!runtime_given) {
    r.base.runtime = "vllm";
  }
  if (input_len.empty() || output_len.empty())
    throw InputError("--mode serve needs --input-len and --output-len (prompt and output tokens per request)");
  r.input_len = count_flag(input_len, "--input-len", 1);
  r.output_len = count_flag(output_len, "--output-len", 1);
  if (!request_rate.empty()) r.request_rate = request_rate_flag(request_rate);
  r.length_dist = length_dist;
  r.seed = whole_number_flag(seed, "--seed", 0, std::numeric_limits<std::uint64_t>::max());
  if (!num_requests.empty()) r.num_requests = count_flag(num_requests, "--num-requests", 1);
  if (!prefix_cache_hit.empty()) r.prefix_cache_hit = number_flag(prefix_cache_hit, "--prefix-cache-hit", {0, false, 1, "a share from 0 to 1"});
  if (!max_batch.empty()) r.max_batch = count_flag(max_batch, "--max-batch", 1);
  if (!slo_ttft.empty()) r.slo_ttft_ms = latency_ms(slo_ttft, "--slo-ttft");
  if (!slo_tpot.empty()) r.slo_tpot_ms = latency_ms(slo_tpot, "--slo-tpot");
  return r;
}

void add_serving_flags(CLI::App& app, ServingFlags& f) {
  const auto add = [&](const char* flag, std::string& value, const char* help) {
    CLI::Option* o = app.add_option(flag, value, help);
    f.options.emplace_back(flag, o);
    return o;
  };
  add("--engine", f.engine, "--mode serve: vllm | tensorrt-llm | sglang (default vllm, or --runtime)");
  add("--request-rate", f.request_rate,
      "--mode serve: requests per second (Poisson arrivals); inf or absent = all at once (offline)");
  add("--input-len", f.input_len, "--mode serve: prompt tokens per request (mean for a distribution)");
  add("--output-len", f.output_len, "--mode serve: output tokens per request (mean for a distribution)");
  add("--length-dist", f.length_dist, "--mode serve: fixed | uniform (mean +-50%) | exponential lengths")
      ->capture_default_str();
  add("--seed", f.seed, "--mode serve: seed of the arrivals and lengths")->capture_default_str();
  add("--num-requests", f.num_requests, "--mode serve: requests in the run (default 1000)");
  add("--prefix-cache-hit", f.prefix_cache_hit,
      "--mode serve: share 0..1 of each prompt already in the prefix cache (default 0)");
  add("--max-batch", f.max_batch, "--mode serve: running requests per batch (default: the engine's)");
  add("--slo-ttft", f.slo_ttft, "--mode serve: p99 time-to-first-token target: ms (500), or with a unit (500ms, 0.5s)");
  add("--slo-tpot", f.slo_tpot, "--mode serve: p99 time-per-output-token target: ms (40), or with a unit (40ms, 0.04s)");
}

}  // namespace perfcast::cli
