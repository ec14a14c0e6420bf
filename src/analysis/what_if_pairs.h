// Measured what-ifs (issue 13): pairs of rows in one validation file that differ in one input only.
//
// precision: a row at amp, fp16, bf16, int8, fp8 or tf32 against the fp32 row of the same setup (same model, GPU,
//   batch, runtime, every other column); ratio = throughput(precision) / throughput(fp32). The layout may differ
//   where the benchmark chose it by precision (AMP channels-last, FP32 NCHW): when the setup has no row of that
//   precision in the fp32 row's layout and no fp32 row in the other's, the two rows are its one pair.
// precision+batch: the same, each precision at the batch its run chose (the fp32 row's batch differs; only where the
//   setup has one row of each precision).
// gpus: an N-GPU data-parallel row against the 1-GPU row of its setup (every column but n_gpus, interconnect,
//   strategy and grad_accum, which a 1-GPU row leaves empty or sets apart); ratio = throughput(N) / throughput(1),
//   scaling efficiency = ratio / N (ratio alone for per-GPU metrics).
// Ratio error = |predicted ratio / measured ratio - 1|. Measured ratios use both measured rows, predicted ones both
// predicted rows, so an error common to the pair cancels: what is judged is the what-if itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/validate.h"

namespace perfcast {

struct WhatIfPairSetup {
  double gain_threshold = 0;      // a precision pair is on the wrong side when one ratio reaches it, the other not
  double poor_scaling_below = 0;  // measured efficiency below it: a poorly scaling row
  int worst_listed = 0;           // pairs a report lists per varied input
};
WhatIfPairSetup what_if_pair_setup();  // data/what_if_pairs.toml

struct WhatIfPair {
  std::string file;         // the validation file, base name
  std::string varied;       // "precision", "precision+batch" or "gpus"
  std::string from, to;     // the varied input: "fp32" -> "amp" ("fp32 b64" -> "amp" with the batch), "1" -> "8"
  int line_from = 0, line_to = 0;
  std::string gpu, model, runtime, mode, batch, interconnect;  // the setup (interconnect of the N-GPU row)
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

// The pairs of one validated file (its rows already predicted); `file` names them.
std::vector<WhatIfPair> what_if_pairs(const ValidationReport& rep, const std::string& file);

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

WhatIfPairStats what_if_pair_stats(const std::vector<const WhatIfPair*>& pairs, const WhatIfPairSetup& setup);

// The scope a precision pair counts under in a report: its target precision class (half = amp, fp16, bf16,
// amp-bf16; int8; fp8; tf32). tf32 is an fp32 math mode, kept out of the precision target.
std::string precision_pair_class(const std::string& precision);

}  // namespace perfcast
