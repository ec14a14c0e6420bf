// Language-model inference (prefill, decode, generate) and LoRA fine-tuning: request resolution and the order of
// the passes. Inference runs the model's graph one forward pass at a time: a prefill pass over the prompt tokens
// (split in micro-batches as the runtime does), or a decode step of one token per sequence against a KV cache of
// the context so far. The passes' kernels come from cost/llm_kernels.cpp, their sum from schedule_pass
// (schedule/step.h) and their memory from estimate_memory (schedule/memory.h), as every other mode's.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "analysis/llm_ridge.h"
#include "analysis/llm_step_model.h"
#include "analysis/predict.h"
#include "analysis/request_resolution.h"
#include "core/error.h"
#include "cost/cost_constants.h"
#include "cost/llm_kernels.h"
#include "cost/precision_note.h"
#include "cost/quantization.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/op_arithmetic.h"
#include "import/model_source.h"
#include "runtime/llm_model_code.h"
#include "schedule/memory.h"
#include "schedule/step.h"

namespace perfcast {

namespace {

void repeat_all(std::vector<OpCost>& entries, double times) {
  for (auto& e : entries) repeat(e, times);
}

// ---- memory -------------------------------------------------------------------------------------------------

double kv_cache_bytes(const LlmShape& s, double batch, double positions, double kv_bytes) {
  return static_cast<double>(s.layers) * batch * positions * 2.0 * static_cast<double>(s.kv_heads * s.head_dim) * kv_bytes;
}

// Working buffers of one pass: the largest producer/consumer pair, the score matrix of unfused attention, and
// llama.cpp's fp16 copy of the largest weight on its cuBLAS path.
double activation_bytes(const Graph& g, std::int64_t kv_len, const LlmKernelContext& c) {
  double widest = 0;
  for (const auto& op : g.ops)
    if (is_weight_matmul(op)) widest = std::max(widest, static_cast<double>(op.mm.n * op.mm.k));
  double bytes = live_buffer_elems(g) * c.runtime.llm_activation_bytes;
  if (!c.runtime.llm_fused_attention)
    bytes += static_cast<double>(g.batch * c.shape.heads * g.seq * attended_keys(g.seq, kv_len, c.shape.window, c.runtime)) * 4.0;
  if (c.runtime.llm_gguf && c.half_pipe && static_cast<double>(g.batch * g.seq) > c.runtime.llm_int8_tile_max_batch)
    bytes += widest * 2.0;
  return bytes;
}

// What the engine does with a sliding-window model's window past it (runtime llm_window_attention and
// llm_window_kv_cache, or the eager code's kv_cache_window).
std::string window_note(std::int64_t window, const RuntimeProfile& runtime, const LlmModelCode* code) {
  const std::string w = std::to_string(window);
  const std::string reads = window_bounds_reads(window, runtime)
                                ? "a decode step reads at most the window's " + w + " keys"
                                : "every cached key is scored and masked (its kernels do not skip the keys outside it)";
  const std::string cache = runtime.llm_window_kv_cache ? "the KV cache keeps at most " + w + " positions per sequence"
                                                        : "the KV cache keeps every position";
  return "sliding-window attention, window " + w + " (config sliding_window) on " + runtime.id + ": " + reads + "; " +
         cache + (runtime.llm_window_attention ? "; its flash prefill computes only the window's blocks" : "") +
         " (data/runtimes/" + runtime.id + ".toml llm_window_attention" +
         (code ? "; the cache: data/llm_code/" + code->id + ".toml kv_cache_window)" : ", llm_window_kv_cache)");
}

// ---- request resolution -------------------------------------------------------------------------------------

double kv_element_bytes(const std::string& name) {
  static const std::vector<std::string> names{"f32", "fp32", "f16", "fp16", "bf16", "q8_0", "q4_0", "fp8", "int8"};
  if (name == "f32" || name == "fp32") return 4;
  if (name == "f16" || name == "fp16" || name == "bf16") return 2;
  if (name == "q8_0") return 34.0 / 32.0;
  if (name == "q4_0") return 18.0 / 32.0;
  if (name == "fp8" || name == "int8") return 1;
  throw_unknown("KV-cache precision", name, names);
}

std::string fmt_count(double v) {
  std::ostringstream s;
  s.precision(3);
  if (v >= 1e9) s << v / 1e9 << " B";
  else if (v >= 1e6) s << v / 1e6 << " M";
  else s << v;
  return s.str();
}

// ---- LoRA fine-tuning ---------------------------------------------------------------------------------------

Op adapter_op(std::int64_t rows, std::int64_t in, std::int64_t out, bool needs_input_grad) {
  Op op;
  op.kind = OpKind::kMatmul;
  op.name = "lora";
  op.inputs = {-1};
  op.mm = MatmulGeometry{1, rows, out, in, true, false};
  op.in_elems = rows * in;
  op.out_elems = rows * out;
  op.params = in * out;
  op.weight_elems = in * out;
  op.needs_input_grad = needs_input_grad;
  op.saves_input = true;
  return op;
}

bool lora_target(const Op& op) {
  if (!is_weight_matmul(op) || op.params <= 0) return false;
  int layer = 0;
  const TensorRole role = tensor_role(op.name, &layer);
  return role != TensorRole::kOutput && role != TensorRole::kRouter && role != TensorRole::kTokenEmbedding;
}

Prediction predict_lora(const PredictRequest& request) {
  PredictRequest r = request;
  const DeviceSpec device = device_for(r);
  const RuntimeProfile runtime = runtime_for(r);
  const ArchitectureProfile arch = architecture_for(device);
  const ModelSource model = model_for(r);
  if (!model.sequence) throw InputError("--lora-rank applies to sequence models; '" + r.model + "' is not one");
  const PrecisionPlan plan = resolve_precision(r.precision, device, arch, runtime, r.runtime_version, true);
  const AttentionPlan attention = attention_plan_for(r, runtime, device, true);
  if (r.seq == 0) r.seq = model.default_seq;
  const OptimizerKind optimizer = optimizer_for(r, model.sequence);
  const std::int64_t rank = r.lora_rank;
  if (r.gpus * r.nodes > 1)
    throw UnsupportedError("data-parallel LoRA fine-tuning is not modelled: predict one GPU (--gpus 1)",
                           {"lora.data_parallel", {}});

  // Frozen weights stay in the compute precision (no fp32 masters, no gradients, no optimizer state); each
  // adapted projection W (k x n) gains A (k x r) and B (r x n), trained in fp32 with the optimizer.
  auto memory_at = [&](std::int64_t batch, std::int64_t* adapter_params) {
    const Graph g = graph_as_run(model, ModelOptions{batch, r.seq}, runtime, attention);
    double adapters = 0, adapter_act = 0;
    for (const auto& op : g.ops)
      if (lora_target(op)) {
        adapters += static_cast<double>(rank * (op.mm.k + op.mm.n) * op.mm.batch);
        adapter_act += static_cast<double>(op.in_elems / op.mm.k * rank);
      }
    if (adapter_params) *adapter_params = static_cast<std::int64_t>(adapters);
    MemoryOptions options = memory_options(r, optimizer);
    options.lora = MemoryOptions::Adapters{adapters, adapter_act};
    return estimate_memory(g, plan, runtime, device, options);
  };
  if (r.batch == 0) {
    r.batch = largest_batch_that_fits(1 << 16, [&](std::int64_t b) { return memory_at(b, nullptr).fits; });
    if (r.batch == 0)
      throw UnsupportedError("model '" + r.model + "' does not fit on " + device.id + " for LoRA even at batch 1",
                             {"memory.lora_no_batch_fits", {{"model", r.model}, {"gpu", device.id}}});
  }

  const Graph graph = graph_as_run(model, ModelOptions{r.batch, r.seq}, runtime, attention);
  const KernelCostModel km(device, arch);
  const CostContext ctx{km, runtime, plan, true};
  const auto& cc = cost_constants();
  std::vector<OpCost> fwd, bwd;
  std::int64_t adapter_params = 0;
  double adapter_tensors = 0;
  auto adapters_of = [&](const Op& op) {
    const std::int64_t rows = op.in_elems / op.mm.k;  // routed rows for experts
    return std::vector<Op>{adapter_op(rows, op.mm.k, rank, op.needs_input_grad), adapter_op(rows, rank, op.mm.n, true)};
  };
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    fwd.push_back(cost_op(graph.ops, i, Phase::kForward, ctx));
    if (!lora_target(op)) continue;
    adapter_params += rank * (op.mm.k + op.mm.n) * op.mm.batch;
    adapter_tensors += 2;
    for (const Op& a : adapters_of(op)) fwd.push_back(cost_op(std::vector<Op>{a}, 0, Phase::kForward, ctx));
  }
  for (std::size_t i = graph.ops.size(); i-- > 0;) {
    const Op& op = graph.ops[i];
    if (op.kind == OpKind::kEmbedding) continue;  // frozen table, nothing upstream
    if (is_weight_matmul(op)) {
      if (lora_target(op))
        for (const Op& a : adapters_of(op)) bwd.push_back(cost_op(std::vector<Op>{a}, 0, Phase::kBackward, ctx));
      if (!op.needs_input_grad) continue;
      // Frozen projection: the data gradient only (dA = dY W^T), no weight gradient.
      const auto& g = op.mm;
      const double flops = matmul_flops(g);
      const double bytes = static_cast<double>(op.in_elems + op.out_elems) * plan.bytes.act +
                           static_cast<double>(op.weight_elems) * plan.bytes.weight;
      const MatmulGeometry dg = data_grad_geometry(g, cc);
      // The same leading dimensions as the forward GEMM (cost_op), so the same alignment rule.
      const double lib = ctx.library_efficiency(plan.matmul_pipe) *
                         gemm_alignment_efficiency(g.n, g.k, plan.matmul_pipe, runtime, km);
      bwd.push_back(kernel_entry(op.name, OpKind::kMatmul, km.gemm(dg, plan.matmul_pipe, flops, bytes, lib * cc.dgrad_efficiency),
                                 Phase::kBackward));
      continue;
    }
    bwd.push_back(cost_op(graph.ops, i, Phase::kBackward, ctx));
  }
  std::vector<OpCost> entries = fwd;
  if (r.checkpointing)
    for (auto e : fwd)
      if (e.kind != OpKind::kLoss) {
        e.name += ".recompute";
        entries.push_back(e);
      }
  for (auto& e : bwd) entries.push_back(std::move(e));
  if (r.optimizer_step) {
    const Work w = optimizer_work(optimizer, static_cast<double>(adapter_params));
    entries.push_back(kernel_entry("optimizer.update", OpKind::kOptimizer,
                                   km.streaming(w.flops, w.bytes, std::max(1.0, adapter_tensors * runtime.optimizer_kernels_per_tensor)),
                                   Phase::kUpdate));
  }

