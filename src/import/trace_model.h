// The forward operators of a profiler trace's first step, as the trace importer picks them (trace_model.cpp), for
// those who need to relate the trace's events to the graph built from it (analysis/trace_analysis.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "import/kineto_trace.h"

namespace perfcast {

struct TraceForwardOps {
  std::vector<std::size_t> ops;  // indices into KinetoTrace::cpu_ops, in time order
  std::int64_t tid = 0;          // the thread they ran on
};

TraceForwardOps trace_forward_ops(const KinetoTrace& trace);

// Name of the graph op built from forward operator number `index` (its position in TraceForwardOps::ops):
// "aten::conv2d#3".
std::string trace_op_name(const std::string& aten_name, std::size_t index);

}  // namespace perfcast
