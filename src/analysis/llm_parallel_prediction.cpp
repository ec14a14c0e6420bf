// Parallel training of decoder language models: resolves the request into a layout, costs one transformer block
// (and the embedding and LM head) of one micro-batch with each GPU's shard of the tensors (the Megatron
// column/row split over TP, heads over TP, experts over EP, the sequence over CP), and hands those times to the
// step schedule of schedule/llm_parallel.cpp (collectives, pipeline bubble, data-parallel reduction, optimizer).
#include "analysis/llm_parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/cloud.h"
#include "analysis/power.h"
#include "analysis/request_resolution.h"
#include "core/error.h"
#include "cost/llm_kernels.h"
#include "cost/precision.h"
#include "cost/precision_note.h"
#include "device/architecture.h"
#include "graph/op_arithmetic.h"
#include "graph/op_kinds.h"
#include "import/model_source.h"
#include "runtime/llm_model_code.h"
#include "schedule/step.h"

namespace perfcast {

namespace {

enum class Split { kNone, kColumn, kKeyValue, kRow, kVocab };

// Megatron's split of each weight matmul: column-parallel into the block's wide side, row-parallel out of it.
Split split_of(const std::string& local) {
  for (const char* n : {"attn_q", "attn.q", "ffn_gate", "ffn_up", "mlp.c_fc", "ffn_gate_exps", "ffn_up_exps",
                        "ffn_gate_shexp", "ffn_up_shexp"})
    if (local == n) return Split::kColumn;
  for (const char* n : {"attn_k", "attn_v", "attn.k", "attn.v"})
    if (local == n) return Split::kKeyValue;
  for (const char* n : {"attn_output", "attn.out", "ffn_down", "mlp.c_proj", "ffn_down_exps", "ffn_down_shexp"})
    if (local == n) return Split::kRow;
  if (local == "output" || local == "lm_head") return Split::kVocab;
  return Split::kNone;
}

std::int64_t shard(std::int64_t v, double by) {
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(v) / by)));
}

void shard_elems(Op& op, double by) {
  if (by <= 1) return;
  op.in_elems = shard(op.in_elems, by);
  op.out_elems = shard(op.out_elems, by);
  if (!op.out_shape.empty() && op.out_shape.back() % static_cast<std::int64_t>(by) == 0)
    op.out_shape.back() /= static_cast<std::int64_t>(by);
}

// One GPU's shard of every op of the graph under this layout.
std::vector<Op> sharded_ops(const Graph& g, const TransformerDims& d, const ParallelLayout& l) {
  std::vector<Op> ops = g.ops;
  const double tp = l.tp;
  for (Op& op : ops) {
    std::string local;
    llm_block_of(op.name, &local);
    if (op.kind == OpKind::kMatmul && op.mm.weight_operand && op.weight_elems > 0) {
      const Split s = split_of(local);
      const double by = s == Split::kKeyValue ? std::min<double>(tp, static_cast<double>(d.kv_heads)) : tp;
      if (s == Split::kColumn || s == Split::kKeyValue || s == Split::kVocab) {
        op.mm.n = shard(op.mm.n, by);
        op.out_elems = shard(op.out_elems, by);
      } else if (s == Split::kRow) {
        op.mm.k = shard(op.mm.k, by);
        op.in_elems = shard(op.in_elems, by);
      }
      if (s != Split::kNone) {
        op.params = shard(op.params, by);
        op.weight_elems = shard(op.weight_elems, by);
      }
      if (op.mm.batch > 1 && l.ep > 1) {
        // Expert parallelism: E/ep experts here, each receiving its tokens from every rank of the group.
        op.mm.batch = shard(op.mm.batch, l.ep);
        op.mm.m *= l.ep;
        op.params = shard(op.params, l.ep);
        op.weight_elems = shard(op.weight_elems, l.ep);
      }
      continue;
    }
    if (op.kind == OpKind::kAttention) {
      op.attn.heads = shard(op.attn.heads, tp);
      op.attn.kv_heads = shard(op.attn.kv_heads, tp);
      // Ring attention: this rank's queries against the whole sequence's keys and values.
      if (l.cp > 1) op.attn.kv_len = d.seq;
      shard_elems(op, tp);
      continue;
    }
    if (op.kind == OpKind::kEmbedding) {
      if (local == "token_embd" || local == "wte") op.params = shard(op.params, tp);
      if (l.sequence_parallel) shard_elems(op, tp);
      continue;
    }
    if (op.kind == OpKind::kLoss) {  // vocabulary-parallel cross-entropy
      shard_elems(op, tp);
      continue;
    }
    // Streaming ops: inside the TP region (wider than the residual stream) each rank has its slice; on the
    // residual stream only sequence parallelism splits them.
    const bool residual = !op.out_shape.empty() && op.out_shape.back() == d.hidden;
    if (!residual || l.sequence_parallel) shard_elems(op, tp);
  }
  return ops;
}

