// Parallel training of decoder language models (analysis/llm_parallel_prediction.cpp): one layout predicted
// (predict routes requests with the layout flags here) and the search over layouts that `perfcast plan` runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "schedule/llm_parallel.h"

namespace perfcast {

// True when the request names any training-layout flag (--tp --pp --dp --cp --ep --vpp --zero --fsdp
// --micro-batch --global-batch --recompute --offload-optimizer --train-tokens --sequence-parallel).
bool wants_parallel_training(const PredictRequest& request);

// InputError unless the request's model is a decoder language model, the only family the layout flags apply to
// (checked first, so that a flag's own advice never points at a layout the model cannot take).
void check_parallel_training_model(const PredictRequest& request);

// The step, memory per GPU, tokens/s per GPU and MFU of the request's layout over gpus x nodes; InputError for a
// layout the model or the GPU count cannot take, or a model that is not a decoder language model.
Prediction predict_llm_training(const PredictRequest& request);

struct LayoutSearch {
  std::int64_t max_micro_batch = 8;
  std::int64_t global_batch_tokens = 0;  // tokens per step when the request has no --global-batch (0: 4 Mi)
  std::optional<double> pue;             // --pue for the facility energy, else the priced instance's provider's
};
// Every layout (tp x pp x dp x ZeRO stage x micro-batch x recomputation, tp inside a node, powers of two) of
// gpus x nodes that fits in memory, fastest first.
std::vector<ParallelTrainingCost> search_layouts(const PredictRequest& request, const LayoutSearch& search = {});

// `perfcast plan --layouts`: the layouts at the request's GPU count, fastest first; with a deadline (and
// --train-tokens) also the best layout at each node count 1, 2, 4 ... up to max_gpus and the cheapest count
// that meets it.
// What `plan --layouts --rank-by` picks the meeting node count by: on-demand dollars (billed hours x GPUs x the price
// per GPU-hour), time to train, or GPU-hours.
enum class LayoutRank { kCost, kTime, kGpuHours };
// "cost", "time", "gpu-hours"; InputError with a suggestion for anything else.
LayoutRank parse_layout_rank(const std::string& text);
std::string layout_rank_name(LayoutRank rank);

struct LayoutPlan {
  std::vector<ParallelTrainingCost> layouts;    // at request.gpus x request.nodes, fastest first
  std::vector<ParallelTrainingCost> by_count;   // deadline search: the fastest layout per node count
  std::optional<ParallelTrainingCost> meeting;  // the count that meets the deadline (and, with a budget, costs no more
                                                // than it) with the lowest `rank`
  LayoutRank rank = LayoutRank::kCost;          // what `meeting` was chosen by
};
// `budget_usd`: the most the run may cost (on demand); a count over it does not meet the plan. A GPU with no price in
// the catalog meets no budget. `rank`: nullopt ranks by cost when every node count has a price, else by GPU-hours;
// kCost with a count that has no price is an InputError.
LayoutPlan plan_layouts(const PredictRequest& request, double deadline_hours, int max_gpus,
                        const LayoutSearch& search = {}, std::optional<double> budget_usd = std::nullopt,
                        std::optional<LayoutRank> rank = std::nullopt);

}  // namespace perfcast
