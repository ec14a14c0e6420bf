// perfcast fit-intervals: fits the prediction intervals to the residuals on the calibration files and writes
// data/intervals.toml.
#include <iostream>

#include "analysis/intervals.h"
#include "cli/command.h"
#include "core/data_files.h"
#include "core/output_file.h"

namespace perfcast::cli {

Command fit_intervals_command() {
  return {"fit-intervals",
          "fit prediction intervals to the residuals on the calibration files and report their coverage",
          [](CLI::App& app) {
            struct State {
              std::string dir, out, markdown;
            };
            auto s = std::make_shared<State>();
            app.add_option("--validation", s->dir, "folder of measurement files (default: the data folder's validation/)");
            app.add_option("--out", s->out, "write the table here (data/intervals.toml)");
            app.add_option("--markdown", s->markdown, "write the coverage tables here (markdown)");
            return std::function<int()>([s] {
              for (const std::string* path : {&s->out, &s->markdown})
                if (!path->empty()) check_output_path(*path);
              const std::string dir = s->dir.empty() ? (data_dir() / "validation").string() : s->dir;
              const IntervalFit fit = fit_intervals(dir, interval_setup());
              const std::string md = interval_fit_markdown(fit);
              if (!s->out.empty()) write_output_file(s->out, interval_fit_toml(fit));
              if (!s->markdown.empty()) write_output_file(s->markdown, md);
              std::cout << md;
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
