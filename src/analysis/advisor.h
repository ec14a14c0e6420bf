// What holds a workload back and which optimizations pay: bottleneck attribution per op class, and what-if
// strategies applied as transformations of the same request, re-predicted and ranked by gain.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "core/error.h"

namespace perfcast {

// Step time of one op class (conv, matmul, batch_norm, relu, add, ...) and what bounds it.
struct OpClassShare {
  std::string op_class;
  Bound bound = Bound::kMemory;
  double time_ms = 0;
  double share = 0;             // of the step
  double flops = 0;
  double bytes = 0;
  double roofline_fraction = 0; // achieved FLOP/s over the pipe's peak, or bytes/s over DRAM peak
};

struct StrategyResult {
  std::string id;               // stable key: amp, tf32, int8, checkpointing, larger-batch, xla, ...
  std::string category;         // precision | memory | batch | fusion | runtime+precision | layout | conv-algo | launch | input | hardware | scale-out
  bool applicable = false;
  std::string reason;           // one line in English: why it helps here or why not
  ReasonCode reason_code;       // not applicable: the code and facts `reason` says (id "" for a message without one)
  double speedup = 1;           // throughput ratio against the baseline
  double memory_delta_bytes = 0;
  std::optional<double> energy_ratio;  // energy per sample against the baseline, when power is modelled
  // Rented cost per sample against the baseline: the cheapest on-demand price per GPU-hour of each GPU in the price
  // catalog (data/cloud/prices.toml) times the GPUs used, over throughput; absent when either GPU has no price.
  std::optional<double> cost_ratio;
  std::optional<double> usd_per_million_samples;
  PredictRequest request;       // the transformed request
  std::optional<Prediction> prediction;
};

struct Advice {
  Prediction baseline;
  std::vector<OpClassShare> breakdown;      // sorted by time
  std::vector<StrategyResult> strategies;   // applicable first, by speedup; then not applicable
  std::vector<StrategyResult> combinations; // composable strategies applied together
  double memory_pressure = 0;               // total / capacity
  std::optional<double> baseline_usd_per_million_samples;  // the baseline's rented cost (cheapest on-demand price)
  std::optional<std::int64_t> capacity_limited_batch;  // largest batch that fits, when below the efficient one
};

Advice advise(const PredictRequest& request);

// What advise's precision what-if says of candidate `p` against `base`, as facts: one decision, which the English
// reason (analysis/advisor.cpp) and the Chinese one (report/advice_report.cpp) both render.
struct PrecisionAccount {
  enum class Kind {
    kNote,         // no tensor-core math (every CPU): the precision's own note, and the DRAM-bound share that shrinks
    kDp4a,         // INT8 on sm_61: dp4a at 4x the FP32 rate
    kSmallGain,    // tensor cores gaining under 10%: where the gain went
    kTf32,         // TF32 math on FP32 tensors against an FP32 baseline: traffic unchanged
    kTensorCores,  // tensor cores, and memory traffic by the bytes per element of the two precisions
    kStorage,      // no tensor cores and no note: memory traffic by the bytes per element
  };
  Kind kind = Kind::kStorage;
  double dram_share = 0;        // the baseline step's DRAM-bound share (kNote)
  double base_elem_bytes = 0;   // activation storage per element, baseline and candidate (as the runtime stores them)
  double elem_bytes = 0;
  // kSmallGain: tensor-core GEMMs and convolutions, the casts mixed precision adds, launches and host dispatch,
  // and the embedding lookups it leaves alone (ms; share of the baseline step).
  double math_ms_base = 0, math_ms = 0, cast_ms = 0;
  double launches_base = 0, launches = 0, host_ms_base = 0, host_ms = 0;
  double lookup_ms = 0, lookup_share = 0;
};
PrecisionAccount precision_account(const Prediction& base, const Prediction& p);

// Op class of an op (its kind, refined for norms and elementwise ops by their name).
std::string op_class_of(const OpCost& entry);

}  // namespace perfcast
