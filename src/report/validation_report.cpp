#include "report/validation_report.h"

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>

#include "analysis/intervals.h"
#include "analysis/what_if_pairs.h"
#include "core/error.h"
#include "report/chart_page.h"
#include "report/html_page.h"
#include "report/json_vocabulary.h"
#include "report/prediction_report.h"
#include "schedule/llm_parallel.h"

namespace perfcast {

namespace {

// Control bytes in a cell (an input row echoed back, an error) are escaped, so that the CSV printed on a terminal
// cannot carry terminal escapes and every record stays on one line.
std::string csv_field(const std::string& cell) {
  const std::string s = escape_control_bytes(cell);
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string stats_row(const std::string& key, const ErrorStats& s) {
  return fmt::format("| {} | {} | {:.1f} | {:.1f} | {:+.1f} | {:.1f}% | {:.1f}% |\n", key, s.rows, s.median_ape,
                     s.mean_ape, s.median_signed, 100 * s.within_2x, 100 * s.fits);
}

std::string stats_table(const std::string& title, const std::map<std::string, ErrorStats>& m) {
  std::string s = "\n### " + title + "\n\n";
  s += "| " + title + " | rows | median APE | mean APE | median bias | within 2x | predicted to fit |\n";
  s += "|---|---|---|---|---|---|---|\n";
  s += "| | | % | % | % | share | share |\n";
  for (const auto& [k, v] : m) s += stats_row(k, v);
  return s;
}

// The two kinds of precision pair (analysis/what_if_pairs.h): fp32 and the other precision at one batch, or each at
// the batch its run chose.
std::string precision_pairs_of(const std::string& varied) {
  return varied == "precision" ? "at the same batch" : "each at its run's batch";
}

std::string coverage_text(const WhatIfPairStats& st) {
  return st.with_spread == 0 ? std::string("no what-if interval")
                             : fmt::format("{:.1f}% of {} inside their what-if interval", 100 * st.coverage,
                                           st.with_spread);
}

// A pooled report's rows name their file and line; one file's rows are as they always were. The file by its name
// alone, as the what-if pairs (and `perfcast validate --pairs`) name theirs.
std::string file_line(const ValidationReport& rep, int file, int line) {
  return std::filesystem::path(rep.files.at(static_cast<std::size_t>(file)).path).filename().string() + ":" +
         std::to_string(line);
}

std::string coverage_of(const ErrorStats& s) {
  return s.with_interval == 0 ? std::string("-") : fmt::format("{:.1f}% of {}", 100 * s.coverage, s.with_interval);
}

// A pooled report's interval coverage with and without the files that calibrate the interval width.
std::string pooled_coverage_text(const ValidationReport& rep) {
  int in_sample_files = 0;
  for (const auto& f : rep.files) in_sample_files += f.interval_in_sample ? 1 : 0;
  if (in_sample_files == 0) return "no file here is one of data/interval_setup.toml fresh_calibration_files";
  return fmt::format(
      "{} rows come from {} of data/interval_setup.toml fresh_calibration_files, which calibrate the "
      "interval width (in sample); without them {}",
      rep.in_sample_rows, in_sample_files,
      rep.out_of_sample.with_interval > 0
          ? fmt::format("{:.1f}% of {} measurements inside", 100 * rep.out_of_sample.coverage,
                        rep.out_of_sample.with_interval)
          : std::string("no row has an interval"));
}

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"rows", s.rows},           {"median_ape_pct", s.median_ape}, {"mean_ape_pct", s.mean_ape},
          {"within_2x", s.within_2x}, {"fits", s.fits},                 {"median_bias_pct", s.median_signed},
          {"rows_with_interval", s.with_interval},
          {"interval_coverage", s.with_interval > 0 ? nlohmann::json(s.coverage) : nlohmann::json(nullptr)}};
}

}  // namespace

