// Measured what-ifs (issue 13): pairs of rows in one validation file that differ in one input only.
//
// precision: a row at amp, fp16, bf16, int8, fp8 or tf32 against the fp32 row of the same setup (same model, GPU,
//   batch, runtime, every other column but those benchmarks choose with the precision: import/config_csv.h
//   kPrecisionPairSkip); ratio = throughput(precision) / throughput(fp32). The layout may differ where the benchmark
//   chose it by precision (AMP channels-last, FP32 NCHW): when the setup has no row of that precision in the fp32
//   row's layout and no fp32 row in the other's, the two rows are its one pair.
// precision+batch: the same, each precision at the batch its run chose (the fp32 row's batch differs; only where the
//   setup, batch left free, has one row of each precision).
// gpus: an N-GPU data-parallel row against the 1-GPU row of its setup (every column but n_gpus, interconnect,
//   strategy and grad_accum, which a 1-GPU row leaves empty or sets apart); ratio = throughput(N) / throughput(1),
//   scaling efficiency = ratio / N (ratio alone for per-GPU metrics).
// Ratio error = |predicted ratio / measured ratio - 1|. Measured ratios use both measured rows, predicted ones both
// predicted rows, so an error common to the pair cancels: what is judged is the what-if itself.
#pragma once

#include <string>
#include <vector>

#include "analysis/validate.h"
#include "analysis/what_if_pair.h"

namespace perfcast {

WhatIfPairSetup what_if_pair_setup();  // data/what_if_pairs.toml

// The precision and precision+batch pairs among a file's validated rows; `file` names them. validate_file keeps them
// in its report (ValidationReport::precision_pairs): this is the one place precision pairs are built.
std::vector<WhatIfPair> precision_pairs(const std::vector<ValidationRow>& rows, const std::string& file);

// Every pair of one validated file: its report's precision pairs, then its GPU-count pairs.
std::vector<WhatIfPair> what_if_pairs(const ValidationReport& rep);

WhatIfPairStats what_if_pair_stats(const std::vector<const WhatIfPair*>& pairs, const WhatIfPairSetup& setup);

// The scope a precision pair counts under in a report: its target precision class (half = amp, fp16, bf16,
// amp-bf16; int8; fp8; tf32). tf32 is an fp32 math mode, kept out of the precision target.
std::string precision_pair_class(const std::string& precision);

// Issue 13's precision target: reduced-precision math against fp32 (a precision pair not to tf32), and the name
// reports give its scope.
bool in_precision_target(const WhatIfPair& p);
inline constexpr const char* kPrecisionTargetScope = "amp/fp16/bf16/int8/fp8 (target)";

}  // namespace perfcast
