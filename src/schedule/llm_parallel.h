// Parallel training of a decoder language model: how a layout (tensor x pipeline x data x context x expert
// parallel, ZeRO stage or FSDP, micro-batch, activation recomputation, optimizer offload) splits the model over
// GPUs, what each GPU holds in memory, and one step's schedule: the costed per-layer compute of one micro-batch
// (analysis/llm_parallel_prediction.cpp costs the sharded kernels), the collectives each kind of parallelism
// adds on its group's links, the pipeline bubble and the optimizer.
//
// References: Shoeybi et al. 2019 and Narayanan et al. 2021 (Megatron-LM tensor and pipeline parallelism, 1F1B
// and interleaved schedules), Korthikanti et al. 2022 (sequence parallelism, selective recomputation and the
// activation memory formulas), Rajbhandari et al. 2020 (ZeRO stages), Zhao et al. 2023 (PyTorch FSDP).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "schedule/collectives.h"
#include "schedule/memory.h"
#include "schedule/power_cost.h"
#include "schedule/run_cost.h"

namespace perfcast {

enum class Recompute { kNone, kSelective, kFull };
// "none" | "selective" | "full"; InputError otherwise.
Recompute parse_recompute(const std::string& text);
const char* recompute_name(Recompute r);

// The model as the layout sees it (from its graph).
struct TransformerDims {
  int layers = 0;
  std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0, seq = 0;
  std::int64_t experts = 0;         // 0 = dense
  double experts_per_token = 0;     // top-k of a mixture of experts
  bool gated_mlp = false;           // SwiGLU (three MLP matrices)
  bool fused_attention = false;     // flash-style attention: no score matrix kept for backward
  double params_total = 0;          // every parameter
  double params_active = 0;         // used per token (a mixture of experts runs top-k of its experts)
  double params_layer_dense = 0;    // one block without its routed experts
  double params_layer_experts = 0;  // one block's routed experts
  double params_embedding = 0;      // token (and position) embeddings: first pipeline stage
  double params_head = 0;           // untied LM head and the final norm: last pipeline stage
};

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int vpp = 1;                      // model chunks per pipeline stage (interleaved 1F1B when > 1)
  int zero = 0;                     // 0-3; FSDP full sharding is stage 3
  bool fsdp = false;                // PyTorch FSDP (overlapped, parameter-dtype reduction) rather than Megatron/ZeRO
  bool sequence_parallel = false;   // Megatron sequence parallelism with tp > 1
  std::int64_t micro_batch = 1;     // sequences per micro-batch per model replica
  std::int64_t global_batch = 0;    // sequences per optimizer step over all replicas
  Recompute recompute = Recompute::kNone;
  bool offload_optimizer = false;   // optimizer states and update on the host CPU
  bool overlap_grad_reduce = false; // data-parallel collectives overlap the backward pass (FSDP, Megatron-Core)
  bool fp32_grad_reduce = true;     // Megatron keeps and reduces fp32 main grads (forced with bf16, off with fp16)
  std::int64_t gpus() const { return static_cast<std::int64_t>(tp) * pp * dp * cp; }
  // Micro-batches each pipeline runs per step.
  std::int64_t microbatches() const { return global_batch / (micro_batch * dp); }
};

