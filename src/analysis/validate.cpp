#include "analysis/validate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "analysis/anchor.h"
#include "analysis/intervals.h"
#include "analysis/what_if_pairs.h"
#include "core/error.h"
#include "core/median.h"
#include "device/host_profile.h"
#include "import/serving_csv.h"
#include "schedule/llm_parallel.h"
#include "schedule/memory.h"

namespace perfcast {

namespace {

constexpr double kMiB = 1048576.0;

// A row's memory columns against its prediction; none when the row has neither a measured peak nor an outcome.
std::optional<MemoryRow> memory_row(const RowResult& res) {
  const auto& row = res.row;
  if (!row.memory_mib && row.oom.empty()) return std::nullopt;
  const std::string where = "line " + std::to_string(row.line) + ": ";
  if (row.memory_mib && row.memory_measure.empty())
    throw InputError(where + "memory_mib needs memory_measure (allocated, reserved or nvidia-smi)");
  if (!row.oom.empty() && row.oom != "yes" && row.oom != "no")
    throw InputError(where + "oom must be yes or no, got '" + row.oom.substr(0, 40) + "'");
  MemoryRow m;
  m.measure = row.memory_measure.empty() ? "nvidia-smi" : row.memory_measure;
  const auto& mem = res.prediction->memory;
  m.predicted = memory_measure_bytes(mem, m.measure);
  if (row.memory_mib) {
    m.measured = *row.memory_mib * kMiB;
    m.error_pct = std::fabs(m.predicted / *m.measured - 1.0) * 100.0;
  }
  if (!row.oom.empty()) {
    m.oom = row.oom == "yes";
    m.fit_ok = *m.oom != mem.fits;
  }
  m.result = {res.row, res.status, facts_of(*res.prediction)};
  return m;
}

MemoryStats memory_stats(const std::vector<MemoryRow>& rows) {
  MemoryStats s;
  std::vector<double> e, signed_err;
  double sum = 0;
  for (const auto& r : rows) {
    if (r.measured) {
      e.push_back(r.error_pct);
      signed_err.push_back((r.predicted / *r.measured - 1.0) * 100.0);
      sum += r.error_pct;
    }
    if (r.oom) {
      ++s.outcome_rows;
      if (*r.oom) {
        ++s.oom_rows;
        if (r.fit_ok) ++s.oom_predicted;
      } else {
        ++s.ran_rows;
        if (r.fit_ok) ++s.ran_predicted;
      }
    }
  }
  s.measured_rows = static_cast<int>(e.size());
  s.median_error_pct = median(e);
  s.mean_error_pct = e.empty() ? 0 : sum / static_cast<double>(e.size());
  s.median_signed_pct = median(signed_err);
  return s;
}

}  // namespace

ErrorStats error_stats(const std::vector<const ValidationRow*>& rows) {
  ErrorStats s;
  s.rows = static_cast<int>(rows.size());
  if (rows.empty()) return s;
  std::vector<double> apes, signed_err;
  double sum = 0, in2 = 0, fits = 0;
  for (const auto* r : rows) {
    apes.push_back(r->ape);
    signed_err.push_back((r->ratio - 1.0) * 100.0);
    sum += r->ape;
    if (r->ratio >= 0.5 && r->ratio <= 2.0) in2 += 1;
    if (r->result.prediction->memory.fits) fits += 1;
    if (r->inside) {
      ++s.with_interval;
      if (*r->inside) s.coverage += 1;
    }
  }
  if (s.with_interval > 0) s.coverage /= static_cast<double>(s.with_interval);
  s.median_ape = median(apes);
  s.mean_ape = sum / static_cast<double>(rows.size());
  s.within_2x = in2 / static_cast<double>(rows.size());
  s.fits = fits / static_cast<double>(rows.size());
  s.median_signed = median(signed_err);
  return s;
}

void check_metric(const std::string& metric) {
  static const std::vector<std::string> known = {"samples_per_s", "tokens_per_s", "tokens_per_s_per_gpu", "mfu",
                                                 "board_power_w"};
  if (metric.empty() || std::find(known.begin(), known.end(), metric) != known.end()) return;
  throw_unknown("metric", metric, known);
}

PredictionFacts facts_of(const Prediction& p) {
  PredictionFacts f;
  const auto& q = p.request;
  f.request = {q.gpu,   q.model, q.runtime, q.mode,  q.precision,
               q.data,  q.batch, q.gpus,    q.nodes, q.runtime_version.empty() ? p.runtime.default_version : q.runtime_version,
               q.host.empty() ? default_host().id : q.host};
  f.memory.fits = p.memory.fits;
  f.device = {p.device.kind, p.device.architecture};
  f.model_family = p.model_family;
  f.primary = p.primary;
  f.step = {p.step.host_us, p.step.gpu_us};
  f.power = p.power;
  return f;
}

std::vector<std::string> calibration_files(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw InputError("cannot read validation folder '" + dir + "'");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".csv" && e.path().filename().string().rfind("eval_", 0) != 0 &&
        !is_serving_measurements(e.path()))
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError("no calibration files (*.csv not named eval_*) in '" + dir + "'");
  return files;
}

