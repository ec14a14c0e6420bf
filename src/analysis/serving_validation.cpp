#include "analysis/serving_validation.h"

#include <cmath>
#include <cstdlib>

#include "analysis/llm_serving.h"
#include "core/data_files.h"
#include "core/error.h"
#include "core/parallel.h"

namespace perfcast {

namespace {

double metric_of(const ServeMetrics& m, const std::string& metric) {
  if (metric == "output_tokens_per_s") return m.output_tokens_per_s;
  if (metric == "requests_per_s") return m.requests_per_s;
  if (metric == "ttft_p50_ms") return m.ttft_p50_ms;
  if (metric == "ttft_p99_ms") return m.ttft_p99_ms;
  if (metric == "tpot_p50_ms") return m.tpot_p50_ms;
  if (metric == "tpot_p99_ms") return m.tpot_p99_ms;
  throw_unknown("serving metric", metric,
                {"output_tokens_per_s", "requests_per_s", "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms"});
}

std::int64_t to_count(const std::string& s, std::int64_t fallback) {
  if (s.empty()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || v < 0) throw InputError("'" + s + "' is not a count");
  return v;
}

}  // namespace

std::vector<ServingCheck> check_serving_file(const std::filesystem::path& path) {
  const std::vector<ServingRow> rows = read_serving_csv(path);
  std::vector<ServingCheck> out(rows.size());
  parallel_for(rows.size(), [&](std::size_t i) {
    const ServingRow& row = rows[i];
    ServingCheck& c = out[i];
    c.row = row;
    try {
      ServeRequest r;
      r.base.gpu = row.gpu;
      // Model files are named relative to the data folder (models/hf/...), so the file checks from any directory.
      r.base.model = row.model;
      if (row.model.ends_with(".json") && !std::filesystem::exists(row.model) && std::filesystem::exists(data_dir() / row.model))
        r.base.model = (data_dir() / row.model).string();
      r.base.runtime = row.engine;
      // "0.6.0 (--num-scheduler-steps 10)": the leading dotted version picks the engine's version rules.
      const std::string version = row.engine_version.substr(0, row.engine_version.find(' '));
      if (!version.empty() && version.find_first_not_of("0123456789.") == std::string::npos) r.base.runtime_version = version;
      r.base.precision = row.precision;
      r.base.kv_precision = row.kv_precision;
      r.tensor_parallel = static_cast<int>(to_count(row.tp, 1));
      r.pipeline_parallel = static_cast<int>(to_count(row.pp, 1));
      r.input_len = to_count(row.input_len, 0);
      r.output_len = to_count(row.output_len, 0);
      if (!row.length_dist.empty()) r.length_dist = row.length_dist;
      r.num_requests = to_count(row.num_requests, 0);
      r.max_batch = to_count(row.max_batch, 0);
      if (!row.request_rate.empty()) r.request_rate = std::strtod(row.request_rate.c_str(), nullptr);
      c.predicted = metric_of(predict_serving(r).metrics, row.metric);
    } catch (const InputError& e) {
      c.error = e.what();
    }
  });
  return out;
}

}  // namespace perfcast
