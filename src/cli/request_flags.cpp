#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

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
  if (ec != std::errc() || ptr != text.data() + text.size() || v <= 0)
    throw InputError(fmt::format("{} must be a positive number, got '{}'", flag, text));
  return v;
}

// A model recorded at a batch (a profiler trace) is predicted at that batch unless --batch says otherwise. Only files
// are resolved here: a zoo id has no recorded batch.
std::int64_t default_batch(const std::string& model) {
  if (model.ends_with(".json") || model.ends_with(".json.gz")) {
    const std::int64_t b = resolve_model(model).natural_batch;
    if (b > 0) return b;
  }
  return 64;
}

}  // namespace

PredictRequest RequestFlags::to_request() const {
  PredictRequest r = request;
  const bool serving = r.mode == "prefill" || r.mode == "decode" || r.mode == "generate";
  if (!precision.empty()) r.precision = precision;
  else if (serving) r.precision = r.runtime == "llama.cpp" ? "f16" : "fp16";  // nobody serves LLM weights in fp32
  if (batch.empty()) r.batch = serving ? 1 : default_batch(r.model);
  else r.batch = parse_count(batch, "--batch", false, true);
  if (!seq.empty()) r.seq = parse_count(seq, "--seq", false);
  if (!context.empty()) r.context = parse_count(context, "--context", true);
  if (!lora_rank.empty()) r.lora_rank = parse_count(lora_rank, "--lora-rank", false);
  if (!host_cores.empty()) r.host_cores = static_cast<int>(parse_count(host_cores, "--host-cores", false));
  r.gpus = static_cast<int>(parse_count(gpus, "--gpus", false));
  r.nodes = static_cast<int>(parse_count(nodes, "--nodes", false));
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

void add_request_flags(CLI::App& app, RequestFlags& f, bool with_gpu) {
  auto& r = f.request;
  if (with_gpu) app.add_option("--gpu", r.gpu, "GPU id (perfcast gpus) or a GPU .toml file")->capture_default_str();
  app.add_option("--model", r.model, "model id (perfcast models), a config.json or an .onnx file")->capture_default_str();
  app.add_option("--mode", r.mode, "train | infer | prefill | decode | generate (prefill --context tokens, then decode --seq)")
      ->capture_default_str();
  app.add_option("--precision", f.precision,
                 "fp32 tf32 fp16 bf16 amp amp-bf16 int8 fp8, or a GGUF type (default fp32; fp16 / f16 for prefill, decode, "
                 "generate)");
  app.add_option("--batch", f.batch,
                 "samples per GPU per step, or 'max' for the largest that fits (default 64; 1 for prefill/decode/generate; a "
                 "profiler trace: the batch it recorded)");
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
  app.add_option("--data", r.data,
                 "synthetic (batch made on the GPU) | host (tensors in host memory, copied every step) | real | "
                 "real-augmented (decoded from files)")
      ->capture_default_str();
  app.add_flag("--prefetch", r.prefetch, "--data host: copy the next batch from pinned memory while the GPU computes");
  app.add_option("--host", r.host, "host CPU profile id (data/hosts)");
  app.add_option("--host-cores", f.host_cores, "CPU cores feeding the input pipeline");
  app.add_option("--dataset", r.dataset, "dataset profile id (data/datasets)");
  app.add_flag("--channels-last", r.channels_last, "NHWC memory format (no layout transposes for tensor cores)");
  app.add_flag("--cuda-graphs", r.cuda_graphs, "capture the step in a CUDA graph (removes per-kernel dispatch)");
  app.add_flag("--gpu-decode", r.gpu_decode, "decode and augment input on the GPU (DALI/nvJPEG)");
  app.add_option("--gpus", f.gpus, "GPUs per node (data parallel)")->capture_default_str();
  app.add_option("--nodes", f.nodes, "nodes (data parallel)")->capture_default_str();
  app.add_option("--interconnect", r.interconnect, "pcie3|pcie4|pcie5|nvlink-bridge|nvlink|nvswitch");
  app.add_option("--network", r.network, "10gbe|25gbe|100gbe|ib-edr|ib-hdr|ib-ndr");
  app.add_option("--strategy", r.strategy,
                 "gradient reduction with --gpus/--nodes: ddp, horovod, replicated, nccl, kvstore, ps, cntk, "
                 "chainermn (default: the runtime's)");
  app.add_flag("--fp16-grads", r.fp16_gradients, "compress gradients to fp16 before reducing them");
  app.add_flag("--hierarchical", r.hierarchical, "hierarchical all-reduce across nodes");
  app.add_option("--power-limit", f.power_limit, "board power limit in watts (what-if)");
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-perfcast";
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw InputError("cannot write '" + path + "'");
    out << content;
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw InputError("cannot write '" + path + "'");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError("cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace perfcast::cli