// data/llm_training.toml, loaded once.
struct LlmTrainingConstants {
  double nics_per_gpu = 1;
  std::string default_network;
  std::map<int, std::string> network_by_sm;
  double weight_bytes = 2, grad_bytes = 2;
  double megatron_grad_reduce_bytes = 4, fsdp_grad_reduce_bytes = 2;
  double act_bytes_unsharded = 10, act_bytes_sharded = 24, act_bytes_attention = 5, act_bytes_full_recompute = 2;
  double act_bytes_gated_mlp_per_width = 2;
  double collective_buffer_bytes = 0;
  int default_microbatches_per_stage = 4;
  double megatron_dp_overlap = 0, fsdp_dp_overlap = 0;
  double tp_comm_exposed = 1;
  double offload_bytes_per_param = 6, offload_host_params_per_s = 1e9;
  double offload_accumulate_bytes_per_param = 2;          // per micro-batch host round trip of the accumulated gradient
  bool partitioned_gradients_reduce_every_microbatch = true;  // ZeRO-2 reduces each micro-batch, not once per step
  double attention_flops_per_token_coeff = 12;
  // DeepSpeed ZeRO's host work per micro-batch ([deepspeed]): the counts read off its source, priced by the runtime's
  // per-call host costs (LayerTimes' host_* prices) on runtimes whose zero_engine is "deepspeed".
  double zero3_forward_hook_calls_per_module_call = 4, zero3_function_applies_per_module_call = 2;
  double zero3_backward_hook_calls_per_module_call = 2;
  double zero3_fetches_per_param_tensor = 2, zero3_inline_ops_per_fetch = 2;
  double zero3_inline_ops_per_gathered_tensor = 3, zero3_inline_ops_per_released_tensor = 2;
  double zero3_param_persistence_threshold_elems = 1e5;   // tensors at or below it are never gathered (ds_persist)
  double grad_hook_inline_ops_per_param_tensor = 2;
  // Transformer Engine FP8 training ([fp8]): cast kernel bytes, the per-step weight cast and the amax reductions.
  double fp8_input_cast_transpose_bytes = 4, fp8_norm_output_transpose_bytes = 2, fp8_grad_cast_transpose_bytes = 4;
  double fp8_weight_cast_transpose_bytes_per_param = 4;
  double fp8_amax_bytes_per_linear = 12;
  int fp8_amax_reductions_per_microbatch = 2;
};
const LlmTrainingConstants& llm_training_constants();

// One-line InputErrors for layouts the model or the GPU count cannot take: degrees that do not divide the GPUs,
// the layers, the heads or the sequence; TP above the heads; expert parallelism on a dense model; a global batch that the replicas and micro-batches do not divide.
// (A sequence beyond the model's context is refused before, where the model is resolved: check_context.)
void check_layout(const TransformerDims& d, const ParallelLayout& l, int gpus_total);

// Parameters one GPU holds before ZeRO sharding (the largest pipeline stage).
double params_per_gpu(const TransformerDims& d, const ParallelLayout& l);
// Memory per GPU on the busiest pipeline stage: the buckets of schedule/memory.h (one definition of the
// per-parameter states, one rule for the three measures) with the layout's shardings as factors: TP and PP split
// the parameters (params_per_gpu), ZeRO/FSDP shard their states over dp (zero_state_shares), the activations of
// the in-flight micro-batches per stage (Korthikanti et al. 2022), the runtime's workspace (with a training
// step's cuBLAS/cuBLASLt workspaces, blas_workspace_bytes), context and allocator overhead, and NCCL's buffers.
// `plan`: the training precision (its compute-copy bytes and mixed precision); `device`: one GPU (its capacity and
// architecture).
MemoryBreakdown parallel_memory(const TransformerDims& d, const ParallelLayout& l, const PrecisionPlan& plan,
                                const RuntimeProfile& runtime, const DeviceSpec& device);

