#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cli/command.h"
#include "core/error.h"
#include "cost/attention_kernels.h"
#include "import/model_source.h"

namespace perfcast::cli {

namespace {

std::int64_t parse_count(const std::string& text, const char* flag, bool allow_zero, bool allow_max = false) {
  if (allow_max && text == "max") return 0;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw InputError(fmt::format("{} must be a {} integer{}, got '{}'", flag, allow_zero ? "non-negative" : "positive",
                                 allow_max ? " or 'max'" : "", text));
  if (v < 0 || (v == 0 && !allow_zero)) throw InputError(fmt::format("{} must be positive, got {}", flag, v));
  return v;
}

double parse_number(const std::string& text, const char* flag) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !(v > 0) || !std::isfinite(v))
    throw InputError(fmt::format("{} must be a positive number, got '{}'", flag, text));
  return v;
}

// A model recorded at a batch (a profiler trace) is predicted at that batch unless --batch says otherwise. Only files
// are resolved here: a zoo id has no recorded batch.
std::int64_t default_batch(const std::string& model, const std::string& fallback) {
  if (model.ends_with(".json") || model.ends_with(".json.gz")) {
    const std::int64_t b = resolve_model(model).natural_batch;
    if (b > 0) return b;
  }
  return parse_count(fallback, "--batch", false, true);
}

}  // namespace

const RequestDefaults& predict_defaults() {
  static const RequestDefaults d{"gtx-1080-ti", "resnet50", "train", "pytorch", "synthetic", "", "64",
                                 "default 64; 1 for prefill/decode/generate; a profiler trace: the batch it recorded"};
  return d;
}

const RequestDefaults& advise_defaults() {
  static const RequestDefaults d{"gtx-1080-ti", "nodule3d", "train", "pytorch", "real-augmented", "cloud-8vcpu", "4",
                                 "default 4 for nodule3d, 64 for another --model; 1 for prefill/decode/generate; a "
                                 "profiler trace: the batch it recorded",
                                 true};
  return d;
}

const RequestDefaults& fleet_defaults() {
  static const RequestDefaults d = [] {
    RequestDefaults f = predict_defaults();
    f.train_batch = "max";
    f.batch_help = "default: the largest that fits each GPU; 1 for prefill/decode/generate";
    return f;
  }();
  return d;
}

PredictRequest RequestFlags::to_request() const {
  PredictRequest r = request;
  // Another model than the scenario's: batch, data and host are predict's defaults (help text of --batch, --data).
  const RequestDefaults& d = defaults.scenario && r.model != defaults.model ? predict_defaults() : defaults;
  if (defaults.scenario && r.model != defaults.model) {
    if (!data_option || data_option->count() == 0) r.data = d.data;
    if (!host_option || host_option->count() == 0) r.host = d.host;
  }
  const bool serving = r.mode == "prefill" || r.mode == "decode" || r.mode == "generate" || r.mode == "serve";
  if (!precision.empty()) r.precision = precision;
  else if (serving) r.precision = r.runtime == "llama.cpp" ? "f16" : "fp16";  // nobody serves LLM weights in fp32
  if (batch.empty()) r.batch = serving ? 1 : default_batch(r.model, d.train_batch);
  else r.batch = parse_count(batch, "--batch", false, true);
  if (!seq.empty()) r.seq = parse_count(seq, "--seq", false);
  if (!context.empty()) r.context = parse_count(context, "--context", true);
  if (!lora_rank.empty()) r.lora_rank = parse_count(lora_rank, "--lora-rank", false);
  if (!host_cores.empty()) r.host_cores = static_cast<int>(parse_count(host_cores, "--host-cores", false));
  // Clamped before narrowing to int: the library refuses counts past data/scale_limits.toml with the reason.
  constexpr std::int64_t kCountCap = std::numeric_limits<int>::max();
  r.gpus = static_cast<int>(std::min(parse_count(gpus, "--gpus", false), kCountCap));
  r.nodes = static_cast<int>(std::min(parse_count(nodes, "--nodes", false), kCountCap));
  r.tensor_parallel = static_cast<int>(std::min(parse_count(tp, "--tp", false), kCountCap));
  r.pipeline_parallel = static_cast<int>(std::min(parse_count(pp, "--pp", false), kCountCap));
  if (!power_limit.empty()) r.power_limit_w = parse_number(power_limit, "--power-limit");
  if (!optimizer.empty()) r.optimizer = optimizer;
  parse_attention_impl(r.attention);  // a typo fails here, before any prediction
  r.optimizer_step = !no_optimizer_step;
  if (fused_optimizer && unfused_optimizer)
    throw InputError("--fused-optimizer and --unfused-optimizer exclude each other");
  if (fused_optimizer || unfused_optimizer) r.fused_optimizer = fused_optimizer;
  if (!grad_accum.empty())
    r.grad_accum =
        static_cast<int>(std::min<std::int64_t>(parse_count(grad_accum, "--grad-accum", false), kMaxGradAccum + 1));
  for (const auto& d : dims) {
    const auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--dim takes name=value, got '" + d + "'");
    r.dims[d.substr(0, eq)] = parse_count(d.substr(eq + 1), "--dim value", false);
  }
  return r;
}

