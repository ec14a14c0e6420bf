// Anchoring advise on a profiler trace of the run (`advise --trace F`): the trace's measured step time (the mean
// ProfilerStep window, as `perfcast trace` prints it) stands in for `--measured-step`, after checking that the trace
// can be a recording of the configuration predicted (the same board, mode and precision).
#pragma once

#include <optional>
#include <string>

#include "analysis/anchor.h"

namespace perfcast {

struct Prediction;

// The anchor for prediction `p` from the trace at `trace_path`; nullopt when the path is empty. InputError when the
// trace cannot be read, marks no profiler step (its window is not a step), ran on another board, in another mode
// (training with backward operators against inference) or precision, or implies an impossible throughput.
std::optional<Anchor> anchor_from_trace(const Prediction& p, const std::string& trace_path);

}  // namespace perfcast
