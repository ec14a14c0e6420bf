// One self-contained HTML page per command (docs/charts.md): the command's --json embedded once, charts drawn from
// it in the browser by the bundled library (report/chart_library.h), and the report's tables beside them. The page
// fetches nothing; without the library (a build without node_modules) it shows the tables and a one-line note.
// `perfcast serve` shows the same strings.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/advisor.h"
#include "analysis/predict.h"
#include "report/messages.h"

namespace perfcast {

// Which charts the page draws from its JSON (web/charts.js reads the page kind's name).
enum class ChartPage { kPredict, kAdvise, kCompare, kPlan, kValidate, kTrace, kOp, kServe };
// "predict", "advise", ...
std::string_view chart_page_name(ChartPage page);

// The whole page. `data` is exactly what the command prints with --json; `tables_html` is the report's own
// content (tables, or the text report in a <pre>), already escaped. `title` is plain text.
std::string render_chart_page(ChartPage page, const nlohmann::json& data, Lang lang, const std::string& title,
                              const std::string& tables_html);

// The text report as HTML: a <pre> that scrolls inside its own box, so its aligned columns read as on a terminal.
std::string preformatted_html(const std::string& text);

// `perfcast predict --html` and `perfcast advise --html`, for callers that hold the result.
std::string render_predict_html(const Prediction& p, Lang lang, std::optional<double> pue = std::nullopt);
std::string render_advise_html(const Advice& a, Lang lang);

// JSON embedded in a <script type="application/json"> element: '<', '>' and '&' as \u escapes so that no input
// text ("</script>" in a model name) can end the element.
std::string json_for_script(const nlohmann::json& j);

}  // namespace perfcast
