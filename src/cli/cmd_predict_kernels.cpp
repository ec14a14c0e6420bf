// perfcast predict-kernels: predicts measured kernels of a GPU outside the fit with the shipped kernel model
// (data/kernel_fit.toml) and reports the error per op class, as fit-kernels reports leave-one-GPU-out.
#include <iostream>

#include "analysis/kernel_fit.h"
#include "cli/command.h"
#include "core/output_file.h"

namespace perfcast::cli {

Command predict_kernels_command() {
  return {"predict-kernels",
          "predict a folder of measured kernels with the fitted kernel model (out of sample) and report the error",
          [](CLI::App& app) {
            struct State {
              std::string kernels, markdown, residuals;
            };
            auto s = std::make_shared<State>();
            app.add_option("--kernels", s->kernels, "folder of measured kernels in NeuSight's layout (data/measured_kernels/h200)")
                ->required();
            app.add_option("--markdown", s->markdown, "write the error tables here (markdown)");
            app.add_option("--residuals", s->residuals,
                           "write every row's prediction here (CSV: shape, measured, predicted, kernel time, tile, kernel)");
            return std::function<int()>([s] {
              for (const std::string* path : {&s->markdown, &s->residuals})
                if (!path->empty()) check_output_path(*path);
              const KernelPrediction pred = predict_measured_kernels(s->kernels);
              const std::string md = kernel_prediction_markdown(pred);
              if (!s->markdown.empty()) write_output_file(s->markdown, md);
              if (!s->residuals.empty()) write_output_file(s->residuals, pred.residuals_csv);
              std::cout << md;
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
