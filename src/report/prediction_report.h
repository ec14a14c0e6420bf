// A prediction as JSON (stable keys for scripts) and as a text report for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/predict.h"

namespace perfcast {

nlohmann::json prediction_json(const Prediction& p);

std::string prediction_text(const Prediction& p, int max_ops = 25);

// Human-readable byte count ("9.81 GiB").
std::string format_bytes(double bytes);

// "tensorflow" or, when the request names a framework version, "tensorflow 2.3".
std::string runtime_label(const PredictRequest& r);

}  // namespace perfcast
