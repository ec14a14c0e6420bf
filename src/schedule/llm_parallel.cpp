#include "schedule/llm_parallel.h"

#include <algorithm>
#include <cmath>

#include "core/data_files.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/toml_reader.h"
#include "schedule/deepspeed_host.h"

namespace perfcast {

namespace {

LlmTrainingConstants load_constants() {
  const auto path = data_dir() / "llm_training.toml";
  const toml::table root = parse_toml_file(path);
  const std::string file = path.string();
  TomlFields top(root, file);
  LlmTrainingConstants c;
  TomlFields fab(top.table("fabric"), file + " [fabric]");
  c.nics_per_gpu = fab.number("nics_per_gpu");
  c.default_network = fab.text("default_network");
  c.network_by_sm[80] = fab.text("network_sm80");
  c.network_by_sm[90] = fab.text("network_sm90");
  TomlFields mem(top.table("memory"), file + " [memory]");
  c.weight_bytes = mem.number("weight_bytes");
  c.grad_bytes = mem.number("grad_bytes");
  c.megatron_grad_reduce_bytes = mem.number("megatron_grad_reduce_bytes");
  c.fsdp_grad_reduce_bytes = mem.number("fsdp_grad_reduce_bytes");
  c.act_bytes_unsharded = mem.number("act_bytes_unsharded");
  c.act_bytes_sharded = mem.number("act_bytes_sharded");
  c.act_bytes_attention = mem.number("act_bytes_attention");
  c.act_bytes_full_recompute = mem.number("act_bytes_full_recompute");
  c.act_bytes_gated_mlp_per_width = mem.number("act_bytes_gated_mlp_per_width");
  c.collective_buffer_bytes = mem.number("collective_buffer_bytes");
  TomlFields sch(top.table("schedule"), file + " [schedule]");
  c.default_microbatches_per_stage = sch.count("default_microbatches_per_stage");
  if (c.default_microbatches_per_stage < 1) sch.fail("default_microbatches_per_stage", "must be at least 1");
  c.megatron_dp_overlap = sch.number("megatron_dp_overlap");
  c.fsdp_dp_overlap = sch.number("fsdp_dp_overlap");
  c.tp_comm_exposed = sch.number("tp_comm_exposed");
  c.offload_bytes_per_param = sch.number("offload_bytes_per_param");
  c.offload_host_params_per_s = sch.number("offload_host_params_per_s");
  if (c.offload_host_params_per_s <= 0) sch.fail("offload_host_params_per_s", "must be positive");
  c.offload_accumulate_bytes_per_param = sch.number("offload_accumulate_bytes_per_param");
  TomlFields ds(top.table("deepspeed"), file + " [deepspeed]");
  // Every [deepspeed] count is a count of calls, tensors or elements: none can be negative.
  const auto ds_count = [&](const char* key) {
    const double v = ds.number(key);
    if (v < 0) ds.fail(key, "a [deepspeed] count cannot be negative");
    return v;
  };
  c.zero3_forward_hook_calls_per_module_call = ds_count("zero3_forward_hook_calls_per_module_call");
  c.zero3_function_applies_per_module_call = ds_count("zero3_function_applies_per_module_call");
  c.zero3_backward_hook_calls_per_module_call = ds_count("zero3_backward_hook_calls_per_module_call");
  c.zero3_fetches_per_param_tensor = ds_count("zero3_fetches_per_param_tensor");
  c.zero3_param_persistence_threshold_elems = ds_count("zero3_param_persistence_threshold_elems");
  c.zero3_inline_ops_per_fetch = ds_count("zero3_inline_ops_per_fetch");
  c.zero3_inline_ops_per_gathered_tensor = ds_count("zero3_inline_ops_per_gathered_tensor");
  c.zero3_inline_ops_per_released_tensor = ds_count("zero3_inline_ops_per_released_tensor");
  c.grad_hook_inline_ops_per_param_tensor = ds_count("grad_hook_inline_ops_per_param_tensor");
  c.partitioned_gradients_reduce_every_microbatch = sch.boolean("partitioned_gradients_reduce_every_microbatch");
  for (double v : {c.megatron_dp_overlap, c.fsdp_dp_overlap, c.tp_comm_exposed})
    if (v < 0 || v > 1) sch.fail("megatron_dp_overlap", "fsdp_dp_overlap and tp_comm_exposed are shares in [0, 1]");
  TomlFields mfu(top.table("mfu"), file + " [mfu]");
  c.attention_flops_per_token_coeff = mfu.number("attention_flops_per_token_coeff");
  TomlFields fp8(top.table("fp8"), file + " [fp8]");
  c.fp8_input_cast_transpose_bytes = fp8.number("input_cast_transpose_bytes_per_elem");
  c.fp8_norm_output_transpose_bytes = fp8.number("norm_output_transpose_bytes_per_elem");
  c.fp8_grad_cast_transpose_bytes = fp8.number("grad_cast_transpose_bytes_per_elem");
  c.fp8_weight_cast_transpose_bytes_per_param = fp8.number("weight_cast_transpose_bytes_per_param");
  c.fp8_amax_bytes_per_linear = fp8.number("amax_bytes_per_linear");
  c.fp8_amax_reductions_per_microbatch = fp8.count("amax_reductions_per_microbatch");
  for (double v : {c.fp8_input_cast_transpose_bytes, c.fp8_norm_output_transpose_bytes, c.fp8_grad_cast_transpose_bytes,
                   c.fp8_weight_cast_transpose_bytes_per_param, c.fp8_amax_bytes_per_linear,
                   static_cast<double>(c.fp8_amax_reductions_per_microbatch)})
    if (v < 0) fp8.fail("input_cast_transpose_bytes_per_elem", "the [fp8] byte counts and reductions cannot be negative");
  return c;
}

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

const LlmTrainingConstants& llm_training_constants() {
  static const LlmTrainingConstants c = load_constants();
  return c;
}

Recompute parse_recompute(const std::string& text) {
  if (text == "none" || text.empty()) return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  throw_unknown("--recompute mode", text, {"none", "selective", "full"});
}

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
    default: return "none";
  }
}