TransformerDims dims_of(const Graph& g, std::int64_t seq) {
  TransformerDims d;
  d.seq = seq;
  const double tokens = static_cast<double>(g.batch * std::max<std::int64_t>(1, g.seq));
  int first_block = -1, last_block = -1;
  for (const auto& op : g.ops) {
    std::string local;
    const int block = llm_block_of(op.name, &local);
    if (block >= 0) {
      if (first_block < 0) first_block = block;
      last_block = std::max(last_block, block);
    }
    if (op.kind == OpKind::kAttention && block == 0) {
      d.heads = op.attn.heads;
      d.kv_heads = op.attn.kv_heads;
      d.head_dim = op.attn.head_dim;
      d.fused_attention = op.attn.fused;
    }
    if (op.kind == OpKind::kAttention) ++d.layers;
    if (op.kind == OpKind::kMatmul && op.mm.weight_operand && op.weight_elems > 0) {
      if (local == "output" || local == "lm_head") {
        d.vocab = op.mm.n;
        d.hidden = op.mm.k;
      }
      if (block == 0 && (local == "ffn_up" || local == "mlp.c_fc")) d.ffn = op.mm.n;
      if (block == 0 && local == "ffn_gate") d.gated_mlp = true;
      if (block == 0 && op.mm.batch > 1) {
        d.experts = op.mm.batch;
        d.experts_per_token = static_cast<double>(op.in_elems / op.mm.k) / tokens;
        if (local == "ffn_up_exps") d.ffn = op.mm.n;
        d.gated_mlp = true;
      }
    }
    const double params = static_cast<double>(op.params);
    if (block == 0) {
      if (op.kind == OpKind::kMatmul && op.mm.batch > 1) d.params_layer_experts += params;
      else d.params_layer_dense += params;
    } else if (block < 0) {
      if (first_block < 0) d.params_embedding += params;
      else d.params_head += params;
    }
    d.params_total += params;
  }
  if (d.layers == 0 || d.vocab == 0 || d.hidden == 0)
    throw InputError("model '" + g.model_id + "' has no attention blocks or LM head: not a decoder language model");
  // A tied head: Megatron keeps a copy of the word embeddings on the last stage for it.
  if (d.params_head < static_cast<double>(d.vocab * d.hidden)) d.params_head += static_cast<double>(d.vocab * d.hidden);
  const double active_share = d.experts > 0 ? d.experts_per_token / static_cast<double>(d.experts) : 1.0;
  d.params_active = d.params_total - d.layers * d.params_layer_experts * (1.0 - active_share);
  return d;
}

std::string join_layout(const ParallelLayout& l) {
  std::string s = "tp" + std::to_string(l.tp) + " pp" + std::to_string(l.pp) + " dp" + std::to_string(l.dp);
  if (l.cp > 1) s += " cp" + std::to_string(l.cp);
  if (l.ep > 1) s += " ep" + std::to_string(l.ep);
  if (l.vpp > 1) s += " vpp" + std::to_string(l.vpp);
  s += l.fsdp ? " fsdp" : " zero" + std::to_string(l.zero);
  s += " mb" + std::to_string(l.micro_batch) + " gb" + std::to_string(l.global_batch);
  s += std::string(" recompute-") + recompute_name(l.recompute);
  if (l.sequence_parallel) s += " sp";
  if (l.offload_optimizer) s += " offload";
  if (l.overlap_grad_reduce) s += " overlap";
  return s;
}

// What a request resolves to once: device, runtime, precision, model and fabric (shared by every layout a
// search evaluates).
struct TrainingSetup {
  PredictRequest r;
  DeviceSpec device;
  RuntimeProfile runtime;
  ArchitectureProfile arch;
  ModelSource model;
  PrecisionPlan plan;
  // FP8 training: the plan of the transformer blocks' linear GEMMs (Transformer Engine modules); `plan` runs the
  // rest (attention core, LM head, elementwise) in BF16.
  std::optional<PrecisionPlan> fp8_linear;
  AttentionPlan attention;
  Fabric fabric;
  double peak_tflops = 0;   // the compute precision's dense tensor peak (MFU denominator)
  const InstanceType* price = nullptr;  // the cheapest on-demand instance per GPU-hour (none: no price)
  std::optional<double> pue;            // --pue (LayoutSearch), else the priced instance's provider's
};

void require_decoder_llm(const ModelSource& model, const std::string& id) {
  if (!model.decoder_llm)
    throw InputError("--tp, --pp, --dp, --zero, --fsdp and the other training-layout flags apply to decoder language "
                     "models; '" + id + "' (" + model.family + ") is not one (see perfcast models, family llm)");
}

