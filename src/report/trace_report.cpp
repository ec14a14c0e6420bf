#include "report/trace_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/chart_page.h"
#include "report/html_page.h"
#include "report/prediction_report.h"

namespace perfcast {

namespace {

// A per-step count: whole when it is, else with one decimal (a kernel in every other step is 0.5).
std::string count(double v) {
  return std::fabs(v - std::round(v)) < 1e-9 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
}

// A note when the prediction beside the trace is for another GPU than the traced one ("" when it is the same).
std::string other_gpu_note(const TraceSummary& s, const Prediction& p) {
  const bool same = p.device.id == s.gpu_id ||
                    std::find(s.gpu_alternatives.begin(), s.gpu_alternatives.end(), p.device.id) != s.gpu_alternatives.end();
  if (same) return "";
  const std::string traced = !s.gpu_id.empty() ? s.gpu_id : (!s.device_name.empty() ? "'" + s.device_name + "'" : "");
  if (traced.empty()) return "";  // no device recorded: nothing to compare with
  return "predicted on " + p.device.id + ", not on the traced " + traced +
         ": a ratio below 1 is a predicted speedup, not an error";
}

std::string alternatives(const TraceSummary& s) {
  if (s.gpu_alternatives.empty()) return "";
  std::string o = " (as well matched: ";
  for (std::size_t i = 0; i < s.gpu_alternatives.size(); ++i) o += (i ? ", " : "") + s.gpu_alternatives[i];
  return o + "; pick with --gpu)";
}

}  // namespace

std::string trace_text(const TraceSummary& s, const std::optional<TraceComparison>& c, const std::string& why) {
  std::string o = fmt::format("perfcast trace: {}\n", s.path);
  o += fmt::format("  device        {}{}\n", s.device_name.empty() ? "(no deviceProperties)" : s.device_name,
                   s.gpu_id.empty() ? "" : " -> catalog " + s.gpu_id + alternatives(s));
  o += fmt::format("  steps         {}\n", s.steps > 0 ? std::to_string(s.steps) + (s.steps == 1 ? " profiler step" : " profiler steps") : "none marked: the whole trace as one step");
  o += fmt::format("  step time     {:.2f} ms   (GPU busy {:.2f} ms, idle {:.2f} ms = {:.0f}%)\n", s.step_ms, s.busy_ms,
                   s.idle_ms, s.step_ms > 0 ? 100 * s.idle_ms / s.step_ms : 0.0);
  o += fmt::format("  kernels       {} per step, {:.2f} ms of kernel time, median {:.1f} us, {:.0f} launch calls\n",
                   count(s.kernels), s.kernel_ms, s.median_kernel_us, s.launches);
  if (s.h2d_ms + s.d2h_ms + s.d2d_ms + s.memset_ms > 0)
    o += fmt::format("  copies        host->device {:.2f} ms ({:.1f} MB), device->host {:.2f} ms, device->device {:.2f} ms, memset {:.2f} ms\n",
                     s.h2d_ms, s.h2d_bytes / 1e6, s.d2h_ms, s.d2d_ms, s.memset_ms);
  o += fmt::format("  operators     {}{}, precision {}\n", s.has_backward ? "training (backward present)" : "forward only",
                   s.has_shapes ? ", input shapes recorded" : ", no input shapes",
                   s.precision.empty() ? "unknown" : s.precision);
  o += fmt::format("  tensor cores  {:.0f}% of GEMM/convolution/attention kernel time\n", 100 * s.tensor_core_share);
  o += fmt::format("  bound         {}: {}\n\n", s.bound, s.verdict);
  o += "  kernel time by class (per step)\n";
  o += fmt::format("  {:<16} {:>10} {:>8} {:>9} {:>12}\n", "class", "ms", "share", "kernels", "tensor core");
  for (const auto& k : s.classes)
    o += fmt::format("  {:<16} {:>10.3f} {:>7.1f}% {:>9} {:>11.0f}%\n", k.cls, k.ms,
                     s.kernel_ms > 0 ? 100 * k.ms / s.kernel_ms : 0.0, count(k.kernels), k.ms > 0 ? 100 * k.tensor_core_ms / k.ms : 0.0);
  o += "\n  top kernels (per step)\n";
  for (const auto& k : s.top)
    o += fmt::format("  {:>9.3f} ms {:>7}x  {:<12} {}{}\n", k.ms, count(k.calls), k.cls, k.name, k.tensor_cores ? "  [tensor cores]" : "");
  if (c) {
    const auto& p = c->prediction;
    o += fmt::format("\n  perfcast on the same operators: {} on {}, {} {} {}, batch {}\n", p.model_id, p.device.id,
                     p.runtime.id, mode_name(p.request.mode), p.request.precision, p.request.batch);
    for (const auto& n : p.notes) o += "    note: " + n + "\n";
    if (const std::string other = other_gpu_note(s, p); !other.empty()) o += "    note: " + other + "\n";
    o += fmt::format("  {:<16} {:>12} {:>12} {:>8}\n", "class", "measured ms", "predicted ms", "ratio");
    for (const auto& k : c->classes) {
      if (k.measured_ms < 1e-6 && k.predicted_ms < 1e-6) continue;
      o += fmt::format("  {:<16} {:>12.3f} {:>12.3f} {:>8}\n", k.cls, k.measured_ms, k.predicted_ms,
                       k.measured_ms > 0 && k.predicted_ms > 0 ? fmt::format("{:.2f}", k.predicted_ms / k.measured_ms) : "-");
    }
    o += fmt::format("  {:<16} {:>12.3f} {:>12.3f} {:>8.2f}\n", "step", c->measured_step_ms, c->predicted_step_ms,
                     c->measured_step_ms > 0 ? c->predicted_step_ms / c->measured_step_ms : 0.0);
    o += "  (classes the trace's importer could not cost are measured but not predicted; see the notes)\n";
    if (!c->ops.empty()) {
      o += fmt::format("\n  operators of the first step ({:.0f}% of its kernel time tied to a forward operator)\n",
                       100 * c->attributed_share);
      o += fmt::format("  {:<26} {:<30} {:>9} {:>9} {:>9} {:>9} {:>6}\n", "operator", "input shapes", "meas fwd",
                       "meas bwd", "pred fwd", "pred bwd", "ratio");
      std::size_t shown = 0;
      for (const auto& op : c->ops) {
        if (shown++ >= 15) break;
        const double m = op.measured_forward_ms + op.measured_backward_ms;
        const double p2 = op.predicted_forward_ms + op.predicted_backward_ms;
        o += fmt::format("  {:<26} {:<30} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>6}\n", op.name.substr(0, 26),
                         op.shapes.substr(0, 30), op.measured_forward_ms, op.measured_backward_ms,
                         op.predicted_forward_ms, op.predicted_backward_ms,
                         m > 0 && p2 > 0 ? fmt::format("{:.2f}", p2 / m) : "-");
      }
      o += "  (ms; ratio = predicted / measured, forward and backward together)\n";
    }
  } else if (!why.empty()) {
    o += "\n  no prediction beside it: " + why + "\n";
  }
  return o;
}

nlohmann::json trace_json(const TraceSummary& s, const std::optional<TraceComparison>& c, const std::string& why) {
  nlohmann::json j;
  j["path"] = s.path;
  j["device_name"] = s.device_name;
  j["gpu"] = s.gpu_id;
  j["gpu_alternatives"] = s.gpu_alternatives;
  j["steps"] = s.steps;
  j["step_ms"] = s.step_ms;
  j["busy_ms"] = s.busy_ms;
  j["idle_ms"] = s.idle_ms;
  j["kernel_ms"] = s.kernel_ms;
  j["kernels_per_step"] = count_json(s.kernels);
  j["launches_per_step"] = count_json(s.launches);
  j["median_kernel_us"] = s.median_kernel_us;
  j["copies_ms"] = {{"host_to_device", s.h2d_ms}, {"device_to_host", s.d2h_ms}, {"device_to_device", s.d2d_ms}, {"memset", s.memset_ms}};
  j["host_to_device_bytes"] = rounded_count_json(s.h2d_bytes);
  j["tensor_core_share"] = s.tensor_core_share;
  j["training"] = s.has_backward;
  j["input_shapes"] = s.has_shapes;
  j["precision"] = s.precision;
  j["bound"] = s.bound;
  j["verdict"] = s.verdict;
  j["classes"] = nlohmann::json::array();
  for (const auto& k : s.classes)
    j["classes"].push_back({{"class", k.cls}, {"ms", k.ms}, {"kernels", count_json(k.kernels)}, {"tensor_core_ms", k.tensor_core_ms}});
  j["timeline"] = nlohmann::json::array();
  for (const auto& seg : s.timeline)
    j["timeline"].push_back({{"lane", seg.lane}, {"phase", seg.kind}, {"start_ms", seg.start_ms}, {"end_ms", seg.end_ms}});
  j["top_kernels"] = nlohmann::json::array();
  for (const auto& k : s.top)
    j["top_kernels"].push_back({{"name", k.name}, {"class", k.cls}, {"ms", k.ms}, {"calls", count_json(k.calls)}, {"tensor_cores", k.tensor_cores}});
  if (c) {
    nlohmann::json p;
    p["gpu"] = c->prediction.device.id;
    p["runtime"] = c->prediction.runtime.id;
    p["mode"] = mode_string(c->prediction.request.mode);
    p["precision"] = c->prediction.request.precision;
    p["batch"] = c->prediction.request.batch;
    p["notes"] = c->prediction.notes;
    p["other_gpu_note"] = other_gpu_note(s, c->prediction);
    p["measured_step_ms"] = c->measured_step_ms;
    p["predicted_step_ms"] = c->predicted_step_ms;
    p["classes"] = nlohmann::json::array();
    for (const auto& k : c->classes)
      p["classes"].push_back({{"class", k.cls}, {"measured_ms", k.measured_ms}, {"predicted_ms", k.predicted_ms}});
    p["attributed_share"] = c->attributed_share;
    p["operators"] = nlohmann::json::array();
    for (const auto& op : c->ops)
      p["operators"].push_back({{"name", op.name},
                                {"shapes", op.shapes},
                                {"measured_forward_ms", op.measured_forward_ms},
                                {"measured_backward_ms", op.measured_backward_ms},
                                {"predicted_forward_ms", op.predicted_forward_ms},
                                {"predicted_backward_ms", op.predicted_backward_ms}});
    j["prediction"] = p;
  } else {
    j["prediction"] = nullptr;
    if (!why.empty()) j["no_prediction_because"] = why;
  }
  return j;
}

std::string trace_html(const TraceSummary& s, const std::optional<TraceComparison>& c, const std::string& why) {
  std::string h;
  h += "<p class=\"verdict\">" + html_escape(s.bound + ": " + s.verdict) + "</p>\n";
  h += fmt::format("<p>{}{}; {}; step {:.2f} ms, GPU busy {:.2f} ms, idle {:.2f} ms; {} kernels per step ({:.2f} ms), "
                   "median {:.1f} us; tensor cores {:.0f}% of GEMM/convolution/attention time; {}, precision {}</p>\n",
                   html_escape(s.device_name.empty() ? "no deviceProperties" : s.device_name),
                   html_escape(s.gpu_id.empty() ? "" : " (catalog " + s.gpu_id + alternatives(s) + ")"),
                   s.steps > 0 ? std::to_string(s.steps) + (s.steps == 1 ? " profiler step" : " profiler steps")
                               : "no step marks: the whole trace as one step",
                   s.step_ms, s.busy_ms, s.idle_ms, count(s.kernels), s.kernel_ms, s.median_kernel_us,
                   100 * s.tensor_core_share, s.has_backward ? "training" : "forward only",
                   html_escape(s.precision.empty() ? "unknown" : s.precision));
  h += "<h2>Kernel time by class, per step</h2>\n<div class=\"scroll\"><table>\n<tr><th>class</th><th>ms</th><th>share</th><th></th>"
       "<th>kernels</th><th>tensor cores</th></tr>\n";
  for (const auto& k : s.classes) {
    const double share = s.kernel_ms > 0 ? k.ms / s.kernel_ms : 0;
    h += fmt::format("<tr><td>{}</td><td class=\"n\">{:.3f}</td><td class=\"n\">{:.1f}%</td><td>{}</td>"
                     "<td class=\"n\">{}</td><td class=\"n\">{:.0f}%</td></tr>\n",
                     html_escape(k.cls), k.ms, 100 * share, html_bar(share, "#c0504d"), count(k.kernels),
                     k.ms > 0 ? 100 * k.tensor_core_ms / k.ms : 0.0);
  }
  h += "</table></div>\n<h2>Top kernels, per step</h2>\n<div class=\"scroll\"><table>\n<tr><th>ms</th><th>calls</th><th>class</th><th>kernel</th></tr>\n";
  for (const auto& k : s.top)
    h += fmt::format("<tr><td class=\"n\">{:.3f}</td><td class=\"n\">{}</td><td>{}</td><td>{}{}</td></tr>\n", k.ms,
                     count(k.calls), html_escape(k.cls), html_escape(k.name), k.tensor_cores ? " [tensor cores]" : "");
  h += "</table></div>\n";
  if (c) {
    const auto& p = c->prediction;
    h += fmt::format("<h2>perfcast on the same operators: {} on {}, {} {} {}, batch {}</h2>\n", html_escape(p.model_id),
                     html_escape(p.device.id), html_escape(p.runtime.id), html_escape(mode_string(p.request.mode)),
                     html_escape(p.request.precision), p.request.batch);
    for (const auto& n : p.notes) h += "<p class=\"na\">note: " + html_escape(n) + "</p>\n";
    if (const std::string other = other_gpu_note(s, p); !other.empty())
      h += "<p class=\"na\">note: " + html_escape(other) + "</p>\n";
    double longest = 0;
    for (const auto& k : c->classes) longest = std::max({longest, k.measured_ms, k.predicted_ms});
    h += "<div class=\"scroll\"><table>\n<tr><th>class</th><th>measured ms</th><th></th><th>predicted ms</th><th></th><th>ratio</th></tr>\n";
    for (const auto& k : c->classes) {
      if (k.measured_ms < 1e-6 && k.predicted_ms < 1e-6) continue;
      h += fmt::format("<tr><td>{}</td><td class=\"n\">{:.3f}</td><td>{}</td><td class=\"n\">{:.3f}</td><td>{}</td>"
                       "<td class=\"n\">{}</td></tr>\n",
                       html_escape(k.cls), k.measured_ms, html_bar(longest > 0 ? k.measured_ms / longest : 0, "#c0504d"),
                       k.predicted_ms, html_bar(longest > 0 ? k.predicted_ms / longest : 0, "#4f81bd"),
                       k.measured_ms > 0 && k.predicted_ms > 0 ? fmt::format("{:.2f}", k.predicted_ms / k.measured_ms) : "-");
    }
    h += fmt::format("<tr><td>step</td><td class=\"n\">{:.3f}</td><td></td><td class=\"n\">{:.3f}</td><td></td>"
                     "<td class=\"n\">{:.2f}</td></tr>\n</table></div>\n",
                     c->measured_step_ms, c->predicted_step_ms,
                     c->measured_step_ms > 0 ? c->predicted_step_ms / c->measured_step_ms : 0.0);
    if (!c->ops.empty()) {
      h += fmt::format("<h2>Operators of the first step</h2>\n<p>{:.0f}% of its kernel time tied to a forward operator "
                       "(backward kernels through their autograd node's sequence number).</p>\n<div class=\"scroll\"><table>\n"
                       "<tr><th>operator</th><th>input shapes</th><th>measured fwd ms</th><th>measured bwd ms</th>"
                       "<th>predicted fwd ms</th><th>predicted bwd ms</th><th>ratio</th></tr>\n",
                       100 * c->attributed_share);
      std::size_t shown = 0;
      for (const auto& op : c->ops) {
        if (shown++ >= 30) break;
        const double m = op.measured_forward_ms + op.measured_backward_ms;
        const double p2 = op.predicted_forward_ms + op.predicted_backward_ms;
        h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{:.3f}</td><td class=\"n\">{:.3f}</td>"
                         "<td class=\"n\">{:.3f}</td><td class=\"n\">{:.3f}</td><td class=\"n\">{}</td></tr>\n",
                         html_escape(op.name), html_escape(op.shapes), op.measured_forward_ms, op.measured_backward_ms,
                         op.predicted_forward_ms, op.predicted_backward_ms,
                         m > 0 && p2 > 0 ? fmt::format("{:.2f}", p2 / m) : "-");
      }
      h += "</table></div>\n";
    }
  } else if (!why.empty()) {
    h += "<p class=\"na\">no prediction beside it: " + html_escape(why) + "</p>\n";
  }
  h += "<p class=\"na\">Classes: data/trace_kernels.toml (kernel naming conventions of cuBLAS, cuDNN, CUTLASS, NCCL and "
       "PyTorch). Measured times are per profiler step; predicted times are perfcast's for the trace's own operators "
       "(docs/traces.md).</p>\n";
  return render_chart_page(ChartPage::kTrace, trace_json(s, c, why), Lang::kEn, "perfcast trace: " + s.path, h);
}