void check_layout(const TransformerDims& d, const ParallelLayout& l, int gpus_total) {
  for (const auto& [flag, v] : {std::pair{"--tp", l.tp}, {"--pp", l.pp}, {"--dp", l.dp}, {"--cp", l.cp}, {"--ep", l.ep},
                                {"--vpp", l.vpp}})
    if (v < 1) throw InputError(std::string(flag) + " must be at least 1, got " + std::to_string(v));
  if (l.zero < 0 || l.zero > 3) throw InputError("--zero takes a stage 0-3, got " + std::to_string(l.zero));
  if (l.fsdp && l.zero != 3) throw InputError("--fsdp shards parameters, gradients and optimizer states (ZeRO-3); it excludes --zero " + std::to_string(l.zero));
  const std::int64_t model = static_cast<std::int64_t>(l.tp) * l.pp * l.cp;
  if (model > gpus_total || gpus_total % model != 0)
    throw InputError("--tp " + str(l.tp) + " x --pp " + str(l.pp) + " x --cp " + str(l.cp) + " = " + str(model) +
                     " does not divide the " + str(gpus_total) + " GPUs");
  if (l.gpus() != gpus_total)
    throw InputError("--tp " + str(l.tp) + " x --pp " + str(l.pp) + " x --cp " + str(l.cp) + " x --dp " + str(l.dp) +
                     " = " + str(l.gpus()) + " GPUs, but --gpus x --nodes gives " + str(gpus_total));
  if (l.tp > d.heads)
    throw InputError("--tp " + str(l.tp) + " is larger than the model's " + str(d.heads) + " attention heads");
  if (d.heads % l.tp != 0)
    throw InputError("--tp " + str(l.tp) + " does not divide the model's " + str(d.heads) + " attention heads");
  if (d.kv_heads % l.tp != 0 && l.tp % d.kv_heads != 0)
    throw InputError("--tp " + str(l.tp) + " and the model's " + str(d.kv_heads) +
                     " key/value heads must divide one another");
  if (d.layers % (l.pp * l.vpp) != 0)
    throw InputError("--pp " + str(l.pp) + (l.vpp > 1 ? " x --vpp " + str(l.vpp) : std::string()) +
                     " does not divide the model's " + str(d.layers) + " layers");
  if (l.vpp > 1 && l.pp == 1) throw InputError("--vpp (interleaved pipeline) needs --pp above 1");
  if (d.seq % l.cp != 0) throw InputError("--cp " + str(l.cp) + " does not divide --seq " + str(d.seq));
  if (l.sequence_parallel && (d.seq / l.cp) % l.tp != 0)
    throw InputError("sequence parallelism splits each sequence's " + str(d.seq / l.cp) + " tokens over --tp " +
                     str(l.tp) + ": they must divide");
  if (l.ep > 1 && d.experts == 0) throw InputError("--ep " + str(l.ep) + " needs a mixture-of-experts model");
  if (l.ep > 1 && (d.experts % l.ep != 0 || l.dp % l.ep != 0))
    throw InputError("--ep " + str(l.ep) + " must divide the model's " + str(d.experts) + " experts and --dp " + str(l.dp));
  if (l.micro_batch < 1) throw InputError("--micro-batch must be positive");
  if (l.micro_batch > input_limits().max_batch || l.global_batch > input_limits().max_batch * l.dp)
    throw InputError("--micro-batch " + str(l.micro_batch) + " / --global-batch " + str(l.global_batch) +
                     " are beyond any run (limit " + str(input_limits().max_batch) + " sequences per replica, data/limits.toml)");
  if (l.global_batch < l.micro_batch * l.dp || l.global_batch % (l.micro_batch * l.dp) != 0)
    throw InputError("--global-batch " + str(l.global_batch) + " must be a multiple of --micro-batch " +
                     str(l.micro_batch) + " x --dp " + str(l.dp) + " = " + str(l.micro_batch * l.dp));
  if (l.vpp > 1 && l.microbatches() % l.pp != 0)
    throw InputError("the interleaved schedule needs the " + str(l.microbatches()) +
                     " micro-batches per pipeline to be a multiple of --pp " + str(l.pp));
}

