// perfcast trace: what a PyTorch profiler trace measured, and perfcast's prediction of the same operators.
#include <iostream>

#include "analysis/trace_analysis.h"
#include "cli/command.h"
#include "core/error.h"
#include "device/catalog.h"
#include "report/trace_report.h"

namespace perfcast::cli {

Command trace_command() {
  return {"trace", "read a PyTorch profiler trace: measured step, bound, kernel classes, and the prediction beside it",
          [](CLI::App& app) {
            struct State {
              std::string file, gpu, runtime = "pytorch", runtime_version, html;
              int top = 10;
              bool json = false, no_predict = false;
            };
            auto s = std::make_shared<State>();
            app.add_option("file", s->file, "trace .json or .json.gz (torch.profiler / Kineto Chrome trace)")->required();
            app.add_option("--gpu", s->gpu, "GPU to predict the trace's operators on (default: the trace's own, when the catalog has it)");
            app.add_option("--runtime", s->runtime, "runtime profile for the prediction")->capture_default_str();
            app.add_option("--runtime-version", s->runtime_version, "framework version for the prediction");
            app.add_option("--top", s->top, "kernels to list")->capture_default_str();
            app.add_flag("--no-predict", s->no_predict, "only what the trace measured");
            app.add_flag("--json", s->json, "machine-readable output");
            app.add_option("--html", s->html, "also write the report as a self-contained HTML page to this file");
            return std::function<int()>([s] {
              if (s->top < 0) throw InputError("--top must be 0 or more, got " + std::to_string(s->top));
              const KinetoTrace t = read_kineto_trace(s->file);
              const TraceSummary sum = summarize_trace(t, s->top);
              std::optional<TraceComparison> cmp;
              std::string why;
              const std::string gpu = s->gpu.empty() ? sum.gpu_id : s->gpu;
              if (s->no_predict) {
                why = "";
              } else if (!sum.has_shapes) {
                why = "the trace has no input shapes (record it with record_shapes=True)";
              } else if (gpu.empty()) {
                why = sum.device_name.empty() ? "the trace names no device (no deviceProperties); name a GPU with --gpu"
                                              : "its device '" + sum.device_name + "' is not in the catalog; name one with --gpu";
              } else {
                // A bad --gpu or --runtime is the user's error (exit 2); a trace whose operators cannot become a
                // model still gets its measured report.
                find_gpu(gpu);
                try {
                  cmp = compare_trace(t, sum, gpu, s->runtime, s->runtime_version);
                } catch (const UnsupportedError& e) {
                  why = e.what();
                } catch (const InputError& e) {
                  const std::string m = e.what();
                  if (m.find("trace '") == std::string::npos) throw;
                  why = m;
                }
              }
              if (!s->html.empty()) write_file_atomically(s->html, trace_html(sum, cmp, why));
              std::cout << (s->json ? trace_json(sum, cmp, why).dump(2) + "\n" : trace_text(sum, cmp, why));
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
