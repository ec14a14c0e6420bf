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

AttentionPlan attention_plan_for(const PredictRequest& r, const RuntimeProfile& runtime, const DeviceSpec& device,
                                 bool training) {
  AttentionPlan plan;
  plan.impl = parse_attention_impl(r.attention);
  if (plan.impl == AttentionImpl::kRuntime) return plan;
  if (runtime.framework != "pytorch")
    throw InputError(
        "--attention is Hugging Face's attn_implementation and applies to the PyTorch runtimes (pytorch, "
        "pytorch-compile); " +
        runtime.id + " runs attention its own way");
  const auto& rules = attention_rules();
  if (plan.impl != AttentionImpl::kEager && !r.runtime_version.empty() &&
      compare_versions(r.runtime_version, rules.sdpa_min_version) < 0)
    throw InputError("--attention " + std::string(attention_impl_name(plan.impl)) + " needs PyTorch " +
                     rules.sdpa_min_version + " or newer (scaled_dot_product_attention); --runtime-version " +
                     r.runtime_version + " has eager attention only");
  plan.target = AttentionTarget{device.id, device.sm_version, attention_dtype(r.precision), training};
  return plan;
}

namespace {

void check_model_attention(const AttentionPlan& attention, const ModelSource& model) {
  if (attention.impl != AttentionImpl::kRuntime && attention.impl != AttentionImpl::kEager &&
      !model.eager_attention_only.empty())
    throw UnsupportedError("--attention " + std::string(attention_impl_name(attention.impl)) + ": " +
                           model.eager_attention_only + "; use --attention eager");
}

}  // namespace

Graph graph_as_run(const ModelSource& model, const ModelOptions& options, const RuntimeProfile& runtime,
                   const AttentionPlan& attention) {
  check_model_attention(attention, model);
  Graph g = model.build(options);
  for (auto& op : g.ops) {
    if (op.kind != OpKind::kAttention) continue;
    if (attention.impl == AttentionImpl::kRuntime) {
      if (runtime.fused_attention) op.attn.fused = true;
    } else {
      const AttentionKernel k = select_attention_kernel(attention.impl, op.attn, attention.target);
      op.attn.fused = k != AttentionKernel::kUnfused;
      op.attn.memory_efficient = k == AttentionKernel::kMemoryEfficient;
    }
    op.saves_output = !op.attn.fused;  // as the builder marks attention: unfused keeps the probabilities
  }
  return g;
}

std::string attention_note(const AttentionPlan& attention, const Graph& graph) {
  if (attention.impl == AttentionImpl::kRuntime) return "";
  int flash = 0, efficient = 0, unfused = 0;
  for (const auto& op : graph.ops)
    if (op.kind == OpKind::kAttention) {
      if (!op.attn.fused)
        ++unfused;
      else if (op.attn.memory_efficient)
        ++efficient;
      else
        ++flash;
    }
  std::string kernels;
  const auto add = [&](int n, const char* what) {
    if (n > 0) kernels += (kernels.empty() ? "" : ", ") + std::string(what) + " for " + std::to_string(n);
  };
  add(flash, "FlashAttention-2");
  add(efficient, "the memory-efficient kernel");
  add(unfused, attention.impl == AttentionImpl::kEager ? "the eager kernels" : "the math fallback (eager kernels)");
  if (kernels.empty()) return "";
  return "--attention " + std::string(attention_impl_name(attention.impl)) + " on " + attention.target.gpu + " in " +
         attention.target.dtype + ": " + kernels + " attention cores";
}

bool serving_attention_fused(const AttentionPlan& attention, const ModelSource& model, const Graph& probe,
                             const RuntimeProfile& runtime) {
  if (attention.impl == AttentionImpl::kRuntime) return runtime.llm_fused_attention;
  check_model_attention(attention, model);
  bool fused = false;
  for (const auto& op : probe.ops)
    if (op.kind == OpKind::kAttention)
      fused = select_attention_kernel(attention.impl, op.attn, attention.target) != AttentionKernel::kUnfused;
  return fused;
}

}  // namespace perfcast
