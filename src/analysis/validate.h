// Prediction error against measured throughputs: per row, per GPU, model and runtime, and overall.
#pragma once

#include <map>
#include <optional>
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
  int with_interval = 0;     // rows whose prediction carries an interval
  double coverage = 0;       // share of those whose measurement lies inside it
};

struct ValidationRow {
  RowResult result;
  double predicted = 0;
  double ape = 0;     // %
  double ratio = 0;   // predicted / measured
  std::optional<bool> inside;  // the measurement lies inside the prediction's interval (none: no interval)
};

// A measured what-if: the throughput ratio between two rows that differ only in precision (amp vs fp32).
struct RatioRow {
  std::string gpu, model, runtime, mode, data;
  std::int64_t batch_fp32 = 0, batch_amp = 0;
  double measured = 0;   // amp throughput / fp32 throughput
  double predicted = 0;
  double error_pct = 0;  // |predicted/measured - 1|
  bool direction_ok = true;  // both show a gain (> +3%) or both none, or both a loss
};

struct RatioStats {
  int pairs = 0;
  double median_error_pct = 0;
  double mean_error_pct = 0;
  int direction_wrong = 0;
};

struct ValidationReport {
  std::string file;
  std::vector<ValidationRow> rows;               // predicted rows with a measurement
  std::vector<RowResult> unpredicted;            // rows that could not be predicted
  ErrorStats overall;
  std::map<std::string, ErrorStats> by_gpu, by_model, by_runtime, by_mode_precision, by_data, by_mode;
  std::map<std::string, int> unpredicted_reasons;  // reason -> count
  std::vector<RatioRow> amp_ratios;                // mixed-precision what-ifs measured in the file
  RatioStats amp_overall;
  std::map<std::string, RatioStats> amp_by_gpu;
};

ErrorStats error_stats(const std::vector<const ValidationRow*>& rows);

ValidationReport validate_file(const std::string& path);

}  // namespace perfcast
