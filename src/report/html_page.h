// Pieces shared by the self-contained HTML pages (advice, trace): escaping, bars and the page's head with its
// style sheet. No scripts, no external files.
#pragma once

#include <string>
#include <string_view>

namespace perfcast {

std::string html_escape(std::string_view s);
// A horizontal bar whose length is `fraction` of the cell (clamped to [0, 1]).
std::string html_bar(double fraction, const char* color);
// "<!DOCTYPE html> ... <body>" with the title and the shared style sheet.
std::string html_page_start(const std::string& lang, const std::string& title);
// A page holding a text report as it prints (predict, compare, plan): the title as a heading, the report in a
// preformatted block, so that its aligned tables and units rows read as on the terminal.
std::string text_report_html(const std::string& lang, const std::string& title, const std::string& text);
inline constexpr const char* kHtmlPageEnd = "</body>\n</html>\n";

}  // namespace perfcast
