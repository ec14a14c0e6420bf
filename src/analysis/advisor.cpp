#include "analysis/advisor.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>

#include "analysis/cloud.h"
#include "analysis/llm_ridge.h"
#include "core/error.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "device/cpu_catalog.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

namespace {

struct Attempt {
  std::optional<Prediction> prediction;
  std::string error;
  ReasonCode error_code;  // what the error says, so that reports can word it in another language
};

Attempt attempt(const PredictRequest& r) {
  try {
    return {predict(r), "", {}};
  } catch (const InputError& e) {
    return {std::nullopt, e.what(), e.reason()};
  }
}

double share_of(const Prediction& p, Bound b) { return p.bound_us[static_cast<int>(b)] / p.step_us; }

bool uses_tensor_cores(const Prediction& p) {
  return p.bound_us[static_cast<int>(Bound::kTensorCompute)] > 0;
}

std::string pct(double x) { return fmt::format("{:.0f}%", 100.0 * x); }

// Rented cost of a million samples: the smallest instance type in the price catalog that holds the GPUs one node uses
// (whole instances: one A100 of an 8-GPU-only instance costs the whole instance), one per node; nothing when the
// catalog has none (a card one owns, or not sold by the hour).
std::optional<double> usd_per_million_samples(const Prediction& p) {
  if (p.samples_per_s <= 0 || !p.memory.fits) return std::nullopt;
  const auto rental = rent(default_price_catalog(), p.device.id, std::max(1, p.request.gpus), std::max(1, p.request.nodes));
  if (!rental) return std::nullopt;
  return rental->usd_per_hour / (p.samples_per_s * 3600.0) * 1e6;
}

StrategyResult evaluate(const std::string& id, const std::string& category, const Prediction& base,
                        const PredictRequest& req, const std::function<std::string(const Prediction&)>& why) {
  StrategyResult s;
  s.id = id;
  s.category = category;
  s.request = req;
  Attempt a = attempt(req);
  if (!a.prediction) {
    s.applicable = false;
    s.reason = a.error;
    s.reason_code = a.error_code;
    return s;
  }
  const Prediction& p = *a.prediction;
  s.applicable = true;
  s.speedup = p.samples_per_s / base.samples_per_s;
  s.memory_delta_bytes = p.memory.total - base.memory.total;
  if (p.power && base.power && p.power->energy_per_step_j > 0 && base.power->energy_per_step_j > 0)
    s.energy_ratio = (p.power->energy_per_step_j / (static_cast<double>(p.request.batch))) /
                     (base.power->energy_per_step_j / static_cast<double>(base.request.batch));
  if (const auto usd = usd_per_million_samples(p)) {
    s.usd_per_million_samples = usd;
    if (const auto base_usd = usd_per_million_samples(base)) s.cost_ratio = *usd / *base_usd;
  }
  if (!p.memory.fits) {
    s.applicable = false;
    const std::string needs = fmt::format("{:.1f}", p.memory.total / 1073741824.0);
    const std::string capacity = fmt::format("{:.1f}", p.memory.capacity / 1073741824.0);
    s.reason = fmt::format("does not fit: needs {} GiB of {} GiB", needs, capacity);
    s.reason_code = {"memory.does_not_fit", {{"needs_gib", needs}, {"capacity_gib", capacity}}};
  } else {
    s.reason = why(p);
  }
  s.prediction = std::move(a.prediction);
  return s;
}

StrategyResult not_applicable(const std::string& id, const std::string& category, const std::string& reason,
                              ReasonCode code) {
  StrategyResult s;
  s.id = id;
  s.category = category;
  s.applicable = false;
  s.reason = reason;
  s.reason_code = std::move(code);
  return s;
}

// What every strategy reads: the baseline prediction and the request it answered.
struct Baseline {
  const Prediction& base;
  const PredictRequest& request;
  bool training;
};

// Milliseconds of a step's kernels that `pick` selects.
double kernel_ms(const Prediction& p, const std::function<bool(const OpCost&)>& pick) {
  double us = 0;
  for (const OpCost& e : p.step.entries)
    if (pick(e)) us += e.cost.time_us;
  return us / 1e3;
}

// Activation bytes per element of the precision `p` ran in, as its runtime stores them (resolve_precision: INT8
// without a whole-network engine keeps FP16 activations).
double activation_elem_bytes(const Prediction& p) {
  return resolve_precision(p.request.precision, p.device, architecture_of(p.device), p.runtime,
                           p.request.runtime_version, p.request.mode == Mode::kTrain)
      .bytes.act;
}

// Memory traffic by bytes per element, from `from` to `to`: "halves", "falls to a quarter", ...
std::string traffic_change(double from, double to) {
  if (to == from) return fmt::format("tensors stay at {:g} bytes per element, so memory traffic is unchanged", from);
  const double r = to / from;
  const std::string how = r == 0.5    ? "halves"
                          : r == 0.25 ? "falls to a quarter"
                          : r < 1     ? "falls to " + pct(r)
                                      : fmt::format("grows {:g}x", r);
  return fmt::format("tensors take {:g} byte{} per element instead of {:g}, so memory traffic {}", to, to == 1 ? "" : "s",
                     from, how);
}

}  // namespace

