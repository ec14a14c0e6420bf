#include "report/html_page.h"

#include <fmt/format.h>

#include <algorithm>

namespace perfcast {

std::string html_escape(std::string_view s) {
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

std::string html_bar(double fraction, const char* color) {
  return fmt::format("<div class=\"bar\"><span style=\"width:{:.1f}%;background:{}\"></span></div>",
                     100.0 * std::clamp(fraction, 0.0, 1.0), color);
}

std::string html_page_start(const std::string& lang, const std::string& title) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"" + lang + "\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + html_escape(title) + "</title>\n";
  // From 800 px up nothing overflows the page: a wide table or report scrolls inside its own box (.scroll, pre),
  // charts take the width of their box (web/charts.js).
  h += "<style>body{font-family:system-ui,sans-serif;margin:1.5em auto;padding:0 1em;max-width:72em;color:#222}"
       ".scroll{overflow-x:auto;max-width:100%}.scroll table{min-width:44em}td.why{min-width:16em}pre{overflow-x:auto;max-width:100%}"
       "h1{font-size:1.5em;overflow-wrap:anywhere}.charts figure{margin:1.2em 0}.charts figure svg{max-width:100%;"
       "height:auto}.charts h2{font-size:1.15em;margin:.2em 0}.charts h3{font-size:1em;margin:.2em 0}.charts .note{color:#666;font-size:.85em;margin:.2em 0}"
       ".charts .facets{display:flex;flex-wrap:wrap;gap:1em}"
       "table{border-collapse:collapse;margin:1em 0;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3em .6em;"
       "text-align:left;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:"
       "tabular-nums}tr.units td{color:#777;font-size:.85em}.bar{background:#eee;width:10em;height:.8em}"
       ".bar span{display:block;height:100%}.verdict{font-size:1.2em;font-weight:600}.na{color:#777}"
       "</style>\n</head>\n<body>\n";
  return h;
}

std::string text_report_html(const std::string& lang, const std::string& title, const std::string& text) {
  std::string h = html_page_start(lang, title);
  h += "<h1>" + html_escape(title) + "</h1>\n<pre>" + html_escape(text) + "</pre>\n";
  return h + kHtmlPageEnd;
}

}  // namespace perfcast
