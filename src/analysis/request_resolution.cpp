#include "analysis/request_resolution.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "cost/cost_constants.h"
#include "device/catalog.h"
#include "device/host_profile.h"
#include "device/power_limit.h"
#include "runtime/harness_profile.h"
#include "runtime/runtime_profile.h"
#include "schedule/collectives.h"

namespace perfcast {

namespace {

std::string watts(double w) { return fmt::format("{:g} W", w); }

struct ScaleLimits {
  std::map<std::string, int> gpus_per_node;  // interconnect id -> GPUs one server of it holds
  int max_nodes = 1;
};

// data/scale_limits.toml.
const ScaleLimits& scale_limits() {
  static const ScaleLimits limits = [] {
    const auto path = data_dir() / "scale_limits.toml";
    const toml::table root = parse_toml_file(path);
    TomlFields top(root, path.string());
    ScaleLimits l;
    for (const auto& [k, v] : top.table("gpus_per_node")) {
      const auto n = v.value<std::int64_t>();
      if (!n || *n < 1) top.fail("gpus_per_node", "must map interconnect ids to positive whole numbers");
      l.gpus_per_node[std::string(k.str())] = static_cast<int>(*n);
    }
    TomlFields nodes(top.table("nodes"), path.string() + " [nodes]");
    l.max_nodes = nodes.count("max");
    if (l.max_nodes < 1) nodes.fail("max", "must be at least 1");
    return l;
  }();
  return limits;
}

// A data-parallel count no server or cluster holds is refused with the reason (the interconnect's server size).
void check_scale_limits(const PredictRequest& r, const DeviceSpec& device) {
  if (r.gpus <= 1 && r.nodes <= 1) return;
  const ScaleLimits& l = scale_limits();
  const std::string link = r.interconnect.empty() ? default_interconnect(device) : r.interconnect;
  if (auto it = l.gpus_per_node.find(link); it != l.gpus_per_node.end() && r.gpus > it->second)
    throw UnsupportedError(fmt::format("--gpus {} per node is more than a server with {} holds ({} GPUs, "
                                       "data/scale_limits.toml); use --nodes for more",
                                       r.gpus, link, it->second),
                           {"scale.gpus_per_node",
                            {{"gpus", std::to_string(r.gpus)}, {"interconnect", link}, {"max", std::to_string(it->second)}}});
  if (r.nodes > l.max_nodes)
    throw UnsupportedError(fmt::format("--nodes {} is more servers than the largest clusters built ({}, "
                                       "data/scale_limits.toml)",
                                       r.nodes, l.max_nodes),
                           {"scale.nodes", {{"nodes", std::to_string(r.nodes)}, {"max", std::to_string(l.max_nodes)}}});
}

}  // namespace

std::optional<int> max_gpus_per_node(const std::string& interconnect) {
  const ScaleLimits& l = scale_limits();
  if (auto it = l.gpus_per_node.find(interconnect); it != l.gpus_per_node.end()) return it->second;
  return std::nullopt;
}

ImportOptions import_options(const PredictRequest& r) { return ImportOptions{r.dims, r.seq, r.max_positions}; }

namespace {

// data/engine_context.toml: the runtimes whose engine takes its maximum sequence length from a build option.
const std::set<std::string>& engine_context_runtimes() {
  static const std::set<std::string> ids = [] {
    const auto path = data_dir() / "engine_context.toml";
    const toml::table root = parse_toml_file(path);
    TomlFields top(root, path.string());
    std::set<std::string> out;
    for (const auto& [k, v] : top.table("runtimes")) {
      if (!v.is_string()) top.fail("runtimes", "must map runtime ids to the source of the behaviour");
      find_runtime(k.str());  // a typo'd id is an error naming the known ones, not a silent refusal later
      out.insert(std::string(k.str()));
    }
    return out;
  }();
  return ids;
}

bool runs_past_stated_context(const ModelSource& m, const std::string& runtime, std::int64_t positions) {
  return m.max_positions > 0 && positions > m.max_positions && !m.learned_positions &&
         engine_context_runtimes().count(runtime) > 0;
}

}  // namespace

ModelSource model_for(const PredictRequest& r) {
  ModelSource m = resolve_model(r.model, import_options(r));
  if (!m.sequence) return m;
  // The sequence the request runs when --seq is not given: llama-bench's pp512 / tg128 for the language-model
  // passes (predict_llm), the model's own default otherwise.
  const std::int64_t fallback = is_llm_pass(r.mode) ? (r.mode == Mode::kPrefill ? 512 : 128) : m.default_seq;
  const std::int64_t seq = r.seq > 0 ? r.seq : fallback;
  const std::int64_t positions = r.context + seq;
  // An engine built for the longer sequence (its max_seq_len) runs it: the model's context is what it was built for.
  if (runs_past_stated_context(m, r.runtime, positions)) {
    m.max_positions = positions;
    return m;
  }
  const std::string seq_flag = "--seq " + std::to_string(seq) + (r.seq > 0 ? "" : " (its default)");
  check_context(m, positions,
                r.context > 0 ? "--context " + std::to_string(r.context) + " + " + seq_flag + " = " +
                                    std::to_string(positions) + " positions"
                              : seq_flag);
  return m;
}

DeviceSpec device_for(const PredictRequest& r) {
  DeviceSpec device = find_device(r.gpu);
  if (r.power_limit_w > 0) {
    // The driver refuses a limit outside the board's range (nvidia-smi -pl), so the what-if does too.
    const PowerLimitRange range = power_limit_range(device);
    const bool own = range.from_board_file;
    const double lo = range.min_w, hi = range.max_w;
    if (!(r.power_limit_w >= lo && r.power_limit_w <= hi))  // NaN included
      throw UnsupportedError(
          fmt::format("--power-limit {} is outside the range {} accepts: {} to {} ({})", watts(r.power_limit_w), device.id,
                      watts(lo), watts(hi),
                      own ? "nvidia-smi's Min/Max Power Limit for this board"
                          : "derived from its " + watts(device.tdp_w) + " TDP, data/power.toml [power_limit]"),
          {"power.limit_range",
           {{"gpu", device.id}, {"limit", watts(r.power_limit_w)}, {"min", watts(lo)}, {"max", watts(hi)}}});
    device.tdp_w = r.power_limit_w;
  }
  check_scale_limits(r, device);
  return device;
}

RuntimeProfile runtime_for(const PredictRequest& r) {
  RuntimeProfile runtime = find_runtime(r.runtime);
  if (runtime.inference_only && r.mode == Mode::kTrain)
    throw InputError("runtime '" + r.runtime + "' is an inference engine: use mode infer (or a training runtime such as pytorch)");
  if (!r.runtime_version.empty()) runtime = at_version(std::move(runtime), r.runtime_version);
  if (r.amp_o2) {
    if (r.precision != "amp" && r.precision != "amp-bf16")
      throw InputError("--amp-o2 (amp_o2) applies to mixed precision, --precision amp or amp-bf16; got '" +
                       r.precision.substr(0, 40) + "'");
    // apex amp O2 casts the model to half and patches no torch functions (apex/amp/frontend.py, O2:
    // cast_model_type torch.float16, patch_torch_functions False): softmax runs on the half scores and its
    // probabilities stay half, in DRAM and in what autograd keeps.
    runtime.autocast_softmax_fp32 = false;
    // The model's weights are already half (FP32 masters copied back after each update, not cast per forward),
    // and no op casts its inputs.
    runtime.autocast_per_op_casts = false;
  }
  // TF's remapper fuses Conv2D + BiasAdd + Relu on GPU for float convolutions only (IsGpuCompatibleDataType:
  // Conv2D needs DT_FLOAT); FP16 graphs (--use_fp16, auto mixed precision) keep three kernels. TF32 is FP32 in the graph.
  if (r.precision != "fp32" && r.precision != "tf32") runtime.fuse_conv_bias_relu_fp32 = false;
  if (!r.harness.empty()) apply_harness(runtime, find_harness(r.harness));
  if (r.cuda_graphs) {
    runtime.host_overhead_per_kernel_us = std::min(runtime.host_overhead_per_kernel_us, cost_constants().cuda_graph_host_us_per_kernel);
    runtime.gpu_gap_per_kernel_us = std::min(runtime.gpu_gap_per_kernel_us, cost_constants().cuda_graph_gap_us);
    // A replayed graph runs no Python, autograd or library setup per op, and a whole-step capture keeps the loss
    // scaler's check on the GPU (capturable optimizers); the loop and its sync remain.
    runtime.host_op_us = runtime.host_autograd_op_us = runtime.host_backward_op_us = 0;
    runtime.host_inline_op_us = runtime.host_module_call_us = 0;
    runtime.host_library_call_us = runtime.host_optimizer_op_us = runtime.host_accumulate_grad_us = 0;
    runtime.amp_sync_before_update = false;
  }
  return runtime;
}

double host_time_scale(const PredictRequest& r) {
  const HostProfile& host = host_or_default(r.host);
  return cost_constants().host_reference_single_thread_score / host.single_thread_score;
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
  m.training = r.mode == Mode::kTrain;
  m.optimizer_step = r.optimizer_step;
  m.optimizer = optimizer;
  m.checkpointing = r.checkpointing;
  m.amp_o2 = r.amp_o2;
  m.fused_optimizer = r.fused_optimizer;
  m.grad_accum = r.grad_accum;
  // Several GPUs: the gradient reduction's buffers take memory (data/interconnects.toml bucket_copies).
  if (m.training && r.gpus * r.nodes > 1) {
    m.reduction = r.strategy.empty() ? &strategy_for_runtime(r.runtime) : &find_strategy(r.strategy);
    m.precision = r.precision;
  }
  return m;
}

void check_int8_convolutions(const Graph& graph, const RuntimeProfile& runtime, const DeviceSpec& device) {
  if (runtime.int8_convolution) return;
  if (std::none_of(graph.ops.begin(), graph.ops.end(), [](const Op& op) { return op.kind == OpKind::kConv; })) return;
  std::string engines;
  for (const auto& rt : runtime_catalog())
    if (rt.int8_convolution) engines += (engines.empty() ? "" : ", ") + rt.id;
  throw UnsupportedError("precision 'int8' is not supported by " + runtime.id + " for convolutions on " + device.id +
                             ": it has no CUDA INT8 convolution kernels (engines that run whole INT8 networks: " + engines +
                             "; ONNX Runtime and Torch-TensorRT through TensorRT)",
                         {"precision.no_int8_convolution",
                          {{"precision", "int8"}, {"runtime", runtime.id}, {"gpu", device.id}, {"engines", engines}}});
}

AttentionPlan attention_plan_for(const PredictRequest& r, const RuntimeProfile& runtime, const DeviceSpec& device,
                                 bool training) {
  AttentionPlan plan;
  plan.target = AttentionTarget{device.id, device.sm_version, attention_dtype(r.precision), training};
  if (const auto shared = parse_generation_kernel(r.attention)) {
    if (runtime.framework != "tensorrt-llm")
      throw InputError("--attention " + r.attention +
                       " names a TensorRT-LLM generation-phase kernel (XQA or masked MHA); " + runtime.id +
                       " does not run it");
    if (r.mode != Mode::kDecode && r.mode != Mode::kGenerate && r.mode != Mode::kServe)
      throw InputError("--attention " + r.attention +
                       " names the generation kernel: it applies to --mode generate, decode or serve, not --mode " +
                       std::string(mode_name(r.mode)));
    plan.decode_shared_kv = shared;
    return plan;
  }
  plan.impl = parse_attention_impl(r.attention);
  if (plan.impl == AttentionImpl::kRuntime) return plan;
  if (runtime.framework != "pytorch")
    throw InputError(
        "--attention is Hugging Face's attn_implementation and applies to the PyTorch runtimes (pytorch, "
        "pytorch-compile)" +
        std::string(runtime.framework == "tensorrt-llm" ? "; TensorRT-LLM takes --attention xqa or mmha" : "") + "; " +
        runtime.id + " runs attention its own way");
  const std::string min_version = attention_min_torch_version(plan.impl);
  if (!min_version.empty() && !r.runtime_version.empty() && compare_versions(r.runtime_version, min_version) < 0)
    throw InputError("--attention " + std::string(attention_impl_name(plan.impl)) + " needs PyTorch " + min_version +
                     " or newer (" +
                     (plan.impl == AttentionImpl::kSdpa
                          ? "scaled_dot_product_attention; the flash_attn package runs from PyTorch " +
                                attention_rules().flash_attn_min_version + " as --attention flash or flash1"
                          : std::string("the flash_attn package's requirement")) +
                     "); --runtime-version " + r.runtime_version);
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
      if (runtime.fused_attention || (runtime.fused_mha_half && onnxruntime_fused_mha_runs(op.attn, attention.target)))
        op.attn.fused = true;
    } else {
      const AttentionKernel k = select_attention_kernel(attention.impl, op.attn, attention.target);
      op.attn.fused = k != AttentionKernel::kUnfused;
      op.attn.memory_efficient = k == AttentionKernel::kMemoryEfficient;
    }
    apply_window_rules(op.attn, attention.impl);
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
  add(flash, attention.impl == AttentionImpl::kFlash1 ? "FlashAttention (flash_attn 1.x)" : "FlashAttention-2");
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
