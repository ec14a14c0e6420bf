// The advisor's report: verdict sentence, breakdown table, ranked strategies; text (en/zh) and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/advisor.h"
#include "report/messages.h"

namespace perfcast {

// "perfcast advice: <model> on <gpu> (...), <runtime> <mode> <precision>, batch N[, data ...]": the report's first line.
std::string advice_title(const Advice& a, Lang lang);
std::string advice_verdict(const Advice& a, Lang lang);
std::string advice_text(const Advice& a, Lang lang);
nlohmann::json advice_json(const Advice& a, Lang lang);

}  // namespace perfcast