std::string validation_summary_text(const ValidationReport& rep) {
  const auto& o = rep.overall;
  std::string s =
      o.rows > 0 || rep.memory_rows.empty()
          ? fmt::format("validated {} of {}: median APE {:.1f}%, mean APE {:.1f}%, within 2x {:.1f}%, predicted to "
                        "fit {:.1f}%; {} not predicted\n",
                        rows_text(static_cast<std::size_t>(o.rows)), rep.file, o.median_ape, o.mean_ape,
                        100 * o.within_2x, 100 * o.fits, rows_text(rep.unpredicted.size()))
          : fmt::format("validated the memory of {} of {}; {} not predicted\n", rows_text(rep.memory_rows.size()),
                        rep.file, rows_text(rep.unpredicted.size()));
  // A pooled report: each file's own figures, so that one large file's weight in the pool shows.
  for (const auto& f : rep.files) {
    s += f.overall.rows == 0
             ? fmt::format("  {}: memory rows only ({})", f.path, f.memory_rows)
             : fmt::format(
                   "  {}: {}, median APE {:.1f}%, mean APE {:.1f}%, within 2x {:.1f}%, inside interval {}{}",
                   f.path, rows_text(static_cast<std::size_t>(f.overall.rows)), f.overall.median_ape, f.overall.mean_ape, 100 * f.overall.within_2x,
                   coverage_of(f.overall), f.interval_in_sample ? " (in sample)" : "");
    s += f.unpredicted > 0 ? fmt::format("; {} not predicted\n", rows_text(static_cast<std::size_t>(f.unpredicted)))
                           : "\n";
  }
  // The file's "(target)" rows of `perfcast validate --pairs`.
  for (const auto& [varied, st] : rep.precision_target)
    s += fmt::format("precision what-ifs against fp32, {} {}: {} pairs, median ratio error {:.1f}%, wrong side in "
                     "{}, {}\n",
                     kPrecisionTargetScope, precision_pairs_of(varied), st.pairs, st.median_error_pct, st.wrong_side, coverage_text(st));
  if (o.with_interval > 0) {
    s += fmt::format(
        "prediction intervals: {:.1f}% of {} measurements inside their interval{}\n", 100 * o.coverage, o.with_interval,
        rep.files.empty() && rep.interval_in_sample ? " (in sample: this file calibrates the interval width)" : "");
    if (!rep.files.empty()) s += "  " + pooled_coverage_text(rep) + "\n";
    // Coverage per support bin, when some setup has a component no calibration source measured (analysis/intervals.h).
    if (rep.by_support_bin.size() > 1 || (rep.by_support_bin.size() == 1 && !rep.by_support_bin.count("0"))) {
      std::string bins;
      for (const auto& [k, v] : rep.by_support_bin)
        bins += fmt::format("{}{} new: {:.1f}% of {}", bins.empty() ? "" : "; ", k, 100 * v.coverage, v.with_interval);
      s += "  by setup components no calibration source measured: " + bins + "\n";
    }
  } else if (o.rows > 0 && std::all_of(rep.rows.begin(), rep.rows.end(),
                                       [](const ValidationRow& r) { return is_power_metric(r.result.row.metric); })) {
    s += "prediction intervals: none (board-power rows: the intervals describe throughput residuals)\n";
  } else if (o.rows > 0) {
    s += "prediction intervals: none of these rows has one (no regime of data/intervals.toml with enough rows: "
         "CPU rows take only device=cpu regimes)\n";
  }
  const auto& m = rep.memory;
  if (m.measured_rows > 0)
    s += fmt::format("peak memory: {} rows, median error {:.1f}%, mean {:.1f}%, median bias {:+.1f}% (each row's own "
                     "measure: allocated, reserved or nvidia-smi)\n",
                     m.measured_rows, m.median_error_pct, m.mean_error_pct, m.median_signed_pct);
  if (m.outcome_rows > 0)
    s += fmt::format("memory outcomes: {} of {} out-of-memory rows predicted not to fit, {} of {} rows that ran "
                     "predicted to fit\n",
                     m.oom_predicted, m.oom_rows, m.ran_predicted, m.ran_rows);
  for (const auto& [reason, n] : rep.unpredicted_reasons) s += fmt::format("  {:>4} x {}\n", n, reason);
  return s;
}

std::string validation_html(const ValidationReport& rep) {
  std::string body = preformatted_html(validation_summary_text(rep));
  const auto table = [&](const std::string& scope, const std::map<std::string, ErrorStats>& m) {
    body += "<h2>By " + html_escape(scope) + "</h2>\n<div class=\"scroll\"><table>\n<tr><th>" + html_escape(scope) +
            "</th><th>rows</th><th>median APE</th><th>mean APE</th><th>median bias</th><th>within 2x</th>"
            "<th>predicted to fit</th></tr>\n<tr class=\"units\"><td></td><td></td><td>%</td><td>%</td><td>%</td>"
            "<td>%</td><td>%</td></tr>\n";
    for (const auto& [k, v] : m)
      body += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1f}</td><td class=\"n\">{:.1f}</td>"
                          "<td class=\"n\">{:+.1f}</td><td class=\"n\">{:.0f}</td><td class=\"n\">{:.0f}</td></tr>\n",
                          html_escape(k), v.rows, v.median_ape, v.mean_ape, v.median_signed, 100 * v.within_2x, 100 * v.fits);
    body += "</table></div>\n";
  };
  table("gpu", rep.by_gpu);
  table("model", rep.by_model);
  table("runtime", rep.by_runtime);
  body += "<p class=\"na\">APE = |predicted - measured| / measured; bias = median of predicted/measured - 1.</p>\n";
  return render_chart_page(ChartPage::kValidate, validation_json(rep), Lang::kEn, "perfcast validate: " + rep.file, body);
}

