#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "analysis/llm_parallel.h"
#include "analysis/request_resolution.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/error.h"
#include "core/limits.h"
#include "cost/attention_kernels.h"
#include "import/model_source.h"
#include "runtime/harness_profile.h"
#include "runtime/llm_model_code.h"

namespace perfcast::cli {

namespace {

// --batch: a count, or "max" (0) for the largest batch that fits.
std::int64_t batch_flag(const std::string& text) {
  return text == "max" ? 0 : count_flag(text, "--batch", 1, std::numeric_limits<std::int64_t>::max(), " or 'max'");
}

// A model recorded at a batch (a profiler trace) is predicted at that batch unless --batch says otherwise. Only files
// are resolved here: a zoo id has no recorded batch.
std::int64_t default_batch(const PredictRequest& r, const std::string& fallback) {
  if (r.model.ends_with(".json") || r.model.ends_with(".json.gz")) {
    const std::int64_t b = resolve_model(r.model, import_options(r)).natural_batch;
    if (b > 0) return b;
  }
  return batch_flag(fallback);
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
  r.mode = parse_mode(mode);
  if (!device.empty()) {
    if (gpu_option && gpu_option->count() > 0) throw InputError("--gpu and --device name the same thing: give one");
    r.gpu = device;
  } else if (gpu_option && gpu_option->count() > 0 && is_cpu_device(r.gpu)) {
    throw InputError("'" + r.gpu + "' is a CPU (perfcast cpus): pass it with --device");
  }
  // Another model than the scenario's: batch, data and host are predict's defaults (help text of --batch, --data).
  const RequestDefaults& d = defaults.scenario && r.model != defaults.model ? predict_defaults() : defaults;
  if (defaults.scenario && r.model != defaults.model) {
    if (!data_option || data_option->count() == 0) r.data = d.data;
    if (!host_option || host_option->count() == 0) r.host = d.host;
  }
  const bool serving = is_serving(r.mode);
  if (!precision.empty()) r.precision = precision;
  else if (serving) r.precision = r.runtime == "llama.cpp" ? "f16" : "fp16";  // nobody serves LLM weights in fp32
  // The model's import options (--dim, --seq) before the default batch, which may resolve the model.
  if (!seq.empty()) r.seq = count_flag(seq, "--seq", 1);
  for (const auto& d : dims) {
    const auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--dim takes name=value, got '" + d + "'");
    r.dims[d.substr(0, eq)] = count_flag(d.substr(eq + 1), "--dim value", 1);
  }
  if (batch.empty()) r.batch = serving ? 1 : default_batch(r, d.train_batch);
  else r.batch = batch_flag(batch);
  if (!seq_mean.empty()) r.seq_mean = count_flag(seq_mean, "--seq-mean", 1);
  if (!context.empty()) r.context = count_flag(context, "--context", 0);
  if (!max_positions.empty()) r.max_positions = count_flag(max_positions, "--max-positions", 1);
  if (!lora_rank.empty()) r.lora_rank = count_flag(lora_rank, "--lora-rank", 1);
  // Clamped before narrowing to int: the library refuses counts past data/scale_limits.toml with the reason.
  constexpr std::int64_t kCountCap = std::numeric_limits<int>::max();
  if (!host_cores.empty()) r.host_cores = static_cast<int>(std::min(count_flag(host_cores, "--host-cores", 1), kCountCap));
  r.gpus = static_cast<int>(std::min(count_flag(gpus, "--gpus", 1), kCountCap));
  r.nodes = static_cast<int>(std::min(count_flag(nodes, "--nodes", 1), kCountCap));
  if (!power_limit.empty()) r.power_limit_w = number_flag(power_limit, "--power-limit");
  if (!instances.empty()) r.instances = static_cast<int>(std::min(count_flag(instances, "--instances", 1), kCountCap));
  if (!cores.empty()) r.cores = static_cast<int>(std::min(count_flag(cores, "--cores", 1), kCountCap));
  r.numa_pages = numa_pages;
  if (!optimizer.empty()) r.optimizer = optimizer;
  if (!parse_generation_kernel(r.attention))
    parse_attention_impl(r.attention);  // a typo fails here, before any prediction
  check_conv_algo(r.conv_algo);
  if (!r.harness.empty()) find_harness(r.harness);
  if (!r.llm_code.empty() && r.llm_code != "none") find_llm_model_code(r.llm_code);
  r.optimizer_step = !no_optimizer_step;
  if (fused_optimizer && unfused_optimizer)
    throw InputError("--fused-optimizer and --unfused-optimizer exclude each other");
  if (fused_optimizer || unfused_optimizer) r.fused_optimizer = fused_optimizer;
  if (!grad_accum.empty())
    r.grad_accum =
        static_cast<int>(std::min<std::int64_t>(count_flag(grad_accum, "--grad-accum", 1), kMaxGradAccum + 1));
  // Training layout: counts clamped before narrowing; check_layout refuses what no model or GPU count takes.
  auto degree = [&](const std::string& text, const char* flag, int fallback) {
    return text.empty() ? fallback : static_cast<int>(std::min(count_flag(text, flag, 1), kCountCap));
  };
  r.tensor_parallel = degree(tp, "--tp", 1);
  r.pipeline_parallel = degree(pp, "--pp", 1);
  r.data_parallel = degree(dp, "--dp", 0);
  r.expert_parallel = degree(ep, "--ep", 1);
  r.context_parallel = degree(cp, "--cp", 1);
  r.virtual_pipeline = degree(vpp, "--vpp", 1);
  if (!zero.empty()) {
    // ZeRO has stages 0 to 3 (Rajbhandari et al. 2020; DeepSpeed's zero_optimization.stage).
    r.zero_stage = static_cast<int>(count_flag(zero, "--zero", 0, 3));
  }
  if (!micro_batch.empty()) r.micro_batch = count_flag(micro_batch, "--micro-batch", 1);
  if (!global_batch.empty()) r.global_batch = count_flag(global_batch, "--global-batch", 1);
  // The training-set bound of data/limits.toml (max_dataset_samples, counted one token per sample there).
  if (!train_tokens.empty()) {
    const auto most = static_cast<double>(input_limits().max_dataset_samples);
    const std::string rule = fmt::format("a positive number up to {:g} (data/limits.toml max_dataset_samples)", most);
    r.train_tokens = number_flag(train_tokens, "--train-tokens", {0, true, most, rule});
  }
  if (sequence_parallel && no_sequence_parallel)
    throw InputError("--sequence-parallel and --no-sequence-parallel exclude each other");
  if (sequence_parallel || no_sequence_parallel) r.sequence_parallel = sequence_parallel;
  if (overlap_grad_reduce) r.overlap_grad_reduce = true;
  if (precision.empty() && r.mode == Mode::kTrain && wants_parallel_training(r)) r.precision = "amp-bf16";
  return r;
}

void add_request_flags(CLI::App& app, RequestFlags& f, const RequestDefaults& d, bool with_gpu) {
  auto& r = f.request;
  // The flags --mode serve does not read (a request stream has its own lengths and batch limit), tagged here where
  // they are declared so that predict's serve mode refuses every one of them, a new one included.
  const auto step = [&f](CLI::Option* o) {
    f.not_for_serving.push_back(o);
    return o;
  };
  f.defaults = d;
  r.gpu = d.gpu;
  r.model = d.model;
  f.mode = d.mode;
  r.runtime = d.runtime;
  r.data = d.data;
  r.host = d.host;
  if (with_gpu) {
    f.gpu_option = app.add_option("--gpu", r.gpu, "GPU id (perfcast gpus) or a GPU .toml file")->capture_default_str();
    app.add_option("--device", f.device, "a GPU id (perfcast gpus) or a CPU id (perfcast cpus) to run on, in place of --gpu");
  }
  app.add_option("--model", r.model, "model id (perfcast models), a config.json, an .onnx file or a PyTorch profiler trace (.json[.gz], recorded with record_shapes=True)")->capture_default_str();
  app.add_option("--mode", f.mode, "train | infer | prefill | decode | generate (prefill --context tokens, then decode --seq) | serve "
                 "(predict: continuous batching under load, --request-rate)")
      ->capture_default_str();
  app.add_option("--precision", f.precision,
                 "fp32 tf32 fp16 bf16 amp amp-bf16 int8 fp8, or a GGUF type (default fp32; fp16 / f16 for prefill, decode, "
                 "generate)");
  step(app.add_option("--batch", f.batch,
                      "samples per GPU per step, or 'max' for the largest that fits (" + d.batch_help + ")"));
  step(app.add_option("--seq", f.seq, "tokens per sample (sequence models); decode: tokens generated"));
  step(app.add_option(
      "--seq-mean", f.seq_mean,
      "mean real tokens per sequence for a runtime that runs without padding (TensorRT's variable-length "
      "BERT plugins): cost follows these tokens, --seq stays the longest"));
  step(app.add_option("--context", f.context, "decode: tokens already in the KV cache"));
  app.add_option("--max-positions", f.max_positions,
                      "run a rotary/ALiBi decoder LLM past the context its config states (max_position_embeddings), "
                      "as with RoPE scaling (linear, dynamic NTK, YaRN) or a long-context fine-tune: --seq and "
                      "--context + --seq (serve: --input-len + --output-len) may reach this many positions; cost and memory "
                 "follow the sequence run");
  app.add_option("--kv-precision", r.kv_precision, "KV-cache precision (default: the activation precision)");
  app.add_option("--runtime", r.runtime, "runtime profile (perfcast runtimes)")->capture_default_str();
  app.add_option("--runtime-version", r.runtime_version,
                 "framework version, e.g. 2.3: applies the profile's version rules (TF32 defaults)");
  app.add_option(
      "--attention", r.attention,
      "eager | sdpa | flash | flash1: Hugging Face's attn_implementation (eager kernels; PyTorch's "
      "scaled_dot_product_attention dispatch, from PyTorch 2.0; the flash_attn 2.x package, FlashAttention-2, sm_80+; "
      "the flash_attn 1.x package, sm_75..sm_90; both from PyTorch 1.12). Default: the runtime's (fused from PyTorch "
      "2.0). "
      "TensorRT-LLM: xqa | mmha, its generation-phase kernel for grouped-query models (XQA, on with "
      "TRTLLM_ENABLE_XQA=1 before 0.9; masked MHA, which reads each KV head once per query head)");
  step(app.add_option(
      "--conv-algo", r.conv_algo,
      "autotune | heuristic: cuDNN convolution algorithms chosen by timing each (torch.backends.cudnn."
      "benchmark = True, TF_CUDNN_USE_AUTOTUNE=1) or by cuDNN's heuristic. Default: the runtime's documented "
      "default (PyTorch: heuristic; TensorFlow, MXNet, TensorRT: autotune)"));
  step(app.add_option(
      "--harness", r.harness,
      "how the measurement was timed: a benchmark loop from data/harnesses (e.g. paddle-inference-dali) whose "
      "per-step host work and synchronisation replace the runtime's. Default: the runtime's own loop"));
  app.add_option("--llm-code", r.llm_code,
                 "decode/prefill/generate: the eager Python code that runs the model, from data/llm_code (transformers: "
                 "Hugging Face modeling code and model.generate; gpt-fast: its model.py and generate.py) or none (the "
                 "graph's ops alone). Default: the runtime's (PyTorch: transformers)");
  step(
      app.add_option("--optimizer", f.optimizer, "sgd | adam | adamw | lamb (default: sgd for CNNs, adamw otherwise)"));
  step(app.add_flag("--no-optimizer-step", f.no_optimizer_step, "time forward+backward only"));
  step(app.add_flag("--fused-optimizer", f.fused_optimizer,
                    "one fused update kernel (apex FusedAdam, torch.optim fused=True); default: the runtime's (PyTorch "
                    "eager makes one pass per operation)"));
  step(app.add_flag("--unfused-optimizer", f.unfused_optimizer,
                    "one pass over the tensors per operation of the update"));
  step(app.add_flag("--checkpointing", r.checkpointing, "activation checkpointing (recompute in backward)"));
  step(app.add_flag(
      "--amp-o2", r.amp_o2,
      "with --precision amp / amp-bf16: mixed precision as apex amp O2 (NVIDIA DeepLearningExamples' --fp16): "
      "the model cast to half with FP32 master weights, no autocast, so softmax runs and is kept in half and "
      "the gradients are half; default: torch.cuda.amp autocast"));
  step(app.add_option(
      "--embedding-precision", r.embedding_precision,
      "recommendation models: fp32 | fp16 | bf16, the precision of the embedding tables, their looked-up "
      "vectors and the feature interaction when it differs from --precision, which then sets the MLPs "
      "(NVIDIA's 2020 PyTorch DLRM: --precision amp --embedding-precision fp32). Default: the tables as the "
      "model file stores them, vectors and interaction at --precision"));
  step(app.add_option(
      "--grad-accum", f.grad_accum,
      "micro-batches of --batch per weight update (gradient accumulation): the optimizer and, with --gpus, "
      "the gradient all-reduce run once per update"));
  step(app.add_option("--lora-rank", f.lora_rank, "fine-tune LoRA adapters of this rank instead of all weights"));
  app.add_option("--dim", f.dims, "ONNX dynamic dimension, name=value (repeatable)");
  f.data_option =
      step(app.add_option("--data", r.data,
                          "synthetic (batch made on the GPU) | host (tensors in host memory, copied every step) | "
                          "real | real-augmented (decoded from files)" +
                              (d.scenario ? " (default " + d.data + " for " + d.model + ", " + predict_defaults().data +
                                                " for another --model)"
                                          : std::string()))
               ->capture_default_str());
  step(app.add_flag("--prefetch", r.prefetch,
                    "--data host: copy the next batch from pinned memory while the GPU computes"));
  f.host_option = app.add_option("--host", r.host,
                                  d.scenario ? "host CPU profile id (data/hosts; default " + d.host + " for " + d.model +
                                                   ", the data file's default host for another --model)"
                                             : std::string("host CPU profile id (data/hosts; default: the data file's "
                                                           "default host)"))
                      ->capture_default_str();
  step(app.add_option("--host-cores", f.host_cores, "CPU cores feeding the input pipeline"));
  step(
      app.add_option("--instances", f.instances,
                     "CPU devices, --mode infer: run this many processes of the model side by side, each at --batch on "
                     "cores / instances cores of one socket (Intel's multi-instance mode: ipexrun --ninstances, "
                     "torch.backends.xeon.run_cpu); throughput counts them all, latency is one process's (default 1)"));
  step(app.add_option(
      "--cores", f.cores,
      "CPU devices: the physical cores one process runs on, one thread each (OMP_NUM_THREADS, "
      "torch.set_num_threads, intra_op_num_threads); packed onto one socket while they fit. A cloud vCPU is "
      "one hyper-thread: N vCPUs of an SMT instance are N / 2 cores. With --instances, each process's "
      "cores (default: every core, or cores / instances)"));
  step(app.add_option(
      "--numa-pages", f.numa_pages,
      "CPU devices on two sockets: where one process's pages live. first-touch: on the node of the thread "
      "that wrote them first, for good (numactl --membind/-m, --localalloc, or kernel.numa_balancing=0); "
      "balanced: Linux's automatic NUMA balancing moves each page to the node whose threads read it (a "
      "process started without numactl on a kernel with numa_balancing=1, distributions' default) "
      "(default first-touch)"));
  step(app.add_option("--dataset", r.dataset, "dataset profile id (data/datasets)"));
  step(app.add_flag("--channels-last", r.channels_last, "NHWC memory format (no layout transposes for tensor cores)"));
  step(app.add_flag("--cuda-graphs", r.cuda_graphs, "capture the step in a CUDA graph (removes per-kernel dispatch)"));
  step(app.add_flag("--gpu-decode", r.gpu_decode, "decode and augment input on the GPU (DALI/nvJPEG)"));
  app.add_option("--gpus", f.gpus, "GPUs per node (data parallel)")->capture_default_str();
  app.add_option("--nodes", f.nodes, "nodes (data parallel)")->capture_default_str();
  app.add_option("--interconnect", r.interconnect, "pcie3|pcie4|pcie5|nvlink-bridge|nvlink|nvswitch");
  step(app.add_option("--network", r.network, "10gbe|25gbe|100gbe|ib-edr|ib-hdr|ib-ndr"));
  step(app.add_option("--strategy", r.strategy,
                      "gradient reduction with --gpus/--nodes: ddp, horovod, horovod21 (Horovod 0.21+: 1 ms cycle), "
                      "replicated, nccl, kvstore, ps, cntk, "
                      "chainermn (default: the runtime's)"));
  step(app.add_flag("--fp16-grads", r.fp16_gradients, "compress gradients to fp16 before reducing them"));
  step(app.add_flag("--hierarchical", r.hierarchical, "hierarchical all-reduce across nodes"));
  app.add_option("--tp", f.tp, "tensor-parallel GPUs per layer (Megatron column/row split; LLM training and --mode serve)");
  app.add_option("--pp", f.pp, "pipeline stages (1F1B in LLM training; consecutive layers per stage in --mode serve)");
  step(app.add_option("--dp", f.dp, "data-parallel replicas (default: the GPUs left by tp x pp x cp)"));
  step(app.add_option("--ep", f.ep, "expert-parallel GPUs (mixture-of-experts models; inside --dp)"));
  step(app.add_option("--cp", f.cp, "context-parallel GPUs per sequence (ring attention)"));
  step(app.add_option("--vpp", f.vpp, "model chunks per pipeline stage (interleaved 1F1B; bubble (pp-1)/(m x vpp))"));
  step(app.add_option("--zero", f.zero, "ZeRO stage 0-3: shard optimizer states (1), gradients (2), parameters (3)"));
  step(app.add_flag("--fsdp", r.fsdp, "PyTorch FSDP full sharding (ZeRO-3, overlapped, 16-bit gradient reduction)"));
  step(app.add_option("--micro-batch", f.micro_batch, "sequences per micro-batch per replica (default 1)"));
  step(app.add_option("--global-batch", f.global_batch,
                      "sequences per optimizer step over all replicas (default micro-batch x dp x 4 x pp)"));
  step(app.add_option("--recompute", r.recompute, "activation recomputation: none | selective | full"));
  step(app.add_flag("--offload-optimizer", r.offload_optimizer,
                    "optimizer states and update on the host CPU (ZeRO-Offload)"));
  step(app.add_flag("--sequence-parallel", f.sequence_parallel,
                    "Megatron sequence parallelism (default with --tp > 1)"));
  step(app.add_flag("--no-sequence-parallel", f.no_sequence_parallel, "plain tensor parallelism (all-reduces)"));
  step(app.add_flag("--overlap-grad-reduce", f.overlap_grad_reduce,
                    "data-parallel reduction overlaps backward (Megatron-Core --overlap-grad-reduce; FSDP always)"));
  step(app.add_option("--train-tokens", f.train_tokens,
                      "report the time and cost to train this many tokens (1e12, 2e12 ...)"));
  app.add_option("--power-limit", f.power_limit,
                 "board power limit in watts (what-if), within the board's range (nvidia-smi -q: Min/Max Power Limit)");
}

void add_report_flags(CLI::App& app, ReportFlags& f) {
  app.add_flag("--json", f.json, "machine-readable output (same content; keys never change with --lang)");
  app.add_option("--lang", f.lang, "report language: en | zh")->capture_default_str();
  app.add_option("--html", f.html, "also write the report as a self-contained HTML page to this file");
}

void add_measured_flags(CLI::App& app, std::string& measured, std::string& measured_step,
                        std::vector<const CLI::Option*>* not_for_serving) {
  const CLI::Option* m =
      app.add_option("--measured", measured,
                     "your measured throughput of this configuration, e.g. 350, 350/s, 21000/min or 1.26e6/h (samples; tokens "
                     "for token models): what-ifs scale from it");
  const CLI::Option* step =
      app.add_option("--measured-step", measured_step, "your measured step time, e.g. 120ms, 0.12s or 120000us");
  if (not_for_serving) not_for_serving->insert(not_for_serving->end(), {m, step});
}

void refuse_flags_beside_configs(const CLI::App& app, const std::string& columns) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0) continue;
    const std::string name = o->get_name();
    if (name == "--configs" || name == "--out" || name == "--lang" || name == "--help") continue;
    if (name == "--dim")
      throw InputError("--dim does not apply with --configs: no column gives an ONNX model's dynamic dimensions, so "
                       "predict that model on its own (predict --model FILE.onnx --dim NAME=N)");
    throw InputError(name + " does not apply with --configs: each row is predicted from its own columns (" + columns +
                     "), so set it in the file");
  }
}

}  // namespace perfcast::cli