// Where a tensor-core precision's gain went when it is small or negative (DLRM at a modest batch on an H100): the
// GEMMs' gain against the cast and loss-scaling kernels and the dispatch that mixed precision adds (autocast
// casts each GEMM's inputs; GradScaler unscales the gradients), beside the embedding lookups it does not change
// (the tables stay FP32 under AMP, as in the DLRM references).
PrecisionAccount precision_account(const Prediction& base, const Prediction& p) {
  PrecisionAccount a;
  a.dram_share = share_of(base, Bound::kMemory);
  const std::string& prec = p.request.precision;
  // A CPU's precisions always carry a note naming their GEMM unit (analysis/cpu_predict.cpp cpu_precision).
  if (p.device.kind == DeviceKind::kCpu || (!p.precision_note.empty() && !uses_tensor_cores(p))) {
    a.kind = PrecisionAccount::Kind::kNote;
  } else if (prec == "int8" && p.device.sm_version == 61) {
    a.kind = PrecisionAccount::Kind::kDp4a;
  } else if (uses_tensor_cores(p) && p.samples_per_s < 1.1 * base.samples_per_s) {
    // A tensor-core precision that gains little or loses: say what ate the gain rather than what it promises.
    a.kind = PrecisionAccount::Kind::kSmallGain;
    const auto math = [](const OpCost& e) {
      return e.kind == OpKind::kMatmul || e.kind == OpKind::kConv || e.kind == OpKind::kAttention ||
             e.kind == OpKind::kInteraction;
    };
    const auto added = [](const OpCost& e) { return e.name.starts_with("amp."); };
    const auto bags = [](const OpCost& e) { return e.kind == OpKind::kEmbeddingBag; };
    a.math_ms_base = kernel_ms(base, math);
    a.math_ms = kernel_ms(p, math);
    a.cast_ms = kernel_ms(p, added) - kernel_ms(base, added);
    a.launches_base = base.step.launches;
    a.launches = p.step.launches;
    a.host_ms_base = base.step.host_us / 1e3;
    a.host_ms = p.step.host_us / 1e3;
    a.lookup_ms = kernel_ms(base, bags);
    a.lookup_share = base.step.step_us > 0 ? a.lookup_ms * 1e3 / base.step.step_us : 0.0;
  } else {
    // The lines that speak of memory traffic: by the bytes per element of the two precisions.
    a.base_elem_bytes = activation_elem_bytes(base);
    a.elem_bytes = activation_elem_bytes(p);
    // TF32 is a math mode of the tensor cores: tensors stay FP32 in memory (cuBLAS CUBLAS_TF32_TENSOR_OP_MATH,
    // cuDNN CUDNN_TENSOR_OP_MATH on FP32 data), so only the math speeds up.
    if (uses_tensor_cores(p) && prec == "tf32" && a.base_elem_bytes == a.elem_bytes)
      a.kind = PrecisionAccount::Kind::kTf32;
    else
      a.kind = uses_tensor_cores(p) ? PrecisionAccount::Kind::kTensorCores : PrecisionAccount::Kind::kStorage;
  }
  return a;
}

