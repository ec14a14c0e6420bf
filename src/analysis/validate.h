// Prediction error against measured throughputs: per row, per GPU, model and runtime, and overall.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/batch_predict.h"

namespace perfcast {

struct ErrorStats {
  int rows = 0;
  double median_ape = 0;  // absolute percentage error, %
  double mean_ape = 0;
  double within_2x = 0;   // share of rows with prediction/measurement in [0.5, 2]
  double fits = 0;        // share of rows predicted to fit in memory
  double median_signed = 0;  // median of (predicted/measured - 1), %: the bias
};

struct ValidationRow {
  RowResult result;
  double predicted = 0;
  double ape = 0;     // %
  double ratio = 0;   // predicted / measured
};

struct ValidationReport {
  std::string file;
  std::vector<ValidationRow> rows;               // predicted rows with a measurement
  std::vector<RowResult> unpredicted;            // rows that could not be predicted
  ErrorStats overall;
  std::map<std::string, ErrorStats> by_gpu, by_model, by_runtime, by_mode_precision, by_data;
  std::map<std::string, int> unpredicted_reasons;  // reason -> count
};

ErrorStats error_stats(const std::vector<const ValidationRow*>& rows);

ValidationReport validate_file(const std::string& path);

}  // namespace perfcast
