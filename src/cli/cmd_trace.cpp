// perfcast trace: what a PyTorch profiler trace measured, and perfcast's prediction of the same operators.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <iostream>

#include "analysis/trace_analysis.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/error.h"
#include "core/output_file.h"
#include "device/catalog.h"
#include "runtime/runtime_profile.h"
#include "report/trace_report.h"

namespace perfcast::cli {

Command trace_command() {
  return {"trace", "read a PyTorch profiler trace: measured step, bound, kernel classes, and the prediction beside it",
          [](CLI::App& app) {
            struct State {
              std::string file, gpu, runtime = "pytorch", runtime_version, html, write_gpu;
              int top = 10;
              bool json = false, no_predict = false;
            };
            auto s = std::make_shared<State>();
            app.add_option("file", s->file,
                           "trace .json or .json.gz (torch.profiler / Kineto Chrome trace), or a folder of one trace per rank")
                ->required();
            app.add_option("--gpu", s->gpu, "GPU to predict the trace's operators on (default: the trace's own, when the catalog has it)");
            app.add_option("--device", s->gpu, "the same as --gpu (a trace's GPU kernels are predicted on GPUs only)");
            app.add_option("--runtime", s->runtime, "runtime profile for the prediction")->capture_default_str();
            app.add_option("--runtime-version", s->runtime_version, "framework version for the prediction");
            // A count past the kernels lists them all; the most is the int it is kept in.
            app.add_option("--top", s->top, "kernels to list")
                ->capture_default_str()
                ->transform(whole_number_check("--top", 0, std::numeric_limits<int>::max()));
            app.add_flag("--no-predict", s->no_predict, "only what the trace measured");
            app.add_flag("--json", s->json, "machine-readable output");
            app.add_option("--html", s->html, "also write the report as a self-contained HTML page to this file");
            app.add_option("--write-gpu", s->write_gpu,
                           "write a GPU file for --gpu: the catalog GPU with the GEMM and DRAM efficiencies this trace "
                           "measured (its [measured] table)");
            return std::function<int()>([s] {
              std::error_code ec;
              if (std::filesystem::is_directory(s->file, ec)) {
                // One trace per rank of a distributed run.
                if (!s->write_gpu.empty() || !s->html.empty())
                  throw InputError("--write-gpu and --html apply to one trace, not a folder");
                const TraceFolder f = summarize_trace_folder(s->file);
                report_out() << (s->json ? trace_folder_json(f).dump(2) + "\n" : trace_folder_text(f));
                return 0;
              }
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
                // model, or cannot run on that GPU, still gets its measured report.
                find_gpu(gpu);
                find_runtime(s->runtime);
                try {
                  cmp = compare_trace(t, sum, gpu, s->runtime, s->runtime_version);
                } catch (const InputError& e) {
                  why = e.what();
                }
              }
              // Everything is rendered before anything is written, and every output path checked first, so that an
              // error leaves no file behind.
              for (const std::string* out : {&s->write_gpu, &s->html})
                if (!out->empty()) check_output_path(*out);
              std::string wrote, gpu_file;
              if (!s->write_gpu.empty()) {
                if (!cmp) throw InputError("--write-gpu needs a prediction beside the trace: " + (why.empty() ? "--no-predict was given" : why));
                // Measurements of one card go into that card's file only: same chip generation, SM count and
                // memory (within 10%) as the trace's device, whether --gpu names a catalog id or a file.
                const DeviceSpec& target = cmp->prediction.device;
                for (const auto& d : t.devices)
                  if (d.id == sum.device && !same_board(d, target))
                    throw InputError("--write-gpu: the trace ran on '" + d.name + "', not on " + target.id +
                                     "; its measurements belong to that card");
                const TraceCalibration cal = calibrate_from_trace(*cmp);
                gpu_file = measured_gpu_file(cal, cmp->prediction.device, s->file, sum.device_name);
                wrote = "wrote " + s->write_gpu + ":";
                if (cal.gemm_efficiency_tensor) wrote += fmt::format(" gemm_efficiency_tensor {:.3f}", *cal.gemm_efficiency_tensor);
                if (cal.gemm_efficiency_cuda) wrote += fmt::format(" gemm_efficiency_cuda {:.3f}", *cal.gemm_efficiency_cuda);
                if (cal.dram_efficiency) wrote += fmt::format(" dram_efficiency {:.3f}", *cal.dram_efficiency);
                wrote += fmt::format(" (from {} GEMM and {} elementwise operators; use it with --gpu {})\n", cal.gemm_ops,
                                     cal.streaming_ops, s->write_gpu);
                for (const auto& r : cal.rejected) wrote += "not written: " + r + "\n";
              }
              const std::string page = s->html.empty() ? "" : trace_html(sum, cmp, why);
              if (!gpu_file.empty()) write_output_file(s->write_gpu, gpu_file);
              if (!s->html.empty()) write_output_file(s->html, page);
              report_out() << (s->json ? trace_json(sum, cmp, why).dump(2) + "\n" : trace_text(sum, cmp, why));
              if (!wrote.empty()) (s->json ? std::cerr : report_out()) << wrote;
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