double params_per_gpu(const TransformerDims& d, const ParallelLayout& l) {
  const double layers = static_cast<double>(d.layers) / l.pp;
  const double block = layers * (d.params_layer_dense / l.tp + d.params_layer_experts / (l.tp * l.ep));
  // The embedding sits on the first stage and the head on the last (both vocabulary-parallel over TP); with one
  // stage both.
  const double first = d.params_embedding / l.tp, last = d.params_head / l.tp;
  return block + (l.pp == 1 ? first + last : std::max(first, last));
}

MemoryBreakdown parallel_memory(const TransformerDims& d, const ParallelLayout& l, const PrecisionPlan& plan,
                                const RuntimeProfile& runtime, const DeviceSpec& device) {
  const auto& c = llm_training_constants();
  MemoryBreakdown m;
  // The per-parameter states of schedule/memory.h, for the parameters this GPU's TP/PP shard holds, ZeRO/FSDP
  // sharded over dp. Gradients as kept: Megatron's fp32 main_grad buffers where it reduces in fp32 (bf16), the
  // fp16 model's own dtype otherwise; FSDP's sharded .grad in the dtype of its fp32 shard under mixed precision
  // (torch FSDP casts the reduced gradient to the sharded parameter's dtype). Adam(W), as the step model runs.
  const double grad_bytes = (l.fsdp && plan.mixed) || l.fp32_grad_reduce ? 4.0 : plan.bytes.weight;
  ParamStateBytes per_param = trained_param_bytes(plan.bytes.weight, plan.mixed, grad_bytes, OptimizerKind::kAdamW, true);
  if (l.offload_optimizer) per_param.master = per_param.optimizer = 0;  // ZeRO-Offload: masters and moments on the host
  add_param_states(m, params_per_gpu(d, l), per_param, zero_state_shares(l.zero, l.dp, l.fsdp, plan.mixed));
  if (l.zero >= 3)  // the layer being gathered (and the next, prefetched) in full, in the compute precision
    m.weights += 2.0 * (d.params_layer_dense + d.params_layer_experts / l.ep) / l.tp * plan.bytes.weight;

  // Activations of one layer for one micro-batch (Korthikanti et al. 2022), in bytes.
  const double s = static_cast<double>(d.seq) / l.cp, b = static_cast<double>(l.micro_batch), h = static_cast<double>(d.hidden);
  const double t = l.tp, a = static_cast<double>(d.heads);
  double per_token_h = l.sequence_parallel ? (c.act_bytes_unsharded + c.act_bytes_sharded) / t
                                           : c.act_bytes_unsharded + c.act_bytes_sharded / t;
  if (d.gated_mlp) per_token_h += c.act_bytes_gated_mlp_per_width * static_cast<double>(d.ffn) / h / t;
  // The score matrix over the whole (context-parallel: ring) sequence; gone with a fused kernel or selective recompute.
  const double scores = d.fused_attention ? 0.0 : c.act_bytes_attention * a * static_cast<double>(d.seq) / h / t;
  const double layer_none = s * b * h * (per_token_h + scores);
  const double layer_selective = s * b * h * per_token_h;
  const double layer_full = s * b * h * c.act_bytes_full_recompute / (l.sequence_parallel ? t : 1.0);
  const double layers_per_stage = static_cast<double>(d.layers) / l.pp;
  // 1F1B keeps up to p micro-batches in flight on the first stage (each of its L/p layers); the interleaved
  // schedule (1 + (p - 1) / (p v)) times that.
  const double in_flight = std::min<double>(static_cast<double>(l.pp), static_cast<double>(std::max<std::int64_t>(1, l.microbatches())));
  const double interleave = l.vpp > 1 ? 1.0 + (l.pp - 1.0) / (l.pp * l.vpp) : 1.0;
  double per_layer = layer_none;
  if (l.recompute == Recompute::kSelective) per_layer = layer_selective;
  if (l.recompute == Recompute::kFull) per_layer = layer_full;
  m.activations = layers_per_stage * per_layer * in_flight * interleave;
  if (l.recompute == Recompute::kFull) m.activations += layer_none;  // one layer rebuilt at a time in backward
  // The last stage's logits in fp32 (vocabulary-parallel cross-entropy), one micro-batch.
  const double logits = s * b * static_cast<double>(d.vocab) * 4.0 / t;
  if (l.pp == 1) m.activations += logits;
  else m.activations = std::max(m.activations, layers_per_stage * per_layer + logits);
  // Each GPU's process holds the cuBLAS/cuBLASLt workspaces a single-GPU training step does.
  m.workspace = runtime.workspace_bytes + blas_workspace_bytes(runtime, device, true);
  m.runtime = runtime.context_bytes;
  m.comm_buffers = c.collective_buffer_bytes;
  // No large-segment rounding: the closed form sizes the activations per layer, not per buffer.
  finish_measures(m, 0, runtime.allocator_overhead, device.memory_bytes());
  return m;
}

