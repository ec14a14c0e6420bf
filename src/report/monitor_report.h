// `perfcast monitor` output: the live view (one line per GPU, redrawn each round), the session summary with its
// units row and legend, the comparison with a prediction, and the same as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/monitor.h"

namespace perfcast {

// The live view's two header lines (names, units).
std::string monitor_live_header();
// One GPU's line of the live view (no newline).
std::string monitor_live_line(const GpuSample& s);

// The session per GPU, then (when `expected` is given) the findings against the prediction, then the legend.
std::string monitor_text(const MonitorSession& session, const MonitorExpectation* expected,
                         const std::vector<MonitorFinding>& findings);
nlohmann::json monitor_json(const MonitorSession& session, const MonitorExpectation* expected,
                            const std::vector<MonitorFinding>& findings);

}  // namespace perfcast
