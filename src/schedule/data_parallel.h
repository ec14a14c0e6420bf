// Data-parallel training over GPUs and nodes: every GPU runs the single-GPU step on its own batch, then the
// gradients are reduced (all-reduce, per-tensor copies or a parameter server) in buckets that overlap the rest
// of backward where the framework allows it; the step waits for the last bucket and for the slowest GPU.
#pragma once

#include <string>
#include <vector>

#include "analysis/predict.h"
#include "schedule/collectives.h"

namespace perfcast {

struct DataParallelOptions {
  std::string strategy;         // "" = the runtime's default (data/interconnects.toml [runtime_strategy])
  bool fp16_gradients = false;  // compress gradients to fp16 before reducing them
  bool hierarchical = false;    // force the hierarchical all-reduce across nodes
  int nics_per_node = 1;        // network ports per node
};

// The request's own choices (--strategy, --fp16-grads, --hierarchical) as options.
DataParallelOptions data_parallel_options(const PredictRequest& request);

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

GradientProfile gradient_profile(const Prediction& single, const Graph& graph);

// Scale-out of a single-GPU prediction (p.request.gpus == nodes == 1 as predicted) to gpus x nodes.
ScaleOutCost scale_out(const Prediction& single, const GradientProfile& profile, int gpus_per_node, int nodes,
                       const std::string& interconnect, const std::string& network, const DataParallelOptions& options);

// Applies the scale-out to p in place (sets p.scale, the node's input pipeline, throughput, power).
void apply_data_parallel(Prediction& p, const Graph& graph, const DataParallelOptions& options);

// The whole prediction with explicit data-parallel options (compare, plan, case studies).
Prediction predict_data_parallel(const PredictRequest& request, const DataParallelOptions& options);

// A copy of `single` scaled to gpus x nodes without re-costing its kernels (plan evaluates many counts).
Prediction scaled_prediction(const Prediction& single, const GradientProfile& profile, int gpus_per_node, int nodes,
                             const std::string& interconnect, const std::string& network,
                             const DataParallelOptions& options);

// Expected maximum of n independent standard normal variables (Blom's approximation; 0 for n = 1).
double expected_max_normal(int n);

}  // namespace perfcast