  Prediction p = prediction_for(r, device, runtime, model);
  p.params = graph.params() + adapter_params;
  // The precision's note names only the op kinds this graph runs (a transformer has no convolution).
  PrecisionPlan shown = plan;
  note_only_present_ops(shown, p.runtime, math_ops_present(graph));
  p.precision_note = shown.note;
  p.precision_note_code = shown.note_code;
  p.notes.push_back("LoRA rank " + std::to_string(rank) + " on every attention and MLP projection: " +
                    fmt_count(static_cast<double>(adapter_params)) + " trainable of " +
                    fmt_count(static_cast<double>(p.params)) + " parameters; frozen weights get no gradients or optimizer state");
  if (const std::string note = attention_note(attention, graph); !note.empty()) p.notes.push_back(note);
  p.step = schedule_pass(std::move(entries), runtime);
  p.memory = memory_at(r.batch, nullptr);
  p.flops_per_sample = p.step.flops / static_cast<double>(r.batch);
  finalize_prediction(p);
  apply_power(p);
  return p;
}

// ---- inference ----------------------------------------------------------------------------------------------

// What an inference request resolves to: device, weights, runtime, model, pipes and KV-cache type, with the
// checks every inference mode makes (predict_inference, and the serving engine's step model).
struct InferSetup {
  PredictRequest r;
  DeviceSpec device;
  WeightPrecision weights;
  RuntimeProfile runtime;
  ArchitectureProfile arch;
  ModelSource model;
  std::optional<Pipe> half;
  Pipe float_pipe = Pipe::kFp32;
  std::string kv_name;
  double kv_bytes = 2;
  Graph probe;
  LlmShape shape;
  PrecisionPlan plan;
  const LlmModelCode* code = nullptr;  // the eager Python code that runs the passes (data/llm_code), if any
  std::vector<std::string> notes;
};

InferSetup resolve_inference(const PredictRequest& request) {
  InferSetup s;
  PredictRequest& r = s.r;
  r = request;
  s.device = device_for(r);
  const DeviceSpec& device = s.device;
  s.weights = resolve_weight_precision(r.precision);
  const WeightPrecision& weights = s.weights;
  std::vector<std::string>& notes = s.notes;
  // GGUF files run on llama.cpp; the default framework profile cannot load them.
  if (weights.scheme == WeightScheme::kGguf && weights.name != "f16" && r.runtime == "pytorch") {
    r.runtime = "llama.cpp";
    notes.push_back("GGUF type " + weights.name + " runs with llama.cpp's kernels (--runtime llama.cpp)");
  }
  s.runtime = runtime_for(r);
  RuntimeProfile& runtime = s.runtime;
  s.arch = architecture_for(device);
  const ArchitectureProfile& arch = s.arch;
  s.model = model_for(r);
  const ModelSource& model = s.model;
  if (!model.decoder_llm)
    throw InputError("--mode " + mode_string(r.mode) + " needs a decoder language model; '" + r.model + "' (" + model.family +
                     ") is not one (see perfcast models, family llm)");
  if (device.sm_version < runtime.llm_min_sm) {
    const std::string min_cc = std::to_string(static_cast<int>(runtime.llm_min_sm) / 10) + "." +
                               std::to_string(static_cast<int>(runtime.llm_min_sm) % 10);
    throw UnsupportedError(runtime.id + " needs compute capability " + min_cc + " or newer; " + device.id + " is sm_" +
                               std::to_string(device.sm_version),
                           {"runtime.needs_sm",
                            {{"runtime", runtime.id},
                             {"min_cc", min_cc},
                             {"gpu", device.id},
                             {"sm", std::to_string(device.sm_version)}}});
  }
  if (runtime.llm_gguf && weights.scheme != WeightScheme::kGguf && weights.name != "fp32")
    throw UnsupportedError(runtime.id + " runs GGUF weight types (f16 q8_0 q4_0 ... q6_k); '" + weights.name +
                               "' is for the serving engines (vllm, tensorrt-llm, pytorch)",
                           {"runtime.gguf_only", {{"runtime", runtime.id}, {"precision", weights.name}}});
  if (!runtime.llm_gguf && weights.scheme == WeightScheme::kGguf && weights.name != "f16")
    throw UnsupportedError("GGUF type '" + weights.name + "' runs on llama.cpp (--runtime llama.cpp); " + runtime.id +
                               " takes fp16, bf16, fp32, int8, int4 or fp8",
                           {"runtime.no_gguf", {{"runtime", runtime.id}, {"precision", weights.name}}});

  // Pipes: the serving engines' GEMM precision, llama.cpp's fp16 cuBLAS path where tensor cores exist.
  std::optional<Pipe>& half = s.half;
  half = arch.math_pipe("fp16");
  if (half && (!is_tensor_pipe(*half) || device.peak(*half) <= 0)) half.reset();
  // llama.cpp asks cuBLAS for FP16 accumulation: GeForce boards run it at twice their FP32-accumulate rate.
  // (>=: TITAN RTX / Quadro RTX / T4 list equal peaks but sustain less with FP32 accumulation, see pipe_peak.)
  if (half && runtime.llm_fp16_accumulate && device.peak(Pipe::kTcFp16Fp16Acc) >= device.peak(*half))
    half = Pipe::kTcFp16Fp16Acc;
  Pipe& float_pipe = s.float_pipe;
  if (!runtime.llm_gguf) {
    std::string compute = weights.name == "fp8" ? "fp8" : weights.name == "bf16" ? "bf16" : weights.name == "fp32" ? "fp32" : "fp16";
    if (weights.name == "f16") compute = "fp16";
    const auto pipe = arch.math_pipe(compute);
    if (!pipe || device.peak(*pipe) <= 0)
      throw UnsupportedError("precision '" + weights.name + "' is not supported on " + device.id + " (sm_" +
                                 std::to_string(device.sm_version) + ") by " + runtime.id,
                             {"precision.unsupported_by_runtime",
                              {{"precision", weights.name}, {"gpu", device.id}, {"sm", std::to_string(device.sm_version)},
                               {"runtime", runtime.id}}});
    float_pipe = *pipe;
  }
  // The eager code: the request's --llm-code, else the runtime's (PyTorch runs Hugging Face transformers).
  const std::string code_id = r.llm_code.empty() ? runtime.llm_model_code : r.llm_code;
  if (!r.llm_code.empty() && r.llm_code != "none" && runtime.host_inline_op_us <= 0 && runtime.llm_model_code.empty())
    throw InputError("--llm-code (llm_code) applies to eager PyTorch (--runtime pytorch); runtime '" + runtime.id +
                     "' runs no Python per op");
  if (!code_id.empty() && code_id != "none") {
    s.code = &find_llm_model_code(code_id);
    // The eager code owns the cache: it keeps a sliding window's positions or all of them (data/llm_code).
    runtime.llm_window_kv_cache = s.code->kv_cache_window;
    notes.push_back("eager " + s.code->id + " code: " + fmt_count(s.code->python_ops_per_layer) +
                    " torch calls and " + fmt_count(s.code->kernels_per_layer) + " kernels per layer on the host (" +
                    "data/llm_code/" + s.code->id + ".toml; --llm-code none for the graph's ops alone)");
  }
  s.kv_name = r.kv_precision.empty() ? runtime.llm_kv_default : r.kv_precision;
  // "model": the cache takes the dtype the attention computes in (data/runtimes/pytorch.toml [sources]).
  if (s.kv_name == "model")
    s.kv_name = weights.name == "fp32" ? "fp32" : weights.name == "bf16" ? "bf16" : "fp16";
  s.kv_bytes = kv_element_bytes(s.kv_name);

  s.probe = model.build(ModelOptions{1, 1});
  const Graph& probe = s.probe;
  const AttentionPlan attention = attention_plan_for(r, runtime, device, false);
  runtime.llm_fused_attention = serving_attention_fused(attention, model, probe, runtime);
  if (attention.decode_shared_kv) runtime.llm_decode_shared_kv = *attention.decode_shared_kv;
  if (attention.impl != AttentionImpl::kRuntime)
    notes.push_back("--attention " + std::string(attention_impl_name(attention.impl)) + ": " +
                    (runtime.llm_fused_attention ? "one fused kernel per attention core (no score matrix in DRAM)"
                                                 : "the eager kernels (scores through DRAM)"));
  s.shape = llm_shape_of(probe);
  if (runtime.llm_masked_mha_decode && !runtime.llm_decode_shared_kv && s.shape.kv_heads > 0 &&
      s.shape.heads > s.shape.kv_heads)
    notes.push_back(
        "generation attention: the masked MHA kernel, one thread block per query head, converts and "
        "multiplies each cached KV head " +
        fmt_count(static_cast<double>(s.shape.heads) / static_cast<double>(s.shape.kv_heads)) + " times (" +
        (attention.decode_shared_kv ? std::string("--attention mmha")
                                    : runtime.id + " " + r.runtime_version + ": XQA not on by default") +
        "; --attention xqa for the grouped-query kernel)");

  s.plan.name = weights.name;
  s.plan.bytes.act = runtime.llm_activation_bytes;
  s.plan.bytes.weight = runtime.llm_gguf ? 4.0 : runtime.llm_activation_bytes;
  return s;
}

struct Ridge {
  double tokens = 0;  // per forward pass
  double flop_per_byte = 0;
  Pipe pipe = Pipe::kFp32;
};

// Tokens per forward pass at the ridge point of the pipe the large-batch matmuls run on (llm_ridge.h); none for
// mixture-of-experts models.
std::optional<Ridge> ridge_of(const InferSetup& s, const KernelCostModel& km) {
  if (s.shape.experts != 0) return std::nullopt;
  Pipe pipe = s.float_pipe;
  if (s.runtime.llm_gguf)
    pipe = s.half ? *s.half
                  : (s.weights.scheme == WeightScheme::kGguf && block_type(s.weights.base).quantized ? Pipe::kDp4a
                                                                                                     : Pipe::kFp32);
  const double ridge = s.device.peak(pipe) * 1e12 / (km.dram_bytes_per_us() * 1e6);  // flop per byte
  return Ridge{ridge * s.weights.bits_per_weight / 16.0, ridge, pipe};               // 2 flop per weight per token
}

Prediction predict_inference(const PredictRequest& request) {
  if (request.lora_rank > 0) throw InputError("--lora-rank applies to --mode train");
  if (request.gpus * request.nodes > 1)
    throw UnsupportedError("--mode " + mode_string(request.mode) + " predicts one GPU; tensor/pipeline parallel serving is --mode serve",
                           {"serving.single_gpu", {{"mode", mode_string(request.mode)}}});
  InferSetup s = resolve_inference(request);
  PredictRequest& r = s.r;
  if (r.seq == 0) r.seq = r.mode == Mode::kPrefill ? 512 : 128;  // llama-bench's pp512 / tg128
  const DeviceSpec& device = s.device;
  const WeightPrecision& weights = s.weights;
  const RuntimeProfile& runtime = s.runtime;
  const ArchitectureProfile& arch = s.arch;
  const ModelSource& model = s.model;
  const std::optional<Pipe>& half = s.half;
  const Pipe float_pipe = s.float_pipe;
  const std::string& kv_name = s.kv_name;
  const double kv_bytes = s.kv_bytes;
  const Graph& probe = s.probe;
  const LlmShape& shape = s.shape;
  std::vector<std::string>& notes = s.notes;
  const KernelCostModel km(device, arch);
  LlmKernelContext c{device, arch, km, runtime, weights, shape, s.plan, kv_bytes, float_pipe, half};
  c.code = s.code;
  c.host_scale = host_time_scale(r);
  const bool prefill = r.mode == Mode::kPrefill;
  // A static cache holds the prompt and every token to come, rounded up to 8 (gpt-fast setup_caches).
  c.static_kv_len = (r.context + r.seq + 7) / 8 * 8;
  // Code that reads a GPU value every token (HF generate's stopping check) ends each pass on a sync: a pass
  // lasts until both the host and the GPU are done, and the next cannot be issued early.
  const double pass_syncs = s.code ? s.code->syncs_per_token : 0.0;

  // Memory: weights at their stored size, the KV cache of every sequence's positions, one pass's buffers.
  const double wbytes = stored_weight_bytes(probe, c);
  const std::int64_t pass_tokens =
      prefill ? std::min<std::int64_t>(r.seq, runtime.llm_ubatch > 0 ? static_cast<std::int64_t>(runtime.llm_ubatch) : r.seq) : 1;
  std::map<std::int64_t, Graph> pass_graphs;  // by batch: the searches below probe many contexts per batch
  // generate also runs the prompt's prefill, in passes of up to llm_ubatch tokens: its buffers count too.
  const std::int64_t prompt_pass_tokens =
      r.mode == Mode::kGenerate && r.context > 0
          ? std::min<std::int64_t>(r.context, runtime.llm_ubatch > 0 ? static_cast<std::int64_t>(runtime.llm_ubatch) : r.context)
          : 0;
  std::map<std::int64_t, Graph> prompt_graphs;
  auto memory_at = [&](std::int64_t batch, std::int64_t positions) {
    auto it = pass_graphs.find(batch);
    if (it == pass_graphs.end()) it = pass_graphs.emplace(batch, model.build(ModelOptions{batch, pass_tokens})).first;
    const Graph& g = it->second;
    MemoryOptions::Serving m;
    m.weight_bytes = wbytes;
    m.kv_cache_bytes = kv_cache_bytes(shape, static_cast<double>(batch),
                                      static_cast<double>(cached_positions(positions, shape.window, runtime)), kv_bytes);
    m.buffer_bytes = activation_bytes(g, positions, c);
    if (prompt_pass_tokens > 0) {
      auto pit = prompt_graphs.find(batch);
      if (pit == prompt_graphs.end())
        pit = prompt_graphs.emplace(batch, model.build(ModelOptions{batch, prompt_pass_tokens})).first;
      m.buffer_bytes = std::max(m.buffer_bytes, activation_bytes(pit->second, r.context, c));
    }
    m.capacity_fraction = runtime.llm_memory_fraction;
    MemoryOptions options;
    options.training = false;
    options.serving = m;
    return estimate_memory(g, c.plan, runtime, device, options);
  };
  const std::int64_t positions = r.context + r.seq;
  if (r.batch == 0) {
    r.batch = largest_batch_that_fits(1 << 16, [&](std::int64_t b) { return memory_at(b, positions).fits; });
    if (r.batch == 0)
      throw UnsupportedError("model '" + r.model + "' with " + std::to_string(positions) + " positions does not fit on " +
                                 device.id + " even at batch 1",
                             {"memory.positions_no_batch_fits",
                              {{"model", r.model}, {"positions", std::to_string(positions)}, {"gpu", device.id}}});
  }
  const std::int64_t B = r.batch;

  // A prefill of `tokens` prompt tokens after `start` cached ones, in the runtime's micro-batches.
  auto prefill_entries = [&](std::int64_t start, std::int64_t tokens) {
    std::vector<OpCost> all;
    const std::int64_t chunk = runtime.llm_ubatch > 0 ? std::min<std::int64_t>(tokens, static_cast<std::int64_t>(runtime.llm_ubatch)) : tokens;
    const std::int64_t passes = (tokens + chunk - 1) / chunk;
    // Up to 16 passes are costed one by one; longer prompts by Simpson's rule over full passes.
    std::vector<std::pair<std::int64_t, double>> at;  // (pass index, weight)
    if (passes <= 16) {
      for (std::int64_t i = 0; i < passes; ++i) at.push_back({i, 1.0});
    } else {
      const double n = static_cast<double>(passes);
      at = {{0, n / 6}, {passes / 2, 4 * n / 6}, {passes - 1, n / 6}};
    }
    for (const auto& [i, w] : at) {
      const std::int64_t q = passes <= 16 ? std::min(chunk, tokens - i * chunk) : chunk;
      const Graph g = model.build(ModelOptions{B, q});
      auto e = llm_forward_pass(g, start + i * chunk + q, runtime.llm_prefill_all_logits, c);
      repeat_all(e, w);
      for (auto& x : e) all.push_back(std::move(x));
    }
    return all;
  };
  const Graph step_graph = model.build(ModelOptions{B, 1});
  auto decode_entries = [&](std::int64_t kv) { return llm_forward_pass(step_graph, kv, false, c); };

  std::vector<OpCost> entries;
  double synced_decode_us = 0;  // decode steps that each end on a sync: the sum of their own timelines
  std::optional<StepCost> prompt;  // generate: the prompt's prefill, a phase of its own (it ends on its logits)
  LlmCost llm;
  if (prefill) {
    entries = prefill_entries(r.context, r.seq);
    llm.time_per_output_token_ms = schedule_pass(decode_entries(positions + 1), runtime, pass_syncs, c.host_scale).step_us / 1e3;
  } else {
    // generate: the prompt's prefill first (its --context tokens), as serving benchmarks time a request.
    if (r.mode == Mode::kGenerate && r.context > 0)
      prompt = schedule_pass(prefill_entries(0, r.context), runtime, pass_syncs, c.host_scale);
    // seq decode steps at kv = context+1 ... context+seq: Simpson's rule over the linear growth in context. Where
    // the engine bounds a sliding-window model's reads by the window, the cost stops growing there: one rule on
    // each side of it.
    std::vector<std::pair<std::int64_t, double>> at;
    auto simpson = [&](std::int64_t first, std::int64_t last) {
      const std::int64_t count = last - first + 1;
      const double n = static_cast<double>(count);
      if (count == 1) at.push_back({first, 1.0});
      else at.insert(at.end(), {{first, n / 6}, {first - 1 + (count + 1) / 2, 4 * n / 6}, {last, n / 6}});
    };
    const std::int64_t last = r.context + r.seq;
    const std::int64_t bend = window_bounds_reads(shape.window, runtime) ? shape.window : 0;
    if (bend > r.context + 1 && bend < last) {
      simpson(r.context + 1, bend);
      simpson(bend + 1, last);
    } else {
      simpson(r.context + 1, last);
    }
    for (const auto& [kv, w] : at) {
      auto e = decode_entries(kv);
      if (pass_syncs > 0) synced_decode_us += w * schedule_pass(e, runtime, pass_syncs, c.host_scale).step_us;
      repeat_all(e, w);
      for (auto& x : e) entries.push_back(std::move(x));
    }
  }

  Prediction p = prediction_for(r, device, runtime, model);
  p.params = probe.params();
  p.precision_note = weights.description + ", " + kv_name + " KV cache" +
                     (runtime.llm_gguf ? ", f32 activations" : "");
  for (auto& n : notes) p.notes.push_back(std::move(n));
  p.step = schedule_pass(std::move(entries), runtime, prefill ? pass_syncs : 0.0, c.host_scale);
  if (synced_decode_us > 0) {
    // Each token's pass waits for the GPU before the next is issued: the phase is the sum of the passes.
    p.step.step_us = std::max(synced_decode_us, p.step.step_us);
    p.step.gpu_wait_us = std::max(0.0, p.step.step_us - p.step.gpu_us);
    p.step.syncs = pass_syncs * static_cast<double>(r.seq);
  }
  // A serving engine turns every step's sampled tokens into outputs on the host (runtime llm_output_*): one such
  // step per generated token (the prompt's prefill yields the first, each decode step one more; a decode row costs
  // its seq passes). Run after the step, the GPU waits for it; run beside the next forward pass (llm_output_async),
  // a step lasts the longer of the two, taken over the phase (exact while every step is longer than the processing
  // or every step shorter).
  if (!prefill) {
    const double per_step = (runtime.llm_output_step_us + runtime.llm_output_seq_us * static_cast<double>(B)) * c.host_scale;
    if (per_step > 0) {
      const double total = per_step * static_cast<double>(r.seq);
      const double before = p.step.step_us;
      p.step.step_us = runtime.llm_output_async ? std::max(before, total) : before + total;
      p.step.gpu_wait_us += p.step.step_us - before;
      p.step.host_us += total;
    }
  }
  // The decode phase cannot start before the prefill's logits: the two phases add, each bound by its own
  // slower side (GPU or host).
  if (prompt) p.step = append_phase(*prompt, std::move(p.step));
  p.memory = memory_at(B, positions);
  p.flops_per_sample = p.step.flops / static_cast<double>(B);
  finalize_prediction(p);
  apply_power(p);

  llm.kv_cache_bytes =
      kv_cache_bytes(shape, static_cast<double>(B), static_cast<double>(cached_positions(positions, shape.window, runtime)), kv_bytes);
  if (prefill) {
    llm.time_to_first_token_ms = p.step_us / 1e3;
  } else {
    llm.time_to_first_token_ms = prompt ? prompt->step_us / 1e3
                                 : r.context > 0 ? schedule_pass(prefill_entries(0, r.context), runtime, pass_syncs, c.host_scale).step_us / 1e3
                                                 : schedule_pass(decode_entries(1), runtime, pass_syncs, c.host_scale).step_us / 1e3;
    const double decode_ms = p.step_us / 1e3 - (prompt ? llm.time_to_first_token_ms : 0.0);
    llm.time_per_output_token_ms = decode_ms / static_cast<double>(r.seq);
  }
  p.llm = llm;

  // Where decode turns from reading weights to computing.
  if (const auto at = ridge_of(s, km)) {
    const auto& [tokens_at_ridge, ridge, pipe] = *at;
    p.notes.push_back("weight-bandwidth-bound below ~" + std::to_string(static_cast<std::int64_t>(std::ceil(tokens_at_ridge))) +
                      " tokens per forward pass (" + std::string(pipe_name(pipe)) + " ridge at " +
                      std::to_string(static_cast<int>(ridge)) + " flop/byte); compute-bound above");
  }
  // The largest context at this batch and the largest batch at this context that fit.
  if (p.memory.fits) {
    const std::int64_t limit = shape.positions > 0 ? shape.positions : (std::int64_t{1} << 24);
    // A cache that stops at a sliding window stops the memory's growth there: no context length is bounded by it.
    const bool cache_stops = window_caps_cache(shape.window, runtime) && shape.window < limit;
    const std::int64_t most_positions =
        cache_stops ? limit
                    : largest_that_fits(positions, std::min(positions * 2, limit + 1), limit, limit + 1,
                                        [&](std::int64_t n) { return memory_at(B, n).fits; });
    const std::int64_t most_batch = largest_that_fits(B, B * 2, (std::int64_t{1} << 16) - 1,
                                                      std::numeric_limits<std::int64_t>::max(),
                                                      [&](std::int64_t b) { return memory_at(b, positions).fits; });
    // Memory is not the only bound on a context: past the one its config states the model was never trained.
    const std::int64_t stated = model.trained_positions > 0 ? model.trained_positions : model.max_positions;
    p.notes.push_back((cache_stops ? "fits any context at batch " + std::to_string(B) + " (the KV cache stops at the " +
                                         std::to_string(shape.window) + "-position window)"
                                   : "fits up to " + std::to_string(most_positions) + " positions at batch " + std::to_string(B)) +
                      " and up to batch " + std::to_string(most_batch) + " at " + std::to_string(positions) +
                      " positions" +
                      (stated > 0 && (cache_stops || most_positions > stated)
                           ? " (in memory; its config states a context of " + std::to_string(stated) + ")"
                           : ""));
  }
  if (model.max_positions > model.trained_positions && model.trained_positions > 0)
    p.notes.push_back("run at " + std::to_string(model.max_positions) + " positions" +
                      (r.max_positions > 0 ? " (--max-positions)"
                                           : " (the " + runtime.id + " engine's max_seq_len, data/engine_context.toml)") +
                      ", past the " + std::to_string(model.trained_positions) + " positions " + model.id +
                      "'s config states (RoPE scaling or a long-context fine-tune): cost and memory follow the "
                      "positions run; the model's quality there is not modelled");
  if (shape.window > 0 && positions > shape.window)
    p.notes.push_back(window_note(shape.window, runtime, s.code));
  std::ostringstream kv_gib;
  kv_gib.precision(3);
  kv_gib << llm.kv_cache_bytes / (1024.0 * 1024.0 * 1024.0);
  p.notes.push_back("memory.activations includes the KV cache (" + kv_gib.str() + " GiB, " + kv_name + ")");
  return p;
}

}  // namespace

