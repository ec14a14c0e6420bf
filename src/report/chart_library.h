// The scripts every HTML page inlines (docs/charts.md). Defined in a source file that CMake generates at build
// time (cmake/embed_chart_library.cmake) from node_modules and web/charts.js; nothing is fetched at run time.
#pragma once

#include <string_view>

namespace perfcast {

// False when the build found no node_modules: the pages then show their tables only, and say so.
extern const bool kChartLibraryAvailable;
// d3 and Observable Plot, minified, at the versions package-lock.json pins ("" when not available).
extern const std::string_view kChartLibraryJs;
// web/charts.js: draws each page's charts from the command's JSON embedded in the page.
extern const std::string_view kChartScriptJs;

}  // namespace perfcast
