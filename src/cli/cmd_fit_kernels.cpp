// perfcast fit-kernels: fits the kernel model to measured kernel latencies and writes data/kernel_fit.toml.
#include <iostream>
#include <limits>

#include "analysis/kernel_fit.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/output_file.h"
#include "core/error.h"

namespace perfcast::cli {

Command fit_kernels_command() {
  return {"fit-kernels", "fit the kernel model to measured kernels (calibration) and report leave-one-GPU-out error",
          [](CLI::App& app) {
            struct State {
              KernelFitOptions options;
              std::string out, markdown;
              std::vector<std::string> host_launch_ops;
              CLI::Option* host_launch = nullptr;
            };
            auto s = std::make_shared<State>();
            app.add_option("--kernels", s->options.kernels_dir, "folder of measured kernels (shared/kernels/neusight_train)")
                ->required();
            app.add_option("--out", s->out, "write the fitted values here (data/kernel_fit.toml)");
            app.add_option("--markdown", s->markdown, "write the error tables here (markdown)");
            app.add_option("--rows-per-group", s->options.rows_per_group, "subsample per GPU and op class (default: the setup file's)")
                ->transform(whole_number_check("--rows-per-group"));
            app.add_option("--max-evaluations", s->options.max_evaluations, "optimizer budget per fit (default: the setup file's)")
                ->transform(whole_number_check("--max-evaluations", 0, std::numeric_limits<int>::max()));
            app.add_flag("!--no-leave-one-out", s->options.leave_one_out, "skip the leave-one-GPU-out fits");
            app.add_option("--leave-out", s->options.leave_out_archs,
                           "hold out only these architectures in the leave-one-GPU-out fits (e.g. sm_80; default: each measured one)");
            app.add_flag("--fit-conv", s->options.fit_conv,
                         "then fit the per-algorithm conv efficiencies and floor on the conv rows, the other values held (reported, not the default)");
            app.add_flag("--soak", s->options.soak,
                         "also fit the harness's soak of long back-to-back calls per board (reported, not the default)");
            s->host_launch = app.add_option(
                "--host-launch", s->host_launch_ops,
                "op classes whose kernel starts after the host's launch (host speed x a fitted host_launch_us) in place of the "
                "shared launch_us; none given: every class takes launch_us (default: data/kernel_fit_setup.toml [harness] host_launch_ops)")
                ->expected(0, CLI::detail::expected_max_vector_size);
            app.add_option("--start-host-launch", s->options.start_host_launch_us,
                           "start the fitted host_launch_us here, in us (default: data/kernel_fit_setup.toml [harness] start_host_launch_us)")
                ->transform(number_check("--start-host-launch", {0, false, std::numeric_limits<double>::max(), "a finite number from 0"}));
            app.add_option("--residuals", s->options.residuals_csv,
                           "write every measured row's in-sample prediction here (CSV: shape, kernel names, tile, clock)");
            return std::function<int()>([s] {
              if (s->host_launch->count() > 0) {  // given without values (CLI11 passes one empty string): no class
                std::vector<std::string> ops;
                for (const std::string& op : s->host_launch_ops)
                  if (!op.empty()) ops.push_back(op);
                s->options.host_launch_ops = ops;
              }
              for (const std::string* path : {&s->out, &s->markdown, &s->options.residuals_csv})
                if (!path->empty()) check_output_path(*path);
              const KernelFit fit = fit_kernels(s->options);
              const std::string md = kernel_fit_markdown(fit);
              if (!s->out.empty()) write_output_file(s->out, kernel_fit_toml(fit));
              if (!s->markdown.empty()) write_output_file(s->markdown, md);
              if (!s->options.residuals_csv.empty()) write_output_file(s->options.residuals_csv, fit.residuals_csv);
              std::cout << md;
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