TrainingSetup resolve_setup(const PredictRequest& request) {
  TrainingSetup s{request, device_for(request), runtime_for(request), {}, model_for(request), {}, std::nullopt, {}, {}, 0, nullptr, std::nullopt};
  PredictRequest& r = s.r;
  s.arch = architecture_for(s.device);
  require_decoder_llm(s.model, r.model);
  if (r.lora_rank > 0) throw InputError("--lora-rank fine-tunes on one GPU; the training-layout flags apply to full training");
  if (r.seq == 0) r.seq = s.model.default_seq;
  if (r.precision == "fp8") {
    // Transformer Engine FP8 training: the blocks' linear layers (TE modules) run FP8 GEMMs; the attention core,
    // the LM head (Megatron-Core's output_layer is a plain ColumnParallelLinear), everything else and the master
    // weights, gradients and optimizer run as bf16 mixed precision.
    const auto fp8 = s.arch.math_pipe("fp8");
    if (!fp8 || s.device.peak(*fp8) <= 0)
      throw UnsupportedError("fp8 training needs FP8 tensor cores (sm_89 or newer); " + s.device.id + " is sm_" +
                                 std::to_string(s.device.sm_version),
                             {"precision.fp8_training", {{"gpu", s.device.id}}});
    s.plan = resolve_precision("amp-bf16", s.device, s.arch, s.runtime, r.runtime_version, true);
    s.plan.name = "fp8";
    s.plan.note = "FP8 GEMMs in the blocks' linear layers (Transformer Engine, with its cast kernels), attention and LM head in bf16";
    s.plan.note_code = ReasonCode{};
    s.fp8_linear = s.plan;
    s.fp8_linear->matmul_pipe = *fp8;
  } else {
    s.plan = resolve_precision(r.precision, s.device, s.arch, s.runtime, r.runtime_version, true);
  }
  s.attention = attention_plan_for(r, s.runtime, s.device, true);
  const auto& c = llm_training_constants();
  std::string network = r.network;
  if (network.empty() && r.nodes > 1) {
    const auto it = c.network_by_sm.find(s.device.sm_version / 10 * 10);
    network = it != c.network_by_sm.end() ? it->second : c.default_network;
  }
  const int nics = std::max(1, static_cast<int>(std::lround(c.nics_per_gpu * r.gpus)));
  s.fabric = resolve_fabric(s.device, r.gpus, r.nodes, r.interconnect, network, nics);
  s.peak_tflops = s.device.peak(s.fp8_linear ? s.fp8_linear->matmul_pipe : s.plan.matmul_pipe);
  // Several nodes rent instance types the catalog joins by a network; one without (a single box) cannot be the price.
  for (const auto& inst : default_price_catalog().instances)
    if (inst.gpu == s.device.id && inst.gpus > 0 && (r.nodes <= 1 || !inst.network.empty()) &&
        (!s.price || inst.on_demand_usd_per_hour / inst.gpus < s.price->on_demand_usd_per_hour / s.price->gpus))
      s.price = &inst;
  return s;
}

ParallelLayout layout_of(const PredictRequest& r, const TransformerDims& d, int gpus_total) {
  ParallelLayout l;
  l.tp = r.tensor_parallel;
  l.pp = r.pipeline_parallel;
  l.cp = r.context_parallel;
  l.ep = r.expert_parallel;
  l.vpp = r.virtual_pipeline;
  l.fsdp = r.fsdp;
  l.zero = r.fsdp ? 3 : r.zero_stage;
  if (r.fsdp && r.zero_stage != 0)
    throw InputError("--fsdp is PyTorch FSDP's full sharding (ZeRO-3 on its own); it excludes --zero " +
                     std::to_string(r.zero_stage) + ": drop --zero, or drop --fsdp for DeepSpeed ZeRO");
  const std::int64_t model = static_cast<std::int64_t>(std::max(1, l.tp)) * std::max(1, l.pp) * std::max(1, l.cp);
  l.dp = r.data_parallel > 0 ? r.data_parallel : static_cast<int>(std::max<std::int64_t>(1, gpus_total / model));
  l.sequence_parallel = r.sequence_parallel.value_or(l.tp > 1);
  l.micro_batch = r.micro_batch > 0 ? r.micro_batch : 1;
  l.global_batch = r.global_batch > 0
                       ? r.global_batch
                       : l.micro_batch * l.dp *
                             (l.pp > 1 ? static_cast<std::int64_t>(llm_training_constants().default_microbatches_per_stage) * l.pp
                                       : std::max(1, r.grad_accum));
  l.recompute = r.recompute.empty() ? (r.checkpointing ? Recompute::kFull : Recompute::kNone) : parse_recompute(r.recompute);
  l.offload_optimizer = r.offload_optimizer;
  l.overlap_grad_reduce = r.overlap_grad_reduce.value_or(l.fsdp);
  (void)d;
  return l;
}

