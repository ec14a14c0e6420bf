// perfcast --version: the program's version, the source revision it was built from and the data it reads.
#include <algorithm>

#include "analysis/cloud.h"
#include "cli/command.h"
#include "core/data_files.h"
#include "core/error.h"

// Set by CMakeLists.txt on this file only: the project's VERSION and `git describe` at configure time.
#ifndef PERFCAST_VERSION
#define PERFCAST_VERSION "unknown"
#endif
#ifndef PERFCAST_GIT_REVISION
#define PERFCAST_GIT_REVISION "unknown"
#endif

namespace perfcast::cli {

std::string version_text() {
  std::string text = std::string("perfcast ") + PERFCAST_VERSION + " (git " + PERFCAST_GIT_REVISION + ")\n";
  // The data may be missing or broken; the version still prints, with the reason on the data line.
  try {
    const std::string dir = data_dir().string();
    const std::string date = data_catalog_date();
    std::string prices;
    for (const InstanceType& i : default_price_catalog().instances) prices = std::max(prices, i.on_demand_date);
    text += "data catalog " + date + (prices.empty() ? "" : " (cloud prices as of " + prices + ")") + ": " + dir;
  } catch (const InputError& e) {
    text += std::string("data catalog unknown: ") + e.what();
  }
  return text;
}

}  // namespace perfcast::cli
