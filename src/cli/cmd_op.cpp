// perfcast op: one kernel (GEMM, convolution, elementwise, softmax, LayerNorm, attention) on one GPU, with what
// runs and what bounds it; or a CSV of them (--configs).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "analysis/cpu_single_op.h"
#include "analysis/op_batch.h"
#include "analysis/predict.h"
#include "analysis/single_op.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/output_file.h"
#include "core/data_files.h"
#include "core/error.h"
#include "report/chart_page.h"
#include "report/prediction_report.h"

namespace perfcast::cli {

namespace {

std::string op_text(const OpSpec& s, const OpContext& c, const OpPrediction& p) {
  const KernelCost& k = p.cost;
  std::string algo(k.algorithm);
  if (k.tile_m > 0) algo += fmt::format(", threadblock tile {}x{}", k.tile_m, k.tile_n);
  if (k.split_k > 1) algo += fmt::format(", split-K {}", k.split_k);
  if (s.op == "conv2d" || s.op == "conv3d") algo += c.conv_autotune ? " (conv-algo autotune: the fastest by timing)" : " (conv-algo heuristic: cuDNN's choice)";
  std::string out = fmt::format("{} {} on {} ({}), {}, {}\n", s.op, s.direction, c.device.id, c.device.name, c.plan.name,
                                c.runtime.id);
  out += fmt::format("  time            {:>10.2f} us   ({} kernel launch{})\n", k.time_us, k.launches,
                     k.launches == 1 ? "" : "es");
  out += fmt::format("  bound by        {:>10}      (the longest of compute, DRAM and the launch floor)\n", bound_name(k.bound));
  out += fmt::format("  algorithm       {}\n", algo);
  out += fmt::format("  work            {:>10.3f} GFLOP, {:.3f} MB moved\n", k.flops * 1e-9, k.bytes * 1e-6);
  out += fmt::format("  achieved        {:>10.2f} TFLOPS, {:.0f} GB/s\n", p.tflops(), p.gbps());
  out += fmt::format("  compute time    {:>10.2f} us   at shape efficiency {:.2f} and {:.0f}% of the boost clock\n",
                     k.compute_us, k.shape_efficiency, k.clock_factor * 100);
  out += fmt::format("  memory time     {:>10.2f} us   (bytes / achievable bandwidth + ramp)\n", k.memory_us);
  // How the precision runs on this GPU (FP16 storage with FP32 math on sm_61, TF32 by default, ...), as predict says:
  // without it an fp16 op on a GP102 card reads as the FP16 pipe, 1/64 of FP32, or as twice FP32.
  if (!c.plan.note.empty()) out += fmt::format("  note            {}\n", c.plan.note);
  return out;
}

nlohmann::json op_json(const OpSpec& s, const OpContext& c, const OpPrediction& p) {
  const KernelCost& k = p.cost;
  return {{"gpu", c.device.id},
          {"op", s.op},
          {"direction", s.direction},
          {"precision", c.plan.name},
          {"precision_note", c.plan.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.plan.note)},
          {"runtime", c.runtime.id},
          {"predicted_us", k.time_us},
          {"bound", bound_name(k.bound)},
          {"algorithm", std::string(k.algorithm)},
          {"conv_algo", std::string(conv_algo_name(c.conv_autotune))},
          {"tile", k.tile_m > 0 ? nlohmann::json::array({k.tile_m, k.tile_n}) : nlohmann::json()},
          {"split_k", k.split_k},
          {"launches", static_cast<std::int64_t>(k.launches)},
          {"flops", rounded_count_json(k.flops)},
          {"bytes", rounded_count_json(k.bytes)},
          {"tflops", p.tflops()},
          {"gbps", p.gbps()},
          {"compute_us", k.compute_us},
          {"memory_us", k.memory_us},
          {"shape_efficiency", k.shape_efficiency},
          {"clock_factor", k.clock_factor},
          // The ceilings of its roofline (the HTML page's chart): the datasheet peak of the pipe it ran on.
          {"roofline", {{"pipe", pipe_name(k.pipe)}, {"peak_tflops", c.device.peak(k.pipe)}, {"dram_gbps", c.device.mem_bw_gbps}}}};
}

// The same report for an op on a CPU: its cores and runtime in place of the GPU's launches and clock.
std::string cpu_op_text(const OpSpec& s, const CpuOpPrediction& p) {
  const KernelCost& k = p.cost;
  const double flops_per_us = p.time_us() > 0 ? k.flops / p.time_us() : 0;
  std::string out = fmt::format("{} {} on {} ({}), {} of its cores, {}, {} (CPU profile)\n", s.op, s.direction,
                                p.cpu.id, p.cpu.name, p.cpu.total_cores(), p.plan.name, p.runtime);
  out += fmt::format("  time            {:>10.2f} us   (the kernels, then the OpenMP fork and join of {} call{})\n", p.time_us(),
                     k.launches, k.launches == 1 ? "" : "s");
  out += fmt::format("  bound by        {:>10}      (the longer of compute and memory)\n", bound_name(k.bound));
  out += fmt::format("  algorithm       {}\n", std::string(k.algorithm));
  out += fmt::format("  work            {:>10.3f} GFLOP, {:.3f} MB moved\n", k.flops * 1e-9, k.bytes * 1e-6);
  out += fmt::format("  achieved        {:>10.2f} GFLOPS, {:.0f} GB/s\n", flops_per_us * 1e-3,
                     p.time_us() > 0 ? k.bytes / p.time_us() * 1e-3 : 0);
  out += fmt::format("  compute time    {:>10.2f} us   at shape efficiency {:.2f} ({})\n", k.compute_us,
                     k.shape_efficiency, p.plan.note);
  out += fmt::format("  memory time     {:>10.2f} us   (bytes / the caches' or DRAM's rate)\n", k.memory_us);
  out += fmt::format("  kernels         {:>10.2f} us   (compute or memory, with what runs serial to them: packing, reorders)\n",
                     k.time_us);
  out += fmt::format("  fork and join   {:>10.2f} us   ({} thread{} per call)\n", p.fork_join_us, p.cpu.total_cores(),
                     p.cpu.total_cores() == 1 ? "" : "s");
  return out;
}

nlohmann::json cpu_op_json(const OpSpec& s, const CpuOpPrediction& p) {
  const KernelCost& k = p.cost;
  return {{"device", p.cpu.id},
          {"op", s.op},
          {"direction", s.direction},
          {"precision", p.plan.name},
          {"runtime", p.runtime},
          {"cores", p.cpu.total_cores()},
          {"predicted_us", p.time_us()},
          {"kernel_us", k.time_us},
          {"fork_join_us", p.fork_join_us},
          {"bound", bound_name(k.bound)},
          {"algorithm", std::string(k.algorithm)},
          {"launches", static_cast<std::int64_t>(k.launches)},
          {"flops", rounded_count_json(k.flops)},
          {"bytes", rounded_count_json(k.bytes)},
          {"compute_us", k.compute_us},
          {"memory_us", k.memory_us},
          {"shape_efficiency", k.shape_efficiency},
          {"roofline", {{"peak_tflops", p.cpu.peak_tflops(p.plan.name == "int8" ? "int8" : p.plan.name == "fp32" ? "fp32" : "bf16")},
                        {"dram_gbps", p.cpu.mem_bw_gbps()}}}};
}

// The shape flags each op reads (OpSpec fields single_op.cpp's build() uses); a shape flag given for another op
// would be ignored, so it is refused.
const std::vector<std::pair<std::string, std::vector<std::string>>>& shape_flags_of() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> flags{
      {"matmul", {"--m", "--n", "--k", "--batch-count"}},
      {"linear", {"--m", "--n", "--k", "--batch-count"}},
      {"conv2d",
       {"--conv-n", "--conv-c", "--conv-h", "--conv-w", "--conv-k", "--conv-r", "--conv-s", "--pad-h", "--pad-w",
        "--stride-h", "--stride-w"}},
      {"conv3d",
       {"--conv-n", "--conv-c", "--conv-d", "--conv-h", "--conv-w", "--conv-k", "--conv-t", "--conv-r", "--conv-s",
        "--pad-d", "--pad-h", "--pad-w", "--stride-d", "--stride-h", "--stride-w"}},
      {"elementwise", {"--rows", "--cols", "--function"}},
      {"softmax", {"--rows", "--cols"}},
      {"layernorm", {"--rows", "--cols"}},
      {"attention", {"--m", "--n", "--k", "--batch-count", "--heads", "--causal"}}};
  return flags;
}

}  // namespace