std::string validation_markdown(const ValidationReport& rep, bool listings) {
  const bool pooled = !rep.files.empty();
  std::string s;
  s += pooled ? "## Validation: " + rep.file + " pooled\n\n" : "## Validation: `" + rep.file + "`\n\n";
  s += "APE = |predicted - measured| / measured. Bias = median of predicted/measured - 1 (negative: we predict "
       "too slow). \"Predicted to fit\" should be 100%: every measured row ran.\n\n";
  if (pooled)
    s += "Every statistic is taken over the rows of all files together; precision pairs are formed within each file. "
         "The table by file gives each file's own figures (as `perfcast validate FILE` reports them), so a file with "
         "many rows shows its weight in the pool.\n\n";
  s += "| scope | rows | median APE | mean APE | median bias | within 2x | predicted to fit |\n";
  s += "|---|---|---|---|---|---|---|\n| | | % | % | % | share | share |\n";
  s += stats_row("all predicted rows", rep.overall);
  if (pooled) {
    s += "\n### file\n\n";
    s += "| file | rows | median APE | mean APE | within 2x | inside interval | not predicted | memory rows | "
         "calibrates the interval width |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---|\n| | | % | % | share | of rows with one | rows | rows | |\n";
    for (const auto& f : rep.files)
      s += f.overall.rows == 0 ? fmt::format("| {} | 0 | - | - | - | - | {} | {} | {} |\n", f.path, f.unpredicted,
                                             f.memory_rows, f.interval_in_sample ? "yes (in sample)" : "no")
                               : fmt::format("| {} | {} | {:.1f} | {:.1f} | {:.1f}% | {} | {} | {} | {} |\n", f.path,
                                             f.overall.rows, f.overall.median_ape, f.overall.mean_ape,
                                             100 * f.overall.within_2x, coverage_of(f.overall), f.unpredicted,
                                             f.memory_rows, f.interval_in_sample ? "yes (in sample)" : "no");
    if (rep.overall.with_interval > 0)
      s += fmt::format("\nPrediction intervals: {:.1f}% of {} measurements inside their interval; {}.\n",
                       100 * rep.overall.coverage, rep.overall.with_interval, pooled_coverage_text(rep));
  }
  s += stats_table("gpu", rep.by_gpu);
  s += stats_table("model", rep.by_model);
  s += stats_table("runtime", rep.by_runtime);
  s += stats_table("mode", rep.by_mode);
  s += stats_table("mode and precision", rep.by_mode_precision);
  s += stats_table("input data", rep.by_data);
  if (!rep.precision_pairs.empty()) {
    s += "\n### Precision what-ifs (B: amp, fp16, bf16, int8, fp8 or tf32; A: fp32 of the same setup)\n\n";
    s += "Each pair is a measured speedup: one setup (every input column equal but what benchmarks choose with the "
         "precision: layout, gradient accumulation, fused optimizer) at fp32 and at another precision, at the same "
         "batch, or each at the batch its run chose where the setup holds one row of each; the pairs of `perfcast "
         "validate --pairs`. Ratio error = |predicted ratio / measured ratio - 1|. Wrong side: one of the two ratios "
         "reaches the gain threshold of data/what_if_pairs.toml and the other does not. Inside: the measured ratio lies "
         "in the predicted ratio's what-if interval (data/intervals.toml). The target (issue 13) leaves out tf32, an "
         "fp32 math mode.\n\n";
    s += "| batch | scope | pairs | median ratio error | mean ratio error | wrong side | inside |\n"
         "|---|---|---:|---:|---:|---:|---:|\n| | | | % | % | pairs | % |\n";
    for (const auto& [varied, st] : rep.precision_target)
      s += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {} | {} |\n", precision_pairs_of(varied),
                       kPrecisionTargetScope, st.pairs, st.median_error_pct, st.mean_error_pct, st.wrong_side,
                       st.with_spread == 0 ? std::string("-") : fmt::format("{:.0f}", 100 * st.coverage));
    if (listings) {
      s += "\n| lines | gpu | model | runtime | mode | A -> B | batch B | measured | predicted | error | inside |\n";
      s += "|---|---|---|---|---|---|---|---:|---:|---:|---|\n| | | | | | | | x | x | % | |\n";
      for (const auto& p : rep.precision_pairs)
        s += fmt::format("| {}{}, {} | {} | {} | {} | {} | {} -> {} | {} | {:.2f} | {:.2f} | {:.1f}{} | {} |\n",
                         pooled ? p.file + ":" : "", p.line_from, p.line_to, p.gpu, p.model, p.runtime, p.mode, p.from,
                         p.to, p.batch, p.measured, p.predicted, p.error_pct, p.wrong_side ? " (wrong side)" : "",
                         p.spread > 0 ? (p.inside ? "yes" : "no") : "-");
    }
  }
  if (!rep.memory_rows.empty()) {
    const auto& m = rep.memory;
    s += "\n### Peak memory and out-of-memory outcomes\n\n";
    s += "Each row is compared under the measure its source reports: `allocated` (torch.cuda.max_memory_allocated), "
         "`reserved` (max_memory_reserved) or `nvidia-smi` (the process's device memory, CUDA context included). "
         "Error = |predicted / measured - 1|. An out-of-memory row must be predicted not to fit, a row that ran to "
         "fit.\n\n";
    s += fmt::format("Overall: {} measured peaks, median error {:.1f}%, mean {:.1f}%, median bias {:+.1f}%; {} of {} "
                     "out-of-memory rows predicted not to fit, {} of {} rows that ran predicted to fit.\n\n",
                     m.measured_rows, m.median_error_pct, m.mean_error_pct, m.median_signed_pct, m.oom_predicted,
                     m.oom_rows, m.ran_predicted, m.ran_rows);
    if (listings) {
      s += std::string(pooled ? "| file:line " : "") +
           "| gpu | model | runtime | mode | precision | batch | seq | measure | measured | predicted | error | "
           "reported | predicted to fit |\n" +
           (pooled ? "|---" : "") + "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" + (pooled ? "| " : "") +
           "| | | | | | | | | MiB | MiB | % | | |\n";
      for (const auto& r : rep.memory_rows) {
        const auto& q = r.result.prediction->request;
        if (pooled) s += "| " + file_line(rep, r.file, r.result.row.line) + " ";
        s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} | {} | {} | {}{} |\n", r.result.row.gpu,
                         r.result.row.model, q.runtime, mode_name(q.mode), q.precision, q.batch, r.result.row.seq,
                         r.measure, r.measured ? fmt::format("{:.0f}", *r.measured / 1048576.0) : "",
                         r.predicted / 1048576.0,
                         r.measured ? fmt::format("{:+.1f}", (r.predicted / *r.measured - 1.0) * 100.0) : "",
                         r.oom ? (*r.oom ? "out of memory" : "ran") : "",
                         r.result.prediction->memory.fits ? "yes" : "no", r.fit_ok ? "" : " (wrong)");
      }
    }
  }
  s += fmt::format("\n### Rows not predicted: {}\n\n", rep.unpredicted.size());
  for (const auto& [reason, n] : rep.unpredicted_reasons) s += fmt::format("- {} x {}\n", n, reason);
  if (pooled && listings && !rep.unpredicted.empty()) {
    s += "\n";
    for (const auto& u : rep.unpredicted) s += "- " + file_line(rep, u.file, u.row.line) + ": " + u.status + "\n";
  }
  if (!listings) return s;
  s += "\n### Every row\n\n";
  s += std::string(pooled ? "| file:line " : "") +
       "| gpu | model | runtime | mode | precision | batch | measured | predicted | APE | bound | fits |\n";
  s += std::string(pooled ? "|---" : "") + "|---|---|---|---|---|---|---|---|---|---|---|\n";
  {
    // The unit of the measured and predicted columns: throughput, or W where every row is a board-power row.
    const auto power = static_cast<std::size_t>(std::count_if(
        rep.rows.begin(), rep.rows.end(), [](const ValidationRow& r) { return is_power_metric(r.result.row.metric); }));
    const char* unit = power == 0 ? "samples/s" : power == rep.rows.size() ? "W" : "samples/s or W";
    s += std::string(pooled ? "| " : "") + fmt::format("| | | | | | | {} | {} | % | | |\n", unit, unit);
  }
  for (const auto& r : rep.rows) {
    const auto& row = r.result.row;
    const auto& p = *r.result.prediction;
    if (pooled) s += "| " + file_line(rep, r.file, row.line) + " ";
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {} | {} |\n", row.gpu, row.model,
                     p.request.runtime, mode_name(p.request.mode), p.request.precision, p.request.batch, *row.measured,
                     r.predicted, r.ape, bound_name(p.primary), p.memory.fits ? "yes" : "no");
  }
  return s;
}

