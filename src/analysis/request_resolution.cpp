#include "analysis/request_resolution.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "cost/cost_constants.h"
#include "device/catalog.h"
#include "schedule/collectives.h"

namespace perfcast {

DeviceSpec device_for(const PredictRequest& r) {
  DeviceSpec device = find_gpu(r.gpu);
  if (r.power_limit_w > 0) {
    if (r.power_limit_w > device.tdp_w * 1.5)
      throw InputError("power limit " + std::to_string(static_cast<int>(r.power_limit_w)) + " W is far above the " +
                       std::to_string(static_cast<int>(device.tdp_w)) + " W board limit of " + device.id);
    device.tdp_w = r.power_limit_w;
  }
  return device;
}

RuntimeProfile runtime_for(const PredictRequest& r) {
  RuntimeProfile runtime = find_runtime(r.runtime);
  if (runtime.inference_only && r.mode == "train")
    throw InputError("runtime '" + r.runtime + "' is an inference engine: use mode infer (or a training runtime such as pytorch)");
  if (!r.runtime_version.empty()) runtime = at_version(std::move(runtime), r.runtime_version);
  if (r.cuda_graphs) {
    runtime.host_overhead_per_kernel_us = std::min(runtime.host_overhead_per_kernel_us, cost_constants().cuda_graph_host_us_per_kernel);
    runtime.gpu_gap_per_kernel_us = std::min(runtime.gpu_gap_per_kernel_us, cost_constants().cuda_graph_gap_us);
  }
  return runtime;
}

OptimizerKind optimizer_for(const PredictRequest& r, bool sequence_model) {
  if (!r.optimizer) return sequence_model ? OptimizerKind::kAdamW : OptimizerKind::kSgdMomentum;
  const std::string& o = *r.optimizer;
  if (o == "sgd") return OptimizerKind::kSgdMomentum;
  if (o == "adam") return OptimizerKind::kAdam;
  if (o == "adamw") return OptimizerKind::kAdamW;
  if (o == "lamb") return OptimizerKind::kLamb;
  throw_unknown("optimizer", o, {"sgd", "adam", "adamw", "lamb"});
}

MemoryOptions memory_options(const PredictRequest& r, OptimizerKind optimizer) {
  MemoryOptions m;
  m.training = r.mode == "train";
  m.optimizer_step = r.optimizer_step;
  m.optimizer = optimizer;
  m.checkpointing = r.checkpointing;
  // Several GPUs: the gradient reduction's buffers take memory (data/interconnects.toml bucket_copies).
  if (m.training && r.gpus * r.nodes > 1) {
    m.reduction = r.strategy.empty() ? &strategy_for_runtime(r.runtime) : &find_strategy(r.strategy);
    m.precision = r.precision;
  }
  return m;
}

Graph graph_as_run(const ModelSource& model, const ModelOptions& options, const RuntimeProfile& runtime) {
  Graph g = model.build(options);
  if (runtime.fused_attention)
    for (auto& op : g.ops)
      if (op.kind == OpKind::kAttention) {
        op.attn.fused = true;
        op.saves_output = false;  // as the builder marks a fused attention op
      }
  return g;
}

}  // namespace perfcast
