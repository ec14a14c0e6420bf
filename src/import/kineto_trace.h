// A PyTorch profiler (Kineto) Chrome-trace file, read into plain records: the GPUs it names, the GPU kernels,
// copies and memsets, the CPU-side operator events (with their input shapes when the trace was recorded with
// record_shapes=True) and the ProfilerStep windows. Format: ../shared/reference/formats.md section 2 and
// pytorch/kineto libkineto/src/output_json.cpp; .json and .json.gz alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfcast {

struct TraceDevice {
  int id = 0;
  std::string name;      // "NVIDIA A100-SXM4-40GB"
  int sm_count = 0;
  int compute_major = 0;
  int compute_minor = 0;
  double memory_bytes = 0;
};

struct TraceKernel {
  std::string name;
  double ts_us = 0;
  double dur_us = 0;
  int device = 0;
  std::int64_t stream = 0;
  std::int64_t correlation = -1;
  std::int64_t external_id = -1;
};

enum class TraceCopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice, kMemset, kOther };

struct TraceCopy {
  TraceCopyKind kind = TraceCopyKind::kOther;
  double ts_us = 0;
  double dur_us = 0;
  double bytes = 0;
  int device = 0;
};

// A CPU-side event: an aten operator (cpu_op), a user annotation or a profiler step marker.
struct TraceCpuOp {
  std::string name;
  std::string category;  // "cpu_op", "user_annotation", ...
  double ts_us = 0;
  double dur_us = 0;
  std::int64_t tid = 0;
  std::int64_t external_id = -1;
  std::int64_t sequence = -1;  // "Sequence number": the autograd node a forward op created, and its backward span
  std::vector<std::vector<std::int64_t>> input_dims;  // "Input Dims"; a scalar input is an empty list
  // The shapes of a TensorList input (aten::cat, aten::stack), which newer traces record as a list of shapes in
  // that input's "Input Dims" entry (its input_dims entry is then empty): one entry per input, empty unless a list.
  std::vector<std::vector<std::vector<std::int64_t>>> input_lists;
  std::vector<std::string> input_types;                // "Input type": "float", "c10::Half", "Scalar", ...
  std::vector<std::string> concrete_inputs;            // "Concrete Inputs" (newer traces): "[2, 2]", "1", ""
};

// A kernel launch on the host (cudaLaunchKernel ...): ties a kernel (same correlation) to the CPU thread and time
// that launched it.
struct TraceLaunch {
  std::int64_t correlation = -1;
  std::int64_t tid = 0;
  double ts_us = 0;
};

// A forward-backward flow (cat "fwdbwd", PyTorch >= 1.13): "s" at the forward op that created an autograd node,
// "f" at that node's backward op, with the same id.
struct TraceFlow {
  std::int64_t id = -1;
  bool start = true;  // "s" (forward) or "f" (backward)
  std::int64_t tid = 0;
  double ts_us = 0;
};

struct TraceStep {
  std::string name;  // "ProfilerStep#12"
  double ts_us = 0;
  double dur_us = 0;
};

struct KinetoTrace {
  std::string path;
  std::vector<TraceDevice> devices;  // deviceProperties (absent in some traces)
  std::vector<TraceKernel> kernels;
  std::vector<TraceCopy> copies;
  std::vector<TraceCpuOp> cpu_ops;   // cpu_op and user_annotation events, in file order
  std::vector<TraceStep> steps;      // ProfilerStep#N windows, by start time
  std::vector<TraceStep> gpu_steps;  // the same steps on the GPU timeline (gpu_user_annotation), when written
  std::int64_t runtime_launches = 0; // cudaLaunchKernel / cuLaunchKernel / cudaGraphLaunch events
  std::vector<TraceLaunch> launches;  // those events
  std::vector<TraceFlow> fwdbwd;      // forward-backward flows
  int rank = -1;                     // distributedInfo
  int world_size = 0;
};

// Reads and parses the file (gzip or plain). InputError naming the file on a missing or unreadable file, JSON that
// does not parse, or a document that is not a Chrome trace (no traceEvents array).
KinetoTrace read_kineto_trace(const std::string& path);

// Parses trace text already in memory (`where` names it in errors).
KinetoTrace parse_kineto_trace(const std::string& text, const std::string& where);

// True when the text looks like a Chrome trace (has a "traceEvents" key near the start): how a .json path is told
// apart from a Hugging Face config.json.
bool looks_like_trace(const std::string& path);

}  // namespace perfcast
