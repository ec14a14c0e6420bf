#include "report/monitor_report.h"

#include <fmt/format.h>

#include <cmath>

namespace perfcast {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A number in `width` columns, "-" when the driver did not report it.
std::string cell(double v, int width, int decimals = 0) {
  return std::isfinite(v) ? fmt::format("{:>{}.{}f}", v, width, decimals) : fmt::format("{:>{}}", "-", width);
}

std::string reasons_text(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words)
    if (w != "idle") s += (s.empty() ? "" : ", ") + w;
  return s.empty() ? "-" : s;
}

nlohmann::json stats_json(const MeasureStats& m, double scale = 1) {
  if (m.count == 0) return nullptr;
  return {{"mean", m.mean() / scale}, {"min", m.min / scale}, {"max", m.max / scale}};
}

nlohmann::json or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

std::string monitor_live_header() {
  return fmt::format("{:>3} {:<18} {:>5} {:>5} {:>15} {:>11} {:>11} {:>5} {:>11} {:>4}  {}\n", "gpu", "name", "busy",
                     "mem", "memory used", "power", "SM clock", "mem", "PCIe tx/rx", "temp", "throttle") +
         fmt::format("{:>3} {:<18} {:>5} {:>5} {:>15} {:>11} {:>11} {:>5} {:>11} {:>4}  {}\n", "", "", "%", "%",
                     "GiB used/total", "W now/limit", "MHz now/max", "MHz", "GB/s", "C", "reasons");
}

std::string monitor_live_line(const GpuSample& s) {
  return fmt::format("{:>3} {:<18.18} {} {} {}/{} {}/{} {}/{} {} {}/{} {}  {}", s.gpu, s.name, cell(s.util_gpu_pct, 5),
                     cell(s.util_mem_pct, 5), cell(s.mem_used_bytes / kGiB, 7, 1), cell(s.mem_total_bytes / kGiB, 7, 1),
                     cell(s.power_w, 5), cell(s.power_limit_w, 5), cell(s.sm_clock_mhz, 5), cell(s.sm_clock_max_mhz, 5),
                     cell(s.mem_clock_mhz, 5), cell(s.pcie_tx_bytes_per_s / 1e9, 5, 2),
                     cell(s.pcie_rx_bytes_per_s / 1e9, 5, 2), cell(s.temperature_c, 4),
                     reasons_text(throttle_reason_words(s.throttle_mask)));
}

std::string monitor_text(const MonitorSession& session, const MonitorExpectation* expected,
                         const std::vector<MonitorFinding>& findings) {
  std::string s = fmt::format("perfcast monitor: {}, {} round{} over {:.1f} s\n\n", session.source, session.rounds,
                              session.rounds == 1 ? "" : "s", session.seconds);
  s += fmt::format("{:>3} {:<18} {:>7} {:>5} {:>5} {:>5} {:>9} {:>11} {:>9} {:>11}  {}\n", "gpu", "name", "samples",
                   "busy", "busy", "mem", "memory", "power", "SM clock", "PCIe tx/rx", "clocks held down by");
  s += fmt::format("{:>3} {:<18} {:>7} {:>5} {:>5} {:>5} {:>9} {:>11} {:>9} {:>11}  {}\n", "", "", "in span", "mean %",
                   "min %", "mean%", "max GiB", "W mean/max", "MHz mean", "GB/s mean", "(share of busy samples)");
  for (const auto& a : session.gpus) {
    std::string held;
    for (const auto& [words, n] : a.reasons) {
      if (words == "idle" || !a.busy_samples) continue;
      held += fmt::format("{}{} {:.0f}%", held.empty() ? "" : ", ", words, 100.0 * n / a.busy_samples);
    }
    s += fmt::format("{:>3} {:<18.18} {:>7} {} {} {} {} {}/{} {} {}/{}  {}\n", a.gpu, a.name, a.samples,
                     cell(a.util_gpu_pct.mean(), 5), cell(a.util_gpu_pct.count ? a.util_gpu_pct.min : NAN, 5),
                     cell(a.util_mem_pct.mean(), 5), cell(a.mem_used_bytes.count ? a.mem_used_bytes.max / kGiB : NAN, 9, 1),
                     cell(a.power_w.mean(), 5), cell(a.power_w.count ? a.power_w.max : NAN, 5), cell(a.sm_clock_mhz.mean(), 9),
                     cell(a.pcie_tx.mean() / 1e9, 5, 2), cell(a.pcie_rx.mean() / 1e9, 5, 2), held.empty() ? "-" : held);
  }
  if (expected) {
    s += fmt::format("\nCompared with the prediction for {} on {}:\n", expected->job, expected->gpu_id);
    for (const auto& f : findings) s += fmt::format("  {} {}\n", f.as_predicted ? "  " : "! ", f.text);
  }
  s += "\nbusy: NVML utilization.gpu, the share of each sample period in which a kernel ran; means are over the job's "
       "span (first to last busy sample).\n";
  if (expected)
    s += "predicted busy = GPU kernel time / step time; predicted SM clock = boost clock x the power model's clock "
         "factor; ! marks a gap beyond data/monitor.toml's thresholds.\n";
  return s;
}