// Costed compute of one micro-batch on one GPU (its tensor/context/expert shard), microseconds.
struct LayerTimes {
  double layer_fwd_us = 0;          // one transformer block, forward
  double layer_bwd_us = 0;          // one block, backward (data and weight gradients)
  double layer_attention_fwd_us = 0;  // the attention core's forward (what selective recomputation repeats)
  double first_fwd_us = 0, first_bwd_us = 0;  // embedding (first stage)
  double last_fwd_us = 0, last_bwd_us = 0;    // final norm, LM head and loss (last stage)
  double optimizer_us_per_param = 0;          // the update of one parameter on the GPU
  // FP8 training (Transformer Engine); zero otherwise. The cast kernels around each FP8 GEMM are inside the
  // layer times above; these are what runs once per step or as a collective.
  double fp8_weight_cast_us_per_param = 0;    // the BF16 -> FP8 weight cast and transpose, once per step
  double fp8_amax_bytes_per_layer = 0;        // amaxes of one block's FP8 tensors, all-reduced per micro-batch
  // Board power of those kernels (analysis/power.h's per-kernel draw) over one micro-batch of the whole model on one
  // GPU (every block, the embedding and the head, forward and backward; the gaps between kernels at the wait power):
  // the step's compute draws model_energy_uj / model_time_us on average.
  double model_energy_uj = 0, model_time_us = 0;
  double model_busy_us = 0;                   // of model_time_us, kernels running (no gaps)
  double model_clock_us = 0;                  // the kernels' board clock (of boost) x their time
  double peak_w = 0;                          // the most any of those kernels draws
  double optimizer_w = 0;                     // the update kernel's draw
  double wait_w = 0;                          // the board between kernels: clocks up, no kernel
  double limit_w = 0;                         // the board limit in force
  // The host's side (reference-host costs times the request's host speed): the framework issuing one block's ops
  // (per op, autograd node and library call, per launch) forward and backward, and the rest of the model (embedding,
  // head, loss; backward also the AccumulateGrad node of every parameter tensor).
  double host_layer_fwd_us = 0, host_layer_bwd_us = 0;
  double host_other_fwd_us = 0, host_other_bwd_us = 0;
  // The kernel launches those ops issue: one block's forward and backward, the rest of the model's both.
  double launches_layer_fwd = 0, launches_layer_bwd = 0, launches_other = 0;
  double launches_layer_attention_fwd = 0;  // of launches_layer_fwd, the attention's (selective recompute replays them)
  // What DeepSpeed's ZeRO hooks are counted over (schedule_parallel_step prices them by stage): the model code's
  // nn.Module calls and the graph's parameter tensors, per block and in the rest of the model, and the runtime's
  // host prices at this host. `deepspeed`: the runtime's --zero is DeepSpeed's (its zero_engine, data/runtimes).
  bool deepspeed = false;
  double module_calls_per_layer = 0, module_calls_other = 0;
  double param_tensors_per_layer = 0, param_tensors_other = 0;
  // Of those, the tensors ZeRO-3 partitions and gathers: above [deepspeed] zero3_param_persistence_threshold_elems.
  double gathered_tensors_per_layer = 0, gathered_tensors_other = 0;
  double host_module_call_us = 0, host_inline_op_us = 0, host_library_call_us = 0, host_launch_us = 0;
  double host_autograd_op_us = 0, host_backward_op_us = 0;
};

// The collective groups' links: tensor parallel innermost, then context, data (expert parallel inside it) and
// pipeline outermost, as Megatron orders its ranks.
struct GroupLink {
  int size = 1;
  int per_node = 1;               // members in one node
  double intra_bw_gbps = 0, intra_alpha_us = 0;
  double inter_bw_gbps = 0, inter_alpha_us = 0;  // per GPU: its rail of the node's network
  bool spans_nodes() const { return per_node < size; }
};
GroupLink group_link(const Fabric& f, int size, int stride);
// Collectives over a group, hierarchical (inside the node, then across its rails) when it spans nodes.
double group_allreduce_us(const GroupLink& g, double bytes);
double group_reduce_scatter_us(const GroupLink& g, double bytes);
double group_all_gather_us(const GroupLink& g, double bytes);
double group_all_to_all_us(const GroupLink& g, double bytes);
double group_send_recv_us(const GroupLink& g, double bytes);

