// Predictions of --mode serve beside published serving measurements (data/validation/llm_serving.csv).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "import/serving_csv.h"

namespace perfcast {

struct ServingCheck {
  ServingRow row;
  std::optional<double> predicted;  // in the row's metric
  std::string error;                // why no prediction ("" when predicted)
  double relative_error() const { return predicted ? std::abs(*predicted - row.measured) / row.measured : 0; }
};

// One prediction per row, on every core (core/parallel.h), in file order.
std::vector<ServingCheck> check_serving_file(const std::filesystem::path& path);

}  // namespace perfcast