nlohmann::json validation_json(const ValidationReport& rep) {
  nlohmann::json j;
  j["file"] = rep.file;
  j["overall"] = stats_json(rep.overall);
  j["interval_in_sample"] = rep.interval_in_sample;
  if (!rep.files.empty()) {
    j["files"] = nlohmann::json::array();
    for (const auto& f : rep.files)
      j["files"].push_back({{"file", f.path},
                            {"overall", stats_json(f.overall)},
                            {"unpredicted", f.unpredicted},
                            {"memory_rows", f.memory_rows},
                            {"interval_in_sample", f.interval_in_sample}});
    j["interval_in_sample_rows"] = rep.in_sample_rows;
    j["out_of_sample"] = stats_json(rep.out_of_sample);
  }
  for (const auto& [k, v] : rep.by_gpu) j["by_gpu"][k] = stats_json(v);
  for (const auto& [k, v] : rep.by_model) j["by_model"][k] = stats_json(v);
  for (const auto& [k, v] : rep.by_runtime) j["by_runtime"][k] = stats_json(v);
  for (const auto& [k, v] : rep.by_data) j["by_data"][k] = stats_json(v);
  for (const auto& [k, v] : rep.by_mode) j["by_mode"][k] = stats_json(v);
  for (const auto& [k, v] : rep.by_support_bin) j["by_support_bin"][k] = stats_json(v);
  j["precision_what_ifs"] = nlohmann::json::object();
  for (const auto& [varied, st] : rep.precision_target)
    j["precision_what_ifs"][varied] = {
        {"scope", kPrecisionTargetScope}, {"pairs", st.pairs},
        {"median_error_pct", st.median_error_pct},   {"mean_error_pct", st.mean_error_pct},
        {"wrong_side", st.wrong_side},               {"with_interval", st.with_spread},
        {"coverage", st.with_spread ? nlohmann::json(st.coverage) : nlohmann::json(nullptr)}};
  j["memory"] = {{"measured_rows", rep.memory.measured_rows},
                 {"median_error_pct", rep.memory.median_error_pct},
                 {"mean_error_pct", rep.memory.mean_error_pct},
                 {"median_signed_pct", rep.memory.median_signed_pct},
                 {"oom_rows", rep.memory.oom_rows},
                 {"oom_predicted_not_to_fit", rep.memory.oom_predicted},
                 {"ran_rows", rep.memory.ran_rows},
                 {"ran_predicted_to_fit", rep.memory.ran_predicted}};
  j["memory_rows"] = nlohmann::json::array();
  for (const auto& r : rep.memory_rows) {
    nlohmann::json x{{"line", r.result.row.line},       {"gpu", r.result.row.gpu},
                     {"model", r.result.row.model},     {"batch", r.result.prediction->request.batch},
                     {"measure", r.measure},            {"predicted_mib", r.predicted / 1048576.0},
                     {"fits", r.result.prediction->memory.fits}};
    if (r.measured) {
      x["measured_mib"] = *r.measured / 1048576.0;
      x["error_pct"] = r.error_pct;
    }
    if (r.oom) x["oom"] = *r.oom;
    if (!rep.files.empty()) x["file"] = rep.files.at(static_cast<std::size_t>(r.file)).path;
    j["memory_rows"].push_back(std::move(x));
  }
  j["unpredicted"] = rep.unpredicted.size();
  for (const auto& [k, v] : rep.unpredicted_reasons) j["unpredicted_reasons"][k] = v;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rep.rows) {
    const auto& row = r.result.row;
    nlohmann::json x{{"line", row.line},
                     {"gpu", row.gpu},
                     {"model", row.model},
                     {"runtime", r.result.prediction->request.runtime},
                     {"mode", mode_string(r.result.prediction->request.mode)},
                     {"precision", r.result.prediction->request.precision},
                     {"data", r.result.prediction->request.data},
                     {"batch", r.result.prediction->request.batch},
                     {"metric", row.metric.empty() ? std::string("samples_per_s") : row.metric},
                     {"measured", *row.measured},
                     {"predicted", r.predicted},
                     {"ape_pct", r.ape},
                     {"fits", r.result.prediction->memory.fits},
                     {"bound", bound_name(r.result.prediction->primary)},
                     {"interval_regime", r.regime.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.regime)},
                     {"inside_interval", r.inside ? nlohmann::json(*r.inside) : nlohmann::json(nullptr)}};
    // The setup the row was predicted with where `perfcast predict` would take another default: the host and
    // runtime version (an empty column takes data/defaults.toml [unstated_in_measurements], the defaults of the
    // files' era), and which columns were so filled. `predict --host H --runtime-version V` repeats the row.
    // The step's parts as predict names them (the old names beside).
    put_with_alias(x, "host_dispatch_ms", "host_ms", r.result.prediction->step.host_us / 1e3);
    put_with_alias(x, "gpu_busy_ms", "gpu_ms", r.result.prediction->step.gpu_us / 1e3);
    x["host"] = r.result.prediction->request.host;
    x["runtime_version"] = r.result.prediction->request.runtime_version;
    x["filled_from_unstated"] = row.filled_from_unstated;
    // A power row's average is busy_share x the kernels' mean draw + (1 - busy_share) x wait_power_w: these terms
    // let a reader ask what the kernels would have to draw to meet the measurement (tools/power_regimes.py).
    if (is_power_metric(row.metric) && r.result.prediction->power) {
      const PowerCost& pc = *r.result.prediction->power;
      x["power_terms"] = {{"busy_share", pc.busy_share},
                          {"wait_power_w", pc.wait_power_w},
                          {"peak_power_w", pc.peak_power_w},
                          {"limit_w", pc.limit_w}};
    }
    if (!rep.files.empty()) x["file"] = rep.files.at(static_cast<std::size_t>(r.file)).path;
    j["rows"].push_back(std::move(x));
  }
  return j;
}

