// Predictions for every row of a configurations file; a bad row becomes a status, never stops the others.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "import/config_csv.h"

namespace perfcast {

struct RowResult {
  ConfigRow row;
  std::string status;  // "ok", "unsupported: <reason>" or "error: <why the row could not be read>"
  std::optional<Prediction> prediction;
};

// The request a row describes (defaults for empty cells); InputError/UnsupportedError for what cannot run.
PredictRequest request_from_row(const ConfigRow& row);

std::vector<RowResult> predict_rows(const std::vector<ConfigRow>& rows);

}  // namespace perfcast
