// perfcast fit-tensor-gemm: fits cuBLAS's tensor-core grid rule of one architecture to published HGEMM timings.
#include "analysis/tensor_gemm_fit.h"
#include "cli/command.h"
#include "core/output_file.h"

namespace perfcast::cli {

Command fit_tensor_gemm_command() {
  return {"fit-tensor-gemm",
          "fit cuBLAS's tensor-core grid rule (CTAs per SM, split-K) to published HGEMM timings (calibration)",
          [](CLI::App& app) {
            struct State {
              std::string kernels, markdown, out;
            };
            auto s = std::make_shared<State>();
            app.add_option("--kernels", s->kernels, "published timings CSV (data/published_kernels/tensor_gemm.csv)")
                ->required();
            app.add_option("--out", s->out, "write the fitted rule here (TOML: data/tensor_gemm_fit.toml)");
            app.add_option("--markdown", s->markdown, "also write the report here (markdown)");
            return std::function<int()>([s] {
              for (const std::string* path : {&s->out, &s->markdown})
                if (!path->empty()) check_output_path(*path);
              const TensorGemmFit fit = fit_tensor_gemm(read_published_gemms(s->kernels));
              const std::string md = tensor_gemm_fit_markdown(fit);
              if (!s->markdown.empty()) write_output_file(s->markdown, md);
              if (!s->out.empty()) write_output_file(s->out, tensor_gemm_fit_toml(fit, s->kernels));
              report_out() << md;
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