// What the runtime's ZeRO engine (data/runtimes/<id>.toml zero_engine) can run: DeepSpeed stages 1-3 and optimizer
// offload (ZeRO-Offload, stages 1-3 only: deepspeed/runtime/zero/config.py offload_optimizer "Valid for ZeRO stage
// 1, 2, 3"), Megatron's distributed optimizer ZeRO-1 only, a runtime without an engine no ZeRO. FSDP is its own.
void check_zero_engine(const ParallelLayout& l, const RuntimeProfile& runtime) {
  if (l.offload_optimizer && (l.fsdp || l.zero < 1))
    throw InputError(std::string("--offload-optimizer is DeepSpeed's ZeRO-Offload, which runs with --zero 1-3") +
                     (l.fsdp ? ", not --fsdp (FSDP's CPU offload is not modelled)" : "") + ": add --zero 2 --runtime pytorch");
  if (l.fsdp || (l.zero == 0 && !l.offload_optimizer)) return;
  if (runtime.zero_engine == "deepspeed") return;
  if (runtime.zero_engine == "megatron-distributed-optimizer") {
    if (l.zero >= 2 || l.offload_optimizer)
      throw InputError("Megatron-LM's distributed optimizer is ZeRO-1; use --runtime pytorch for DeepSpeed ZeRO-2/3 "
                       "and --offload-optimizer");
    return;
  }
  throw InputError("--zero " + std::to_string(l.zero) + ": runtime '" + runtime.id +
                   "' has no ZeRO engine (data/runtimes/" + runtime.id + ".toml zero_engine); use --runtime pytorch "
                   "(DeepSpeed) or megatron-lm (--zero 1)");
}

// The board energy of kernels run `times` over a micro-batch (KernelDraw's per-kernel draw; the launch gaps at the
// wait power), summed into LayerTimes' model_* terms.
struct ModelEnergy {
  const KernelDraw& draw;
  LayerTimes& t;
  // One kernel cost and the gaps after its launches; returns their time.
  double add(const KernelCost& k, double gap_us, double times) {
    if (k.time_us > 0) {
      const double w = draw.kernel_w(k);
      t.model_energy_uj += times * w * k.time_us;
      t.model_busy_us += times * k.time_us;
      t.model_clock_us += times * draw.board_clock(k.clock_factor) * k.time_us;
      t.peak_w = std::max(t.peak_w, w);
    }
    t.model_energy_uj += times * draw.wait_w() * gap_us;
    t.model_time_us += times * (std::max(0.0, k.time_us) + gap_us);
    return k.time_us + gap_us;
  }
};

// One op's kernels in `phase`, their launch gaps included, counted `times` into the model's energy; `host_us`
// gains the host time of issuing them (the framework's per-op cost and its launches, at the reference host). Under
// amp the model is taken as cast (DeepSpeed, Megatron, FSDP): no autocast cast entries, unlike the single-GPU step.
double phase_us(const std::vector<Op>& ops, std::size_t i, Phase phase, const CostContext& ctx, ModelEnergy& energy,
                double times, double& host_us, double& launches) {
  const OpCost e = cost_op(ops, i, phase, ctx);
  launches += e.cost.launches;
  StepOptions training;
  training.training = true;
  host_us += entry_host_us(e, &ops[i], phase == Phase::kForward ? EntrySource::kForward : EntrySource::kBackward,
                           ctx.runtime, training, 0) +
             e.cost.launches * ctx.runtime.host_overhead_per_kernel_us;
  return energy.add(e.cost, e.cost.launches * ctx.runtime.gpu_gap_per_kernel_us, times);
}

