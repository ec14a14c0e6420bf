// One op on a CPU of data/cpus (`perfcast op --device CPU`, tools/fit_cpu_gemm.py): the op built as for a GPU
// (analysis/single_op.h), costed by the CPU cost path whole models use (cost/cpu_cost.h cost_cpu_op) on some or all
// of the part's cores, so a kernel fit reads the model's GEMM formula from the binary instead of restating it.
#pragma once

#include <string>

#include "analysis/single_op.h"
#include "cost/kernel_cost.h"
#include "cost/precision.h"
#include "device/cpu_spec.h"

namespace perfcast {

struct CpuOpPrediction {
  CpuSpec cpu;               // the process's share of the part: its cores, sockets and caches
  std::string runtime;       // the CPU runtime profile's id
  PrecisionPlan plan;        // what its GEMMs run in
  KernelCost cost;           // the op's kernels on the cores (its calls' packing and reorders included)
  double fork_join_us = 0;   // the OpenMP regions its calls open over the team (the cores' side of each call)
  double time_us() const { return cost.time_us + fork_join_us; }
};

// `op` (fwd, or bwd: both gradients) on `cores` cores of catalog CPU `cpu_id` (0: every core), one intra-op thread
// each, under CPU runtime `runtime` at `precision`, as a one-op model pass charges it without the framework's
// dispatch. InputError for an unknown id, a bad shape or core count; UnsupportedError for what the part or the
// runtime cannot run (and for bwd_data / bwd_filter: the CPU path costs a backward call per gradient together).
CpuOpPrediction predict_cpu_op(const OpSpec& spec, const std::string& cpu_id, const std::string& runtime,
                               const std::string& precision, int cores = 0);

}  // namespace perfcast
