#include "report/chart_page.h"

#include <array>

#include "report/advice_html.h"
#include "report/chart_library.h"
#include "report/html_page.h"
#include "report/prediction_report.h"

namespace perfcast {

namespace {

// The texts web/charts.js writes into the charts (titles, axes, lanes), in the page's language.
constexpr std::array kChartKeys = {
    "chart.roofline",  "chart.breakdown",     "chart.host_gpu",  "chart.memory",       "chart.timeline",
    "chart.measured",  "chart.pareto",        "chart.scaling",   "chart.speedup",      "chart.classes",
    "chart.ops",       "chart.ax.intensity",  "chart.ax.tflops", "chart.ax.time_ms",   "chart.ax.gib",
    "chart.ax.hours",  "chart.ax.usd",        "chart.ax.gpus",   "chart.ax.efficiency", "chart.ax.speedup",
    "chart.ax.measured", "chart.ax.predicted", "chart.capacity", "chart.size_note",    "chart.band_note",
    "chart.front",     "chart.dram",          "chart.ax.throughput", "chart.step",     "chart.ax.share",
    "chart.kernel_classes", "chart.ax.kwh",   "chart.energy",    "chart.energy_note",
    "chart.ax.tokens", "chart.boards",        "chart.package_tdp", "chart.latency", "chart.latency_note",
};

}  // namespace

std::string_view chart_page_name(ChartPage page) {
  static constexpr std::array<std::string_view, 8> kNames = {"predict", "advise", "compare", "plan",
                                                             "validate", "trace",  "op",      "serve"};
  return kNames[static_cast<std::size_t>(page)];
}

std::string json_for_script(const nlohmann::json& j) {
  // dump() escapes control bytes; replace=: invalid UTF-8 in input names becomes U+FFFD instead of throwing.
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

std::string preformatted_html(const std::string& text) { return "<pre class=\"report\">" + html_escape(text) + "</pre>\n"; }

std::string render_chart_page(ChartPage page, const nlohmann::json& data, Lang lang, const std::string& title,
                              const std::string& tables_html) {
  std::string h = html_page_start(lang_code(lang), title);
  h += "<h1>" + html_escape(title) + "</h1>\n";
  if (kChartLibraryAvailable)
    h += "<div id=\"charts\" class=\"charts\" data-page=\"" + std::string(chart_page_name(page)) + "\"></div>\n";
  else
    h += "<p class=\"na\">" + html_escape(msg("chart.no_library", lang)) + "</p>\n";
  h += tables_html;
  h += "<script type=\"application/json\" id=\"perfcast-data\">" + json_for_script(data) + "</script>\n";
  if (kChartLibraryAvailable) {
    nlohmann::json labels = nlohmann::json::object();
    for (const char* key : kChartKeys) labels[std::string(key).substr(6)] = std::string(msg(key, lang));
    h += "<script type=\"application/json\" id=\"perfcast-labels\">" + json_for_script(labels) + "</script>\n";
    h += "<script>";
    h += kChartLibraryJs;
    h += "</script>\n<script>";
    h += kChartScriptJs;
    h += "</script>\n";
  }
  return h + kHtmlPageEnd;
}

std::string render_predict_html(const Prediction& p, Lang lang, std::optional<double> pue) {
  return render_chart_page(ChartPage::kPredict, prediction_json(p, pue), lang, prediction_title(p, lang),
                           preformatted_html(prediction_text(p, lang, 25, pue)));
}

std::string render_advise_html(const Advice& a, Lang lang) { return advice_html(a, lang); }

}  // namespace perfcast
