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

struct MemoryBreakdown {
  double weights = 0;          // fp32 masters plus low-precision copies under mixed precision
  double gradients = 0;
  double optimizer_state = 0;
  double activations = 0;      // saved for backward (training) or the live working set (inference)
  double workspace = 0;        // cuDNN/cuBLAS workspace
  double runtime = 0;          // CUDA context, library kernels
  double comm_buffers = 0;     // data parallel: gradient buckets (DDP) or the fusion buffer (Horovod)
  double embedding_tables = 0; // embedding-bag tables held on this GPU, with their optimizer state
  double transient = 0;        // training: the gradients of the op in flight in backward (its output's and input's)
  double allocated = 0;        // peak bytes held by tensors: the sum above (without runtime), blocks rounded
  double reserved = 0;         // allocated with the caching allocator's segment rounding and slack
  double total = 0;            // reserved plus the runtime's context (nvidia-smi)
  double capacity = 0;         // the GPU's memory
  bool fits = true;
};

// The data-parallel reduction's buffers set to `bytes` (replacing what was counted), every measure kept consistent.
void set_comm_buffers(MemoryBreakdown& m, double bytes, double allocator_overhead);

// The three measures of a breakdown; `measure` is allocated, reserved or nvidia-smi. InputError for another name.
double memory_measure_bytes(const MemoryBreakdown& m, const std::string& measure);

// Bytes of optimizer state per parameter (fp32): momentum 4, Adam 8, LAMB 8.
double optimizer_state_bytes_per_param(OptimizerKind kind);

struct MemoryOptions {
  bool training = true;
  bool optimizer_step = true;
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
  bool checkpointing = false;  // keep only segment-boundary activations, recompute the rest in backward
  // Data-parallel training: the gradient reduction whose buffers take memory (reduction_buffer_bytes in
  // schedule/collectives.h), and the training precision; none on one GPU. Points into the strategy catalog.
  const StrategySpec* reduction = nullptr;
  std::string precision;
  // Share of the embedding-bag tables this GPU holds: 1 in its memory, 1/n sharded over n GPUs, 0 in host memory.
  double table_share = 1;
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

MemoryBreakdown estimate_memory(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                                const DeviceSpec& device, const MemoryOptions& options);

// Elements live at once in an inference pass, which frees each tensor after its last use: the largest
// producer/consumer pair (a concat's inputs held together).
double live_buffer_elems(const Graph& graph);

// Activation elements kept for backward (no checkpointing): every distinct buffer some op saves. The attention
// score matrices are not included: see saved_attention_score_bytes.
double saved_activation_elems(const Graph& graph);

// Bytes of the one-byte masks ops keep for backward (dropout).
double saved_mask_bytes(const Graph& graph);

// Bytes of unfused attention's score-sized tensors kept for backward, as the runtime runs it (probabilities, and
// in eager frameworks the dropout mask and the FP16 copy the second GEMM read).
double saved_attention_score_bytes(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime);

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
