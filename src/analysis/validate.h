// Prediction error against measured throughputs: per row, per GPU, model and runtime, and overall.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/batch_predict.h"
#include "analysis/what_if_pair.h"

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

// What a validation keeps of a row's prediction: the facts its reports, statistics and interval regimes read,
// under the same names as in Prediction. A whole Prediction is about 5 kB plus copies of the catalogs' source notes;
// kept for every row, a 200,000-row file took 3 GB (issue 14, bench/README.md).
struct PredictionFacts {
  struct Request {
    std::string gpu, model, runtime;
    Mode mode = Mode::kTrain;
    std::string precision, data;
    std::int64_t batch = 0;
    int gpus = 1, nodes = 1;
    std::string runtime_version;  // as resolved: the request's --runtime-version, else the profile's default ("" = none)
    std::string host;             // as resolved: the request's --host, else data/defaults.toml `host`
  } request;
  struct Memory {
    bool fits = true;
  } memory;
  struct Device {
    DeviceKind kind = DeviceKind::kGpu;
    std::string architecture;
  } device;
  std::string model_family;
  Bound primary = Bound::kMemory;
  struct Step {
    double host_us = 0;  // the CPU's time issuing the step (docs/host-model.md)
    double gpu_us = 0;   // kernels and gaps
  } step;
  std::optional<PowerCost> power;  // the step's board power terms (GPU predictions)
};

PredictionFacts facts_of(const Prediction& p);

// The `metric` column of a validation file: what `value` measures and which figure of the prediction is set against
// it (data/validation/README.md). Empty reads as samples_per_s.
//   samples_per_s, tokens_per_s, tokens_per_s_per_gpu, mfu: throughput (statistics, what-if pairs, intervals)
//   board_power_w: the average board power per GPU over the steady steps, against PowerCost::avg_power_w; its rows
//                  enter the file's error statistics but no what-if pair and no interval (fit or check), which
//                  describe throughput residuals.
// Throws InputError naming the nearest known metric for any other name.
void check_metric(const std::string& metric);
inline bool is_power_metric(const std::string& metric) { return metric == "board_power_w"; }

// The prediction's step waits on the host: its host issues work more slowly than the GPU runs it (docs/host-model.md).
inline bool host_bound(const PredictionFacts& p) { return p.step.host_us > p.step.gpu_us; }

// A row of a validation file as validated: the row as read, and the facts of its prediction.
struct ValidatedResult {
  ConfigRow row;
  std::string status;
  std::optional<PredictionFacts> prediction;
};

// A row that could not be predicted (no prediction facts), and the file it came from.
struct UnpredictedRow : ValidatedResult {
  int file = 0;  // index into ValidationReport::files (a pooled report)
};

struct ValidationRow {
  ValidatedResult result;
  int file = 0;  // index into ValidationReport::files: the file it came from (a pooled report)
  double predicted = 0;
  double ape = 0;     // %
  double ratio = 0;   // predicted / measured
  std::optional<bool> inside;  // the measurement lies inside the prediction's interval (none: no interval)
  std::string regime;          // the interval regime key that gave it (empty: no interval)
  int support_bin = -1;        // its interval's support bin (analysis/intervals.h; -1: no interval)
};

// A measured peak memory (or a reported out-of-memory) against the prediction, under the measure the row names.
struct MemoryRow {
  ValidatedResult result;
  int file = 0;                    // index into ValidationReport::files (a pooled report)
  std::string measure;             // allocated, reserved or nvidia-smi ("" for an oom-only row)
  std::optional<double> measured;  // bytes
  double predicted = 0;            // bytes, under `measure` (nvidia-smi when the row has no measure)
  double error_pct = 0;            // |predicted/measured - 1|, when measured
  std::optional<bool> oom;         // reported: yes = it did not fit, no = it ran
  bool fit_ok = true;              // the prediction's fit agrees with the reported outcome
};

struct MemoryStats {
  int measured_rows = 0;
  double median_error_pct = 0;
  double mean_error_pct = 0;
  double median_signed_pct = 0;  // median of (predicted/measured - 1): the bias
  int outcome_rows = 0;          // rows reporting whether the run fitted
  int oom_rows = 0, oom_predicted = 0;   // reported out of memory; of those, predicted not to fit
  int ran_rows = 0, ran_predicted = 0;   // reported to run; of those, predicted to fit
};

// One file of a pooled validation (validate_files): its own statistics, as `perfcast validate FILE` reports them.
struct ValidatedFile {
  std::string path;  // as given
  ErrorStats overall;
  int unpredicted = 0;              // rows that could not be predicted
  int memory_rows = 0;              // rows with a measured peak memory or an out-of-memory outcome
  bool interval_in_sample = false;  // one of data/interval_setup.toml fresh_calibration_files
};

struct ValidationReport {
  std::string file;                              // the file; for a pooled report, "N files"
  std::vector<ValidationRow> rows;               // predicted rows with a measurement
  std::vector<UnpredictedRow> unpredicted;       // rows that could not be predicted (no prediction facts)
  ErrorStats overall;
  std::map<std::string, ErrorStats> by_gpu, by_model, by_runtime, by_mode_precision, by_data, by_mode;
  // Rows with an interval by its support bin ("0", "1", ...: setup components no calibration source measured, the
  // last bin of data/intervals.toml counting that many or more), for coverage per bin.
  std::map<std::string, ErrorStats> by_support_bin;
  std::map<std::string, int> unpredicted_reasons;  // reason -> count
  // The precision what-ifs measured in the file (analysis/what_if_pairs.h precision_pairs, the pairs `perfcast validate
  // --pairs` counts), and by varied input ("precision", "precision+batch") the statistics of those in issue 13's
  // target (in_precision_target), the file's "(target)" rows of --pairs.
  std::vector<WhatIfPair> precision_pairs;
  std::map<std::string, WhatIfPairStats> precision_target;
  std::vector<MemoryRow> memory_rows;              // rows with a measured peak memory or an out-of-memory outcome
  MemoryStats memory;
  // The file is one of data/interval_setup.toml fresh_calibration_files: its rows set the interval width, so its
  // interval coverage is in sample.
  // (Pooled: every file is one of them.)
  bool interval_in_sample = false;
  // A pooled report (validate_files): its files in order, each with its own statistics; empty for one file.
  std::vector<ValidatedFile> files;
  // Pooled: the rows from files that calibrate the interval width, and the statistics of the other rows (whose
  // interval coverage is out of sample).
  int in_sample_rows = 0;
  ErrorStats out_of_sample;
};

ErrorStats error_stats(const std::vector<const ValidationRow*>& rows);

ValidationReport validate_file(const std::string& path);

// Several measurement files pooled into one report: every file validated as validate_file does (its statistics kept
// in `files`), their rows, memory rows, unpredicted rows and precision pairs (formed within each file) put together,
// and the statistics taken over the pool by the same function as for one file. InputError for a serving benchmark
// file (--mode serve rows have no step-time prediction), a file given twice, or any file validate_file rejects.
ValidationReport validate_files(const std::vector<std::string>& paths);

// The calibration files of a validation folder, sorted: *.csv not named eval_* (evaluation files stay out) and not
// serving benchmarks (--mode serve rows have no step-time prediction). InputError when there is none.
std::vector<std::string> calibration_files(const std::string& dir);

}  // namespace perfcast
