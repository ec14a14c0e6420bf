// One training or inference step as a sequence of kernels: forward, backward (reverse order), optimizer
// update and mixed-precision bookkeeping, with the host dispatch running ahead of the GPU.
#pragma once

#include <vector>

#include "cost/op_cost.h"
#include "graph/graph.h"

namespace perfcast {

struct StepOptions {
  bool training = true;
  bool optimizer_step = true;  // include the weight update (train only)
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
  bool checkpointing = false;  // backward recomputes the forward pass of each checkpointed segment
  bool optimizer_fused = true;  // one pass over weights, gradients and state (else one pass per elementwise op)
  int grad_accum = 1;           // micro-batches per weight update: the update runs once every grad_accum steps
  double host_time_scale = 1;   // host CPU time per unit of the runtime's quoted cost (reference / host single-thread speed)
};

// Where a step entry comes from, for its host cost (docs/host-model.md).
enum class EntrySource {
  kForward, kRecompute, kBackward, kAccumulateGrad, kAccumulate, kZeroGrad, kUnscale, kOptimizer,
  kCast,          // autocast's casts in the forward pass: a framework op per cast kernel
  kCastBackward,  // their autograd nodes (ToCopyBackward0): a backward node per cast kernel
  kClip,          // a loop's per-tensor gradient clip (RuntimeProfile::per_tensor)
  kOther
};

// CPU time (at the reference host) the framework spends issuing one entry beside its launches: the runtime's
// per-op, autograd, library-call and optimizer costs. `op` is null for entries that are not a graph op.
double entry_host_us(const OpCost& e, const Op* op, EntrySource from, const RuntimeProfile& rt,
                     const StepOptions& options, double tensors);

// A graph that names its eager model code (Graph::model_code, data/graph_code) with a runtime that counts it
// (RuntimeProfile::count_model_code_calls): each code layer's counted torch calls and module calls replace
// host_op_us on that layer's running forward entries, spread evenly (entries[first + i] is ops[i]'s forward entry).
void charge_model_code_layers(std::vector<OpCost>& entries, std::size_t first, const Graph& graph,
                              const RuntimeProfile& rt, double host_time_scale);

struct StepCost {
  std::vector<OpCost> entries;  // every op in every phase, in execution order
  double gpu_us = 0;            // kernel time plus inter-kernel gaps
  double host_us = 0;           // CPU time the framework spends issuing the step (per op, per launch, per step)
  double step_us = 0;           // the step on the host/GPU timeline: the GPU waits whenever the host is behind
  double gpu_wait_us = 0;       // of step_us, time the GPU sits idle waiting for the host (or a sync)
  double syncs = 0;             // host-GPU synchronisations per step
  double launches = 0;
  double flops = 0;
  double bytes = 0;
};

StepCost schedule_step(const Graph& graph, const CostContext& ctx, const StepOptions& options);

// A forward pass costed kernel by kernel outside a graph's step (a language model's prefill and decode passes,
// with their entries already repeated by Simpson weights): each launch costs the host the runtime's per-kernel
// overhead times `host_time_scale` (as StepOptions::host_time_scale) on top of the host time an entry already
// carries (an eager code's Python, scaled where it was made), and host and GPU run side by side
// (run_host_timeline without per-step work; a pass's own host work is an entry of its own). `syncs` > 0: the
// pass ends with the host reading a GPU value, so it lasts until both timelines end.
StepCost schedule_pass(std::vector<OpCost> entries, const RuntimeProfile& runtime, double syncs = 0,
                       double host_time_scale = 1);

// Two phases one after the other, the second waiting for the first's result (a prompt's prefill, then the
// decode steps that need its logits): entries in order, times and work added.
StepCost append_phase(StepCost first, StepCost second);

// How the host may issue a step entry beyond running ahead of the GPU.
struct EntrySync {
  bool before = false;  // only after the GPU has finished everything before it
  // > 0: this entry and the next `lockstep_entries - 1` run in lock step with the GPU (the host reads a GPU value
  // per parameter tensor: `lockstep_syncs` syncs): after a sync they take `lockstep_us` on both timelines.
  int lockstep_entries = 0;
  double lockstep_us = 0;
  double lockstep_syncs = 0;
};

// Lays the costed entries on two timelines, the host issuing them in order and the GPU running each once it is
// issued and the previous one is done; fills host_us, step_us and gpu_wait_us (docs/host-model.md).
// `sync` (empty, or one per entry) marks entries the host issues only after the GPU has finished everything
// before them, and groups of entries that run in lock step with it.
void run_host_timeline(StepCost& s, const std::vector<EntrySync>& sync, double host_step_us, double syncs_per_step,
                       double gpu_gap_per_kernel_us);

// The host sets the pace: issuing the step takes the CPU longer than the GPU needs to run it.
inline bool host_bound(const StepCost& s) { return s.host_us > s.gpu_us; }

// Parameter tensors (weights and biases counted separately), for per-tensor optimizer and cast kernels.
double parameter_tensors(const Graph& graph);
// Their sizes in elements, one per tensor (parameter_tensors of them), for work done tensor by tensor.
std::vector<double> parameter_tensor_elems(const Graph& graph);
// Whether each of those tensors is a weight (the first tensor of a GEMM, convolution, attention or embedding op)
// rather than a bias or a norm's scale or shift: the tensors a loop's weight decay usually applies to.
std::vector<char> parameter_tensor_is_weight(const Graph& graph);

// What mixed precision casts to its low-precision copies each step: `tensors` cast kernels over `elems` elements,
// of which `up_tensors` over `up_elems` cast a half input up to FP32 (PyTorch runs those on its dynamic-cast copy
// kernel; cost_model.toml [memory] dynamic_cast_copy_efficiency).
struct CastWork {
  double elems = 0;
  double tensors = 0;
  double up_elems = 0;
  double up_tensors = 0;
};

// The weights and biases of the ops mixed precision computes in half, convolutions and GEMMs, which it casts from
// their FP32 masters: normalisation scales and embedding tables stay FP32 (torch.autocast lists batch norm in no
// cast list and layer norm among the FP32 ops; TensorFlow's FusedBatchNormV3 takes FP32 scale and offset).
CastWork half_weight_casts(const Graph& graph);

// torch.autocast's activation casts: an input of a low-precision op (convolution, GEMM) that an FP32 op produced
// (layer, group or RMS norm, softmax when `fp32_softmax`, an embedding, FP32 type promotion of a residual add) or
// the graph's FP32 input, cast once per consuming op (only leaf weights are cached), and a half input of an FP32-list
// op (layer norm, softmax, the loss when `training`) cast up.
CastWork autocast_activation_casts(const Graph& graph, bool fp32_softmax, bool training);

}  // namespace perfcast
