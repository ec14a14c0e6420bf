// perfcast predict: one prediction (text or JSON), or one per row of a configurations CSV.
#include <iostream>
#include <sstream>

#include "analysis/batch_predict.h"
#include "cli/command.h"
#include "core/output_file.h"
#include "import/config_csv.h"
#include "report/prediction_report.h"
#include "report/validation_report.h"

namespace perfcast::cli {

Command predict_command() {
  return {"predict", "predict step time, throughput, memory and bottlenecks", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              bool json = false;
              std::string configs, out;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags);
            app.add_flag("--json", s->json, "machine-readable output");
            app.add_option("--configs", s->configs, "CSV of configurations (columns of published.csv), one prediction per row");
            app.add_option("--out", s->out, "output CSV for --configs (default: standard output)");
            return std::function<int()>([s] {
              if (!s->configs.empty()) {
                if (!s->out.empty()) check_output_path(s->out);
                const auto rows = read_config_csv(s->configs, false);
                std::ostringstream csv;
                write_predictions_csv(predict_rows(rows), csv);
                if (s->out.empty()) std::cout << csv.str();
                else write_output_file(s->out, csv.str());
                return 0;
              }
              const Prediction p = predict(s->flags.to_request());
              std::cout << (s->json ? prediction_json(p).dump(2) + "\n" : prediction_text(p));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