// The per-micro-batch kernel times of one GPU's shard.
LayerTimes layer_times(const TrainingSetup& s, const TransformerDims& d, const ParallelLayout& l,
                       std::map<std::tuple<std::int64_t, int, int, int, bool>, LayerTimes>* cache) {
  const auto key = std::tuple{l.micro_batch, l.tp, l.cp, l.ep, l.sequence_parallel};
  if (cache) {
    const auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  const Graph g = graph_as_run(s.model, ModelOptions{l.micro_batch, d.seq / l.cp}, s.runtime, s.attention);
  const std::vector<Op> ops = sharded_ops(g, d, l);
  const KernelCostModel km(s.device, s.arch);
  const CostContext ctx{km, s.runtime, s.plan, true};
  const std::optional<CostContext> fp8_ctx =
      s.fp8_linear ? std::optional<CostContext>{CostContext{km, s.runtime, *s.fp8_linear, true}} : std::nullopt;
  const auto& c = llm_training_constants();
  LayerTimes t;
  const KernelDraw draw(s.device, s.arch);
  t.wait_w = draw.wait_w();
  t.limit_w = draw.limit_w();
  ModelEnergy energy{draw, t};
  int first_block = -1;
  std::vector<int> fp8_inputs;  // graph inputs of the block's FP8 linears already cast (Q, K and V share one)
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const int block = llm_block_of(ops[i].name, nullptr);
    if (block >= 0 && first_block < 0) first_block = block;
    if (block > 0) continue;
    const Op& op = ops[i];
    const bool te_linear = fp8_ctx && block == 0 && op.kind == OpKind::kMatmul && op.mm.weight_operand && op.weight_elems > 0;
    // The block's ops run in every layer; the embedding and the head once.
    const double times = block == 0 ? static_cast<double>(d.layers) : 1.0;
    double host_f = 0, host_b = 0, launches_f = 0, launches_b = 0;
    double f = phase_us(ops, i, Phase::kForward, te_linear ? *fp8_ctx : ctx, energy, times, host_f, launches_f);
    // Ops fed only by the graph input (the embedding) have no data gradient; cost_op knows.
    double b = phase_us(ops, i, Phase::kBackward, te_linear ? *fp8_ctx : ctx, energy, times, host_b, launches_b);
    // Parameter tensors (a weight, and a bias or shift as its second), for the AccumulateGrad nodes and ZeRO's hooks.
    const bool trained = op.params > 0 && !op_kind_info(op.kind).updates_in_backward;
    const double second = trained ? second_param_elems(op) : 0.0;
    const double tensors = trained ? 1.0 + (second > 0 ? 1.0 : 0.0) : 0.0;
    // Of them, those DeepSpeed ZeRO-3 partitions: above its persistence threshold (ds_persist otherwise).
    const double threshold = c.zero3_param_persistence_threshold_elems;
    const double gathered = trained ? (static_cast<double>(op.params) - second > threshold ? 1.0 : 0.0) +
                                          (second > threshold ? 1.0 : 0.0)
                                    : 0.0;
    if (te_linear) {
      // Transformer Engine's casts around the FP8 GEMMs: the input once per distinct input (a norm writes FP8
      // itself and only its transpose is built, in backward), the output gradient of every linear.
      const int input = op.inputs.empty() ? -1 : op.inputs.front();
      if (std::find(fp8_inputs.begin(), fp8_inputs.end(), input) == fp8_inputs.end()) {
        fp8_inputs.push_back(input);
        const bool from_norm = input >= 0 && ops[static_cast<std::size_t>(input)].kind == OpKind::kNorm;
        const double in = static_cast<double>(op.in_elems);
        const KernelCost cast = km.streaming(0, in * (from_norm ? c.fp8_norm_output_transpose_bytes : c.fp8_input_cast_transpose_bytes));
        (from_norm ? b : f) += energy.add(cast, cast.launches * s.runtime.gpu_gap_per_kernel_us, times);
        (from_norm ? launches_b : launches_f) += cast.launches;
      }
      const KernelCost grad = km.streaming(0, static_cast<double>(op.out_elems) * c.fp8_grad_cast_transpose_bytes);
      b += energy.add(grad, grad.launches * s.runtime.gpu_gap_per_kernel_us, times);
      launches_b += grad.launches;
      t.fp8_amax_bytes_per_layer += c.fp8_amax_bytes_per_linear;
    }
    // Backward's host side adds an AccumulateGrad node per parameter tensor.
    host_b += tensors * s.runtime.host_accumulate_grad_us;
    if (block == 0) {
      t.host_layer_fwd_us += host_f;
      t.host_layer_bwd_us += host_b;
      t.launches_layer_fwd += launches_f;
      t.launches_layer_bwd += launches_b;
      t.param_tensors_per_layer += tensors;
      t.gathered_tensors_per_layer += gathered;
      t.layer_fwd_us += f;
      t.layer_bwd_us += b;
      if (ops[i].kind == OpKind::kAttention || ops[i].kind == OpKind::kSoftmax) {
        t.layer_attention_fwd_us += f;
        t.launches_layer_attention_fwd += launches_f;
      }
    } else {
      t.host_other_fwd_us += host_f;
      t.host_other_bwd_us += host_b;
      t.launches_other += launches_f + launches_b;
      t.param_tensors_other += tensors;
      t.gathered_tensors_other += gathered;
      (first_block < 0 ? t.first_fwd_us : t.last_fwd_us) += f;
      (first_block < 0 ? t.first_bwd_us : t.last_bwd_us) += b;
    }
  }
  // The host side at this host's speed, and what DeepSpeed's hooks are counted over: the model code's module calls
  // (the runtime's eager LLM code, data/llm_code) and the runtime's per-call prices.
  const double scale = host_time_scale(s.r);
  for (double* v : {&t.host_layer_fwd_us, &t.host_layer_bwd_us, &t.host_other_fwd_us, &t.host_other_bwd_us}) *v *= scale;
  t.deepspeed = s.runtime.zero_engine == "deepspeed";
  if (t.deepspeed && !s.runtime.llm_model_code.empty()) {
    const LlmModelCode& code = find_llm_model_code(s.runtime.llm_model_code);
    t.module_calls_per_layer = code.module_calls_per_layer;
    t.module_calls_other = code.module_calls_per_forward;
  }
  t.host_module_call_us = s.runtime.host_module_call_us * scale;
  t.host_inline_op_us = s.runtime.host_inline_op_us * scale;
  t.host_library_call_us = s.runtime.host_library_call_us * scale;
  t.host_launch_us = s.runtime.host_overhead_per_kernel_us * scale;
  t.host_autograd_op_us = s.runtime.host_autograd_op_us * scale;
  t.host_backward_op_us = s.runtime.host_backward_op_us * scale;
  // The update: one fused multi-tensor Adam pass over the parameters (Megatron's and FSDP's fused Adam).
  const double n = 1e9;
  const Work w = optimizer_work(OptimizerKind::kAdamW, n);
  const KernelCost update = km.streaming(w.flops, w.bytes);
  t.optimizer_us_per_param = update.time_us / n;
  t.optimizer_w = draw.kernel_w(update);
  if (s.fp8_linear) t.fp8_weight_cast_us_per_param = km.streaming(0, n * c.fp8_weight_cast_transpose_bytes_per_param).time_us / n;
  if (cache) (*cache)[key] = t;
  return t;
}

