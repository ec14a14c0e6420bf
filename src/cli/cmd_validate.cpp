// perfcast validate: predict every row of a measurements CSV and report the errors.
#include <iostream>

#include "core/error.h"

#include "analysis/serving_validation.h"
#include "analysis/validate.h"
#include "cli/command.h"
#include "core/output_file.h"
#include "import/serving_csv.h"
#include "report/serving_report.h"
#include "report/validation_report.h"

namespace perfcast::cli {

Command validate_command() {
  return {"validate", "predict every row of a measurements CSV and report the errors", [](CLI::App& app) {
            struct State {
              std::string file, markdown, html;
              bool json = false;
            };
            auto s = std::make_shared<State>();
            app.add_option("file", s->file, "CSV with measured values (columns of published.csv)")->required();
            app.add_option("--markdown", s->markdown, "write the markdown report here");
            app.add_flag("--json", s->json, "machine-readable output");
            app.add_option("--html", s->html,
                           "also write the report as a self-contained HTML page (measured against predicted) to this file");
            return std::function<int()>([s] {
              if (!s->markdown.empty()) check_output_path(s->markdown);
              if (!s->html.empty()) check_output_path(s->html);
              if (is_serving_measurements(s->file)) {
                // Serving benchmarks (data/validation/llm_serving.csv): --mode serve predictions per row.
                if (s->json || !s->html.empty())
                  throw InputError("--json and --html are not available for serving measurement files; use --markdown");
                const std::vector<ServingCheck> checks = check_serving_file(s->file);
                if (!s->markdown.empty()) write_output_file(s->markdown, serving_validation_markdown(checks, s->file));
                std::cout << serving_validation_summary(checks);
                return 0;
              }
              const ValidationReport rep = validate_file(s->file);
              if (!s->markdown.empty()) write_output_file(s->markdown, validation_markdown(rep));
              if (!s->html.empty())
                write_output_file(s->html, validation_html(rep));
              report_out() << (s->json ? validation_json(rep).dump(2) + "\n" : validation_summary_text(rep));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