std::string trace_folder_text(const TraceFolder& f) {
  std::string o = fmt::format("perfcast trace: {} {}\n", f.ranks.size(), f.ranks.size() == 1 ? "trace" : "traces");
  o += fmt::format("  {:<5} {:<40} {:>10} {:>10} {:>8} {:>10}  {}\n", "rank", "file", "step ms", "busy ms", "idle",
                   "NCCL ms", "bound");
  for (std::size_t i = 0; i < f.ranks.size(); ++i) {
    const auto& r = f.ranks[i];
    const auto& s = r.summary;
    o += fmt::format("  {:<5} {:<40} {:>10.2f} {:>10.2f} {:>7.0f}% {:>10.2f}  {}{}\n",
                     r.rank >= 0 ? std::to_string(r.rank) : "-", r.file.substr(0, 40), s.step_ms, s.busy_ms,
                     s.step_ms > 0 ? 100 * s.idle_ms / s.step_ms : 0.0, r.communication_ms, s.bound,
                     i == f.slowest && f.ranks.size() > 1 && f.spread > 0 ? "   <- slowest" : "");
  }
  for (const auto& sk : f.skipped) o += "  skipped: " + sk + "\n";
  if (f.ranks.size() > 1 && f.spread > 0)
    o += fmt::format("\n  the slowest rank's step is {:.1f}% above the median ({:.2f} ms): in a synchronous step every "
                     "rank waits for it, so its extra time is the others' communication wait\n",
                     100 * f.spread, f.median_step_ms);
  return o;
}

nlohmann::json trace_folder_json(const TraceFolder& f) {
  nlohmann::json j;
  j["ranks"] = nlohmann::json::array();
  for (const auto& r : f.ranks)
    j["ranks"].push_back({{"file", r.file},
                          {"rank", r.rank},
                          {"step_ms", r.summary.step_ms},
                          {"busy_ms", r.summary.busy_ms},
                          {"idle_ms", r.summary.idle_ms},
                          {"communication_ms", r.communication_ms},
                          {"bound", r.summary.bound},
                          {"device_name", r.summary.device_name}});
  j["median_step_ms"] = f.median_step_ms;
  j["slowest_rank_index"] = f.slowest;
  j["spread"] = f.spread;
  j["skipped"] = f.skipped;
  return j;
}

}  // namespace perfcast
