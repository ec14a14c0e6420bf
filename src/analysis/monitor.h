// What a monitored job did on its GPUs, from rounds of samples (import/gpu_sampler.h, live or replayed), and how
// that compares with perfcast's prediction for the same job: GPU busy share, power, clocks, memory, throttling.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/predict.h"
#include "import/gpu_sampler.h"

namespace perfcast {

// Mean and extremes of one measure over samples; `count` 0 when no sample reported it.
struct MeasureStats {
  int count = 0;
  double sum = 0;
  double min = 0, max = 0;
  void add(double v);
  void merge(const MeasureStats& o);
  double mean() const { return count ? sum / count : kNotReported; }
};

// One GPU over the session. Means are over the job's span: from the first to the last sample in which a kernel
// ran (the idle samples before the job started and after it ended are left out; idle samples inside it count).
struct GpuActivity {
  int gpu = 0;
  std::string name;
  int samples = 0;              // in the job's span
  int idle_edge_samples = 0;    // left out before and after it
  MeasureStats util_gpu_pct, util_mem_pct, mem_used_bytes, power_w, sm_clock_mhz, mem_clock_mhz, pcie_tx, pcie_rx,
      temperature_c;
  double mem_total_bytes = kNotReported;
  double power_limit_w = kNotReported;
  double sm_clock_max_mhz = kNotReported;
  std::map<std::string, int> reasons;  // throttle reason (words) -> samples in the span holding it
  int slowed_samples = 0;              // busy samples with a reason that lowers clocks (power, thermal)
  int busy_samples = 0;                // samples with a kernel running
  bool ran_job() const { return busy_samples > 0; }
};

struct MonitorSession {
  std::string source;
  int rounds = 0;
  double seconds = 0;  // from the first round to the last
  std::vector<GpuActivity> gpus;  // by index
};

// Folds rounds into per-GPU activity with running sums: memory does not grow with the session's length.
class MonitorAccumulator {
 public:
  explicit MonitorAccumulator(std::string source) { session_.source = std::move(source); }
  void add(const std::vector<GpuSample>& round);
  // The session so far.
  MonitorSession session() const;

 private:
  struct PerGpu {
    GpuActivity span;     // from the first busy sample to the last one
    GpuActivity pending;  // idle samples after the last busy one: they join the span when a busy sample follows
    bool started = false;
  };
  static void add_to(GpuActivity& a, const GpuSample& s);
  static void merge_into(GpuActivity& into, const GpuActivity& from);
  MonitorSession session_;
  std::vector<PerGpu> gpus_;
  double first_time_ = 0;
};

struct MonitorOptions {
  double interval_s = 1;  // between live rounds
  double duration_s = 0;  // 0 = no limit
  long count = 0;         // rounds; 0 = no limit
};

// Takes rounds from `sampler` until `count` rounds, `duration_s` seconds (of sample time) or the recording's end, or
// until `stop` is set (Ctrl-C); a live sampler is read once per interval. `on_round` sees every round as it comes.
MonitorSession run_monitor(GpuSampler& sampler, const MonitorOptions& options, const std::atomic<bool>& stop,
                           const std::function<void(const std::vector<GpuSample>&)>& on_round);

// What the prediction says the sampled figures should be, per GPU of the job.
struct MonitorExpectation {
  std::string gpu_id;            // catalog id
  std::string gpu_name;          // its name
  std::string job;               // "resnet50 train fp32 batch 64 (pytorch)"
  double busy_pct = 0;           // share of the step with a kernel running (PowerCost::busy_share)
  double power_w = 0;            // average board power
  double sm_clock_mhz = 0;       // boost clock x the predicted sustained clock factor
  double memory_bytes = 0;       // the memory estimate (weights, activations, workspace, runtime context)
  double capacity_bytes = 0;
  bool fits = true;
  std::string primary_bound;     // what bounds the predicted step
  double input_share = 0;        // share of the step the input pipeline and host copies hold
  int gpus = 1;                  // GPUs of the job on this machine
};

MonitorExpectation expectation_from(const Prediction& p);
// A saved `perfcast predict --json` file (src/report/prediction_report.cpp writes it); InputError when it is not one, or fits is false.
MonitorExpectation expectation_from_json(const nlohmann::json& j, const std::string& where);

// One measured figure against its prediction, with what the gap suggests.
struct MonitorFinding {
  int gpu = 0;
  std::string measure;   // "gpu_busy", "power", "sm_clock", "memory", "throttle", "device"
  double measured = 0;
  double predicted = 0;
  std::string unit;      // "%", "W", "MHz", "GiB", ""
  bool as_predicted = true;
  std::string text;      // one sentence
};

// Findings for every GPU that ran the job (a GPU no kernel ran on is named once, not compared). Thresholds from
// data/monitor.toml [compare].
std::vector<MonitorFinding> compare_with_prediction(const MonitorSession& session, const MonitorExpectation& expected);

}  // namespace perfcast
