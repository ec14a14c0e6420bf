// One measured what-if: two rows of a validation file that differ in one input only, and statistics over such pairs.
// The pairs are built by analysis/what_if_pairs.h; a validation report keeps its file's precision pairs
// (analysis/validate.h), so that `perfcast validate FILE` and `perfcast validate --pairs` count the same pairs.
#pragma once

#include <string>

namespace perfcast {

struct WhatIfPairSetup {
  double gain_threshold = 0;      // a precision pair is on the wrong side when one ratio reaches it, the other not
  double poor_scaling_below = 0;  // measured efficiency below it: a poorly scaling row
  int worst_listed = 0;           // pairs a report lists per varied input
};

struct WhatIfPair {
  std::string file;         // the validation file, base name
  std::string varied;       // "precision", "precision+batch" or "gpus"
  std::string from, to;     // the varied input: "fp32" -> "amp" ("fp32 b64" -> "amp" with the batch), "1" -> "8"
  int line_from = 0, line_to = 0;
  std::string gpu, model, runtime, mode, batch, interconnect;  // the setup (batch and interconnect of the B row)
  double measured = 0, predicted = 0;  // throughput ratio to / from
  double error_pct = 0;                // |predicted / measured - 1| x 100
  double from_bias_pct = 0, to_bias_pct = 0;  // each row's own predicted / measured - 1, x 100: which side misses
  bool wrong_side = false;             // precision: one ratio reaches the gain threshold, the other not
  double measured_efficiency = 0, predicted_efficiency = 0;  // gpus only
  // The what-if interval of data/intervals.toml for its kind (analysis/intervals.h what_if_kind_of_pair): 0 when the
  // table has none; inside when the measured ratio lies in [predicted / spread, predicted x spread].
  double spread = 0;
  bool inside = false;
};

struct WhatIfPairStats {
  int pairs = 0;
  double median_error_pct = 0, mean_error_pct = 0;
  int wrong_side = 0;  // precision pairs
  int with_spread = 0;   // pairs whose kind has a what-if interval
  double coverage = 0;   // share of those inside it
  // gpus pairs: |predicted - measured| scaling efficiency in points (100 x), all rows and the poorly scaling ones
  double efficiency_mean_points = 0, efficiency_median_points = 0, efficiency_bias_points = 0;
  int poor = 0;
  double poor_mean_points = 0, poor_median_points = 0, poor_bias_points = 0;
};

}  // namespace perfcast