GroupLink group_link(const Fabric& f, int size, int stride) {
  GroupLink g;
  g.size = std::max(1, size);
  g.intra_bw_gbps = f.intra_bw_gbps;
  g.intra_alpha_us = f.intra_latency_us;
  g.inter_bw_gbps = f.nodes > 1 ? f.inter_bw_gbps / f.gpus_per_node : 0;
  g.inter_alpha_us = f.inter_latency_us;
  const int node = std::max(1, f.gpus_per_node);
  g.per_node = stride >= node ? 1 : std::min(g.size, node / std::max(1, stride));
  if (static_cast<std::int64_t>(size) * stride <= node) g.per_node = g.size;
  return g;
}

double group_allreduce_us(const GroupLink& g, double bytes) {
  if (g.size <= 1) return 0;
  if (!g.spans_nodes()) return ring_allreduce_us(g.size, bytes, g.intra_bw_gbps, g.intra_alpha_us);
  const int nodes = g.size / g.per_node;
  // Reduce-scatter inside the node, all-reduce of each shard across nodes on its own rail, all-gather back.
  return ring_reduce_scatter_us(g.per_node, bytes, g.intra_bw_gbps, g.intra_alpha_us) +
         ring_allreduce_us(nodes, bytes / g.per_node, g.inter_bw_gbps, g.inter_alpha_us) +
         ring_all_gather_us(g.per_node, bytes, g.intra_bw_gbps, g.intra_alpha_us);
}

double group_reduce_scatter_us(const GroupLink& g, double bytes) {
  if (g.size <= 1) return 0;
  if (!g.spans_nodes()) return ring_reduce_scatter_us(g.size, bytes, g.intra_bw_gbps, g.intra_alpha_us);
  const int nodes = g.size / g.per_node;
  return ring_reduce_scatter_us(g.per_node, bytes, g.intra_bw_gbps, g.intra_alpha_us) +
         ring_reduce_scatter_us(nodes, bytes / g.per_node, g.inter_bw_gbps, g.inter_alpha_us);
}

double group_all_gather_us(const GroupLink& g, double bytes) { return group_reduce_scatter_us(g, bytes); }