std::optional<double> llm_tokens_at_ridge(const PredictRequest& request) {
  const InferSetup s = resolve_inference(request);
  const KernelCostModel km(s.device, s.arch);
  const auto at = ridge_of(s, km);
  return at ? std::optional<double>(at->tokens) : std::nullopt;
}

Prediction predict_llm(const PredictRequest& request) {
  check_request(request);
  if (!request.embedding_precision.empty())
    throw InputError("--embedding-precision (embedding_precision) applies to recommendation models with embedding "
                     "tables; '" + request.model + "' has none");
  if (request.mode == Mode::kTrain) {
    if (request.lora_rank > 0) return predict_lora(request);
    // Full fine-tuning is the ordinary training step, which predict() schedules.
    throw InputError("predict_llm serves --mode train with --lora-rank; full fine-tuning is predict()'s training step");
  }
  if (!is_llm_pass(request.mode))
    throw InputError("predict_llm serves --mode prefill, decode, generate or train, got '" + mode_string(request.mode) + "'");
  return predict_inference(request);
}

// ---- the serving engine's step model --------------------------------------------------------------------------

namespace {

// Megatron tensor parallelism applied to a graph: the degree's share of every sharded op on one GPU.
void shard_tensor_parallel(Graph& g, int tp, const LlmShape& shape) {
  if (tp <= 1) return;
  const std::int64_t kv_per_gpu = std::max<std::int64_t>(1, shape.kv_heads / tp);
  std::int64_t ffn = 0;  // the MLP's inner width: the elementwise ops at this width run on the shard
  int layer = 0;
  for (const auto& op : g.ops)
    if (is_weight_matmul(op) && (tensor_role(op.name, &layer) == TensorRole::kFfnGate || tensor_role(op.name, &layer) == TensorRole::kFfnUp))
      ffn = op.mm.n;
  auto scale_by = [](std::int64_t v, std::int64_t num, std::int64_t den) { return v / den * num + v % den * num / den; };
  for (auto& op : g.ops) {
    if (is_weight_matmul(op)) {
      const TensorRole role = tensor_role(op.name, &layer);
      std::int64_t n = op.mm.n, k = op.mm.k;
      if (role == TensorRole::kAttnK || role == TensorRole::kAttnV) n = kv_per_gpu * shape.head_dim;
      else if (role == TensorRole::kAttnQ || role == TensorRole::kAttnQkv || role == TensorRole::kFfnGate ||
               role == TensorRole::kFfnUp || role == TensorRole::kOutput)
        n = (op.mm.n + tp - 1) / tp;
      else if (role == TensorRole::kAttnOutput || role == TensorRole::kFfnDown) k = (op.mm.k + tp - 1) / tp;
      else continue;  // routers and anything unnamed stay whole on every GPU
      const std::int64_t old = op.mm.n * op.mm.k, now = n * k;
      op.params = scale_by(op.params, now, old);
      op.weight_elems = scale_by(op.weight_elems, now, old);
      op.out_elems = scale_by(op.out_elems, n, op.mm.n);
      op.in_elems = scale_by(op.in_elems, k, op.mm.k);
      op.mm.n = n;
      op.mm.k = k;
      if (!op.out_shape.empty()) op.out_shape.back() = n;
    } else if (op.kind == OpKind::kAttention) {
      op.attn.heads /= tp;
      op.attn.kv_heads = kv_per_gpu;
      op.in_elems /= tp;
      op.out_elems /= tp;
    } else if (op.kind == OpKind::kEmbedding && tensor_role(op.name, &layer) == TensorRole::kTokenEmbedding) {
      op.params /= tp;
    } else if (ffn > 0 && !op.out_shape.empty() && op.out_shape.back() == ffn) {
      op.in_elems /= tp;
      op.out_elems /= tp;
    }
  }
}

StepPart part_of(std::vector<OpCost> entries, const RuntimeProfile& runtime, double times = 1) {
  const StepCost c = schedule_pass(std::move(entries), runtime);
  return {c.gpu_us * times, c.launches * times};
}

}  // namespace