ParallelTrainingCost evaluate(const TrainingSetup& s, const TransformerDims& d, const ParallelLayout& layout,
                              std::map<std::tuple<std::int64_t, int, int, int, bool>, LayerTimes>* cache) {
  ParallelTrainingCost c;
  ParallelLayout l = layout;
  // Megatron forces fp32 gradient accumulation and reduction with bf16 and leaves it off with fp16
  // (megatron/training/arguments.py: accumulate_allreduce_grads_in_fp32).
  l.fp32_grad_reduce = s.plan.name != "amp" && s.plan.name != "fp16";
  c.layout = l;
  c.layout_text = join_layout(l);
  c.gpus = l.gpus();
  c.memory = parallel_memory(d, l, s.plan, s.runtime, s.device);
  const LayerTimes t = layer_times(s, d, l, cache);
  c.step = schedule_parallel_step(d, l, t, s.fabric, s.plan.bytes.act);
  const double tokens = static_cast<double>(l.global_batch) * static_cast<double>(d.seq);
  c.tokens_per_step = tokens;
  c.tokens_per_s_per_gpu = tokens / (c.step.step_us * 1e-6) / c.gpus;
  c.model_flops_per_token = model_flops_per_token(d);
  c.peak_tflops = s.peak_tflops;
  c.mfu = c.peak_tflops > 0 ? c.tokens_per_s_per_gpu * c.model_flops_per_token / (c.peak_tflops * 1e12) : 0;
  // Board power per GPU: the compute at its kernels' mean draw, the update at its kernel's (on the host when
  // offloaded), everything else in the step at the wait power.
  const double step_us = c.step.step_us;
  const double update_us = l.offload_optimizer ? 0.0 : c.step.optimizer_us;
  const double compute_w = t.model_time_us > 0 ? t.model_energy_uj / t.model_time_us : t.wait_w;
  const double busy_of_compute = t.model_time_us > 0 ? t.model_busy_us / t.model_time_us : 0.0;
  const double energy_uj = compute_w * c.step.compute_us + t.optimizer_w * update_us +
                           t.wait_w * std::max(0.0, step_us - c.step.compute_us - update_us);
  PowerCost& pw = c.power;
  pw.energy_per_step_j = energy_uj * 1e-6;
  pw.avg_power_w = energy_uj / step_us;
  pw.busy_share = std::min(1.0, (busy_of_compute * c.step.compute_us + update_us) / step_us);
  pw.clock_factor = t.model_busy_us > 0 ? t.model_clock_us / t.model_busy_us : 1.0;
  pw.wait_power_w = t.wait_w;
  pw.peak_power_w = std::max({t.peak_w, update_us > 0 ? t.optimizer_w : 0.0, t.wait_w});
  pw.limit_w = t.limit_w;
  // Every GPU's step energy over the global batch (apply_power's per-GPU batch is one micro-batch here).
  pw.energy_per_sample_j = pw.energy_per_step_j * c.gpus / static_cast<double>(l.global_batch);
  pw.samples_per_joule = pw.energy_per_sample_j > 0 ? 1.0 / pw.energy_per_sample_j : 0;
  if (s.price) {
    c.usd_per_gpu_hour = s.price->on_demand_usd_per_hour / s.price->gpus;
    c.price_instance = s.price->id;
    c.usd_per_million_tokens = c.usd_per_gpu_hour / (c.tokens_per_s_per_gpu * 3600.0) * 1e6;
  }
  // The GPUs used, their share of their server's host (as predict counts it) and their GPU-hours (cost_of_run's
  // RunBasis::kGpusUsed); with no --train-tokens only the host and the PUE are read.
  const RunCost run = cost_of_run(s.device, c.gpus, s.r.train_tokens, c.tokens_per_s_per_gpu * c.gpus,
                                  pw.avg_power_w * c.gpus, s.price, 1, s.pue, RunBasis::kGpusUsed);
  if (s.r.train_tokens > 0) {
    c.train_tokens = s.r.train_tokens;
    c.run = run;
  } else {
    c.run.powered = run.powered;
    c.run.pue = run.pue;
  }
  return c;
}