namespace {

bool calibrates_interval_width(const std::string& path) {
  const auto fresh = interval_setup().fresh_calibration_files;
  return std::find(fresh.begin(), fresh.end(), std::filesystem::path(path).filename().string()) != fresh.end();
}

// The statistics of a report's rows, memory rows and precision pairs: one function for one file and for a pool, so
// that a pooled figure is computed exactly as a file's.
void summarise(ValidationReport& rep) {
  rep.memory = memory_stats(rep.memory_rows);
  std::vector<const ValidationRow*> all, out_of_sample;
  std::map<std::string, std::vector<const ValidationRow*>> g, m, rt, mp, data, mode, support;
  for (const auto& r : rep.rows) {
    all.push_back(&r);
    g[r.result.row.gpu].push_back(&r);
    m[r.result.row.model].push_back(&r);
    rt[r.result.prediction->request.runtime].push_back(&r);
    mp[mode_string(r.result.prediction->request.mode) + " " + r.result.prediction->request.precision].push_back(&r);
    data[r.result.prediction->request.data].push_back(&r);
    mode[mode_string(r.result.prediction->request.mode)].push_back(&r);
    if (r.support_bin >= 0) support[std::to_string(r.support_bin)].push_back(&r);
    if (!rep.files.empty()) {
      if (rep.files.at(static_cast<std::size_t>(r.file)).interval_in_sample)
        ++rep.in_sample_rows;
      else
        out_of_sample.push_back(&r);
    }
  }
  rep.overall = error_stats(all);
  rep.out_of_sample = error_stats(out_of_sample);
  {
    const WhatIfPairSetup setup = what_if_pair_setup();
    std::map<std::string, std::vector<const WhatIfPair*>> target;
    for (const auto& p : rep.precision_pairs)
      if (in_precision_target(p)) target[p.varied].push_back(&p);
    for (const auto& [varied, v] : target) rep.precision_target[varied] = what_if_pair_stats(v, setup);
  }
  for (auto& [k, v] : g) rep.by_gpu[k] = error_stats(v);
  for (auto& [k, v] : m) rep.by_model[k] = error_stats(v);
  for (auto& [k, v] : rt) rep.by_runtime[k] = error_stats(v);
  for (auto& [k, v] : mp) rep.by_mode_precision[k] = error_stats(v);
  for (auto& [k, v] : data) rep.by_data[k] = error_stats(v);
  for (auto& [k, v] : mode) rep.by_mode[k] = error_stats(v);
  for (auto& [k, v] : support) rep.by_support_bin[k] = error_stats(v);
}

}  // namespace