struct ParallelStepCost {
  double step_us = 0;
  double compute_us = 0;       // m micro-batches of the busiest stage's kernels (recomputation included)
  double recompute_us = 0;     // of which recomputation
  double bubble_us = 0;        // pipeline fill and drain: (p - 1) / v stage times
  double bubble_fraction = 0;  // (p - 1) / (v m)
  double tp_comm_us = 0;       // tensor-parallel all-reduces (or all-gathers + reduce-scatters), exposed
  double cp_comm_us = 0;       // context-parallel KV exchange left after the attention it overlaps
  double ep_comm_us = 0;       // expert-parallel all-to-alls
  double pp_comm_us = 0;       // activations and their gradients between stages
  double dp_comm_us = 0;       // data-parallel reduction / ZeRO gathers left after overlap
  double dp_comm_total_us = 0; // the same before overlap
  double optimizer_us = 0;     // the update (on the host with offload, with its PCIe copies)
  double fp8_scaling_us = 0;   // FP8: amax all-reduces per micro-batch and the weight casts once per step
  double host_us = 0;          // the host issuing m micro-batches: the framework's ops and DeepSpeed's ZeRO hooks
  double engine_host_us = 0;   // of which DeepSpeed's hooks, gathers, releases and gradient hooks
  double host_wait_us = 0;     // what the GPU waits for the host in the busiest stage's micro-batches
  double zero3_allgather_launches = 0;  // DeepSpeed ZeRO-3 parameter fetches (all_gather_coalesced calls) per step
  // Kernel launches per step on the busiest stage: the model's kernels over m micro-batches (recomputation replays
  // the block's forward, or its attention's under selective recomputation without fused attention) and ZeRO-3's
  // fetches; the collectives and the update are not counted (the report says "model-kernel launches").
  double launches = 0;
  std::int64_t microbatches = 0;
};
// `act_bytes`: bytes per activation element of the compute precision. `host_link_gbps`: the GPU's PCIe link.
ParallelStepCost schedule_parallel_step(const TransformerDims& d, const ParallelLayout& l, const LayerTimes& t,
                                        const Fabric& f, double act_bytes);

// Model FLOPs per token: 6 per active parameter and the attention scores (12 L h s, PaLM appendix B).
double model_flops_per_token(const TransformerDims& d);

// One layout evaluated: its step, memory per GPU, throughput, MFU and (with a token count) time and cost.
struct ParallelTrainingCost {
  ParallelLayout layout;
  std::string layout_text;        // "tp8 pp4 dp2 zero1 mb1 gb512 recompute-selective sp"
  int gpus = 1;
  ParallelStepCost step;
  MemoryBreakdown memory;         // capacity and fits inside
  double tokens_per_step = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_token = 0;
  double peak_tflops = 0;         // the compute precision's dense tensor peak
  double mfu = 0;                 // tokens/s/GPU x model FLOPs per token / peak
  double train_tokens = 0;        // --train-tokens (0 = not asked)
  double usd_per_gpu_hour = 0;
  std::string price_instance;     // the cheapest on-demand instance with this GPU (data/cloud/prices.toml)
  // Board power per GPU: the compute at its kernels' mean draw, the update at its kernel's (none with the optimizer
  // offloaded), the rest of the step (pipeline bubble, exposed communication, FP8 scaling) at the wait power, as
  // plan prices a data-parallel step's exposed communication. Per sample: every GPU's step energy over the global
  // batch.
  PowerCost power;
  // The run (cost_of_run on the GPUs used, RunBasis::kGpusUsed): its powered hardware (the GPUs and their share of
  // their server's host) and pue (--pue, else the priced instance's provider's) always; with --train-tokens its
  // hours, billed hours (per instance, with the provider's minimum and increment), on-demand dollars (0 when no price
  // is known for the GPU) and energy (GPU boards, server, facility = server x pue), else those stay 0.
  RunCost run;
  // On-demand dollars per million tokens at the priced rate (before the billing minimum and increment); 0: no price.
  double usd_per_million_tokens = 0;
};

}  // namespace perfcast