struct LlmStepModel::Impl {
  InferSetup s;
  int tp = 1;
  std::unique_ptr<KernelCostModel> km;
  std::unique_ptr<LlmKernelContext> c;
  Graph probe;  // batch 1, one token, sharded
  Op attention_op, head_op;
  std::int64_t kv_per_gpu = 1;
  double weights = 0;
  std::vector<std::pair<double, StepPart>> grid;  // dense passes by token count
  Graph pass(double tokens) const {
    Graph g = s.model.build(ModelOptions{std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(tokens))), 1});
    shard_tensor_parallel(g, tp, s.shape);
    return g;
  }
};

LlmStepModel::LlmStepModel(const PredictRequest& request, int tensor_parallel) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.s = resolve_inference(request);
  m.tp = tensor_parallel;
  const LlmShape& shape = m.s.shape;
  const std::string who = m.s.model.id + " (" + std::to_string(shape.heads) + " attention heads, " +
                          std::to_string(shape.kv_heads) + " KV heads)";
  if (tensor_parallel < 1) throw InputError("--tp must be at least 1");
  if (tensor_parallel > shape.heads)
    throw InputError("--tp " + std::to_string(tensor_parallel) + " is larger than the attention heads of " + who);
  if (shape.heads % tensor_parallel != 0)
    throw InputError("--tp " + std::to_string(tensor_parallel) + " does not divide the attention heads of " + who);
  if (tensor_parallel <= shape.kv_heads ? shape.kv_heads % tensor_parallel != 0 : tensor_parallel % shape.kv_heads != 0)
    throw InputError("--tp " + std::to_string(tensor_parallel) + " neither divides nor is a multiple of the KV heads of " + who);
  m.km = std::make_unique<KernelCostModel>(m.s.device, m.s.arch);
  m.c = std::make_unique<LlmKernelContext>(LlmKernelContext{m.s.device, m.s.arch, *m.km, m.s.runtime, m.s.weights, m.s.shape,
                                                    m.s.plan, m.s.kv_bytes, m.s.float_pipe, m.s.half});
  m.probe = m.pass(1);
  m.kv_per_gpu = std::max<std::int64_t>(1, shape.kv_heads / tensor_parallel);
  int layer = 0;
  bool have_attention = false, have_head = false;
  for (const auto& op : m.probe.ops) {
    if (op.kind == OpKind::kAttention && !have_attention) {
      m.attention_op = op;
      have_attention = true;
    }
    if (is_weight_matmul(op) && tensor_role(op.name, &layer) == TensorRole::kOutput) {
      m.head_op = op;
      have_head = true;
    }
  }
  // llm_shape_of() refused graphs without attention blocks or an LM head.
  if (!have_attention || !have_head) throw InputError("model '" + m.s.model.id + "' is not a decoder language model");
  m.weights = stored_weight_bytes(m.probe, *m.c);
}

