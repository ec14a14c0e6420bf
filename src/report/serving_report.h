// --mode serve results as JSON (stable, clearly named keys) and as a text report with units and a legend.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/llm_serving.h"

namespace perfcast {

nlohmann::json serving_json(const ServePrediction& p);
std::string serving_text(const ServePrediction& p);

}  // namespace perfcast