Prediction to_prediction(const TrainingSetup& s, const TransformerDims& d, const ParallelTrainingCost& c) {
  Prediction p = prediction_for(s.r, s.device, s.runtime, s.model);
  p.request.batch = c.layout.micro_batch;
  p.request.seq = d.seq;
  p.params = static_cast<std::int64_t>(d.params_total);
  // A decoder-only transformer's math is GEMMs and attention: the note names no convolution.
  PrecisionPlan shown = s.plan;
  note_only_present_ops(shown, s.runtime, MathOpsPresent{.convolutions = false, .matmuls = true});
  p.precision_note = shown.note;
  p.precision_note_code = shown.note_code;
  const ParallelStepCost& st = c.step;
  p.step.gpu_us = st.compute_us;
  p.step.host_us = st.host_us;
  p.step.launches = st.launches;
  p.step.step_us = st.step_us;
  p.step.flops = c.model_flops_per_token * c.tokens_per_step / c.gpus;
  p.step_us = st.step_us;
  p.flops_per_sample = c.model_flops_per_token * static_cast<double>(d.seq);
  p.bound_us.fill(0);
  p.bound_us[static_cast<int>(Bound::kTensorCompute)] = st.compute_us + st.optimizer_us;
  p.bound_us[static_cast<int>(Bound::kLatency)] = st.bubble_us;
  // The GPU waiting for the host's framework calls and DeepSpeed's hooks.
  p.bound_us[static_cast<int>(Bound::kHost)] = st.host_wait_us;
  // FP8's per-step scaling work is mostly its amax all-reduces (latency-bound collectives).
  p.bound_us[static_cast<int>(Bound::kCommunication)] =
      st.tp_comm_us + st.cp_comm_us + st.ep_comm_us + st.pp_comm_us + st.dp_comm_us + st.fp8_scaling_us;
  int best = 0;
  for (int i = 1; i < static_cast<int>(Bound::kCount); ++i)
    if (p.bound_us[i] > p.bound_us[best]) best = i;
  p.primary = static_cast<Bound>(best);
  p.samples_per_s = static_cast<double>(c.layout.global_batch) / (st.step_us * 1e-6);
  p.tokens_per_s = c.tokens_per_step / (st.step_us * 1e-6);
  p.memory = c.memory;
  p.power = c.power;
  p.notes.push_back("layout " + c.layout_text + " on " + std::to_string(c.gpus) + (c.gpus == 1 ? " GPU (" : " GPUs (") +
                    std::to_string(s.r.gpus) + " per node x " + std::to_string(s.r.nodes) +
                    (s.r.nodes == 1 ? " node): " : " nodes): ") +
                    std::to_string(st.microbatches) + (st.microbatches == 1 ? " micro-batch" : " micro-batches") + " per pipeline, bubble " +
                    std::to_string(static_cast<int>(std::lround(100 * st.bubble_fraction))) + "%");
  if (const std::string note = attention_note(s.attention, graph_as_run(s.model, ModelOptions{1, 1}, s.runtime, s.attention));
      !note.empty())
    p.notes.push_back(note);
  p.parallel = std::make_shared<const ParallelTrainingCost>(c);
  return p;
}

}  // namespace

void check_parallel_training_model(const PredictRequest& request) {
  require_decoder_llm(resolve_model(request.model, import_options(request)), request.model);
}

bool wants_parallel_training(const PredictRequest& r) {
  return r.tensor_parallel != 1 || r.pipeline_parallel != 1 || r.data_parallel != 0 || r.expert_parallel != 1 ||
         r.context_parallel != 1 || r.virtual_pipeline != 1 || r.zero_stage != 0 || r.fsdp || r.micro_batch != 0 ||
         r.global_batch != 0 || !r.recompute.empty() || r.offload_optimizer || r.train_tokens > 0 ||
         r.sequence_parallel.has_value() || r.overlap_grad_reduce.has_value();
}

Prediction predict_llm_training(const PredictRequest& request) {
  if (request.mode != Mode::kTrain)
    throw InputError("the training-layout flags (--tp --pp --dp --zero ...) apply to --mode train; multi-GPU serving "
                     "is not this path");
  const TrainingSetup s = resolve_setup(request);
  const Graph probe = graph_as_run(s.model, ModelOptions{1, s.r.seq}, s.runtime, s.attention);
  const TransformerDims d = dims_of(probe, s.r.seq);
  const int gpus = s.r.gpus * s.r.nodes;
  const ParallelLayout l = layout_of(s.r, d, gpus);
  check_layout(d, l, gpus);
  check_zero_engine(l, s.runtime);
  return to_prediction(s, d, evaluate(s, d, l, nullptr));
}