Command op_command() {
  return {"op", "predict one kernel (GEMM, convolution, elementwise, softmax, LayerNorm, attention) and say what bounds it",
          [](CLI::App& app) {
            struct State {
              OpSpec spec;
              std::string gpu, precision = "fp32", runtime = "pytorch", configs, out, conv_algo;
              int cores = 0;
              double power_limit = 0;
              bool json = false;
              std::string html;
              std::vector<std::pair<std::string, const CLI::Option*>> shape_options;  // flag -> its option
            };
            auto s = std::make_shared<State>();
            OpSpec& o = s->spec;
            app.add_option("--gpu", s->gpu, "GPU id from `perfcast gpus`, or a GPU .toml file");
            app.add_option("--device", s->gpu, "GPU id, or a CPU id from `perfcast cpus` (costed by the CPU path on --cores)");
            app.add_option("--cores", s->cores, "CPU devices: the physical cores the op runs on, one thread each (default: every core)")
                ->transform(whole_number_check("--cores", 1, std::numeric_limits<int>::max()));
            app.add_option("--op", o.op, "matmul | linear | conv2d | conv3d | elementwise | softmax | layernorm | attention")
                ->capture_default_str();
            app.add_option("--precision", s->precision, "fp32 tf32 fp16 bf16 amp int8 fp8")->capture_default_str();
            app.add_option("--runtime", s->runtime, "runtime profile (library behaviour)")->capture_default_str();
            app.add_option("--conv-algo", s->conv_algo,
                           "autotune | heuristic: cuDNN convolution algorithm by timing (cudnn.benchmark = True) or by "
                           "cuDNN's heuristic (default: the runtime's documented default)");
            app.add_option("--direction", o.direction, "fwd | bwd | bwd_data | bwd_filter")->capture_default_str();
            // The shape flags are digits only: CLI11 would read "010" as 8 and "0x10" as 16 (cli/number_flags.h).
            // Their range is the library's (analysis/single_op.cpp): a dimension from 1, a padding from 0, each
            // below 2^31; the same rule and words whether the flag or the library refuses it.
            const auto shape = [&app](const char* flag, std::int64_t& value, const char* help) {
              const std::int64_t least = std::string_view(flag).starts_with("--pad-") ? 0 : 1;
              return app.add_option(flag, value, help)
                  ->transform(whole_number_check(flag, least, std::numeric_limits<std::int32_t>::max()));
            };
            shape("--m", o.m, "matmul rows of A and C (attention: query length)");
            shape("--n", o.n, "matmul columns of B and C (attention: key length)");
            shape("--k", o.k, "matmul depth (attention: head dimension)");
            shape("--batch-count", o.batch_count, "independent products (bmm) or attention batch")->capture_default_str();
            shape("--conv-n", o.conv_n, "conv2d/conv3d batch");
            shape("--conv-c", o.conv_c, "conv2d/conv3d input channels");
            shape("--conv-d", o.conv_d, "conv3d input depth");
            shape("--conv-h", o.conv_h, "conv2d/conv3d input height");
            shape("--conv-w", o.conv_w, "conv2d/conv3d input width");
            shape("--conv-k", o.conv_k, "conv2d/conv3d output channels");
            shape("--conv-t", o.conv_t, "conv3d filter depth");
            shape("--conv-r", o.conv_r, "conv2d/conv3d filter height");
            shape("--conv-s", o.conv_s, "conv2d/conv3d filter width");
            shape("--pad-d", o.pad_d, "conv3d depth padding")->capture_default_str();
            shape("--pad-h", o.pad_h, "conv2d/conv3d padding")->capture_default_str();
            shape("--pad-w", o.pad_w, "conv2d/conv3d padding")->capture_default_str();
            shape("--stride-d", o.stride_d, "conv3d depth stride")->capture_default_str();
            shape("--stride-h", o.stride_h, "conv2d/conv3d stride")->capture_default_str();
            shape("--stride-w", o.stride_w, "conv2d/conv3d stride")->capture_default_str();
            shape("--rows", o.rows, "elementwise/softmax/layernorm rows");
            shape("--cols", o.cols, "elementwise/softmax/layernorm columns (the reduced axis)");
            app.add_option("--function", o.function, "elementwise: add mul div pow (two tensors), relu gelu tanh scale")
                ->capture_default_str();
            shape("--heads", o.heads, "attention heads")->capture_default_str();
            app.add_flag("--causal", o.causal, "attention with a causal mask");
            app.add_option("--power-limit", s->power_limit, "board power limit in W (default: the board's)")
                ->transform(number_check("--power-limit"));
            app.add_option("--configs", s->configs, "CSV of ops, one prediction per row (columns: docs/kernel-model.md)");
            app.add_option("--out", s->out, "with --configs: write the CSV here instead of standard output");
            app.add_flag("--json", s->json, "machine-readable output");
            app.add_option("--html", s->html, "also write the result as a self-contained HTML page (its roofline) to this file");
            for (const auto& entry : shape_flags_of())
              for (const auto& flag : entry.second)
                if (std::none_of(s->shape_options.begin(), s->shape_options.end(),
                                 [&](const auto& e) { return e.first == flag; }))
                  s->shape_options.emplace_back(flag, app.get_option(flag));
            return std::function<int()>([s, &app] {
              // A shape flag of another op would be ignored (--conv-n on a matmul): name it and the op's own flags.
              if (s->configs.empty()) {
                const auto& table = shape_flags_of();
                const auto own =
                    std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.first == s->spec.op; });
                if (own != table.end()) {
                  for (const auto& [flag, option] : s->shape_options) {
                    if (option->count() == 0) continue;
                    if (std::find(own->second.begin(), own->second.end(), flag) != own->second.end()) continue;
                    std::string list;
                    for (const auto& f : own->second) list += (list.empty() ? "" : " ") + f;
                    throw InputError(flag + " does not apply to --op " + s->spec.op + " (its flags: " + list + ")");
                  }
                }
              }
              if (!s->configs.empty()) {
                if (!s->html.empty()) throw InputError("--html applies to one op, not --configs");
                if (s->json) throw InputError("--configs writes a CSV (--out); --json applies to one op");
                refuse_flags_beside_configs(app, "docs/kernel-model.md");
                if (!s->out.empty()) check_output_path(s->out);
                const OpBatchResult r = predict_op_configs(read_text_file(s->configs));
                if (s->out.empty()) report_out() << r.csv;
                else write_output_file(s->out, r.csv);
                std::cerr << fmt::format("{} ok, {} failed\n", r.ok, r.failed);
                return r.failed > 0 ? 1 : 0;
              }
              if (!s->out.empty()) throw InputError("--out applies with --configs");
              if (!s->html.empty()) check_output_path(s->html);
              if (s->gpu.empty()) throw InputError("op: --gpu is required (or --configs FILE)");
              const bool on_cpu = is_cpu_device(s->gpu);
              if (!on_cpu && app.get_option("--cores")->count() > 0)
                throw InputError("--cores applies to a CPU device ('" + s->gpu + "' is not one: perfcast cpus)");
              if (on_cpu) {
                for (const char* flag : {"--html", "--power-limit", "--conv-algo"})
                  if (app.get_option(flag)->count() > 0)
                    throw InputError(std::string(flag) + " does not apply to an op on a CPU ('" + s->gpu + "')");
                const CpuOpPrediction p = predict_cpu_op(s->spec, s->gpu, s->runtime, s->precision, s->cores);
                report_out() << (s->json ? cpu_op_json(s->spec, p).dump(2) + "\n" : cpu_op_text(s->spec, p));
                return 0;
              }
              check_conv_algo(s->conv_algo);
              OpContext ctx = op_context(s->gpu, s->runtime, s->precision, s->power_limit, s->spec.direction != "fwd");
              ctx.conv_autotune = conv_autotune_for(s->conv_algo, ctx.runtime);
              const OpPrediction p = predict_op(s->spec, ctx);
              const nlohmann::json j = op_json(s->spec, ctx, p);
              const std::string text = op_text(s->spec, ctx, p);
              if (!s->html.empty())
                write_output_file(s->html, render_chart_page(ChartPage::kOp, j, Lang::kEn, "perfcast op: " + text.substr(0, text.find('\n')),
                                                             preformatted_html(text)));
              report_out() << (s->json ? j.dump(2) + "\n" : text);
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
