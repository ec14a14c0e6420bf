// --mode serve results as JSON (stable, clearly named keys) and as a text report with units and a legend.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/llm_serving.h"
#include "analysis/serving_validation.h"
#include "report/messages.h"

namespace perfcast {

nlohmann::json serving_json(const ServePrediction& p);
// The text report in `lang` (JSON keys never change with the language).
std::string serving_text(const ServePrediction& p, Lang lang = Lang::kEn);

// perfcast validate on a serving measurements file: the error by metric, engine and GPU, then every row.
std::string serving_validation_markdown(const std::vector<ServingCheck>& checks, const std::string& file);
std::string serving_validation_summary(const std::vector<ServingCheck>& checks);

}  // namespace perfcast
