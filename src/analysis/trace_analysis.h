// What a PyTorch profiler trace measured, per profiled step: where the GPU's time went by op class (the classes of
// the cost model, data/trace_kernels.toml), tensor-core use, idle time, copies and communication, and what bounds
// the step; and, when the trace carries input shapes, perfcast's prediction of the same operators on the same GPU
// beside it, class by class.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "import/kineto_trace.h"

namespace perfcast {

// Class of a kernel by its name (data/trace_kernels.toml): "matmul", "conv", "communication", ... or "other".
std::string kernel_class(const std::string& kernel_name);
// True when the name marks tensor-core (MMA) code.
bool kernel_uses_tensor_cores(const std::string& kernel_name);
// "void at::native::foo<T>(args)" -> "at::native::foo".
std::string short_kernel_name(const std::string& kernel_name);

// True when the trace's device can be this GPU: the same SM version and SM count, memory within 10% (fields the
// trace does not record are not compared).
bool same_board(const TraceDevice& device, const DeviceSpec& gpu);

// The catalog GPU a trace's device is (same SM version and SM count, memory within 10%, then the most name
// tokens in common), or "" when none matches.
std::string catalog_gpu_for(const TraceDevice& device);
// Every catalog GPU that matches as well as the best one (boards the trace cannot tell apart, such as the PCIe and
// SXM4 A100 40GB: same chip, SM count and memory).
std::vector<std::string> catalog_gpus_for(const TraceDevice& device);

struct TraceClassTime {
  std::string cls;
  double ms = 0;            // per step
  double kernels = 0;       // per step
  double tensor_core_ms = 0;
};

struct TraceKernelTime {
  std::string name;  // short name
  std::string cls;
  double ms = 0;     // per step
  double calls = 0;  // per step
  bool tensor_cores = false;
};

// One busy interval of a lane of the first step's timeline ("stream 7", "copies", "host"), in ms from its start.
struct TraceSegment {
  std::string lane;
  std::string kind;  // "kernel", "copy" or "operator"
  double start_ms = 0;
  double end_ms = 0;
};

struct TraceSummary {
  std::string path;
  std::string device_name;   // from deviceProperties ("" when absent)
  std::string gpu_id;        // catalog id of that device ("" when unknown)
  std::vector<std::string> gpu_alternatives;  // other catalog GPUs that match the device as well
  int device = 0;            // the device with the most kernel time
  int steps = 0;             // ProfilerStep windows (0: the whole trace is one window)
  double step_ms = 0;        // wall time per step
  double busy_ms = 0;        // per step: time at least one kernel or copy runs on the device
  double idle_ms = 0;        // per step: step_ms - busy_ms
  double kernel_ms = 0;      // per step: sum of kernel durations (streams may overlap)
  double kernels = 0;        // per step
  double launches = 0;       // per step: launch calls on the host
  double median_kernel_us = 0;
  double h2d_ms = 0, d2h_ms = 0, d2d_ms = 0, memset_ms = 0;  // per step
  double h2d_bytes = 0;      // per step
  double tensor_core_share = 0;  // of matmul + conv + attention kernel time
  std::vector<TraceClassTime> classes;  // by time, largest first
  std::vector<TraceKernelTime> top;     // the kernels with the most time
  bool has_shapes = false;
  bool has_backward = false;
  std::string precision;     // what the operators' input types say: fp32, amp, fp16, amp-bf16, bf16
  std::string bound;         // host | communication | host_to_device | gpu
  std::string verdict;       // one sentence
  // The first step (or the whole trace without step marks) as lanes: each stream's kernels and the copies on the
  // device, and the host thread that ran the most operator time; overlapping or touching events merged.
  std::vector<TraceSegment> timeline;
};

TraceSummary summarize_trace(const KinetoTrace& trace, int top_kernels = 10);

// Measured against predicted, per class.
struct TraceClassComparison {
  std::string cls;
  double measured_ms = 0;
  double predicted_ms = 0;
};

// One forward operator of the first step: the kernels it launched in forward and, through its autograd node's
// sequence number, in backward, against perfcast's forward and backward entries for the graph op built from it.
struct TraceOpComparison {
  std::string name;    // "aten::conv2d#3": the graph op's name (import/trace_model.h)
  std::string shapes;  // its first inputs as recorded: "[8,64,56,56] [128,64,3,3]"
  double measured_forward_ms = 0;
  double measured_backward_ms = 0;
  double predicted_forward_ms = 0;
  double predicted_backward_ms = 0;
  double measured_gemm_ms = 0;       // of its kernels, the matmul-class ones
  double measured_streaming_ms = 0;  // and the elementwise / normalisation ones
};

struct TraceComparison {
  Prediction prediction;
  std::vector<TraceClassComparison> classes;
  std::vector<TraceOpComparison> ops;  // by measured time, largest first (the first step's kernels)
  double attributed_share = 0;         // of the first step's kernel time, the part tied to a forward operator
  double measured_step_ms = 0;
  double predicted_step_ms = 0;
};

// Predicts the trace's own operators (model_from_trace) at the traced batch on `gpu` with `runtime`, in the
// trace's mode (train when it holds backward operators) and precision. InputError when the trace has no shapes.
TraceComparison compare_trace(const KinetoTrace& trace, const TraceSummary& summary, const std::string& gpu,
                              const std::string& runtime, const std::string& runtime_version = "");

// The card's efficiencies as the trace shows them: the efficiency the prediction used, scaled by predicted over
// measured time of the compute-bound GEMM operators (kernels of at least 20 us) and of the bandwidth-bound
// elementwise and normalisation operators. Predicting the same trace with them reproduces it by construction: they
// are for other models, batches and precisions on that card.
struct TraceCalibration {
  std::string gpu;
  std::optional<double> gemm_efficiency_tensor, gemm_efficiency_cuda, dram_efficiency;
  int gemm_ops = 0, streaming_ops = 0;
  double gemm_measured_ms = 0, streaming_measured_ms = 0;
  std::vector<std::string> rejected;  // values measured but not written, with why
};
TraceCalibration calibrate_from_trace(const TraceComparison& comparison);

// A GPU file: the catalog file of `device` (re-serialised as TOML) with id "<id>-trace" and its [measured] table
// updated with `cal`'s values (others it had stay). InputError when the trace measured nothing usable.
std::string measured_gpu_file(const TraceCalibration& cal, const DeviceSpec& device, const std::string& trace_path,
                              const std::string& device_name);

// A folder of traces, one per rank of a distributed run (tensorboard_trace_handler writes one file per worker): each
// summarised, and how far the slowest rank's step is from the median (a synchronous step waits for it).
struct RankTrace {
  std::string file;
  int rank = -1;                 // distributedInfo.rank, -1 when absent
  TraceSummary summary;
  double communication_ms = 0;   // NCCL kernel time per step
  std::string device;            // "NVIDIA A100-PG509-200 (compute 8.0, 108 SMs)"; "" when the trace names none
};
struct TraceFolder {
  std::vector<RankTrace> ranks;  // by rank, then file name
  double median_step_ms = 0;
  std::size_t slowest = 0;       // index into ranks
  double spread = 0;             // slowest step over the median, minus 1
  std::vector<std::string> skipped;  // files left out, with why (not a trace; an older trace of the same rank)
};
// .json / .json.gz files that are not Chrome traces are skipped (run folders hold configs too), and of several
// traces of one rank the newest stands for it. InputError when no trace remains, a trace cannot be read, or the
// traces ran on different kinds of device (an AMD MI250 trace among A100 traces is not a rank of the same job):
// the message names the odd file and both devices. Traces that name no device are not compared.
TraceFolder summarize_trace_folder(const std::string& folder);

}  // namespace perfcast