void write_predictions_csv_header(std::ostream& out) {
  std::string header;
  for (const auto& c : config_columns()) header += c + ",";
  out << header
      << "predicted_samples_per_s,predicted_tokens_per_s,predicted_low,predicted_high,step_ms,memory_bytes,fits,bottleneck,"
         "predicted_tokens_per_s_per_gpu,mfu,status\n";
}

void write_predictions_csv(const std::vector<RowResult>& results, std::ostream& out) {
  write_predictions_csv_header(out);
  for (const auto& r : results) write_prediction_csv_row(r, out);
}

void write_prediction_csv_row(const RowResult& r, std::ostream& out) {
  {
    const auto& row = r.row;
    for (const auto* f : {&row.gpu,          &row.model,          &row.runtime,
                          &row.mode,         &row.precision,      &row.batch,
                          &row.seq,          &row.n_gpus,         &row.interconnect,
                          &row.data,         &row.optimizer_step, &row.runtime_version,
                          &row.layout,       &row.host,           &row.host_cores,
                          &row.gpu_decode,   &row.prefetch,       &row.context,
                          &row.kv_precision, &row.strategy,       &row.fused_optimizer,
                          &row.grad_accum,   &row.attention,      &row.parallel,
                          &row.optimizer,    &row.checkpointing, &row.seq_mean,
                          &row.conv_algo,    &row.amp_o2, &row.harness, &row.embedding_precision, &row.llm_code,
                          &row.instances, &row.cores, &row.numa_pages})
      out << csv_field(*f) << ',';
    if (r.prediction) {
      const auto& p = *r.prediction;
      // predicted_low / predicted_high bound the headline throughput: tokens/s where there are, else samples/s.
      std::string low, high;
      if (const auto iv = prediction_interval(p)) {
        const double v = p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s;
        low = fmt::format("{:.6g}", v * iv->low);
        high = fmt::format("{:.6g}", v * iv->high);
      }
      out << fmt::format("{:.6g},{},{},{},{:.6g},{:.0f},{},{},", p.samples_per_s,
                         p.tokens_per_s ? fmt::format("{:.6g}", *p.tokens_per_s) : "", low, high, p.step_us / 1e3,
                         p.memory.total, p.memory.fits ? "true" : "false", bound_name(p.primary));
      out << (p.parallel ? fmt::format("{:.6g},{:.4f},", p.parallel->tokens_per_s_per_gpu, p.parallel->mfu) : ",,");
    } else {
      out << ",,,,,,,,,,";
    }
    out << csv_field(r.status) << '\n';
  }
}

}  // namespace perfcast