void add_request_flags(CLI::App& app, RequestFlags& f, const RequestDefaults& d, bool with_gpu) {
  auto& r = f.request;
  f.defaults = d;
  r.gpu = d.gpu;
  r.model = d.model;
  r.mode = d.mode;
  r.runtime = d.runtime;
  r.data = d.data;
  r.host = d.host;
  if (with_gpu) app.add_option("--gpu", r.gpu, "GPU id (perfcast gpus) or a GPU .toml file")->capture_default_str();
  app.add_option("--model", r.model, "model id (perfcast models), a config.json or an .onnx file")->capture_default_str();
  app.add_option("--mode", r.mode, "train | infer | prefill | decode | generate (prefill --context tokens, then decode --seq) | serve "
                 "(predict: continuous batching under load, --request-rate)")
      ->capture_default_str();
  app.add_option("--precision", f.precision,
                 "fp32 tf32 fp16 bf16 amp amp-bf16 int8 fp8, or a GGUF type (default fp32; fp16 / f16 for prefill, decode, "
                 "generate)");
  app.add_option("--batch", f.batch,
                 "samples per GPU per step, or 'max' for the largest that fits (" + d.batch_help + ")");
  app.add_option("--seq", f.seq, "tokens per sample (sequence models); decode: tokens generated");
  app.add_option("--context", f.context, "decode: tokens already in the KV cache");
  app.add_option("--kv-precision", r.kv_precision, "KV-cache precision (default: the activation precision)");
  app.add_option("--runtime", r.runtime, "runtime profile (perfcast runtimes)")->capture_default_str();
  app.add_option("--runtime-version", r.runtime_version,
                 "framework version, e.g. 2.3: applies the profile's version rules (TF32 defaults)");
  app.add_option(
      "--attention", r.attention,
      "eager | sdpa | flash: Hugging Face's attn_implementation (eager kernels; PyTorch's "
      "scaled_dot_product_attention dispatch; FlashAttention-2). Default: the runtime's (fused from PyTorch 2.0)");
  app.add_option("--optimizer", f.optimizer, "sgd | adam | adamw | lamb (default: sgd for CNNs, adamw otherwise)");
  app.add_flag("--no-optimizer-step", f.no_optimizer_step, "time forward+backward only");
  app.add_flag("--fused-optimizer", f.fused_optimizer,
               "one fused update kernel (apex FusedAdam, torch.optim fused=True); default: the runtime's (PyTorch "
               "eager makes one pass per operation)");
  app.add_flag("--unfused-optimizer", f.unfused_optimizer, "one pass over the tensors per operation of the update");
  app.add_flag("--checkpointing", r.checkpointing, "activation checkpointing (recompute in backward)");
  app.add_option("--grad-accum", f.grad_accum,
                 "micro-batches of --batch per weight update (gradient accumulation): the optimizer and, with --gpus, "
                 "the gradient all-reduce run once per update");
  app.add_option("--lora-rank", f.lora_rank, "fine-tune LoRA adapters of this rank instead of all weights");
  app.add_option("--dim", f.dims, "ONNX dynamic dimension, name=value (repeatable)");
  f.data_option = app.add_option("--data", r.data,
                                  "synthetic (batch made on the GPU) | host (tensors in host memory, copied every step) | "
                                  "real | real-augmented (decoded from files)" +
                                      (d.scenario ? " (default " + d.data + " for " + d.model + ", " +
                                                        predict_defaults().data + " for another --model)"
                                                  : std::string()))
                      ->capture_default_str();
  app.add_flag("--prefetch", r.prefetch, "--data host: copy the next batch from pinned memory while the GPU computes");
  f.host_option = app.add_option("--host", r.host,
                                  d.scenario ? "host CPU profile id (data/hosts; default " + d.host + " for " + d.model +
                                                   ", the data file's default host for another --model)"
                                             : std::string("host CPU profile id (data/hosts; default: the data file's "
                                                           "default host)"))
                      ->capture_default_str();
  app.add_option("--host-cores", f.host_cores, "CPU cores feeding the input pipeline");
  app.add_option("--dataset", r.dataset, "dataset profile id (data/datasets)");
  app.add_flag("--channels-last", r.channels_last, "NHWC memory format (no layout transposes for tensor cores)");
  app.add_flag("--cuda-graphs", r.cuda_graphs, "capture the step in a CUDA graph (removes per-kernel dispatch)");
  app.add_flag("--gpu-decode", r.gpu_decode, "decode and augment input on the GPU (DALI/nvJPEG)");
  app.add_option("--gpus", f.gpus, "GPUs per node (data parallel)")->capture_default_str();
  app.add_option("--nodes", f.nodes, "nodes (data parallel)")->capture_default_str();
  app.add_option("--tp", f.tp, "tensor-parallel degree (--mode serve: GPUs each layer is split across)")->capture_default_str();
  app.add_option("--pp", f.pp, "pipeline-parallel degree (--mode serve: stages of consecutive layers)")->capture_default_str();
  app.add_option("--interconnect", r.interconnect, "pcie3|pcie4|pcie5|nvlink-bridge|nvlink|nvswitch");
  app.add_option("--network", r.network, "10gbe|25gbe|100gbe|ib-edr|ib-hdr|ib-ndr");
  app.add_option("--strategy", r.strategy,
                 "gradient reduction with --gpus/--nodes: ddp, horovod, replicated, nccl, kvstore, ps, cntk, "
                 "chainermn (default: the runtime's)");
  app.add_flag("--fp16-grads", r.fp16_gradients, "compress gradients to fp16 before reducing them");
  app.add_flag("--hierarchical", r.hierarchical, "hierarchical all-reduce across nodes");
  app.add_option("--power-limit", f.power_limit,
                 "board power limit in watts (what-if), within the board's range (nvidia-smi -q: Min/Max Power Limit)");
}

void add_report_flags(CLI::App& app, ReportFlags& f) {
  app.add_flag("--json", f.json, "machine-readable output (same content; keys never change with --lang)");
  app.add_option("--lang", f.lang, "report language: en | zh")->capture_default_str();
  app.add_option("--html", f.html, "also write the report as a self-contained HTML page to this file");
}

void add_measured_flags(CLI::App& app, std::string& measured, std::string& measured_step) {
  app.add_option("--measured", measured,
                 "your measured throughput of this configuration, e.g. 350 or 350/s (samples/s; tokens/s for token "
                 "models): what-ifs scale from it");
  app.add_option("--measured-step", measured_step, "your measured step time, e.g. 120ms, 0.12s or 120000us");
}

}  // namespace perfcast::cli