ValidationReport validate_file(const std::string& path) {
  ValidationReport rep;
  rep.file = path;
  rep.interval_in_sample = calibrates_interval_width(path);
  // Streamed (issue 14): rows are read and predicted a chunk at a time; each row keeps the facts of its prediction.
  predict_config_file(path, [&](RowResult&& res) {
    try {
      check_metric(res.row.metric);
    } catch (const InputError& e) {
      throw InputError(path + " line " + std::to_string(res.row.line) + ": " + e.what());
    }
    const bool power = is_power_metric(res.row.metric);
    if (power && res.prediction && !res.prediction->power) {
      rep.unpredicted_reasons["no board power predicted"] += 1;
      rep.unpredicted.push_back({{std::move(res.row), "no board power predicted (a CPU or a step without kernels)",
                                  std::nullopt}});
      return;
    }
    if (res.prediction)
      if (auto m = memory_row(res)) {
        rep.memory_rows.push_back(std::move(*m));
        if (!res.row.measured) return;  // a memory-only row
      }
    if (!res.prediction || !res.row.measured) {
      if (!res.prediction) {
        // Group reasons by their first clause so the summary stays short.
        std::string reason = res.status.substr(0, res.status.find(" ("));
        rep.unpredicted_reasons[reason] += 1;
      } else {
        rep.unpredicted_reasons["no measured value"] += 1;
      }
      rep.unpredicted.push_back({{std::move(res.row), std::move(res.status), std::nullopt}});
      return;
    }
    const auto& p = *res.prediction;
    // A per-GPU or MFU figure needs a rate in those units; without one the row is refused, never compared with
    // samples/s.
    const bool per_gpu = res.row.metric == "tokens_per_s_per_gpu", mfu = res.row.metric == "mfu";
    if ((per_gpu && !p.parallel && !p.tokens_per_s) || (mfu && !p.parallel)) {
      const std::string reason = per_gpu ? "no tokens/s predicted for a tokens_per_s_per_gpu row"
                                         : "mfu is predicted for LLM layouts only (a `parallel` column)";
      rep.unpredicted_reasons[reason] += 1;
      rep.unpredicted.push_back({{std::move(res.row), "unsupported: " + reason, std::nullopt}});
      return;
    }
    // A rate no device of the setup could reach is a unit or count mistake (per minute, all nodes on one GPU's row):
    // left unpredicted with the reason, by the bound --measured is held to, rather than scored as a 100% error.
    if (!power && !per_gpu && !mfu &&
        !measured_rate_possible(p, *res.row.measured, res.row.metric == "tokens_per_s" && p.tokens_per_s)) {
      const std::string reason = "measured rate beyond what the devices can compute (data/limits.toml "
                                 "max_measured_over_peak x the fastest peak): check the unit and the GPU count";
      rep.unpredicted_reasons[reason] += 1;
      rep.unpredicted.push_back({{std::move(res.row), "error: " + reason, std::nullopt}});
      return;
    }
    ValidationRow v;
    v.predicted = res.row.metric == "tokens_per_s" && p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s;
    // Data parallel (no LLM layout): the all-GPU token rate over every GPU of every node.
    if (per_gpu)
      v.predicted = p.parallel ? p.parallel->tokens_per_s_per_gpu
                               : *p.tokens_per_s / static_cast<double>(p.request.gpus * p.request.nodes);
    if (mfu) v.predicted = p.parallel->mfu;
    if (power) v.predicted = p.power->avg_power_w;
    v.ratio = v.predicted / *res.row.measured;
    v.ape = std::fabs(v.ratio - 1.0) * 100.0;
    // The interval regimes are fitted to throughput residuals: a power row gets none.
    if (const auto iv = power ? std::nullopt : prediction_interval(p)) {
      v.inside = *res.row.measured >= v.predicted * iv->low && *res.row.measured <= v.predicted * iv->high;
      v.regime = iv->regime;
      v.support_bin = iv->support_bin;
    }
    v.result = {std::move(res.row), std::move(res.status), facts_of(p)};
    rep.rows.push_back(std::move(v));
  }, true);
  // An error statistic over no rows would read as 0% error: nothing to validate is a failure.
  if (rep.rows.empty() && rep.memory_rows.empty()) {
    std::string why;
    for (const auto& [reason, count] : rep.unpredicted_reasons)
      why += (why.empty() ? "" : "; ") + std::to_string(count) + " x " + reason;
    throw InputError("no row of '" + path + "' could be predicted against a measured value" +
                     (why.empty() ? std::string(" (it has no rows)") : " (" + why.substr(0, 300) + ")"));
  }
  rep.precision_pairs = precision_pairs(rep.rows, std::filesystem::path(path).filename().string());
  summarise(rep);
  return rep;
}

ValidationReport validate_files(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("no measurement file to validate");
  ValidationReport pool;
  pool.file = std::to_string(paths.size()) + (paths.size() == 1 ? " file" : " files");
  pool.interval_in_sample = true;
  // Checked before any file is predicted. A serving file's rows are --mode serve predictions with their own report
  // (validate it alone); a file given twice would count its rows twice.
  std::vector<std::filesystem::path> seen;
  for (const auto& path : paths) {
    if (is_serving_measurements(path))
      throw InputError("'" + path + "' holds serving benchmarks (--mode serve): validate it on its own, not pooled");
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(path, ec);
    if (ec) continue;  // unreadable: validate_file says so
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end())
      throw InputError("'" + path + "' is given twice: a pooled validation counts each file once");
    seen.push_back(canonical);
  }
  for (const auto& path : paths) {
    ValidationReport one = validate_file(path);
    const int index = static_cast<int>(pool.files.size());
    pool.files.push_back({path, one.overall, static_cast<int>(one.unpredicted.size()),
                          static_cast<int>(one.memory_rows.size()), one.interval_in_sample});
    pool.interval_in_sample = pool.interval_in_sample && one.interval_in_sample;
    for (auto& r : one.rows) {
      r.file = index;
      pool.rows.push_back(std::move(r));
    }
    for (auto& r : one.memory_rows) {
      r.file = index;
      pool.memory_rows.push_back(std::move(r));
    }
    for (auto& r : one.unpredicted) {
      r.file = index;
      pool.unpredicted.push_back(std::move(r));
    }
    for (const auto& [reason, n] : one.unpredicted_reasons) pool.unpredicted_reasons[reason] += n;
    // Pairs are formed within each file (as `perfcast validate --pairs` does), never across two.
    for (auto& p : one.precision_pairs) pool.precision_pairs.push_back(std::move(p));
  }
  summarise(pool);
  return pool;
}

}  // namespace perfcast
