// Planning a training run against cloud instances (`perfcast plan`) and comparing GPUs side by side
// (`perfcast compare`): every (instance type, count) with its time to train, cost and energy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/cloud.h"
#include "analysis/predict.h"
#include "schedule/data_parallel.h"

namespace perfcast {

// How a precision is chosen: the fastest (a search for the cheapest or quickest run: plan, `--precision best`), or
// the fastest only when it gains more over the full precision than the model can tell from no gain (compare's
// "best precision" column, read as advice: the 80% spread of measured precision what-ifs, data/intervals.toml).
enum class PrecisionChoice { kFastest, kFastestTellable };

// The precision that trains (or infers) fastest on this GPU among those it supports; with its prediction.
// Candidates: fp32, tf32, amp, amp-bf16 (train); also fp16, int8, fp8 (infer).
Prediction predict_best_precision(const PredictRequest& request, const DataParallelOptions& options = {},
                                  PrecisionChoice choice = PrecisionChoice::kFastest);

// Precision "best" is resolved per GPU with predict_best_precision.
bool wants_best_precision(const PredictRequest& request);

struct RunSize {
  double dataset_samples = 0;  // 0 = the model's default dataset
  double epochs = 1;
};

// A run's size within data/limits.toml [run]: a dataset of whole samples, epochs and a deadline no real run
// approaches (InputError naming the flag).
void check_run_size(const RunSize& size);
void check_deadline_hours(double hours);

// Samples in the whole run: dataset x epochs; InputError when the model has no default dataset and none is given, or
// for a size check_run_size refuses.
double run_samples(const Prediction& p, const RunSize& size);

struct PlanRequest {
  PredictRequest base;                 // model, runtime, mode, precision ("best": searched per GPU type), batch per GPU
  RunSize size;
  double deadline_hours = 0;           // must be positive
  std::optional<double> budget_usd;
  double efficiency_threshold = 0.8;   // scaling stops paying where efficiency falls below this
  int max_gpus = 64;
  bool spot = false;                   // rank by spot price where known
  std::optional<double> pue;           // --pue; else each instance's provider's (data/cloud/providers.toml)
  DataParallelOptions dp;
};

struct PlanOption {
  std::string instance;        // instance id
  std::string provider;
  std::string gpu;
  std::string precision;
  std::int64_t batch = 0;      // samples per GPU per step (with --batch max: the largest that fits at this GPU count)
  int count = 1;               // instances
  int gpus_total = 1;
  double samples_per_s = 0;
  double step_ms = 0;
  double efficiency = 1;       // vs one GPU of this type
  double comm_share = 0;
  // Time, dollars and energy of the run (cost_of_run, compare's rule): the instances powered whole, every GPU of
  // them running (none idle).
  RunCost run;
  bool meets_deadline = false;
  bool within_budget = true;
  bool cheapest = false;
  bool fits = true;          // with the gradient reduction's buffers at this GPU count
};

struct InstanceScaling {
  std::string instance;
  int gpus_per_instance = 1;
  int max_count = 1;               // largest count evaluated
  int last_paying_count = 1;       // largest count whose efficiency is still >= the threshold
  double efficiency_after = 0;     // efficiency at the next count (0 when every count pays)
  bool always_pays = true;
  bool single_only = false;        // no network in the catalog: one instance at most
  double efficiency_at_max = 1;    // efficiency at max_count
};

struct PlanResult {
  double samples = 0;              // whole run
  std::vector<PlanOption> options;     // every evaluated (instance, count)
  std::vector<PlanOption> meeting;     // deadline (and budget) met, cheapest first
  // The meeting options worth reading first, cheapest first: per GPU type its cheapest option, and its fastest
  // when that one is at least 10% faster (instead of many counts of one instance a few cents apart).
  std::vector<PlanOption> shortlist;
  std::optional<PlanOption> fastest;   // the fastest of all options
  std::optional<PlanOption> cheapest_any;  // the cheapest of all options (deadline ignored)
  std::vector<InstanceScaling> scaling;
  std::vector<std::string> skipped;    // "instance: reason" for instance types that cannot run the model
};

PlanResult plan(const PlanRequest& request, const PriceCatalog& catalog);

// One entry of `compare --gpu`: a GPU id and how many of it on each node ("gtx-1080-ti:3"; 0 = the request's --gpus).
struct GpuCount {
  std::string gpu;
  int count = 0;
};

// "a,b:3, c" -> {a, 0}, {b, 3}, {c, 0}; InputError on an empty list, an empty entry ("a,,b", "a,"), an empty id, a
// count that is not a positive whole number, or the same GPU at the same count twice ("a,a"; "a,a:2" is two rows;
// "a,a:N" is one row twice when N is `default_count`, the --gpus a bare id takes). Messages name `flag`.
std::vector<GpuCount> parse_gpu_counts(const std::string& text, const std::string& flag = "--gpu",
                                       int default_count = 1);

struct CompareRow {
  std::string gpu;
  int gpus_per_node = 1;           // this entry's count (the request's --gpus without one)
  std::string status = "ok";       // or "unsupported: reason"
  std::optional<Prediction> prediction;
  std::optional<RunCost> run;
  std::optional<Rental> rental;    // the instances the run is priced on (none: the catalog has no instance holding them)
  double memory_headroom_bytes = 0;
  std::string best_precision;
  double best_samples_per_s = 0;
  // Several GPUs whose run places the embedding tables otherwise than one GPU of the same kind does (one A100 keeps
  // DLRM's tables in host memory and reads them over PCIe; eight shard them in HBM): the scaling efficiency is then
  // against a one-GPU step that no one GPU runs, so the row gives the speedup over the real one-GPU run instead.
  bool scaling_baseline_differs = false;
  double one_gpu_samples_per_s = 0;  // that one-GPU run's throughput (set with scaling_baseline_differs)
};

// One row per entry at the request's precision, each with its own GPU count, and the run's time, energy and cost on
// whole rentable instances (rent()).
// `pue`: --pue, else the rented instance's provider's.
std::vector<CompareRow> compare(const PredictRequest& base, const std::vector<GpuCount>& gpus, const RunSize& size,
                                const PriceCatalog& catalog, const DataParallelOptions& options = {},
                                std::optional<double> pue = std::nullopt);

// A GPU's throughput over a CPU's for the same model and request (compare --device with both kinds), set beside the
// seed question's claim that a GP102 trains "thousands of times faster than a traditional CPU"
// (data/cpu_cost.toml gpu_over_cpu_claim).
struct GpuOverCpu {
  std::string gpu, cpu;
  double gpu_samples_per_s = 0, cpu_samples_per_s = 0;
  double speedup = 0;          // gpu / cpu throughput
  double claim = 0;            // the claimed factor
  double claim_off_by = 0;     // claim / speedup (> 1: the claim is that many times too high)
};
// Every (GPU row, CPU row) pair of `rows` where both fit and were predicted.
std::vector<GpuOverCpu> gpu_over_cpu(const std::vector<CompareRow>& rows);

}  // namespace perfcast