LlmStepModel::~LlmStepModel() = default;

void LlmStepModel::prepare(double max_tokens) {
  Impl& m = *impl_;
  m.grid.clear();
  for (double t = 1;; t *= 2) {
    const double tokens = std::min(t, std::max(1.0, max_tokens));
    m.grid.push_back({tokens, part_of(llm_forward_pass(m.pass(tokens), 1, false, *m.c, true), m.s.runtime)});
    if (tokens >= max_tokens) break;
  }
}

StepPart LlmStepModel::dense(double tokens) const {
  const auto& g = impl_->grid;
  if (g.empty() || tokens <= 0) return {};
  std::size_t i = 1;
  while (i + 1 < g.size() && g[i].first < tokens) ++i;
  if (g.size() == 1) return g[0].second;
  const auto& [t0, p0] = g[i - 1];
  const auto& [t1, p1] = g[i];
  const double w = (tokens - t0) / (t1 - t0);  // beyond the last point: extrapolated along the last segment
  return {p0.gpu_us + w * (p1.gpu_us - p0.gpu_us), p0.launches + w * (p1.launches - p0.launches)};
}

StepPart LlmStepModel::lm_head(double rows) const {
  const Impl& m = *impl_;
  if (rows <= 0) return {};
  return part_of(weight_matmul_kernels(m.head_op, weight_format(m.head_op, *m.c), rows, 1, *m.c), m.s.runtime);
}