std::vector<ParallelTrainingCost> search_layouts(const PredictRequest& request, const LayoutSearch& search) {
  TrainingSetup s = resolve_setup(request);
  s.pue = search.pue;
  const Graph probe = graph_as_run(s.model, ModelOptions{1, s.r.seq}, s.runtime, s.attention);
  const TransformerDims d = dims_of(probe, s.r.seq);
  const int gpus = s.r.gpus * s.r.nodes;
  check_layout(d, ParallelLayout{.dp = gpus, .global_batch = gpus}, gpus);
  std::map<std::tuple<std::int64_t, int, int, int, bool>, LayerTimes> cache;
  std::vector<ParallelTrainingCost> out;
  const std::int64_t tokens_per_step = search.global_batch_tokens > 0 ? search.global_batch_tokens : 4 * 1024 * 1024;
  const std::int64_t global = request.global_batch > 0 ? request.global_batch
                                                       : std::max<std::int64_t>(1, tokens_per_step / d.seq);
  for (int tp = 1; tp <= std::min(gpus, s.r.gpus); tp *= 2) {
    if (d.heads % tp != 0) continue;
    for (int pp = 1; pp <= gpus / tp; pp *= 2) {
      if (d.layers % pp != 0 || gpus % (tp * pp) != 0) continue;
      const int dp = gpus / (tp * pp);
      for (const int zero : {0, 1, 2, 3}) {
        // The step time and memory of each micro-batch size without recomputation: selective recomputation that
        // recomputes nothing here (attention that keeps no score matrix, as flash attention does) is the same run,
        // listed once as recompute-none.
        std::map<std::int64_t, std::pair<double, double>> without_recompute;
        for (const Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
          for (std::int64_t mb = 1; mb <= search.max_micro_batch; mb *= 2) {
            if (zero > 0 && dp == 1) continue;
            ParallelLayout l;
            l.tp = tp;
            l.pp = pp;
            l.dp = dp;
            l.zero = zero;
            l.sequence_parallel = tp > 1;
            l.micro_batch = mb;
            l.recompute = rc;
            l.overlap_grad_reduce = request.overlap_grad_reduce.value_or(true);
            const std::int64_t step = mb * dp;
            l.global_batch = std::max<std::int64_t>(step, (global + step - 1) / step * step);
            try {
              check_layout(d, l, gpus);
              check_zero_engine(l, s.runtime);  // the stages the runtime's ZeRO engine runs
            } catch (const InputError&) {
              continue;
            }
            ParallelTrainingCost c = evaluate(s, d, l, &cache);
            const std::pair<double, double> figures{c.step.step_us, c.memory.total};
            if (rc == Recompute::kNone) without_recompute[mb] = figures;
            if (rc == Recompute::kSelective) {
              const auto it = without_recompute.find(mb);
              if (it != without_recompute.end() && it->second == figures) continue;
            }
            if (c.memory.fits) out.push_back(std::move(c));
          }
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const ParallelTrainingCost& a, const ParallelTrainingCost& b) {
    return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
  });
  return out;
}

LayoutRank parse_layout_rank(const std::string& text) {
  if (text == "cost") return LayoutRank::kCost;
  if (text == "time") return LayoutRank::kTime;
  if (text == "gpu-hours") return LayoutRank::kGpuHours;
  throw_unknown("--rank-by", text, {"cost", "time", "gpu-hours"});
}

std::string layout_rank_name(LayoutRank rank) {
  switch (rank) {
    case LayoutRank::kCost: return "cost";
    case LayoutRank::kTime: return "time";
    case LayoutRank::kGpuHours: return "gpu-hours";
  }
  return "cost";
}

LayoutPlan plan_layouts(const PredictRequest& request, double deadline_hours, int max_gpus, const LayoutSearch& search,
                        std::optional<double> budget_usd, std::optional<LayoutRank> rank) {
  if (deadline_hours > 0 && request.train_tokens <= 0)
    throw InputError("--deadline with --layouts needs --train-tokens (the tokens the run must train)");
  LayoutPlan plan;
  plan.layouts = search_layouts(request, search);
  if (deadline_hours <= 0) {
    plan.rank = rank.value_or(LayoutRank::kCost);
    return plan;
  }
  for (int nodes = 1; static_cast<std::int64_t>(nodes) * request.gpus <= max_gpus; nodes *= 2) {
    PredictRequest r = request;
    r.nodes = nodes;
    const auto found = search_layouts(r, search);
    if (found.empty()) continue;
    plan.by_count.push_back(found.front());
  }
  // Dollars when every count has a price (a count with none could not be ranked beside the others), else GPU-hours.
  const bool priced = !plan.by_count.empty() &&
                      std::all_of(plan.by_count.begin(), plan.by_count.end(), [](const ParallelTrainingCost& c) { return c.run.usd > 0; });
  if (rank == LayoutRank::kCost && !priced)
    throw InputError("--rank-by cost needs a price for " + request.gpu +
                     " at every node count (data/cloud/prices.toml); use --rank-by gpu-hours or time");
  plan.rank = rank.value_or(priced ? LayoutRank::kCost : LayoutRank::kGpuHours);
  const auto key = [&](const ParallelTrainingCost& c) {
    switch (plan.rank) {
      case LayoutRank::kCost: return c.run.usd;
      case LayoutRank::kTime: return c.run.hours;
      case LayoutRank::kGpuHours: return c.run.hours * c.gpus;
    }
    return c.run.usd;
  };
  for (const auto& best : plan.by_count) {
    const bool within_budget = !budget_usd || (best.run.usd > 0 && best.run.usd <= *budget_usd);
    if (best.run.hours <= deadline_hours && within_budget && (!plan.meeting || key(best) < key(*plan.meeting)))
      plan.meeting = best;
  }
  return plan;
}

}  // namespace perfcast
