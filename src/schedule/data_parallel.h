// Data-parallel training over GPUs and nodes: every GPU runs the single-GPU step on its own batch, then the
// gradients are reduced (all-reduce, per-tensor copies or a parameter server) in buckets that overlap the rest
// of backward where the framework allows it; the step waits for the last bucket and for the slowest GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/device_spec.h"
#include "graph/graph.h"
#include "schedule/collectives.h"
#include "schedule/input_pipeline.h"
#include "schedule/step.h"

namespace perfcast {

struct DataParallelOptions {
  std::string strategy;         // "" = the runtime's default (data/interconnects.toml [runtime_strategy])
  bool fp16_gradients = false;  // compress gradients to fp16 before reducing them
  bool hierarchical = false;    // force the hierarchical all-reduce across nodes
  int nics_per_node = 1;        // network ports per node
};

// Data-parallel scale-out (absent for one GPU).
struct ScaleOutCost {
  int gpus_total = 1;
  double allreduce_ms = 0;          // per step, before overlap
  double exposed_comm_ms = 0;       // not hidden behind backward (everything the step waits at the barrier)
  double efficiency = 1;            // throughput / (N x single-GPU throughput)
  std::string algorithm;            // ring, tree, hierarchical ...
  int gpus_per_node = 1;
  int nodes = 1;
  std::string interconnect;         // link inside a node
  std::string network;              // link between nodes ("" on one node)
  std::string strategy;             // how gradients are reduced: ddp, horovod, replicated, ps ...
  double gradient_bytes = 0;        // reduced per GPU per step
  int collectives = 0;              // buckets (fused collectives) per step
  double bus_bw_gbps = 0;           // bottleneck link bandwidth used, GB/s per direction
  double comm_wait_ms = 0;          // part of exposed_comm_ms: collectives still running after backward
  double sync_wait_ms = 0;          // part of exposed_comm_ms: waiting for the slowest GPU
  double overlap_slowdown_ms = 0;   // part of exposed_comm_ms: compute slowed by overlapped collectives
  double replica_overhead_ms = 0;   // part of exposed_comm_ms: runtime overhead per replica (data file)
  double bucket_copy_ms = 0;        // part of exposed_comm_ms: gradient copies into and out of buckets on the compute stream
  double bucket_buffer_bytes = 0;   // memory the reduction's buffers take per GPU (DDP buckets, Horovod fusion buffer)
  double base_step_ms = 0;          // one GPU's step with its node's input pipeline, before communication
  double comm_share = 0;            // exposed_comm_ms / step
};

// What the scale-out needs from one GPU's costed step (the single-GPU prediction, before scale-out).
struct ReplicaStep {
  std::string runtime;                      // runtime id: its default reduction strategy
  std::string precision;                    // the request's precision: bytes of the gradients and buffers
  std::int64_t batch = 1;                   // samples per GPU per step
  int grad_accum = 1;                       // micro-batches per weight update
  double kernel_step_us = 0;                // the scheduled step (StepCost::step_us)
  double total_step_us = 0;                 // the whole one-GPU step with its input pipeline
  bool gradients_at_cluster_end = false;    // the runtime hands gradients over only when a compiled cluster ends
  std::optional<InputPipelineCost> input;   // the one-GPU input pipeline (absent for synthetic data)
};

// What the reduction needs from one GPU's step: gradient tensors in the order backward produces them, with
// the time each is ready, and the phases of the step.
struct GradientProfile {
  struct Tensor {
    double elems = 0;
    double ready_us = 0;  // from the start of the step
  };
  std::vector<Tensor> tensors;   // ready order
  double forward_us = 0;
  double backward_end_us = 0;    // forward + backward
  double step_us = 0;            // one GPU's step before input pipeline and scale-out
  double norm_us = 0;            // normalization kernels (forward and backward)
  double param_bytes = 4;        // bytes per gradient element in the parameter precision
  double compute_bytes = 4;      // ... in the compute precision
  bool mixed = false;            // mixed precision (fp32 masters, 16-bit compute)
  bool training = true;
};

// The gradient timeline of one GPU's costed step: `step` laid out with `gap_per_kernel_us` between launches,
// the parameters of `graph`, gradients in `precision`.
GradientProfile gradient_profile(const StepCost& step, const Graph& graph, const std::string& precision, bool training,
                                 double gap_per_kernel_us);

// Scale-out of one GPU's step (predicted for gpus == nodes == 1) to gpus x nodes.
ScaleOutCost scale_out(const DeviceSpec& device, const ReplicaStep& single, const GradientProfile& profile,
                       int gpus_per_node, int nodes, const std::string& interconnect, const std::string& network,
                       const DataParallelOptions& options);

// Expected maximum of n independent standard normal variables (Blom's approximation; 0 for n = 1).
double expected_max_normal(int n);

}  // namespace perfcast
