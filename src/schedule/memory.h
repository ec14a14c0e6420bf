// Device memory of a step: weights, gradients, optimizer state, activations kept for backward, the working set of
// the op in flight, workspace and the runtime's own footprint, against the GPU's capacity. One model for every mode:
// training and inference, data-parallel buffers and embedding tables, LoRA adapters and language-model serving
// (MemoryOptions). Three measures, as PyTorch reports them: `allocated` (torch.cuda.max_memory_allocated),
// `reserved` (max_memory_reserved: with the caching allocator's rounding and slack) and `total` (reserved plus the
// CUDA context: what nvidia-smi shows and what must fit in the card).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "cost/precision.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "runtime/runtime_profile.h"
#include "schedule/collectives.h"

namespace perfcast {

// One set of buckets for every mode (single GPU, data parallel, LoRA, serving, tensor/pipeline/data-parallel
// language-model training): the sharding of a parallel layout is a factor on a bucket, not a bucket of its own.
struct MemoryBreakdown {
  double weights = 0;          // the copy the kernels read, in the compute precision (as stored when serving)
  double master_weights = 0;   // fp32 masters beside a low-precision compute copy (mixed precision)
  double gradients = 0;
  double optimizer_state = 0;  // the optimizer's moments (masters apart)
  double activations = 0;      // saved for backward (training) or the live working set (inference)
  double workspace = 0;        // cuDNN/cuBLAS workspace
  double runtime = 0;          // CUDA context, library kernels
  double comm_buffers = 0;     // data parallel: gradient buckets (DDP), the fusion buffer (Horovod), NCCL's buffers
  double embedding_tables = 0; // embedding-bag tables held on this GPU, with their optimizer state
  double transient = 0;        // training: the gradients of the op in flight in backward (its output's and input's);
                               // under apex amp O2, at least the FP32 master gradients made after backward
  double allocated = 0;        // peak bytes held by tensors: the sum above (without runtime), blocks rounded
  double reserved = 0;         // allocated with the caching allocator's segment rounding and slack
  double total = 0;            // reserved plus the runtime's context (nvidia-smi)
  double capacity = 0;         // the GPU's memory (less what the runtime's allocator leaves to the system)
  bool fits = true;
};

// The data-parallel reduction's buffers set to `bytes` (replacing what was counted), every measure kept consistent.
void set_comm_buffers(MemoryBreakdown& m, double bytes, double allocator_overhead);

// The three measures of a breakdown; `measure` is allocated, reserved or nvidia-smi. InputError for another name.
double memory_measure_bytes(const MemoryBreakdown& m, const std::string& measure);

// Bytes of optimizer state per parameter (fp32): momentum 4, Adam 8, LAMB 8.
double optimizer_state_bytes_per_param(OptimizerKind kind);

// What one trained parameter holds, bytes, before any sharding: the one definition of the per-parameter buckets.
// Under mixed precision the compute copy (`compute_weight_bytes`, 2) sits beside an fp32 master; `gradient_bytes`
// is the gradient as the framework keeps it (autocast and FSDP: fp32; Megatron: fp32 main_grad with bf16, the fp16
// model's own dtype with fp16). Mixed-precision Adam: 2 + 4 + 4 + 8 = 18 bytes (2 + 2 + 12 = 16 with 16-bit
// gradients, as Rajbhandari et al. 2020 §3.1 count it).
struct ParamStateBytes {
  double weights = 0, master = 0, gradients = 0, optimizer = 0;
};
ParamStateBytes trained_param_bytes(double compute_weight_bytes, bool mixed, double gradient_bytes,
                                    OptimizerKind optimizer, bool optimizer_step);

// The share of each per-parameter bucket one data-parallel rank holds. ZeRO (Rajbhandari et al. 2020 §5.1-5.3):
// stage 1 (P_os) shards the optimizer states over the dp ranks (the fp32 masters with them: K = 12 counts both),
// stage 2 (P_os+g) the gradients too, stage 3 (P_os+g+p) the 16-bit parameters too. PyTorch FSDP FULL_SHARD
// (Zhao et al. 2023; torch.distributed.fsdp MixedPrecision) is stage 3 whose persistent shard is the fp32 parameter
// itself: under mixed precision it is the master, and the 16-bit copy exists only for the units being gathered.
struct StateShares {
  double weights = 1, master = 1, gradients = 1, optimizer = 1;
};
StateShares zero_state_shares(int stage, int dp, bool fsdp, bool mixed);

// Adds `params` parameters holding `bytes` each, scaled by `shares`, to the per-parameter buckets.
void add_param_states(MemoryBreakdown& m, double params, const ParamStateBytes& bytes, const StateShares& shares = {});

// The three measures and the verdict from the buckets, for every mode: allocated is every bucket but the runtime's
// context; reserved is allocated (with the large segments' rounding) times the caching allocator's overhead; total
// adds the context; fits compares total with `capacity`.
void finish_measures(MemoryBreakdown& m, double segment_rounding, double allocator_overhead, double capacity);

struct MemoryOptions {
  bool training = true;
  bool optimizer_step = true;
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
  bool checkpointing = false;  // keep only segment-boundary activations, recompute the rest in backward
  // Mixed precision as apex amp O2 (the model cast to half, FP32 masters held by the optimizer): the gradients
  // autograd accumulates are the model's half ones; the FP32 master gradients exist only after backward.
  bool amp_o2 = false;
  // The update as one fused kernel per tensor (true) or one op per operation (false); empty: the runtime's default.
  // A graph runtime that starts an unfused update's gradient-free products early holds them (update_products_...).
  std::optional<bool> fused_optimizer;
  int grad_accum = 1;  // micro-batches per update: above 1 the gradients are accumulated in buffers held across them
  // Data-parallel training: the gradient reduction whose buffers take memory (reduction_buffer_bytes in
  // schedule/collectives.h), and the training precision; none on one GPU. Points into the strategy catalog.
  const StrategySpec* reduction = nullptr;
  std::string precision;
  // Share of the embedding-bag tables this GPU holds: 1 in its memory, 1/n sharded over n GPUs, 0 in host memory.
  double table_share = 1;
  // The embedding side's own precision (--embedding-precision), null = none: with the runtime and precision it sets
  // the bytes of the pooled vectors (pooled_elem_bytes in cost/op_cost.h). Points into the request's resolution.
  const PrecisionPlan* embedding_plan = nullptr;
  // LoRA fine-tuning (training): the graph's weights are frozen, held in the compute precision with no gradients
  // or optimizer state; only the adapters train, with masters, gradients and state as any trained weight.
  struct Adapters {
    double params = 0;       // trainable adapter parameters
    double saved_elems = 0;  // their activations kept for backward (none with checkpointing: recomputed)
  };
  std::optional<Adapters> lora;
  // Language-model inference (prefill/decode, the serving engines): weights at their stored size (quantized
  // formats), the KV cache, and the working buffers of the largest pass, against the share of the card the
  // engine allocates.
  struct Serving {
    double weight_bytes = 0;
    double kv_cache_bytes = 0;  // reported inside activations
    double buffer_bytes = 0;
    double capacity_fraction = 1;
  };
  std::optional<Serving> serving;
};

// Bytes of a graph's embedding-bag tables with their optimizer state in training (row-wise Adagrad: one FP32 per
// row; dense Adam: two FP32 moments per element; SGD: none), all tables.
double embedding_table_bytes(const Graph& graph, bool training);

// The cuBLAS and cuBLASLt workspaces the runtime keeps (per handle, one handle per thread that runs GEMMs: the
// forward thread, and in training the autograd engine's device thread), bytes; 0 where the runtime names none.
double blas_workspace_bytes(const RuntimeProfile& runtime, const DeviceSpec& device, bool training);

MemoryBreakdown estimate_memory(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                                const DeviceSpec& device, const MemoryOptions& options);

// Elements live at once in an inference pass, which frees each tensor after its last use: the largest
// producer/consumer pair (a concat's inputs held together).
double live_buffer_elems(const Graph& graph);

// Activation elements kept for backward (no checkpointing): every distinct buffer some op saves. The dropout masks
// and unfused attention's score matrices are not included (estimate_memory counts them beside the buffers).
double saved_activation_elems(const Graph& graph);

// The largest size for which `fits` holds (fits must hold up to some size and not beyond): from `lo` (known to
// fit, or 0) it tries `hi`, doubling it while it fits and is at most `max_probe` (never past `ceiling`), then
// bisects between the last size that fitted and the first that did not or was not tried. Returns lo when no
// size tried fits.
std::int64_t largest_that_fits(std::int64_t lo, std::int64_t hi, std::int64_t max_probe, std::int64_t ceiling,
                               const std::function<bool(std::int64_t)>& fits);

// The largest batch for which `fits` holds, 0 when not even batch 1 does (batches 1, 2, 4 ... up to max_probe
// are tried, then bisected).
std::int64_t largest_batch_that_fits(std::int64_t max_probe, const std::function<bool(std::int64_t)>& fits);

}  // namespace perfcast
