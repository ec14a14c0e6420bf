#include "report/serving_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/json_vocabulary.h"
#include "report/messages.h"
#include "report/prediction_report.h"

namespace perfcast {

namespace {

nlohmann::json metrics_json(const ServeMetrics& m) {
  nlohmann::json j;
  j["request_rate_per_s"] = m.request_rate > 0 ? nlohmann::json(m.request_rate) : nlohmann::json(nullptr);
  j["max_batch"] = m.max_batch;
  j["completed_requests"] = m.completed;
  j["duration_s"] = m.duration_s;
  j["throughput"] = {{"output_tokens_per_s", m.output_tokens_per_s},
                     {"requests_per_s", m.requests_per_s},
                     {"total_tokens_per_s", m.total_tokens_per_s}};
  j["latency_ms"] = {{"ttft_p50", m.ttft_p50_ms}, {"ttft_p99", m.ttft_p99_ms}, {"tpot_p50", m.tpot_p50_ms},
                     {"tpot_p99", m.tpot_p99_ms}, {"e2e_p50", m.e2e_p50_ms},   {"e2e_p99", m.e2e_p99_ms}};
  j["schedule"] = {{"steps", m.steps},
                   {"mean_running_requests", m.mean_running},
                   {"peak_running_requests", m.peak_running},
                   {"preemptions", m.preemptions},
                   {"truncated", m.truncated}};
  return j;
}

std::string metrics_lines(const ServeMetrics& m, const std::string& indent, Lang lang) {
  const auto t = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  std::string s;
  s += fmt::format(t("srv.throughput"), indent, m.output_tokens_per_s, m.requests_per_s, m.total_tokens_per_s);
  s += fmt::format(t("srv.ttft"), indent, m.ttft_p50_ms, m.ttft_p99_ms);
  s += fmt::format(t("srv.tpot"), indent, m.tpot_p50_ms, m.tpot_p99_ms);
  s += fmt::format(t("srv.e2e"), indent, m.e2e_p50_ms, m.e2e_p99_ms);
  s += fmt::format(t("srv.batch"), indent, m.mean_running, m.peak_running, m.preemptions, m.steps,
                   m.truncated ? msg("srv.truncated", lang) : "");
  return s;
}

}  // namespace

nlohmann::json serving_json(const ServePrediction& p) {
  const ServeRequest& r = p.request;
  nlohmann::json j;
  j["mode"] = "serve";
  j["gpu"] = p.gpu;
  j["model"] = p.model;
  j["engine"] = p.engine;
  j["precision"] = r.base.precision;
  j["kv_precision"] = p.kv_precision;
  // The layout and GPU count as plan --layouts and predict's parallel_training name them (the old names beside).
  put_with_alias(j, "tp", "tensor_parallel", r.tensor_parallel);
  put_with_alias(j, "pp", "pipeline_parallel", r.pipeline_parallel);
  put_with_alias(j, "gpus_total", "gpus", p.gpus);
  j["interconnect"] = p.interconnect;
  j["workload"] = {{"request_rate_per_s", r.request_rate > 0 ? nlohmann::json(r.request_rate) : nlohmann::json(nullptr)},
                   {"num_requests", r.num_requests},
                   {"input_len", r.input_len},
                   {"output_len", r.output_len},
                   {"length_distribution", r.length_dist},
                   {"seed", r.seed},
                   {"prefix_cache_hit", r.prefix_cache_hit}};
  j["memory_per_gpu"] = {{"capacity_bytes", rounded_count_json(p.memory_bytes_per_gpu)},
                         {"weights_bytes", rounded_count_json(p.weights_bytes_per_gpu)},
                         {"buffers_bytes", rounded_count_json(p.buffers_bytes_per_gpu)},
                         {"kv_cache_bytes", rounded_count_json(p.kv_cache_bytes_per_gpu)},
                         {"kv_bytes_per_token", rounded_count_json(p.kv_bytes_per_token_per_gpu)}};
  j["kv_cache"] = {{"block_tokens", p.kv_block_tokens},
                   {"blocks", p.kv_blocks},
                   {"capacity_tokens", p.kv_capacity_tokens},
                   {"max_concurrency", p.kv_max_concurrency},
                   {"max_batch", p.max_batch}};
  j["decode_step_ms"] = p.decode_step_ms;
  j["allreduce_us_per_step"] = p.allreduce_us_per_step;
  j["power"] = nullptr;
  // Why serve prints no power or energy (docs/serving.md): the engine's steps are timed from the step model's GPU
  // time and launches (LlmStepModel's StepPart), which keep no kernel's cost, so KernelDraw has nothing to price.
  j["power_note"] = std::string(msg("srv.power_note", Lang::kEn));
  const nlohmann::json m = metrics_json(p.metrics);
  for (const auto& [k, v] : m.items()) j[k] = v;
  if (p.slo) {
    nlohmann::json s;
    s["ttft_p99_target_ms"] = p.slo->ttft_ms > 0 ? nlohmann::json(p.slo->ttft_ms) : nlohmann::json(nullptr);
    s["tpot_p99_target_ms"] = p.slo->tpot_ms > 0 ? nlohmann::json(p.slo->tpot_ms) : nlohmann::json(nullptr);
    s["max_request_rate"] = p.slo->at_max_rate ? metrics_json(*p.slo->at_max_rate) : nlohmann::json(nullptr);
    s["best_max_batch"] = p.slo->at_best_batch ? metrics_json(*p.slo->at_best_batch) : nlohmann::json(nullptr);
    s["replicas_for_offered_rate"] =
        p.slo->replicas_for_offered_rate > 0 ? nlohmann::json(p.slo->replicas_for_offered_rate) : nlohmann::json(nullptr);
    if (!p.slo->note.empty()) s["note"] = p.slo->note;
    j["slo"] = s;
  }
  j["notes"] = p.notes;
  return j;
}

std::string serving_text(const ServePrediction& p, Lang lang) {
  const ServeRequest& r = p.request;
  const auto t = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  std::string s;
  s += fmt::format(t("srv.title"), p.model, p.gpus, p.gpu, r.tensor_parallel, r.pipeline_parallel, p.interconnect, p.engine,
                   r.base.precision, p.kv_precision);
  s += fmt::format(t("srv.workload"), r.num_requests,
                   r.request_rate > 0 ? fmt::format(t("srv.poisson"), r.request_rate) : std::string(msg("srv.all_at_once", lang)),
                   r.input_len, r.output_len, r.length_dist, r.seed, r.prefix_cache_hit * 100);
  s += fmt::format(t("srv.memory"), format_bytes(p.weights_bytes_per_gpu), format_bytes(p.buffers_bytes_per_gpu),
                   format_bytes(p.kv_cache_bytes_per_gpu), format_bytes(p.memory_bytes_per_gpu));
  s += fmt::format(t("srv.kv"), p.kv_blocks, p.kv_block_tokens, p.kv_capacity_tokens, p.kv_max_concurrency,
                   r.input_len + r.output_len, p.max_batch);
  s += fmt::format(t("srv.decode_step"), p.decode_step_ms, p.allreduce_us_per_step / 1e3);
  s += fmt::format(t("srv.power"), msg("srv.power_note", lang));
  s += metrics_lines(p.metrics, "  ", lang);
  if (p.slo) {
    const std::string none(msg("srv.none", lang));
    s += fmt::format(t("srv.targets"), p.slo->ttft_ms > 0 ? fmt::format("{:g} ms", p.slo->ttft_ms) : none,
                     p.slo->tpot_ms > 0 ? fmt::format("{:g} ms", p.slo->tpot_ms) : none);
    if (p.slo->at_max_rate) {
      s += fmt::format(t("srv.max_rate"), p.slo->at_max_rate->request_rate);
      s += metrics_lines(*p.slo->at_max_rate, "    ", lang);
    } else {
      s += "  " + p.slo->note + "\n";
    }
    if (p.slo->at_best_batch) {
      s += fmt::format(t("srv.best_batch"), p.slo->at_best_batch->max_batch);
      s += metrics_lines(*p.slo->at_best_batch, "    ", lang);
    } else {
      s += std::string(msg("srv.no_batch", lang)) + std::string(r.request_rate > 0 ? "" : msg("srv.give_rate", lang)) + "\n";
    }
    if (p.slo->replicas_for_offered_rate > 1)
      s += fmt::format(t("srv.replicas"), r.request_rate, p.slo->replicas_for_offered_rate,
                       p.slo->replicas_for_offered_rate * p.gpus,
                       r.request_rate / static_cast<double>(p.slo->replicas_for_offered_rate));
    if (p.slo->at_max_rate && !p.slo->note.empty()) s += "  " + p.slo->note + "\n";
  }
  s += msg("srv.legend", lang);
  for (const auto& n : p.notes) s += std::string(msg("srv.note", lang)) + n + "\n";
  return s;
}

namespace {

struct ErrorStats {
  std::size_t rows = 0;
  double median = 0, mean = 0, within_25 = 0;
};

ErrorStats stats_of(std::vector<double> e) {
  ErrorStats s;
  s.rows = e.size();
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  s.median = e.size() % 2 ? e[e.size() / 2] : 0.5 * (e[e.size() / 2 - 1] + e[e.size() / 2]);
  for (double x : e) {
    s.mean += x / static_cast<double>(e.size());
    if (x <= 0.25) s.within_25 += 1.0 / static_cast<double>(e.size());
  }
  return s;
}

std::string stats_table(const std::map<std::string, std::vector<double>>& groups, const std::string& what) {
  std::string s = fmt::format("| {} | rows | median error | mean error | within 25% |\n|---|---:|---:|---:|---:|\n", what);
  for (const auto& [k, v] : groups) {
    const ErrorStats e = stats_of(v);
    s += fmt::format("| {} | {} | {:.1f}% | {:.1f}% | {:.0f}% |\n", k, e.rows, 100 * e.median, 100 * e.mean, 100 * e.within_25);
  }
  return s;
}

}  // namespace

std::string serving_validation_summary(const std::vector<ServingCheck>& checks) {
  std::map<std::string, std::vector<double>> by_metric;
  std::size_t failed = 0;
  for (const auto& c : checks) {
    if (c.predicted) by_metric[c.row.metric].push_back(c.relative_error());
    else ++failed;
  }
  std::string s = fmt::format("{}, {} not predicted\n", rows_text(checks.size()), failed);
  for (const auto& [m, v] : by_metric) {
    const ErrorStats e = stats_of(v);
    s += fmt::format("{}: {}, median error {:.1f}%, mean {:.1f}%\n", m, rows_text(static_cast<std::size_t>(e.rows)),
                     100 * e.median, 100 * e.mean);
  }
  return s;
}

std::string serving_validation_markdown(const std::vector<ServingCheck>& checks, const std::string& file) {
  std::map<std::string, std::vector<double>> by_metric, by_engine, by_gpu, by_tp;
  for (const auto& c : checks) {
    if (!c.predicted) continue;
    by_metric[c.row.metric].push_back(c.relative_error());
    if (c.row.metric != "output_tokens_per_s") continue;
    by_engine[c.row.engine].push_back(c.relative_error());
    by_gpu[c.row.gpu].push_back(c.relative_error());
    by_tp["tp " + c.row.tp + ", pp " + c.row.pp].push_back(c.relative_error());
  }
  std::string s = fmt::format("## Validation: `{}`\n\n", file);
  s += "Error = |predicted - measured| / measured. Each row is one `perfcast predict --mode serve` run of the row's "
       "engine, GPU, model, precision, degrees, lengths, request count and rate.\n\n";
  s += stats_table(by_metric, "metric") + "\n";
  s += "Serving throughput (output tokens/s) by engine, GPU and layout:\n\n";
  s += stats_table(by_engine, "engine") + "\n" + stats_table(by_gpu, "gpu") + "\n" + stats_table(by_tp, "layout") + "\n";
  s += "### Every row\n\n| line | engine | gpu | model | tp x pp | in / out | rate | metric | measured | predicted | error |\n"
       "|---:|---|---|---|---|---|---|---|---:|---:|---:|\n";
  for (const auto& c : checks) {
    const std::string model = c.row.model.substr(c.row.model.find_last_of('/') + 1);
    s += fmt::format("| {} | {} | {} | {} | {} x {} | {} / {} | {} | {} | {:g} | {} | {} |\n", c.row.line, c.row.engine,
                     c.row.gpu, model, c.row.tp, c.row.pp, c.row.input_len, c.row.output_len,
                     c.row.request_rate.empty() ? "offline" : c.row.request_rate, c.row.metric, c.row.measured,
                     c.predicted ? fmt::format("{:.1f}", *c.predicted) : "-",
                     c.predicted ? fmt::format("{:+.1f}%", 100 * (*c.predicted / c.row.measured - 1)) : c.error);
  }
  return s;
}

}  // namespace perfcast
