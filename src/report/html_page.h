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
inline constexpr const char* kHtmlPageEnd = "</body>\n</html>\n";

}  // namespace perfcast
