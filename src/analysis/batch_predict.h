// Predictions for every row of a configurations file; a bad row becomes a status, never stops the others.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "import/config_csv.h"

namespace perfcast {

struct RowResult {
  ConfigRow row;
  // "ok", "unsupported: <reason>" (a valid setup perfcast does not model) or "error: line N: <why>" (the row could
  // not be read, or its input is wrong: a typo'd id, a bad value)
  std::string status;
  std::optional<Prediction> prediction;
};

// The request a row describes (defaults for empty cells); InputError/UnsupportedError for what cannot run.
PredictRequest request_from_row(const ConfigRow& row);

// One result per row, in row order; the rows are predicted on every worker thread (core/parallel.h).
std::vector<RowResult> predict_rows(const std::vector<ConfigRow>& rows);

// Streams a configurations file: reads its rows, predicts them a chunk at a time on every worker thread and hands
// each result to `emit` in file order. Memory holds one chunk, not the file. InputError for a malformed file.
// `with_measurements`: the file also carries measured columns (a validation file); a row of it that leaves `host` or
// `runtime_version` empty takes data/defaults.toml [unstated_in_measurements], not the defaults a request gets.
void predict_config_file(const std::filesystem::path& path, const std::function<void(RowResult&&)>& emit,
                         bool with_measurements = false);

}  // namespace perfcast
