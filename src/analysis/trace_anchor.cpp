#include "analysis/trace_anchor.h"

#include <fmt/format.h>

#include "analysis/predict.h"
#include "analysis/trace_analysis.h"
#include "core/error.h"
#include "import/kineto_trace.h"

namespace perfcast {

std::optional<Anchor> anchor_from_trace(const Prediction& p, const std::string& trace_path) {
  if (trace_path.empty()) return std::nullopt;
  const KinetoTrace trace = read_kineto_trace(trace_path);
  const TraceSummary s = summarize_trace(trace, 0);
  const std::string where = "--trace " + trace_path;
  // Without ProfilerStep marks the whole recording is one window: warm-up, data loading and the profiler's own start
  // sit in it (the fixtures' unmarked windows run 100 ms to 13 s for a few ms of kernels), so it is no step time.
  if (s.steps == 0)
    throw InputError(fmt::format(
        "{}: the trace marks no profiler step (its {:.2f} ms window is the whole recording, not a step); record with "
        "torch.profiler's schedule and prof.step(), or give --measured-step",
        where, s.step_ms));
  if (!(s.step_ms > 0)) throw InputError(where + ": the trace's steps have no duration");
  if (p.device.kind == DeviceKind::kCpu)
    throw InputError(where + ": a GPU profiler trace cannot anchor a CPU prediction; give --measured or --measured-step");
  const auto& devices = trace.devices;
  for (const auto& d : devices)
    if (d.id == s.device && !same_board(d, p.device))
      throw InputError(fmt::format("{}: the trace ran on {} ({} SMs), not on {} as predicted; pass --gpu {}", where,
                                   d.name, d.sm_count, p.device.id, s.gpu_id.empty() ? "for that board" : s.gpu_id));
  const bool train = p.request.mode == Mode::kTrain;
  if (train != s.has_backward)
    throw InputError(fmt::format("{}: the trace {} backward operators but the prediction is {}; pass --mode {}", where,
                                 s.has_backward ? "holds" : "has no", train ? "training" : "inference",
                                 s.has_backward ? "train" : "infer"));
  if (!s.precision.empty() && s.precision != p.request.precision)
    throw InputError(fmt::format("{}: the trace's operators ran in {} but the prediction is {}; pass --precision {}",
                                 where, s.precision, p.request.precision, s.precision));
  try {
    return anchor_from_step(p, s.step_ms * 1e-3,
                            fmt::format("--trace {} (measured step {:.2f} ms, mean of {} profiler step{})", trace_path,
                                        s.step_ms, s.steps, s.steps == 1 ? "" : "s"));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{} (measured step {:.2f} ms): {}", where, s.step_ms, e.what()));
  }
}

}  // namespace perfcast
