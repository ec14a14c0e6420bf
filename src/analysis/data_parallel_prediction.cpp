// Data parallelism as a schedule over the costed single-GPU step: the prediction for one GPU is scaled to
// gpus x nodes by schedule/data_parallel.cpp without re-costing its kernels.
#include <algorithm>

#include "analysis/predict.h"
#include "core/error.h"
#include "schedule/collectives.h"
#include "schedule/data_parallel.h"

namespace perfcast {

DataParallelOptions data_parallel_options(const PredictRequest& request) {
  DataParallelOptions o;
  o.strategy = request.strategy;
  o.fp16_gradients = request.fp16_gradients;
  o.hierarchical = request.hierarchical;
  return o;
}

ReplicaStep replica_step(const Prediction& single) {
  ReplicaStep s;
  s.runtime = single.request.runtime;
  s.precision = single.request.precision;
  s.batch = single.request.batch;
  s.grad_accum = single.request.grad_accum;
  s.kernel_step_us = single.step.step_us;
  s.total_step_us = single.step_us;
  s.gradients_at_cluster_end = single.runtime.gradients_at_cluster_end;
  s.input = single.input;
  return s;
}

GradientProfile gradient_profile(const Prediction& single, const Graph& graph) {
  return gradient_profile(single.step, graph, single.request.precision, single.request.mode == Mode::kTrain,
                          single.runtime.gpu_gap_per_kernel_us);
}

void apply_scale_out(Prediction& p, const GradientProfile& profile, int gpus_per_node, int nodes,
                     const std::string& interconnect, const std::string& network, const DataParallelOptions& options) {
  const int n = gpus_per_node * nodes;
  if (n <= 1) {
    // Still reject a link the GPU does not have, so a typo is not silently ignored.
    if (!interconnect.empty()) check_interconnect(p.device, interconnect);
    if (!network.empty()) find_link(network, "network");
    p.scale.reset();
    set_comm_buffers(p.memory, 0, p.runtime.allocator_overhead);
  } else {
    if (p.request.mode != Mode::kTrain && p.request.mode != Mode::kInfer)
      throw UnsupportedError("data parallelism applies to --mode train and infer, not " + mode_string(p.request.mode),
                             {"data_parallel.mode", {{"mode", mode_string(p.request.mode)}}});
    p.scale = scale_out(p.device, replica_step(p), profile, gpus_per_node, nodes, interconnect, network, options);
    // The reduction's buffers in memory: set (not added), so a single-GPU prediction that already counted them, or
    // one made for another GPU count, ends with the right figure.
    set_comm_buffers(p.memory, p.scale->bucket_buffer_bytes, p.runtime.allocator_overhead);
    if (p.input) {
      // One host pipeline feeds every GPU of its node.
      const double decode_ms = p.input->decode_ms(static_cast<double>(p.request.batch) * gpus_per_node);
      if (!p.input->serial_copy) {
        p.input->step_ms = std::max(decode_ms, p.input->h2d_ms);
        p.input->bound = p.input->step_ms * 1e3 > p.step.step_us;
      }
    }
  }
  p.request.gpus = gpus_per_node;
  p.request.nodes = nodes;
  p.request.interconnect = interconnect;
  p.request.network = network;
  finalize_prediction(p);
}

Prediction scaled_prediction(const Prediction& single, const GradientProfile& profile, int gpus_per_node, int nodes,
                             const std::string& interconnect, const std::string& network,
                             const DataParallelOptions& options) {
  Prediction p = single;
  apply_scale_out(p, profile, gpus_per_node, nodes, interconnect, network, options);
  apply_power(p);
  return p;
}

}  // namespace perfcast