double group_all_to_all_us(const GroupLink& g, double bytes) {
  if (g.size <= 1) return 0;
  if (!g.spans_nodes()) return all_to_all_us(g.size, bytes, g.intra_bw_gbps, g.intra_alpha_us);
  // The share bound for other nodes crosses the rail; the node's own share the NVLink fabric, at once.
  const double off = static_cast<double>(g.size - g.per_node) / g.size;
  const double inter = (g.size - g.per_node) * g.inter_alpha_us + off * bytes / (g.inter_bw_gbps * 1e3);
  const double intra = all_to_all_us(g.per_node, bytes * g.per_node / g.size, g.intra_bw_gbps, g.intra_alpha_us);
  return std::max(inter, intra);
}

double group_send_recv_us(const GroupLink& g, double bytes) {
  return g.spans_nodes() ? send_recv_us(bytes, g.inter_bw_gbps, g.inter_alpha_us)
                         : send_recv_us(bytes, g.intra_bw_gbps, g.intra_alpha_us);
}

double model_flops_per_token(const TransformerDims& d) {
  return 6.0 * d.params_active + llm_training_constants().attention_flops_per_token_coeff * d.layers *
                                     static_cast<double>(d.hidden) * static_cast<double>(d.seq);
}

ParallelStepCost schedule_parallel_step(const TransformerDims& d, const ParallelLayout& l, const LayerTimes& t,
                                        const Fabric& f, double act_bytes) {
  const auto& c = llm_training_constants();
  ParallelStepCost out;
  const std::int64_t m = l.microbatches();
  out.microbatches = m;
  const GroupLink tp = group_link(f, l.tp, 1);
  const GroupLink cp = group_link(f, l.cp, l.tp);
  const GroupLink dp = group_link(f, l.dp, l.tp * l.cp);
  const GroupLink ep = group_link(f, l.ep, l.tp * l.cp);
  const GroupLink pp = group_link(f, l.pp, l.tp * l.cp * l.dp);
  const double s = static_cast<double>(d.seq) / l.cp, b = static_cast<double>(l.micro_batch), h = static_cast<double>(d.hidden);
  const double layers = static_cast<double>(d.layers) / l.pp;

  // Tensor parallelism: per layer two all-reduces of the [b, s, h] activations forward and two backward
  // (with sequence parallelism an all-gather and a reduce-scatter in their place: the same bytes); full
  // recomputation repeats the forward pair.
  const double act = s * b * h * act_bytes;
  const double one = l.sequence_parallel ? group_all_gather_us(tp, act) + group_reduce_scatter_us(tp, act) : 2.0 * group_allreduce_us(tp, act);
  const double tp_fwd = one * c.tp_comm_exposed;
  const double tp_bwd = one * c.tp_comm_exposed * (l.recompute == Recompute::kFull ? 2.0 : 1.0);

  // Context parallelism (ring attention): cp - 1 exchanges of the local K and V forward, twice that backward,
  // hidden behind the attention core that uses them.
  double cp_fwd = 0, cp_bwd = 0;
  if (l.cp > 1) {
    const double kv = 2.0 * s * b * static_cast<double>(std::max<std::int64_t>(1, d.kv_heads / l.tp)) * d.head_dim * act_bytes;
    const double ring = (l.cp - 1) * group_send_recv_us(cp, kv);
    cp_fwd = std::max(0.0, ring - t.layer_attention_fwd_us);
    cp_bwd = std::max(0.0, 2.0 * ring - 2.0 * t.layer_attention_fwd_us);
  }
  // Expert parallelism: dispatch and combine all-to-alls of the routed tokens, forward and backward.
  double ep_fwd = 0, ep_bwd = 0;
  if (d.experts > 0 && l.ep > 1) {
    const double routed = s * b * h * d.experts_per_token * act_bytes / (l.sequence_parallel ? l.tp : 1);
    ep_fwd = 2.0 * group_all_to_all_us(ep, routed);
    ep_bwd = ep_fwd * (l.recompute == Recompute::kFull ? 2.0 : 1.0);
  }
  double recompute = 0;
  if (l.recompute == Recompute::kFull) recompute = t.layer_fwd_us;
  else if (l.recompute == Recompute::kSelective && !d.fused_attention) recompute = t.layer_attention_fwd_us;

  // One micro-batch on the busiest stage, forward and backward.
  const double first_f = t.first_fwd_us, first_b = t.first_bwd_us, last_f = t.last_fwd_us, last_b = t.last_bwd_us;
  const double extra_f = l.pp == 1 ? first_f + last_f : std::max(first_f, last_f);
  const double extra_b = l.pp == 1 ? first_b + last_b : std::max(first_b, last_b);
  const double compute_f = layers * t.layer_fwd_us + extra_f;
  const double compute_b = layers * (t.layer_bwd_us + recompute) + extra_b;
  double stage_f = compute_f + layers * (tp_fwd + cp_fwd + ep_fwd);
  double stage_b = compute_b + layers * (tp_bwd + cp_bwd + ep_bwd);
  // The host issuing one micro-batch on the busiest stage: the framework's ops (full recomputation replays the
  // forward's in backward) and, on a DeepSpeed runtime, ZeRO's hooks counted from its source ([deepspeed]).
  // The embedding and head's host work is small beside the blocks': charged whole to the busiest stage.
  double host_f = layers * t.host_layer_fwd_us + t.host_other_fwd_us;
  double host_b = layers * (t.host_layer_bwd_us + (l.recompute == Recompute::kFull ? t.host_layer_fwd_us : 0.0)) +
                  t.host_other_bwd_us;
  // On a DeepSpeed runtime, ZeRO's hooks, fetches and releases (schedule/deepspeed_host.h).
  const DeepSpeedHostCost engine = deepspeed_host(t, l, layers, c);
  const double engine_f = engine.forward_us, engine_b = engine.backward_us;
  out.zero3_allgather_launches = static_cast<double>(m) * engine.allgather_launches;
  host_f += engine_f;
  host_b += engine_b;
  const double wait_f = std::max(0.0, host_f - stage_f), wait_b = std::max(0.0, host_b - stage_b);
  stage_f += wait_f;
  stage_b += wait_b;
  // Pipeline: each micro-batch's activations go to the next stage and their gradients come back, once per model
  // chunk (v times with interleaving); scattered over the TP ranks with sequence parallelism.
  double p2p = 0;
  if (l.pp > 1) {
    const double boundary = s * b * h * act_bytes / (l.sequence_parallel ? l.tp : 1);
    p2p = l.vpp * group_send_recv_us(pp, boundary);
    stage_f += p2p;
    stage_b += p2p;
  }
  const double stage = stage_f + stage_b;
  const double mm = static_cast<double>(m);
  const double fill = l.pp > 1 ? (l.pp - 1.0) / l.vpp : 0.0;
  out.bubble_us = fill * stage;
  out.bubble_fraction = fill / mm;
  out.compute_us = mm * (compute_f + compute_b);
  out.recompute_us = mm * layers * recompute;
  out.tp_comm_us = mm * layers * (tp_fwd + tp_bwd);
  out.cp_comm_us = mm * layers * (cp_fwd + cp_bwd);
  out.ep_comm_us = mm * layers * (ep_fwd + ep_bwd);
  out.pp_comm_us = mm * 2.0 * p2p;
  out.host_us = mm * (host_f + host_b);
  const double replayed = l.recompute == Recompute::kFull ? t.launches_layer_fwd
                          : l.recompute == Recompute::kSelective && !d.fused_attention ? t.launches_layer_attention_fwd
                                                                                     : 0.0;
  out.launches = mm * (layers * (t.launches_layer_fwd + t.launches_layer_bwd + replayed) + t.launches_other) +
                 out.zero3_allgather_launches;
  out.engine_host_us = mm * (engine_f + engine_b);
  out.host_wait_us = mm * (wait_f + wait_b);
  // FP8 delayed scaling: the amaxes of every FP8 tensor are all-reduced (MAX) over the tensor x context x data
  // ranks when each micro-batch's forward and backward end (a synchronising collective of a few KB, so its
  // latency); the weights are cast to FP8 once per step.
  double amax_per_mb = 0;
  if (t.fp8_amax_bytes_per_layer > 0) {
    const GroupLink amax_group = group_link(f, l.tp * l.cp * l.dp, 1);
    amax_per_mb = c.fp8_amax_reductions_per_microbatch *
                  group_allreduce_us(amax_group, layers * t.fp8_amax_bytes_per_layer);
  }
  const double pipeline = mm * stage + out.bubble_us;

  // Data parallelism over the replicas (expert parameters over the replicas that share an expert).
  const double overlap = l.overlap_grad_reduce ? c.fsdp_dp_overlap : c.megatron_dp_overlap;
  const double grad_bytes = l.fsdp ? c.fsdp_grad_reduce_bytes
                            : l.fp32_grad_reduce ? c.megatron_grad_reduce_bytes
                                                 : c.grad_bytes;
  const double p = params_per_gpu(d, l);
  const double p_experts = layers * d.params_layer_experts / (l.tp * l.ep);
  const double p_dense = p - p_experts;
  const GroupLink edp = group_link(f, l.dp / l.ep, l.tp * l.cp * l.ep);
  auto reduce = [&](const GroupLink& g, double params) {
    if (l.zero == 0) return group_allreduce_us(g, params * grad_bytes);
    return group_reduce_scatter_us(g, params * grad_bytes);
  };
  auto gather = [&](const GroupLink& g, double params) { return group_all_gather_us(g, params * c.weight_bytes); };
  double exposed = 0, total = 0;
  if (l.zero >= 3) {
    // Parameters gathered for forward and again for backward, gradients reduce-scattered, every micro-batch;
    // prefetching hides them behind that micro-batch's compute.
    const double per_mb = 2.0 * (gather(dp, p_dense) + gather(edp, p_experts)) + reduce(dp, p_dense) + reduce(edp, p_experts);
    total = mm * per_mb;
    // The gathers and reduce-scatters run on their own streams, so they also proceed while the compute stream waits
    // for the host: the window is the micro-batch's compute and host wait.
    exposed = mm * std::max(per_mb * (1.0 - overlap), per_mb - overlap * (compute_f + wait_f + compute_b + wait_b));
  } else {
    // Gradients reduced once per step, behind the last micro-batch's backward where the runtime overlaps; ZeRO
    // 1/2 all-gather the updated parameters after the step. ZeRO-2 keeps only its gradient partition, so it
    // reduce-scatters during every micro-batch's backward (DeepSpeed's engine; partitioned_gradients_reduce_every_microbatch).
    const double red = reduce(dp, p_dense) + reduce(edp, p_experts);
    const double gat = l.zero >= 1 ? gather(dp, p_dense) + gather(edp, p_experts) : 0.0;
    const double reductions = t.deepspeed && l.zero == 2 && c.partitioned_gradients_reduce_every_microbatch ? mm : 1.0;
    total = reductions * red + gat;
    exposed = reductions * std::max(red * (1.0 - overlap), red - overlap * (compute_b + wait_b)) + gat * (1.0 - overlap);
  }
  out.dp_comm_total_us = l.dp > 1 ? total : 0.0;
  out.dp_comm_us = l.dp > 1 ? std::max(0.0, exposed) : 0.0;

  // The optimizer updates the parameters this GPU owns (its ZeRO shard).
  const double owned = l.zero >= 1 ? p / l.dp : p;
  if (l.offload_optimizer) {
    // One host serves its node's ranks: they update their shards on its CPUs at once (the CPU Adam rate is the
    // host's) and their copies share its memory, each GPU on its own PCIe link.
    const double ranks = static_cast<double>(std::min<std::int64_t>(l.gpus(), std::max(1, f.gpus_per_node)));
    auto host_copy_us = [&](double bytes_per_gpu) {
      const double link = bytes_per_gpu / (f.host_link_gbps * 1e3);
      return f.host_memory_gbps > 0 ? std::max(link, ranks * bytes_per_gpu / (f.host_memory_gbps * 1e3)) : link;
    };
    out.optimizer_us = ranks * owned / c.offload_host_params_per_s * 1e6 + host_copy_us(owned * c.offload_bytes_per_param);
    // With accumulation the gradient partition goes to the host and back between micro-batches (stage_1_and_2:
    // m - 1 copies each way; stage 3 copies every micro-batch but makes the boundary's fp32 copy on the host: the
    // same bytes per step, [schedule] offload_accumulate_bytes_per_param), beside the backward it follows where the
    // reduction overlaps.
    if (m > 1) {
      const double accum = 2.0 * (mm - 1.0) * host_copy_us(owned * c.offload_accumulate_bytes_per_param);
      out.optimizer_us += std::max(accum * (1.0 - overlap), accum - overlap * (mm - 1.0) * (compute_b + wait_b));
    }
  } else {
    out.optimizer_us = owned * t.optimizer_us_per_param;
  }

  out.fp8_scaling_us = mm * amax_per_mb + params_per_gpu(d, l) * t.fp8_weight_cast_us_per_param;
  out.step_us = pipeline + out.dp_comm_us + out.optimizer_us + out.fp8_scaling_us;
  return out;
}

}  // namespace perfcast