nlohmann::json monitor_json(const MonitorSession& session, const MonitorExpectation* expected,
                            const std::vector<MonitorFinding>& findings) {
  using nlohmann::json;
  json j;
  j["source"] = session.source;
  j["rounds"] = session.rounds;
  j["seconds"] = session.seconds;
  json gpus = json::array();
  for (const auto& a : session.gpus) {
    json reasons = json::object();
    for (const auto& [words, n] : a.reasons) reasons[words] = n;
    gpus.push_back({{"gpu", a.gpu},
                    {"name", a.name},
                    {"samples", a.samples},
                    {"busy_samples", a.busy_samples},
                    {"idle_edge_samples", a.idle_edge_samples},
                    {"util_gpu_pct", stats_json(a.util_gpu_pct)},
                    {"util_mem_pct", stats_json(a.util_mem_pct)},
                    {"mem_used_gib", stats_json(a.mem_used_bytes, kGiB)},
                    {"mem_total_gib", or_null(a.mem_total_bytes / kGiB)},
                    {"power_w", stats_json(a.power_w)},
                    {"power_limit_w", or_null(a.power_limit_w)},
                    {"sm_clock_mhz", stats_json(a.sm_clock_mhz)},
                    {"sm_clock_max_mhz", or_null(a.sm_clock_max_mhz)},
                    {"mem_clock_mhz", stats_json(a.mem_clock_mhz)},
                    {"pcie_tx_gb_per_s", stats_json(a.pcie_tx, 1e9)},
                    {"pcie_rx_gb_per_s", stats_json(a.pcie_rx, 1e9)},
                    {"temperature_c", stats_json(a.temperature_c)},
                    {"throttle_samples", reasons},
                    {"slowed_busy_samples", a.slowed_samples}});
  }
  j["gpus"] = gpus;
  if (expected) {
    json f = json::array();
    for (const auto& x : findings)
      f.push_back({{"gpu", x.gpu},
                   {"measure", x.measure},
                   {"measured", x.measured},
                   {"predicted", x.predicted},
                   {"unit", x.unit},
                   {"as_predicted", x.as_predicted},
                   {"text", x.text}});
    j["compare"] = {{"gpu", expected->gpu_id},
                    {"job", expected->job},
                    {"predicted", {{"busy_pct", expected->busy_pct},
                                   {"power_w", expected->power_w},
                                   {"sm_clock_mhz", expected->sm_clock_mhz},
                                   {"memory_gib", expected->memory_bytes / kGiB},
                                   {"primary_bound", expected->primary_bound},
                                   {"gpus", expected->gpus}}},
                    {"findings", f}};
  } else {
    j["compare"] = nullptr;
  }
  return j;
}

}  // namespace perfcast