namespace {

std::string precision_reason(const Prediction& base, const Prediction& p) {
  const PrecisionAccount a = precision_account(base, p);
  switch (a.kind) {
    case PrecisionAccount::Kind::kNote:
      // An engine that keeps FP32 on this GPU changes no byte: the note is the whole story.
      if (p.precision_note_code.id == kNoteHalfWithoutFastFp16) return p.precision_note;
      return fmt::format("{}; {} of the baseline step is DRAM-bound, that part shrinks", p.precision_note,
                         pct(a.dram_share));
    case PrecisionAccount::Kind::kDp4a:
      return "sm_61 dp4a runs INT8 dot products at 4x the FP32 rate, and activations shrink 4x";
    case PrecisionAccount::Kind::kSmallGain: {
      std::string out = fmt::format("GEMMs and convolutions {:.2f} -> {:.2f} ms on tensor cores", a.math_ms_base,
                                    a.math_ms);
      if (a.cast_ms > 0) out += fmt::format("; casts and loss scaling add {:.2f} ms of kernels", a.cast_ms);
      out += fmt::format("; kernel launches {:.0f} -> {:.0f}, host dispatch {:.2f} -> {:.2f} ms per step",
                         a.launches_base, a.launches, a.host_ms_base, a.host_ms);
      if (a.lookup_ms > 0)
        out += fmt::format("; the embedding lookups ({:.2f} ms, {}) keep their FP32 tables and do not change",
                           a.lookup_ms, pct(a.lookup_share) + " of the step");
      return out;
    }
    case PrecisionAccount::Kind::kTf32:
      return fmt::format("convolutions and GEMMs move to tensor cores ({}); tensors stay FP32 in memory, so memory "
                         "traffic is unchanged",
                         p.precision_note.empty() ? "TF32 math" : p.precision_note);
    case PrecisionAccount::Kind::kTensorCores:
      return fmt::format("convolutions and GEMMs move to tensor cores ({}); {}",
                         p.precision_note.empty() ? "higher math rate" : p.precision_note,
                         traffic_change(a.base_elem_bytes, a.elem_bytes));
    case PrecisionAccount::Kind::kStorage:
      return "lower-precision storage: " + traffic_change(a.base_elem_bytes, a.elem_bytes);
  }
  return {};
}

// Precision: the other precisions (weight types for language-model serving) the GPU and runtime run.
void add_precision(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool training = on.training;
  // Pure FP16 training (no FP32 master weights) is left out: it is not a safe recommendation.
  std::vector<std::string> candidates = training ? std::vector<std::string>{"amp", "amp-bf16", "tf32", "int8"}
                                                 : std::vector<std::string>{"amp", "int8", "fp8", "tf32"};
  // Serving a language model: the what-ifs are weight types (GGUF block types on llama.cpp).
  if (is_llm_pass(r.mode))
    candidates = base.runtime.llm_gguf ? std::vector<std::string>{"f16", "q8_0", "q6_k", "q4_k_m", "q4_0"}
                                       : std::vector<std::string>{"fp16", "int8", "int4", "fp8"};
  for (const auto& prec : candidates) {
    if (prec == r.precision) continue;
    PredictRequest t = r;
    t.precision = prec;
    const std::string id = prec;
    s.push_back(evaluate(id, "precision", base, t, [&](const Prediction& p) {
      if (p.llm)
        return fmt::format("weights {:.2f} -> {:.2f} GiB; every forward pass reads all of them ({})",
                           base.memory.weights / 1073741824.0, p.memory.weights / 1073741824.0, p.precision_note);
      return precision_reason(base, p);
    }));
  }
}

// Memory: activation checkpointing, alone and with the larger batch it allows.
void add_checkpointing(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool training = on.training;
  if (training) {
    PredictRequest t = r;
    t.checkpointing = true;
    s.push_back(evaluate("checkpointing", "memory", base, t, [&](const Prediction& p) {
      return fmt::format("recomputes the forward pass in backward: activations {:.1f} -> {:.1f} GiB",
                         base.memory.activations / 1073741824.0, p.memory.activations / 1073741824.0);
    }));
    t.batch = 0;
    s.push_back(evaluate("checkpointing+larger-batch", "memory", base, t, [&](const Prediction& p) {
      // Past the largest batch that fits, checkpointing makes room for a smaller batch than the one asked, not a
      // larger one.
      if (p.request.batch <= r.batch)
        return fmt::format("batch {} does not fit; with checkpointing batch {} does", r.batch, p.request.batch);
      return fmt::format("checkpointing frees room for batch {} (from {})", p.request.batch, r.batch);
    }));
  } else {
    s.push_back(not_applicable("checkpointing", "memory", "activation checkpointing only applies to training",
                               {"checkpointing.training_only", {}}));
  }
}

// Batch: the largest that fits; or, when the batch does not fit, a smaller one with gradient accumulation.
void add_batch(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool training = on.training;
  PredictRequest t = r;
  t.batch = 0;
  if (!base.memory.fits && training) {
    // Accumulate micro-batches of the largest batch that fits up to the requested one: one update per group.
    const Attempt fit = attempt(t);
    if (fit.prediction && fit.prediction->request.batch > 0 && fit.prediction->request.batch < r.batch) {
      t.batch = fit.prediction->request.batch;
      t.grad_accum = static_cast<int>((r.batch + t.batch - 1) / t.batch) * std::max(1, r.grad_accum);
    }
  }
  if (base.memory.fits && base.llm && (r.mode == Mode::kDecode || r.mode == Mode::kGenerate)) {
    // A decode step reads every weight once for all its sequences: up to the weight-bandwidth ridge more sequences
    // cost little GPU time each, past it each adds its own compute, so the ridge batch is the useful step; the
    // largest batch that fits (the KV cache's limit, often thousands) only bounds it.
    const Attempt most = attempt(t);
    const auto ridge = llm_tokens_at_ridge(r);
    if (most.prediction && ridge) {
      const std::int64_t at_ridge = static_cast<std::int64_t>(std::ceil(*ridge));
      const std::int64_t limit = most.prediction->request.batch;
      if (r.batch < std::min(at_ridge, limit)) {
        t.batch = std::min(at_ridge, limit);
        StrategyResult b = evaluate("larger-batch", "batch", base, t, [&](const Prediction& p) {
          const double before = base.llm->time_per_output_token_ms, after = p.llm->time_per_output_token_ms;
          std::string host;
          if (host_bound(base.step))
            host = host_bound(p.step)
                       ? "; the step stays host-bound (the host's per-step work does not grow with the batch)"
                       : "; the step is no longer host-bound";
          return fmt::format(
              "batch {} (from {}): below ~{} sequences a decode step is weight-bandwidth-bound (it reads the "
              "weights once for all of them), so tokens/s grow while each request's time per output token goes "
              "{:.1f} -> {:.1f} ms{}; memory allows up to batch {}, but past the ridge each further sequence adds "
              "its own compute to every step, and so to each request's per-token latency",
              p.request.batch, r.batch, at_ridge, before, after, host, limit);
        });
        s.push_back(std::move(b));
        return;
      }
    }
  }
  StrategyResult b = evaluate(base.memory.fits ? "larger-batch" : "smaller-batch+grad-accumulation", "batch", base, t,
                              [&](const Prediction& p) {
                                if (!base.memory.fits)
                                  return fmt::format(
                                      "batch {} fits; accumulate {} micro-batches for an update of at "
                                      "least {} samples",
                                      p.request.batch, p.request.grad_accum, r.batch);
                                return fmt::format("batch {} fits (from {}): fewer, fuller kernels per sample",
                                                   p.request.batch, r.batch);
                              });
  if (b.prediction && b.prediction->request.batch == r.batch) {
    b.applicable = false;
    b.reason = "the batch is already the largest that fits";
    b.reason_code = {"batch.already_largest", {}};
  }
  // Where accumulation is refused (LoRA), the largest batch that fits is still the step that runs: without it the
  // only fitting what-if left may be checkpointing, slower than the plain smaller batch.
  if (!base.memory.fits && training && !b.applicable && t.grad_accum != r.grad_accum) {
    PredictRequest u = t;
    u.grad_accum = r.grad_accum;
    StrategyResult c = evaluate("smaller-batch", "batch", base, u, [&](const Prediction& p) {
      return fmt::format("batch {} fits (batch {} does not); each update then takes {} samples, not {}",
                         p.request.batch, r.batch, p.request.batch, r.batch);
    });
    if (c.applicable) s.push_back(std::move(c));
  }
  s.push_back(std::move(b));
}

// Optimizer: one fused update kernel where the framework's default makes a pass per operation.
void add_fused_optimizer(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool training = on.training;
  if (training && r.optimizer_step && !r.fused_optimizer.value_or(base.runtime.optimizer_fused)) {
    PredictRequest t = r;
    t.fused_optimizer = true;
    s.push_back(evaluate("fused-optimizer", "optimizer", base, t, [&](const Prediction& p) {
      return fmt::format(
          "one fused update kernel (torch.optim fused=True, apex FusedAdam): {:.1f} -> {:.1f} GB of DRAM "
          "traffic per step",
          base.step.bytes / 1e9, p.step.bytes / 1e9);
    }));
  }
}

// The runtimes that compile or build the same graph: the framework's compiler (XLA, torch.compile), or TensorRT for
// inference (not for a language model served token by token: TensorRT-LLM is offered there, add_fusion).
std::vector<std::string> graph_runtime_alternatives(const Baseline& on) {
  const PredictRequest& r = on.request;
  const bool llm_serving = is_llm_pass(r.mode) || on.base.llm.has_value();
  std::vector<std::string> alternatives;
  if (r.runtime == "tensorflow") alternatives.push_back("tensorflow-xla");
  if (r.runtime == "pytorch") alternatives.push_back("pytorch-compile");
  if (!on.training && !llm_serving && r.runtime != "tensorrt") alternatives.push_back("tensorrt");
  return alternatives;
}

// The baseline's request on runtime `alt`: the same framework at the same version (TF 2.3 with and without XLA),
// another framework at its own.
PredictRequest on_runtime(const Baseline& on, const std::string& alt) {
  const PredictRequest& r = on.request;
  PredictRequest t = r;
  t.runtime = alt;
  const RuntimeProfile& other = find_runtime(alt);
  t.runtime_version = other.framework == on.base.runtime.framework
                          ? (r.runtime_version.empty() ? on.base.runtime.default_version : r.runtime_version)
                          : "";
  if (other.framework != on.base.runtime.framework) t.attention.clear();  // --attention is PyTorch's
  return t;
}

std::string fusion_id(const std::string& alt) {
  return alt == "tensorflow-xla" ? "xla" : alt == "pytorch-compile" ? "torch.compile" : alt;
}

// Fusion: a compiler for the same framework, or TensorRT for inference. A language model served token by token
// (prefill, decode, generate) is not a TensorRT engine built from its graph: its KV cache, paged attention and
// in-flight batching are TensorRT-LLM's, a runtime of its own (data/runtimes/tensorrt-llm.toml), which is what
// the advice offers there.
void add_fusion(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool llm_serving = is_llm_pass(r.mode) || base.llm.has_value();
  const auto catalogued = [](std::string_view id) {
    const auto& all = runtime_catalog();
    return std::any_of(all.begin(), all.end(), [id](const RuntimeProfile& p) { return p.id == id; });
  };
  std::vector<std::string> alternatives = graph_runtime_alternatives(on);
  if (llm_serving && r.runtime != "tensorrt") {
    if (r.runtime != "tensorrt-llm" && catalogued("tensorrt-llm")) alternatives.push_back("tensorrt-llm");
    s.push_back(not_applicable("tensorrt", "fusion",
                               "a TensorRT engine built from the model graph has no KV cache or in-flight batching: a "
                               "language model is served by TensorRT-LLM, its own runtime" +
                                   std::string(catalogued("tensorrt-llm") && r.runtime != "tensorrt-llm"
                                                   ? " (the tensorrt-llm strategy)"
                                                   : ""),
                               {catalogued("tensorrt-llm") && r.runtime != "tensorrt-llm"
                                    ? "fusion.llm_serves_on_tensorrt_llm"
                                    : "fusion.llm_not_tensorrt",
                                {}}));
  }
  for (const auto& alt : alternatives) {
    const PredictRequest t = on_runtime(on, alt);
    const std::string id = fusion_id(alt);
    // Fewer kernels also means less host dispatch, which is the gain when the step waits on the host (batch 1):
    // the reason names both, not only the DRAM traffic.
    s.push_back(evaluate(id, "fusion", base, t, [&](const Prediction& p) {
      if (alt == "tensorrt-llm" && p.llm && base.llm)
        return fmt::format(
            "TensorRT-LLM, the TensorRT runtime for language models (fused attention kernels, in-flight batching): time "
            "per output token {:.2f} -> {:.2f} ms, kernel launches {:.0f} -> {:.0f} per step",
            base.llm->time_per_output_token_ms, p.llm->time_per_output_token_ms, base.step.launches, p.step.launches);
      return fmt::format(
          "fuses elementwise chains into their producers: DRAM traffic {:.1f} -> {:.1f} GB, kernel launches {:.0f} -> "
          "{:.0f}, host dispatch {:.2f} -> {:.2f} ms per step",
          base.step.bytes / 1e9, p.step.bytes / 1e9, base.step.launches, p.step.launches, base.step.host_us / 1e3,
          p.step.host_us / 1e3);
    }));
  }
  if (alternatives.empty())
    s.push_back(not_applicable("fusion", "fusion",
                               "runtime '" + r.runtime + "' already fuses (or has no compiler profile)",
                               {"fusion.already_fused", {{"runtime", r.runtime}}}));
}

// A runtime switch with the precision the new runtime makes possible: one the current runtime refuses (eager PyTorch
// has no CUDA INT8 convolutions; TensorRT builds an INT8 engine: dp4a on sm_61, INT8 tensor cores from sm_75), or,
// for an inference engine builder (TensorRT), any lower precision its engine runs (FP16 on a T4), each with what it
// costs beyond the switch. The precision strategies alone cannot find the first kind, as combinations join only
// strategies that apply alone. Offered where it beats the runtime switch alone: a precision the new runtime
// resolves to the engine it already runs (half on sm_61 in TensorRT: the FP32 engine) gains nothing and is left out.
void add_engine_precision(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  if (on.training || is_llm_pass(r.mode) || base.llm) return;
  for (const auto& alt : graph_runtime_alternatives(on)) {
    const PredictRequest alone = on_runtime(on, alt);
    const Attempt switched = attempt(alone);
    if (!switched.prediction || !switched.prediction->memory.fits) continue;
    const Prediction& q = *switched.prediction;
    const bool engine_builder = find_runtime(alt).inference_only;
    for (const std::string prec : {"fp16", "int8", "fp8"}) {
      if (prec == r.precision) continue;
      PredictRequest here = r;
      here.precision = prec;
      // A compiler of the same framework: only what the current runtime refuses (the rest is the precision strategy's).
      if (!engine_builder && attempt(here).prediction) continue;
      PredictRequest t = alone;
      t.precision = prec;
      StrategyResult st = evaluate(fusion_id(alt) + " + " + prec, "runtime+precision", base, t, [&](const Prediction& p) {
        // What the pair costs beyond the switch: an engine built per GPU and input shape, and for an integer or FP8
        // engine the per-tensor scales from a calibration pass (or a quantization-aware-trained model).
        const bool scaled = prec == "int8" || prec == "fp8";
        const bool refused_here = !attempt(here).prediction;
        return fmt::format("{} runs {}{}: {}; {:.0f} -> {:.0f} samples/s against {} alone. Costs {}",
                           find_runtime(alt).name, prec, refused_here ? " where " + base.runtime.name + " does not" : "",
                           precision_reason(q, p), q.samples_per_s,
                           p.samples_per_s, fusion_id(alt),
                           scaled ? "a calibration pass over a few hundred representative inputs for the per-tensor "
                                    "scales (or a quantization-aware-trained model), an accuracy check, and an engine "
                                    "build per GPU and input shape"
                                  : "an engine build per GPU and input shape");
      });
      if (st.applicable && st.prediction && st.prediction->samples_per_s > 1.02 * q.samples_per_s)
        s.push_back(std::move(st));
    }
  }
}

// Layout: channels-last removes NCHW<->NHWC transposes around tensor-core convolutions.
void add_channels_last(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool has_conv = std::any_of(base.step.entries.begin(), base.step.entries.end(),
                                    [](const OpCost& e) { return e.kind == OpKind::kConv; });
  if (!has_conv) {
    s.push_back(not_applicable("channels-last", "layout", "the model has no convolutions: layout does not matter",
                               {"layout.no_convolutions", {}}));
  } else if (!base.runtime.nchw_tensor_core_transposes && base.runtime.nchw_tf32_tensor_core_transposes &&
             (r.precision == "fp32" || r.precision == "tf32")) {
    // TensorFlow's layout pass chooses the layout by the graph's precision, not by the user's data_format.
    s.push_back(not_applicable("channels-last", "layout",
                               "runtime '" + r.runtime +
                                   "' picks the layout by precision: NHWC for FP16 graphs, NCHW for FP32 and TF32 ones "
                                   "(mixed precision changes it, channels-last does not)",
                               {"layout.runtime_picks_by_precision", {{"runtime", r.runtime}}}));
  } else if (!base.runtime.nchw_tensor_core_transposes) {
    s.push_back(not_applicable("channels-last", "layout", "runtime '" + r.runtime + "' already feeds tensor cores NHWC",
                               {"layout.runtime_nhwc", {{"runtime", r.runtime}}}));
  } else if (!uses_tensor_cores(base)) {
    // Layout only matters for tensor-core convolutions: evaluate it on top of mixed precision where AMP runs there.
    PredictRequest t = r;
    t.precision = "amp";
    Attempt with_amp = attempt(t);
    if (with_amp.prediction && uses_tensor_cores(*with_amp.prediction)) {
      t.channels_last = true;
      s.push_back(evaluate("amp+channels-last", "layout", base, t, [&](const Prediction& p) {
        return fmt::format("AMP on tensor cores plus NHWC tensors: {:.2f}x over AMP alone",
                           p.samples_per_s / with_amp.prediction->samples_per_s);
      }));
    } else {
      s.push_back(not_applicable("channels-last", "layout",
                                 "no tensor-core convolutions on " + base.device.id + ": nothing to transpose",
                                 {"layout.no_tensor_cores", {{"gpu", base.device.id}}}));
    }
  } else {
    PredictRequest t = r;
    t.channels_last = true;
    s.push_back(evaluate("channels-last", "layout", base, t, [](const Prediction&) {
      return std::string("NHWC tensors: tensor-core convolutions skip the layout transposes");
    }));
  }
}

// Convolution algorithms: cuDNN's autotuner (torch.backends.cudnn.benchmark = True) times each convolution's
// algorithms once per shape and keeps the fastest, where the runtime's default takes cuDNN's heuristic choice.
void add_conv_autotune(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool has_conv = std::any_of(base.step.entries.begin(), base.step.entries.end(),
                                    [](const OpCost& e) { return e.kind == OpKind::kConv; });
  if (!has_conv || is_cpu_device(r.gpu)) {
    s.push_back(not_applicable("cudnn-benchmark", "conv-algo", "no cuDNN convolutions: no algorithm to choose",
                               {"conv_algo.no_convolutions", {}}));
  } else if (conv_autotune_for(r.conv_algo, base.runtime)) {
    s.push_back(not_applicable("cudnn-benchmark", "conv-algo",
                               "runtime '" + r.runtime + "' already times cuDNN's convolution algorithms",
                               {"conv_algo.already_autotuned", {{"runtime", r.runtime}}}));
  } else {
    PredictRequest t = r;
    t.conv_algo = "autotune";
    s.push_back(evaluate("cudnn-benchmark", "conv-algo", base, t, [](const Prediction&) {
      return std::string("cuDNN times each convolution's algorithms and keeps the fastest "
                         "(torch.backends.cudnn.benchmark = True, --conv-algo autotune)");
    }));
  }
}

// Launch: CUDA graphs.
void add_cuda_graphs(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  PredictRequest t = r;
  t.cuda_graphs = true;
  s.push_back(evaluate("cuda-graphs", "launch", base, t, [&](const Prediction&) {
    return fmt::format("{:.0f} kernel launches: host dispatch {:.2f} ms vs GPU {:.2f} ms per step",
                       base.step.launches, base.step.host_us / 1e3, base.step.gpu_us / 1e3);
  }));
}

// Input pipeline: loader workers, GPU decoding, pinned buffers, prefetching the copy.
void add_input_pipeline(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  if (r.data == "synthetic") {
    s.push_back(not_applicable("data-loader-workers", "input", "synthetic data: no input pipeline",
                               {"input.synthetic", {}}));
  } else if (r.data == "host") {
    if (!r.prefetch) {
      PredictRequest t = r;
      t.prefetch = true;
      s.push_back(evaluate("prefetch", "input", base, t, [&](const Prediction& p) {
        return fmt::format("the {:.1f} ms blocking copy of each batch overlaps the previous step ({:.1f} ms from pinned memory)",
                           base.input ? base.input->h2d_ms : 0.0, p.input ? p.input->h2d_ms : 0.0);
      }));
    }
  } else {
    PredictRequest t = r;
    t.host_cores = (base.input ? base.input->cores : 6) * 2;
    s.push_back(evaluate("data-loader-workers", "input", base, t, [&](const Prediction& p) {
      std::string why = fmt::format("{} host cores prepare {:.0f} samples/s (from {:.0f})", t.host_cores,
                                    p.input ? p.input->host_samples_per_s : 0.0,
                                    base.input ? base.input->host_samples_per_s : 0.0);
      if (p.input && p.input->limited_by == "storage") why += "; storage reads cap the pipeline";
      return why;
    }));
    if (base.input && base.input->dataset_kind == "jpeg") {
      t = r;
      t.gpu_decode = true;
      s.push_back(evaluate("gpu-decode", "input", base, t, [](const Prediction&) {
        return std::string("JPEG decode and augmentation on the GPU (DALI/nvJPEG) frees the host cores");
      }));
    } else {
      s.push_back(not_applicable("gpu-decode", "input", "GPU decoding (DALI/nvJPEG) applies to JPEG datasets",
                                 {"input.not_jpeg", {}}));
    }
    if (base.input && !r.pinned_memory.value_or(true)) {
      t = r;
      t.pinned_memory = true;
      s.push_back(evaluate("pinned-memory", "input", base, t, [](const Prediction&) {
        return std::string("pinned host buffers double the host-to-device copy rate");
      }));
    }
  }
}

// Scale-out: the same GPU, data parallel over more of them in one server (its default link and the runtime's
// gradient reduction), while the modelled efficiency stays useful.
// CPU inference: several processes of the model side by side, each pinned to its own cores of one socket (Intel's
// multi-instance mode). Every count that splits the sockets' cores evenly is predicted; the one with the most
// throughput is a what-if, and, when it costs latency, so is the one with the most throughput whose latency per
// request stays at or under the baseline's.
void add_cpu_instances(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const CpuSpec* cpu = cpu_by_id(r.gpu);
  if (!cpu || on.training || !base.memory.fits || r.mode != Mode::kInfer) return;
  const double base_latency_ms = base.step_us / 1e3;
  struct Candidate {
    PredictRequest request;
    Prediction prediction;
  };
  std::vector<Candidate> tried;
  for (int per_socket = 1; per_socket <= cpu->cores; ++per_socket) {
    if (cpu->cores % per_socket != 0) continue;
    const int n = per_socket * cpu->sockets;
    if (n == r.instances) continue;
    if (r.cores > 0 && static_cast<long long>(per_socket) * r.cores > cpu->cores) continue;  // --cores each: must fit
    PredictRequest t = r;
    t.instances = n;
    Attempt a = attempt(t);
    if (a.prediction && a.prediction->memory.fits) tried.push_back({t, std::move(*a.prediction)});
  }
  if (tried.empty()) return;
  const auto why = [&](const Prediction& p) {
    const CpuInstancesCost& c = *p.cpu_instances;
    return fmt::format(
        "{} processes of {} cores each at batch {} ({} per socket): {:.1f} samples/s in all; latency per batch "
        "{:.2f} -> {:.2f} ms. Fewer threads per process spend less on each op's OpenMP fork/join and keep more of its "
        "cores busy; the processes share each socket's DRAM bandwidth ({:.1f} GB/s each) and L3",
        c.instances, c.cores_per_instance, p.request.batch, c.instances_per_socket, p.samples_per_s, base_latency_ms,
        c.latency_ms, c.dram_gbps_per_instance);
  };
  const auto best = std::max_element(tried.begin(), tried.end(), [](const Candidate& x, const Candidate& y) {
    return x.prediction.samples_per_s < y.prediction.samples_per_s;
  });
  s.push_back(evaluate(fmt::format("{}-instances", best->request.instances), "instances", base, best->request, why));
  // The most throughput that costs no latency, when the best does.
  if (best->prediction.step_us / 1e3 > base_latency_ms * 1.001) {
    const Candidate* keep = nullptr;
    for (const auto& c : tried)
      if (c.prediction.step_us / 1e3 <= base_latency_ms * 1.001 && c.prediction.samples_per_s > base.samples_per_s &&
          (!keep || c.prediction.samples_per_s > keep->prediction.samples_per_s))
        keep = &c;
    if (keep)
      s.push_back(evaluate(fmt::format("{}-instances", keep->request.instances), "instances", base, keep->request, why));
  }
}

void add_scale_out(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  const bool training = on.training;
  if (training && r.nodes == 1) {
    for (int count : {2, 4, 8}) {
      if (count <= r.gpus) continue;
      PredictRequest t = r;
      t.gpus = count;
      StrategyResult g = evaluate("gpus:" + std::to_string(t.gpus), "scale-out", base, t, [&](const Prediction& p) {
        if (!p.scale) return fmt::format("{} GPUs", t.gpus);
        std::string why =
            fmt::format("{} x {} over {} ({}): scaling efficiency {:.0f}%, {:.1f} ms per step waiting on gradients",
                        t.gpus, p.device.id, p.scale->interconnect, p.scale->strategy, 100.0 * p.scale->efficiency,
                        p.scale->exposed_comm_ms);
        // Efficiency is against one GPU holding the tables; the baseline read them from host memory, which is why
        // the gain passes the GPU count.
        if (base.memory.embedding_tables <= 0 && p.memory.embedding_tables > 0)
          why += fmt::format("; the embedding tables move from host memory into the GPUs ({:.1f} GiB each)",
                             p.memory.embedding_tables / (1024.0 * 1024.0 * 1024.0));
        // The efficiency is the gradient exchange's; a host that cannot feed N GPUs holds the gain below N x it.
        if (p.primary == Bound::kInputPipeline)
          why += fmt::format("; capped by the host input pipeline at {:.0f} samples/s", p.samples_per_s);
        return why;
      });
      if (g.applicable && g.prediction && g.prediction->scale && g.prediction->scale->efficiency < 0.5) break;
      s.push_back(std::move(g));
    }
  }
}

// Hardware: the three catalog GPUs that run this fastest.
void add_hardware(const Baseline& on, std::vector<StrategyResult>& s) {
  const Prediction& base = on.base;
  const PredictRequest& r = on.request;
  std::vector<StrategyResult> gpus;
  for (const auto& d : gpu_catalog()) {
    if (d.id == base.device.id) continue;
    PredictRequest t = r;
    t.gpu = d.id;
    StrategyResult g = evaluate("gpu:" + d.id, "hardware", base, t, [&](const Prediction& p) {
      // The request's GPU count carries over (--gpus 3: three of the other card), so the line says how many.
      std::string why = fmt::format("{}{}: {:.0f} GB at {:.0f} GB/s, {:.1f} FP32 TFLOPS",
                                    t.gpus * t.nodes > 1 ? fmt::format("{} x ", t.gpus * t.nodes) : "", p.device.name,
                                    p.device.memory_gb, p.device.mem_bw_gbps, p.device.peak(Pipe::kFp32));
      if (p.device.launch_price_usd > 0) why += fmt::format(", launch price ${:.0f}", p.device.launch_price_usd);
      if (p.primary == Bound::kInputPipeline)
        why += fmt::format("; capped by the host input pipeline at {:.0f} samples/s", p.samples_per_s);
      return why;
    });
    if (g.applicable) gpus.push_back(std::move(g));
  }
  std::sort(gpus.begin(), gpus.end(), [](const auto& x, const auto& y) { return x.speedup > y.speedup; });
  for (std::size_t i = 0; i < std::min<std::size_t>(3, gpus.size()); ++i) s.push_back(gpus[i]);
}

void combine_batch(PredictRequest& t, const PredictRequest& x) {
  // The largest batch that fits under the combination's precision; a language model's decode keeps the batch its
  // strategy chose (the weight-bandwidth ridge, add_batch), which the memory limit only bounds.
  t.batch = (x.mode == Mode::kDecode || x.mode == Mode::kGenerate) ? x.batch : 0;
  t.checkpointing = x.checkpointing;
}

// A family of what-ifs: its category, what it adds for a baseline (each strategy applicable, or with the reason it
// is not), and how its request joins a combination with other categories' (none: hardware and scale-out change what
// is bought, not how it runs). Tried in this order; a new strategy is one row here and its function above.
struct StrategyFamily {
  std::string_view category;
  void (*add)(const Baseline&, std::vector<StrategyResult>&);
  void (*combine)(PredictRequest& combined, const PredictRequest& chosen);
};

constexpr StrategyFamily kStrategyFamilies[] = {
    {"precision", add_precision, [](PredictRequest& t, const PredictRequest& x) { t.precision = x.precision; }},
    {"memory", add_checkpointing, combine_batch},
    {"batch", add_batch, combine_batch},
    {"optimizer", add_fused_optimizer, [](PredictRequest& t, const PredictRequest&) { t.fused_optimizer = true; }},
    {"fusion", add_fusion, [](PredictRequest& t, const PredictRequest& x) { t.runtime = x.runtime; }},
    {"runtime+precision", add_engine_precision,
     [](PredictRequest& t, const PredictRequest& x) {
       t.runtime = x.runtime;
       t.runtime_version = x.runtime_version;
       t.precision = x.precision;
     }},
    {"layout", add_channels_last,
     [](PredictRequest& t, const PredictRequest& x) {
       t.channels_last = true;
       t.precision = x.precision;
     }},
    {"conv-algo", add_conv_autotune, [](PredictRequest& t, const PredictRequest& x) { t.conv_algo = x.conv_algo; }},
    {"launch", add_cuda_graphs, [](PredictRequest& t, const PredictRequest&) { t.cuda_graphs = true; }},
    {"input", add_input_pipeline,
     [](PredictRequest& t, const PredictRequest& x) {
       t.host_cores = x.host_cores;
       t.gpu_decode = x.gpu_decode;
       t.pinned_memory = x.pinned_memory;
       t.prefetch = x.prefetch;
     }},
    {"instances", add_cpu_instances, [](PredictRequest& t, const PredictRequest& x) { t.instances = x.instances; }},
    {"scale-out", add_scale_out, nullptr},
    {"hardware", add_hardware, nullptr},
};

const StrategyFamily& family_of(std::string_view category) {
  for (const auto& f : kStrategyFamilies)
    if (f.category == category) return f;
  throw std::logic_error("advisor: no strategy family for category '" + std::string(category) + "'");
}

}  // namespace

