// `perfcast trace` output: the measured step of a profiler trace and, when there is one, perfcast's prediction of
// the same operators beside it, as text or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/trace_analysis.h"

namespace perfcast {

std::string trace_text(const TraceSummary& s, const std::optional<TraceComparison>& c, const std::string& why_no_prediction);
// The same content as one self-contained HTML page, with bars for the class shares and measured vs predicted times.
std::string trace_html(const TraceSummary& s, const std::optional<TraceComparison>& c, const std::string& why_no_prediction);
// A folder of per-rank traces: one line per rank and the straggler.
std::string trace_folder_text(const TraceFolder& f);
nlohmann::json trace_folder_json(const TraceFolder& f);
nlohmann::json trace_json(const TraceSummary& s, const std::optional<TraceComparison>& c, const std::string& why_no_prediction);

}  // namespace perfcast