StepPart LlmStepModel::decode_attention(double seqs, double mean_kv) const {
  const Impl& m = *impl_;
  if (seqs <= 0) return {};
  Op op = m.attention_op;
  op.attn.batch = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(seqs)));
  op.attn.q_len = 1;
  const auto kv = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(mean_kv)));
  op.attn.kv_len = kv;
  return part_of(kv_attention_kernels(op, kv, *m.c), m.s.runtime, m.s.shape.layers);
}

StepPart LlmStepModel::prefill_attention(double q, double kv_end) const {
  const Impl& m = *impl_;
  if (q <= 0) return {};
  Op op = m.attention_op;
  op.attn.batch = 1;
  op.attn.q_len = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(q)));
  const auto kv = std::max<std::int64_t>(op.attn.q_len, static_cast<std::int64_t>(std::llround(kv_end)));
  op.attn.kv_len = kv;
  return part_of(kv_attention_kernels(op, kv, *m.c), m.s.runtime, m.s.shape.layers);
}

int LlmStepModel::layers() const { return impl_->s.shape.layers; }
std::int64_t LlmStepModel::hidden() const { return impl_->s.shape.hidden; }
std::int64_t LlmStepModel::heads() const { return impl_->s.shape.heads; }
std::int64_t LlmStepModel::kv_heads() const { return impl_->s.shape.kv_heads; }
double LlmStepModel::activation_bytes_per_element() const { return impl_->s.runtime.llm_activation_bytes; }
double LlmStepModel::weight_bytes_per_gpu() const { return impl_->weights; }
double LlmStepModel::kv_bytes_per_token_per_gpu() const {
  const Impl& m = *impl_;
  return static_cast<double>(m.s.shape.layers) * 2.0 * static_cast<double>(m.kv_per_gpu * m.s.shape.head_dim) * m.s.kv_bytes;
}
std::int64_t LlmStepModel::kv_cache_window() const {
  const Impl& m = *impl_;
  return window_caps_cache(m.s.shape.window, m.s.runtime) ? m.s.shape.window : 0;
}
std::int64_t LlmStepModel::decode_window() const {
  const Impl& m = *impl_;
  return window_bounds_reads(m.s.shape.window, m.s.runtime) ? m.s.shape.window : 0;
}
std::string LlmStepModel::window_note(std::int64_t positions) const {
  const Impl& m = *impl_;
  return m.s.shape.window > 0 && positions > m.s.shape.window ? perfcast::window_note(m.s.shape.window, m.s.runtime, m.s.code)
                                                               : "";
}
double LlmStepModel::pass_buffer_bytes(double tokens) const { return activation_bytes(impl_->pass(tokens), 1, *impl_->c); }
std::int64_t LlmStepModel::max_positions() const {
  return impl_->s.shape.positions > 0 ? impl_->s.shape.positions : impl_->s.model.max_positions;
}
void LlmStepModel::check_context(std::int64_t positions, const std::string& what) const {
  perfcast::check_context(impl_->s.model, positions, what);
}
const std::string& LlmStepModel::model_id() const { return impl_->s.model.id; }
const DeviceSpec& LlmStepModel::device() const { return impl_->s.device; }
const RuntimeProfile& LlmStepModel::runtime() const { return impl_->s.runtime; }
const std::string& LlmStepModel::kv_name() const { return impl_->s.kv_name; }
const std::string& LlmStepModel::precision_note() const { return impl_->s.weights.description; }
const std::vector<std::string>& LlmStepModel::notes() const { return impl_->s.notes; }

}  // namespace perfcast
