// perfcast validate: predict every row of a measurements CSV and report the errors.
#include <filesystem>
#include <iostream>

#include "core/error.h"

#include "analysis/serving_validation.h"
#include "analysis/validate.h"
#include "analysis/what_if_pairs.h"
#include "cli/command.h"
#include "core/output_file.h"
#include "import/serving_csv.h"
#include "report/serving_report.h"
#include "report/validation_report.h"
#include "report/what_if_pairs_report.h"

namespace perfcast::cli {

namespace {

// The files of several arguments: each a CSV, or a folder standing for its calibration files (as --pairs reads
// them). A serving benchmark file has no place among them: `why` says what it lacks.
std::vector<std::string> calibration_files(const std::vector<std::string>& args, const std::string& why) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    if (std::filesystem::is_directory(a)) {
      const auto in = perfcast::calibration_files(a);
      out.insert(out.end(), in.begin(), in.end());
      continue;
    }
    if (is_serving_measurements(a)) throw InputError("'" + a + "' holds serving benchmarks (--mode serve): " + why);
    out.push_back(a);
  }
  return out;
}

}  // namespace

Command validate_command() {
  return {"validate", "predict every row of a measurements CSV and report the errors", [](CLI::App& app) {
            struct State {
              std::vector<std::string> files;
              std::string markdown, html;
              bool json = false, pairs = false, no_rows = false;
            };
            auto s = std::make_shared<State>();
            app.add_option("file", s->files,
                           "CSV with measured values (columns of published.csv); several CSVs or a folder (its "
                           "calibration files: *.csv not named eval_*) pool their rows into one report")
                ->required();
            app.add_flag("--pairs", s->pairs,
                         "report measured what-ifs instead: pairs of rows that differ only in precision (against fp32) "
                         "or GPU count (against 1 GPU), per file and pooled");
            app.add_option("--markdown", s->markdown, "write the markdown report here");
            app.add_flag("--json", s->json, "machine-readable output");
            app.add_flag("--no-rows", s->no_rows,
                         "with --markdown: the statistics only, without the tables of every row, precision pair and "
                         "memory row");
            app.add_option("--html", s->html,
                           "also write the report as a self-contained HTML page (measured against predicted) to this file");
            return std::function<int()>([s] {
              if (!s->markdown.empty()) check_output_path(s->markdown);
              if (!s->html.empty()) check_output_path(s->html);
              if (s->no_rows && (s->markdown.empty() || s->pairs))
                throw InputError(
                    "--no-rows shortens validate's --markdown report; give --markdown FILE (not with --pairs)");
              if (s->pairs) {
                if (!s->html.empty()) throw InputError("--html is not available with --pairs; use --markdown or --json");
                const auto paths = calibration_files(s->files, "they have no precision or GPU-count pairs");
                const WhatIfPairSetup setup = what_if_pair_setup();
                std::vector<WhatIfPair> pairs;
                std::vector<std::string> names;
                for (const auto& f : paths) {
                  names.push_back(std::filesystem::path(f).filename().string());
                  const auto p = what_if_pairs(validate_file(f));
                  pairs.insert(pairs.end(), p.begin(), p.end());
                }
                const std::string md = what_if_pairs_markdown(names, pairs, setup);
                if (!s->markdown.empty()) write_output_file(s->markdown, md);
                report_out() << (s->json ? what_if_pairs_json(names, pairs, setup).dump(2) + "\n" : md);
                return 0;
              }
              // Several files, or a folder: one report over all their rows (analysis/validate.h validate_files).
              if (s->files.size() != 1 || std::filesystem::is_directory(s->files.front())) {
                const ValidationReport rep =
                    validate_files(calibration_files(s->files, "validate it on its own, not pooled with other files"));
                if (!s->markdown.empty()) write_output_file(s->markdown, validation_markdown(rep, !s->no_rows));
                if (!s->html.empty()) write_output_file(s->html, validation_html(rep));
                report_out() << (s->json ? validation_json(rep).dump(2) + "\n" : validation_summary_text(rep));
                return 0;
              }
              const std::string& file = s->files.front();
              if (is_serving_measurements(file)) {
                // Serving benchmarks (data/validation/llm_serving.csv): --mode serve predictions per row.
                if (s->json || !s->html.empty() || s->no_rows)
                  throw InputError(
                      "--json, --html and --no-rows are not available for serving measurement files; use --markdown");
                const std::vector<ServingCheck> checks = check_serving_file(file);
                if (!s->markdown.empty()) write_output_file(s->markdown, serving_validation_markdown(checks, file));
                std::cout << serving_validation_summary(checks);
                return 0;
              }
              const ValidationReport rep = validate_file(file);
              if (!s->markdown.empty()) write_output_file(s->markdown, validation_markdown(rep, !s->no_rows));
              if (!s->html.empty())
                write_output_file(s->html, validation_html(rep));
              report_out() << (s->json ? validation_json(rep).dump(2) + "\n" : validation_summary_text(rep));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
