#include "report/advice_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "report/advice_report.h"
#include "report/chart_page.h"
#include "report/html_page.h"
#include "report/prediction_report.h"

namespace perfcast {

namespace {

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

double number_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

std::string advice_html(const Advice& a, Lang lang) {
  const nlohmann::json j = advice_json(a, lang);
  const nlohmann::json& base = j.at("baseline");
  std::string h;
  // The same content as the text report (report/advice_report.cpp): title, verdict, prediction, breakdown,
  // strategies, legend; the charts come first (report/chart_page.cpp).
  h += "<p class=\"verdict\">" + html_escape(text_of(j, "verdict")) + "</p>\n";
  const auto m = [lang](std::string_view key) { return html_escape(msg(key, lang)); };
  const std::string sep = lang == Lang::kZh ? "：" : ": ";
  // A baseline that does not fit has no throughput (null in JSON): the page says so instead.
  if (a.baseline.memory.fits)
    h += fmt::format("<p>{}{}{:.1f} {}, {:.1f} {}, {}{}{:.2f} / {:.2f} GiB</p>\n", m("summary"), sep,
                     number_of(base.at("throughput"), "samples_per_s"), m("samples_per_s"), number_of(base, "step_ms"),
                     m("per_step"), m("memory"), sep, number_of(base.at("memory"), "total_bytes") / 1073741824.0,
                     number_of(base.at("memory"), "capacity_bytes") / 1073741824.0);
  else
    h += fmt::format("<p>{}{}{}</p>\n", m("summary"), sep, html_escape(does_not_fit_text(a.baseline, lang)));

  h += "<h2>" + html_escape(msg("breakdown", lang)) + "</h2>\n<div class=\"scroll\"><table>\n";
  h += fmt::format("<tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th></th><th>GFLOP</th><th>GB</th><th>{}</th></tr>\n",
                   m("col.op_class"), m("col.bound"), m("col.time"), m("col.share"), m("col.roofline"));
  h += "<tr class=\"units\"><td></td><td></td><td>ms</td><td>%</td><td></td><td></td><td></td><td>%</td></tr>\n";
  for (const auto& b : j.at("breakdown"))
    h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.1f}</td><td>{}</td>"
                     "<td class=\"n\">{:.1f}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.0f}</td></tr>\n",
                     html_escape(text_of(b, "op_class")), html_escape(text_of(b, "bound")), number_of(b, "time_ms"),
                     100.0 * number_of(b, "share"), html_bar(number_of(b, "share"), "#c0504d"),
                     number_of(b, "flops") / 1e9, number_of(b, "bytes") / 1e9, 100.0 * number_of(b, "roofline_fraction"));
  // Time the GPU waits, as in the text report's "(waiting)" rows.
  for (const char* waiting : {"host_overhead", "input_pipeline", "host_to_device", "communication"}) {
    const double share = number_of(base.at("bottleneck").at("share_of_step"), waiting);
    if (share > 0)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{:.2f}</td><td class=\"n\">{:.1f}</td><td>{}</td>"
                       "<td></td><td></td><td></td></tr>\n",
                       m("waiting"), waiting, share * number_of(base, "step_ms"), 100.0 * share, html_bar(share, "#8064a2"));
  }
  h += "</table></div>\n";

  h += "<h2>" + html_escape(msg(j.at("combinations").empty() ? "strategies_alone" : "strategies", lang)) +
       "</h2>\n<div class=\"scroll\"><table>\n";
  h += fmt::format("<tr><th>{}</th><th>{}</th><th></th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>\n",
                   m("col.strategy"), m("col.speedup"), m("col.memory"), m("col.energy"), m("col.cost"), m("col.why"));
  h += fmt::format("<tr class=\"units\"><td></td><td>{}</td><td></td><td>GiB</td><td>{}</td><td>{}</td><td></td></tr>\n",
                   m("unit.x"), m("unit.per_sample"), m("unit.usd_per_million"));
  double best = 1.0;
  for (const char* list : {"strategies", "combinations"})
    for (const auto& s : j.at(list))
      if (s.value("applicable", false)) best = std::max(best, number_of(s, "speedup"));
  std::string not_applicable;
  for (const char* list : {"combinations", "strategies"})
    for (const auto& s : j.at(list)) {
      if (!s.value("applicable", false)) {
        not_applicable += "<tr class=\"na\"><td>" + html_escape(text_of(s, "id")) + "</td><td colspan=\"6\">" +
                          html_escape(text_of(s, "reason_in_language")) + "</td></tr>\n";
        continue;
      }
      const double speedup = number_of(s, "speedup");
      const bool has_energy = s.contains("energy_ratio") && s.at("energy_ratio").is_number();
      const bool has_cost = s.contains("usd_per_million_samples") && s.at("usd_per_million_samples").is_number();
      h += fmt::format("<tr><td>{}</td><td class=\"n\">{:.2f}</td><td>{}</td><td class=\"n\">{:+.2f}</td>"
                       "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"why\">{}</td></tr>\n",
                       html_escape(text_of(s, "id")), speedup, html_bar(speedup / best, speedup >= 1 ? "#4f81bd" : "#999"),
                       number_of(s, "memory_delta_bytes") / 1073741824.0,
                       has_energy ? fmt::format("{:.2f}", number_of(s, "energy_ratio")) : std::string("-"),
                       has_cost ? fmt::format("{:.2f}", number_of(s, "usd_per_million_samples")) : std::string("-"),
                       html_escape(text_of(s, "reason_in_language")));
    }
  h += "</table></div>\n";
  if (!not_applicable.empty())
    h += "<h2>" + html_escape(msg("not_applicable", lang)) + "</h2>\n<div class=\"scroll\"><table>\n" + not_applicable + "</table></div>\n";
  h += "<p class=\"na\">" + html_escape(msg("legend", lang)) + "</p>\n";
  return render_chart_page(ChartPage::kAdvise, j, lang, advice_title(a, lang), h);
}

}  // namespace perfcast
