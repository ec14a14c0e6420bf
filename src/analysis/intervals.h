// Prediction intervals from the model's own residuals on measured runs (issue 13).
//
// Every measured row of the calibration files (data/validation, not eval_*) gives a residual
// r = ln(measured / predicted). Rows are grouped by regime: mode, model family, precision, what bounds the step,
// batch regime, GPU count, architecture and runtime, in that order of importance. `perfcast fit-intervals` keeps,
// for every prefix of that list with enough rows, the quantiles of r that bound the interval (80% by default) and
// writes data/intervals.toml. A prediction takes the quantiles of the most specific regime in the table, so the
// interval is wide where the model has been weak and narrow where it has held.
//
// Honesty: the interval table is fitted on the calibration rows, so coverage on them is in-sample. fit-intervals
// also reports leave-one-source-out coverage (each source's rows judged by a table fitted without that source),
// and `perfcast validate` reports coverage on the frozen evaluation files, which the table never saw.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "analysis/validate.h"

namespace perfcast {

struct PredictionInterval {
  double level = 0;    // e.g. 0.8
  double low = 1;      // throughput factors: the interval is [predicted x low, predicted x high]
  double high = 1;
  std::string regime;  // the regime key whose residuals gave it
  int rows = 0;        // measured rows behind it
};

// The regime keys of a prediction, most specific first; the last is "all" (a CPU's last is "device=cpu").
std::vector<std::string> regime_keys(const PredictionFacts& p);

// The interval for a prediction from data/intervals.toml; nullopt when it does not fit in memory (no throughput).
std::optional<PredictionInterval> prediction_interval(const Prediction& p);
// Why a prediction that fits carries no interval, in one line ("" when it does not fit); for a prediction whose
// prediction_interval gave none (the callers already hold that answer).
std::string no_interval_reason(const Prediction& p);

// One measured row's residual for the fit.
struct IntervalSample {
  std::vector<std::string> keys;  // regime_keys of its prediction
  double log_ratio = 0;           // ln(measured / predicted)
  std::string source;             // where it was measured (the source column's repository or host)
  std::string file;
  bool host_bound = false;        // its predicted step waits on the host (the host=bound branch of the keys)
  bool cpu = false;               // a CPU prediction (keys under device=cpu)
};

struct IntervalRegime {
  std::string key;
  int rows = 0;
  int sources = 0;
  double low = 1, median = 1, high = 1;  // measured/predicted at the lower quantile, the median and the upper one
};

// A what-if's speedup interval: measured pairs of rows that differ in one input only (precision, batch, GPU model,
// GPU count) give r = ln(measured ratio / predicted ratio); `spread` is the `level` quantile of |r| as a factor, so
// a predicted speedup S lies in [S / spread, S x spread].
struct WhatIfSpread {
  std::string kind;  // precision | batch | gpu | gpus | any (all kinds pooled)
  int pairs = 0;
  double spread = 1;
};

// The spread for an advisor strategy category (precision, batch, hardware, scale-out; others take "any").
std::optional<WhatIfSpread> what_if_spread(const std::string& strategy_category);

struct IntervalSetup {
  double level = 0.8;
  int min_rows = 25;
  int min_sources = 3;
  // Calibration files named eval_* (data/validation/README.md) whose CPU rows join the fit.
  std::vector<std::string> cpu_calibration_files;
};
IntervalSetup interval_setup();  // data/interval_setup.toml

struct IntervalFit {
  IntervalSetup setup;
  std::vector<std::string> files;
  std::map<std::string, IntervalRegime> regimes;
  std::map<std::string, WhatIfSpread> what_ifs;
  int samples = 0;
  double in_sample_coverage = 0;
  struct SourceCoverage {
    int rows = 0;
    double coverage = 0;  // share of its rows inside an interval fitted without the source
  };
  std::map<std::string, SourceCoverage> leave_one_source_out;
  double loso_coverage = 0;  // over all rows
  // The same two coverages over the host-bound rows alone ("host_bound") and the others ("gpu_bound").
  struct GroupCoverage {
    int rows = 0;
    double in_sample = 0;
    double loso = 0;
  };
  std::map<std::string, GroupCoverage> by_host;
  // The CPU rows (device=cpu regimes), judged apart: the figures above are over GPU rows only.
  struct CpuCoverage {
    int rows = 0, sources = 0;
    int with_regime = 0;  // rows with a device=cpu regime in the table
    double in_sample = 0, loso = 0;
    std::map<std::string, SourceCoverage> leave_one_source_out;
  } cpu;
};

// The source a measurement row names: "owner/repo" of a GitHub-style "owner/repo:path" or the host of a URL.
std::string source_id(const std::string& source_column);

// Predicts every measured row of the calibration files in `dir` (files not named eval_*) and fits the table.
IntervalFit fit_intervals(const std::string& dir, const IntervalSetup& setup);
IntervalFit fit_intervals(const std::vector<IntervalSample>& samples, const IntervalSetup& setup);
// The what-if spreads of measured pairs within each file's rows (already predicted).
std::map<std::string, WhatIfSpread> fit_what_ifs(const std::vector<std::vector<const ValidationRow*>>& files,
                                                 const IntervalSetup& setup);
std::string interval_fit_toml(const IntervalFit& fit);
std::string interval_fit_markdown(const IntervalFit& fit);

}  // namespace perfcast