std::string op_class_of(const OpCost& e) {
  if (e.kind == OpKind::kElementwise || e.kind == OpKind::kNorm) {
    // The op's own name says what it is: "layer1.0.conv1.bn" -> "bn", "relu", "add", ...
    std::string leaf = e.name.substr(e.name.rfind('.') + 1);
    while (!leaf.empty() && std::isdigit(static_cast<unsigned char>(leaf.back()))) leaf.pop_back();
    if (leaf == "recompute") return "recompute";
    if (leaf == "bn") return "batch_norm";
    if (leaf == "ln") return "layer_norm";
    if (!leaf.empty()) return leaf;
  }
  if (e.name.rfind("amp.", 0) == 0) return "amp_casts";
  return std::string(op_kind_name(e.kind));
}

Advice advise(const PredictRequest& request) {
  Advice a;
  a.baseline = predict(request);
  const Prediction& base = a.baseline;
  const PredictRequest& r = base.request;
  const bool training = r.mode == Mode::kTrain;

  // Breakdown by op class and bound.
  std::map<std::pair<std::string, Bound>, OpClassShare> classes;
  for (const auto& e : base.step.entries) {
    if (e.cost.time_us <= 0) continue;
    OpClassShare& c = classes[{op_class_of(e), e.cost.bound}];
    c.op_class = op_class_of(e);
    c.bound = e.cost.bound;
    c.time_ms += e.cost.time_us / 1e3;
    c.flops += e.cost.flops;
    c.bytes += e.cost.bytes;
  }
  const double peak_bw = base.device.mem_bw_gbps * 1e9;
  for (auto& [key, c] : classes) {
    c.share = c.time_ms * 1e3 / base.step_us;
    if (c.bound == Bound::kMemory || c.bound == Bound::kLatency) {
      c.roofline_fraction = c.bytes / (c.time_ms * 1e-3) / peak_bw;
    } else {
      double peak = 0;
      for (const auto& e : base.step.entries)
        if (op_class_of(e) == c.op_class && e.cost.bound == c.bound) peak = std::max(peak, base.device.peak(e.cost.pipe));
      c.roofline_fraction = peak > 0 ? c.flops / (c.time_ms * 1e-3) / (peak * 1e12) : 0;
    }
    a.breakdown.push_back(c);
  }
  std::sort(a.breakdown.begin(), a.breakdown.end(), [](const auto& x, const auto& y) { return x.time_ms > y.time_ms; });
  a.memory_pressure = base.memory.total / base.memory.capacity;

  std::vector<StrategyResult> s;
  const Baseline baseline{base, r, training};
  for (const auto& family : kStrategyFamilies) {
    const std::size_t before = s.size();
    family.add(baseline, s);
    for (std::size_t i = before; i < s.size(); ++i)
      PERFCAST_ASSERT(s[i].category == family.category, "a strategy reports its family's category");
  }

  std::stable_sort(s.begin(), s.end(), [](const StrategyResult& x, const StrategyResult& y) {
    if (x.applicable != y.applicable) return x.applicable;
    return x.speedup > y.speedup;
  });

  // Combination: the best strategy of each software category that helps on its own, applied together.
  {
    PredictRequest combined = r;
    std::vector<std::string> parts;
    std::vector<std::string> used_categories;
    for (const auto& st : s) {
      const StrategyFamily& family = family_of(st.category);
      if (!st.applicable || st.speedup < 1.02 || !family.combine) continue;
      if (std::find(used_categories.begin(), used_categories.end(), st.category) != used_categories.end()) continue;
      PredictRequest t = combined;
      family.combine(t, st.request);
      Attempt at = attempt(t);
      const double before = parts.empty() ? base.samples_per_s : attempt(combined).prediction->samples_per_s;
      if (at.prediction && at.prediction->memory.fits && at.prediction->samples_per_s > before * 1.01) {
        combined = t;
        parts.push_back(st.id);
        used_categories.push_back(st.category);
      }
    }
    if (parts.size() >= 2) {
      std::string id;
      for (const auto& p : parts) id += (id.empty() ? "" : " + ") + p;
      a.combinations.push_back(evaluate(id, "combined", base, combined, [&](const Prediction& p) {
        return fmt::format("together: batch {}, {}, {}{}", p.request.batch, p.request.precision, p.request.runtime,
                           p.request.instances > 1 ? fmt::format(", {} processes", p.request.instances) : "");
      }));
    }
  }

  // Capacity: would a batch twice as large (if it fit) be faster per sample?
  if (training && base.memory.fits) {
    PredictRequest t = r;
    t.batch = r.batch * 2;
    Attempt at = attempt(t);
    if (at.prediction && !at.prediction->memory.fits && at.prediction->samples_per_s > base.samples_per_s * 1.05)
      a.capacity_limited_batch = r.batch;
  }
  a.strategies = std::move(s);
  a.baseline_usd_per_million_samples = usd_per_million_samples(a.baseline);
  return a;
}

}  // namespace perfcast
