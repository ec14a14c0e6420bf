#include "report/advice_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "report/advice_report.h"

namespace perfcast {

namespace {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

double number_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

// A horizontal bar whose length is `fraction` of the cell (clamped to [0, 1]).
std::string bar(double fraction, const char* color) {
  return fmt::format("<div class=\"bar\"><span style=\"width:{:.1f}%;background:{}\"></span></div>",
                     100.0 * std::clamp(fraction, 0.0, 1.0), color);
}

}  // namespace

std::string advice_html(const Advice& a, Lang lang) {
  const nlohmann::json j = advice_json(a, lang);
  const nlohmann::json& base = j.at("baseline");
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"" + std::string(lang == Lang::kZh ? "zh" : "en") + "\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + escape(msg("html_title", lang)) + "</title>\n";
  h += "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}"
       "table{border-collapse:collapse;margin:1em 0;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3em .6em;"
       "text-align:left;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:"
       "tabular-nums}tr.units td{color:#777;font-size:.85em}.bar{background:#eee;width:10em;height:.8em}"
       ".bar span{display:block;height:100%}.verdict{font-size:1.2em;font-weight:600}.na{color:#777}"
       "</style>\n</head>\n<body>\n";
  // The same content as the text report (report/advice_report.cpp): title, verdict, prediction, breakdown,
  // strategies, legend.
  h += "<h1>" + escape(advice_title(a, lang)) + "</h1>\n";
  h += "<p class=\"verdict\">" + escape(text_of(j, "verdict")) + "</p>\n";
  h += fmt::format("<p>{}: {:.1f} samples/s, {:.1f} ms / step, {}: {:.2f} / {:.2f} GiB</p>\n", escape(msg("summary", lang)),
                   number_of(base.at("throughput"), "samples_per_s"), number_of(base, "step_ms"),
                   escape(msg("memory", lang)), number_of(base.at("memory"), "total_bytes") / 1073741824.0,
                   number_of(base.at("memory"), "capacity_bytes") / 1073741824.0);

  h += "<h2>" + escape(msg("breakdown", lang)) + "</h2>\n<table>\n";
  h += "<tr><th>op_class</th><th>bound</th><th>time</th><th>share</th><th></th><th>GFLOP</th><th>GB</th><th>roofline</th></tr>\n";
  h += "<tr class=\"units\"><td></td><td></td><td>ms</td><td>%</td><td></td><td></td><td></td><td>%</td></tr>\n";
  for (const auto& b : j.at("breakdown"))
    h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.1f}</td><td>{}</td>"
                     "<td class=\"n\">{:.1f}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.0f}</td></tr>\n",
                     escape(text_of(b, "op_class")), escape(text_of(b, "bound")), number_of(b, "time_ms"),
                     100.0 * number_of(b, "share"), bar(number_of(b, "share"), "#c0504d"),
                     number_of(b, "flops") / 1e9, number_of(b, "bytes") / 1e9, 100.0 * number_of(b, "roofline_fraction"));
  // Time the GPU waits, as in the text report's "(waiting)" rows.
  for (const char* waiting : {"host_overhead", "input_pipeline", "host_to_device", "communication"}) {
    const double share = number_of(base.at("bottleneck").at("share_of_step"), waiting);
    if (share > 0)
      h += fmt::format("<tr><td>(waiting)</td><td>{}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.1f}</td><td>{}</td>"
                       "<td></td><td></td><td></td></tr>\n",
                       waiting, share * number_of(base, "step_ms"), 100.0 * share, bar(share, "#8064a2"));
  }
  h += "</table>\n";

  h += "<h2>" + escape(msg("strategies", lang)) + "</h2>\n<table>\n";
  h += "<tr><th>strategy</th><th>speedup</th><th></th><th>memory</th><th>energy</th><th>cost</th><th>why</th></tr>\n";
  h += "<tr class=\"units\"><td></td><td>x</td><td></td><td>GiB</td><td>/sample</td><td>/sample</td><td></td></tr>\n";
  double best = 1.0;
  for (const char* list : {"strategies", "combinations"})
    for (const auto& s : j.at(list))
      if (s.value("applicable", false)) best = std::max(best, number_of(s, "speedup"));
  std::string not_applicable;
  for (const char* list : {"combinations", "strategies"})
    for (const auto& s : j.at(list)) {
      if (!s.value("applicable", false)) {
        not_applicable += "<tr class=\"na\"><td>" + escape(text_of(s, "id")) + "</td><td colspan=\"6\">" +
                          escape(text_of(s, "reason_in_language")) + "</td></tr>\n";
        continue;
      }
      const double speedup = number_of(s, "speedup");
      const bool has_energy = s.contains("energy_ratio") && s.at("energy_ratio").is_number();
      const bool has_cost = s.contains("cost_ratio") && s.at("cost_ratio").is_number();
      h += fmt::format("<tr><td>{}</td><td class=\"n\">{:.2f}</td><td>{}</td><td class=\"n\">{:+.2f}</td>"
                       "<td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>\n",
                       escape(text_of(s, "id")), speedup, bar(speedup / best, speedup >= 1 ? "#4f81bd" : "#999"),
                       number_of(s, "memory_delta_bytes") / 1073741824.0,
                       has_energy ? fmt::format("{:.2f}", number_of(s, "energy_ratio")) : std::string("-"),
                       has_cost ? fmt::format("{:.2f}", number_of(s, "cost_ratio")) : std::string("-"),
                       escape(text_of(s, "reason_in_language")));
    }
  h += "</table>\n";
  if (!not_applicable.empty())
    h += "<h2>" + escape(msg("not_applicable", lang)) + "</h2>\n<table>\n" + not_applicable + "</table>\n";
  h += "<p class=\"na\">" + escape(msg("legend", lang)) + "</p>\n</body>\n</html>\n";
  return h;
}

}  // namespace perfcast
