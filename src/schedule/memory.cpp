#include "schedule/memory.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "cost/op_cost.h"

namespace perfcast {

double optimizer_state_bytes_per_param(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgdMomentum:
      return 4;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
    case OptimizerKind::kLamb:
      return 8;
  }
  return 0;
}

ParamStateBytes trained_param_bytes(double compute_weight_bytes, bool mixed, double gradient_bytes,
                                    OptimizerKind optimizer, bool optimizer_step) {
  ParamStateBytes b;
  b.weights = compute_weight_bytes;
  b.master = mixed ? 4.0 : 0.0;  // an fp32 copy
  b.gradients = gradient_bytes;
  b.optimizer = optimizer_step ? optimizer_state_bytes_per_param(optimizer) : 0.0;
  return b;
}

StateShares zero_state_shares(int stage, int dp, bool fsdp, bool mixed) {
  StateShares s;
  const double shard = 1.0 / std::max(1, dp);
  if (stage >= 1) s.master = s.optimizer = shard;
  if (stage >= 2) s.gradients = shard;
  if (stage >= 3) s.weights = fsdp && mixed ? 0.0 : shard;
  return s;
}

void add_param_states(MemoryBreakdown& m, double params, const ParamStateBytes& b, const StateShares& s) {
  m.weights += params * b.weights * s.weights;
  m.master_weights += params * b.master * s.master;
  m.gradients += params * b.gradients * s.gradients;
  m.optimizer_state += params * b.optimizer * s.optimizer;
}

void finish_measures(MemoryBreakdown& m, double segment_rounding, double allocator_overhead, double capacity) {
  m.allocated = m.weights + m.master_weights + m.gradients + m.optimizer_state + m.activations + m.transient +
                m.workspace + m.comm_buffers + m.embedding_tables;
  m.reserved = (m.allocated + segment_rounding) * allocator_overhead;
  m.total = m.reserved + m.runtime;
  m.capacity = capacity;
  m.fits = m.total <= m.capacity;
}

namespace {

// The buffer a tensor lives in: in-place ops and views write into their input's buffer.
int storage_of(const std::vector<Op>& ops, int id) {
  while (id >= 0 && (ops[id].in_place || ops[id].is_view) && !ops[id].inputs.empty()) id = ops[id].inputs[0];
  return id;
}

double elems_of(const std::vector<Op>& ops, int id) { return id >= 0 ? static_cast<double>(ops[id].out_elems) : 0.0; }

}  // namespace

double live_buffer_elems(const Graph& graph) {
  double peak = 0;
  for (const auto& op : graph.ops) peak = std::max(peak, static_cast<double>(op.in_elems + op.out_elems));
  return peak;
}

namespace {

// The caching allocator's block and segment sizes (data/memory.toml).
struct AllocatorGranularity {
  double min_block_bytes = 0;
  double min_large_alloc_bytes = 0;
  double round_large_bytes = 0;
};

const AllocatorGranularity& allocator_granularity() {
  static const AllocatorGranularity g = [] {
    const auto path = data_dir() / "memory.toml";
    const toml::table root = parse_toml_file(path);
    TomlFields top(root, path.string());
    TomlFields a(top.table("caching_allocator"), path.string() + " [caching_allocator]");
    AllocatorGranularity c;
    c.min_block_bytes = a.number("min_block_bytes");
    c.min_large_alloc_bytes = a.number("min_large_alloc_bytes");
    c.round_large_bytes = a.number("round_large_bytes");
    for (const char* key : {"min_block_bytes", "min_large_alloc_bytes", "round_large_bytes"})
      if (!(a.number(key) > 0)) a.fail(key, "must be positive");
    return c;
  }();
  return g;
}

double round_up(double bytes, double unit) { return std::ceil(bytes / unit) * unit; }

// A distinct buffer some op saves for backward, and the earliest op (in forward order) that saves it: backward
// runs in reverse, so the buffer is freed once that op's backward has run. `elem_bytes`: the bytes per element of
// the copy kept, 0 = the activation precision's.
struct SavedBuffer {
  double elems = 0;
  std::size_t first_saver = 0;
  double elem_bytes = 0;
};

// The bytes per element of the copy `saver` keeps of ops[storage]'s output, 0 = the activation precision's. Only an
// embedding bag's pooled vectors differ: written at pooled_elem_bytes, they are kept as written, except by an op on
// autocast's lower-precision list (a convolution, a GEMM, the interaction's bmm), which saves the half copy autocast
// cast for it (aten/src/ATen/autocast_mode.cpp casts the inputs before the op records them), unless
// --embedding-precision runs the interaction at the tables' precision (schedule/step.cpp casts nothing there).
using KeptBytes = std::function<double(int storage, const Op& saver)>;

std::vector<SavedBuffer> saved_buffers(const Graph& graph, const KeptBytes& kept = nullptr) {
  const auto& ops = graph.ops;
  std::unordered_map<int, SavedBuffer> first;  // storage id -> earliest saver, the widest copy kept
  const auto note = [&](int storage, std::size_t saver) {
    const double bytes = kept ? kept(storage, ops[saver]) : 0.0;
    const auto [it, added] = first.emplace(storage, SavedBuffer{elems_of(ops, storage), saver, bytes});
    if (added) return;
    it->second.first_saver = std::min(it->second.first_saver, saver);
    it->second.elem_bytes = std::max(it->second.elem_bytes, bytes);
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.saves_input)
      for (int in : op.inputs) note(storage_of(ops, in), i);
    if (op.saves_output) note(storage_of(ops, static_cast<int>(i)), i);
  }
  std::vector<SavedBuffer> out;
  out.reserve(first.size());
  for (const auto& [id, buffer] : first) out.push_back(buffer);
  return out;
}

}  // namespace

double saved_activation_elems(const Graph& graph) {
  double elems = 0;
  for (const auto& b : saved_buffers(graph)) elems += b.elems;
  return elems;
}

namespace {

// Bytes per element of a dropout mask kept for backward: a tensor of the activation's dtype where the runtime makes
// it so (TensorFlow's x-dtype mask), else dropout_mask_bytes (PyTorch's bool: 1).
double dropout_mask_elem_bytes(const RuntimeProfile& runtime, double act_bytes) {
  return runtime.dropout_mask_in_activation_dtype ? act_bytes : runtime.dropout_mask_bytes;
}

// Bytes of unfused attention's score-sized tensors one attention op keeps for backward (0 for other ops).
double attention_score_bytes(const Op& op, const PrecisionPlan& plan, const RuntimeProfile& runtime) {
  if (op.kind != OpKind::kAttention || op.attn.fused) return 0;
  const double a = plan.bytes.act;
  const auto& at = op.attn;
  // What autograd holds per score element. The softmax output (its backward reads it): FP32 under autocast
  // where softmax runs in FP32. In eager frameworks with dropout, the mask (dropout_mask_elem_bytes) and the dropped
  // probabilities the PV GEMM saves (at the activation precision: under autocast the FP16 copy it read);
  // without dropout, under autocast, the FP16 copy of the FP32 probabilities the GEMM saves.
  const bool fp32_probs = runtime.autocast_softmax_fp32 && plan.mixed && a < 4.0;
  double per = fp32_probs ? 4.0 : a;
  if (!runtime.fuse_elementwise_chains && at.dropout)
    per += dropout_mask_elem_bytes(runtime, a) + a;
  else if (!runtime.fuse_elementwise_chains && fp32_probs)
    per += a;
  return per * static_cast<double>(at.batch * at.heads * at.q_len * at.kv_len);
}

// Checkpointing in sqrt(n) segments (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost"):
// keep each segment's input, recompute the segment in backward; the peak is the boundaries plus the largest
// segment's saved activations.
double checkpointed_activation_elems(const Graph& graph) {
  const auto& ops = graph.ops;
  const std::size_t n = ops.size();
  const std::size_t seg = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n)))));
  double boundaries = 0, largest = 0;
  for (std::size_t start = 0; start < n; start += seg) {
    boundaries += static_cast<double>(ops[start].in_elems);
    double inside = 0;
    for (std::size_t i = start; i < std::min(n, start + seg); ++i) {
      if (ops[i].saves_input) inside += static_cast<double>(ops[i].in_elems);
      if (ops[i].saves_output && !ops[i].in_place) inside += static_cast<double>(ops[i].out_elems);
    }
    largest = std::max(largest, inside);
  }
  return boundaries + largest;
}

}  // namespace

double embedding_table_bytes(const Graph& graph, bool training) {
  double bytes = 0;
  for (const auto& op : graph.ops) {
    if (op.kind != OpKind::kEmbeddingBag) continue;
    const auto& g = op.bag;
    const double elems = g.table_elems();
    bytes += elems * g.table_elem_bytes;
    if (!training) continue;
    if (g.optimizer == EmbeddingOptimizer::kRowwiseAdagrad) bytes += elems / static_cast<double>(g.dim) * 4.0;
    if (g.optimizer == EmbeddingOptimizer::kAdamDense || g.optimizer == EmbeddingOptimizer::kAdamLazy)
      bytes += 2.0 * elems * 4.0;  // both moments for every row
  }
  return bytes;
}

void set_comm_buffers(MemoryBreakdown& m, double bytes, double allocator_overhead) {
  const double delta = bytes - m.comm_buffers;
  m.comm_buffers = bytes;
  m.allocated += delta;
  m.reserved += delta * allocator_overhead;
  m.total += delta * allocator_overhead;
  m.fits = m.total <= m.capacity;
}

double memory_measure_bytes(const MemoryBreakdown& m, const std::string& measure) {
  if (measure == "allocated") return m.allocated;
  if (measure == "reserved") return m.reserved;
  if (measure == "nvidia-smi") return m.total;
  throw InputError("memory measure must be allocated, reserved or nvidia-smi, got '" + measure.substr(0, 40) + "'");
}

double blas_workspace_bytes(const RuntimeProfile& runtime, const DeviceSpec& device, bool training) {
  // An architecture's own size replaces the default only where the runtime sets a default (a version rule may
  // zero it: the releases that left the workspace to cuBLAS).
  if (runtime.cublas_workspace_bytes <= 0) return 0;
  const auto by_sm = runtime.cublas_workspace_bytes_by_sm.find(device.sm_version);
  const double cublas =
      by_sm != runtime.cublas_workspace_bytes_by_sm.end() ? by_sm->second : runtime.cublas_workspace_bytes;
  // One workspace per (handle, stream) and one handle per thread: backward runs on the autograd engine's own thread.
  return (training ? runtime.blas_threads_training : 1.0) * (cublas + runtime.cublaslt_workspace_bytes);
}

namespace {

// Bytes per trained parameter of an unfused update's products that read no gradient, which a dataflow executor
// computes as soon as the step starts and holds until the gradient arrives (update_products_at_step_start).
// google-research/bert optimization.py AdamWeightDecayOptimizer.apply_gradients: next_m = tf.multiply(beta_1, m) +
// ..., next_v = tf.multiply(beta_2, v) + ..., update += weight_decay_rate * param: three FP32 products per weight
// (LayerNorm and bias weights skip the decay: under 0.2% of BERT's parameters, counted as decayed). Adam without
// decay keeps the two moment products, momentum SGD its momentum * accumulator.
double early_update_product_bytes(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgdMomentum:
      return 4;
    case OptimizerKind::kAdam:
      return 8;
    case OptimizerKind::kAdamW:
    case OptimizerKind::kLamb:
      return 12;
  }
  return 0;
}

// Output-sized intermediates a runtime that runs an op as a chain of primitive ops keeps for backward beside what
// the graph's op saves (data/runtimes/tensorflow.toml [sources]: GELU's erf input and cdf, layer norm's broadcast
// inverse deviation).
double chain_intermediates(const Op& op, const RuntimeProfile& runtime) {
  if (op.kind == OpKind::kElementwise && op.pointwise == PointwiseKind::kGelu) return runtime.gelu_saved_intermediates;
  if (op.kind == OpKind::kNorm && op.norm == NormKind::kLayer) return runtime.layer_norm_saved_intermediates;
  return 0;
}

}  // namespace

MemoryBreakdown estimate_memory(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                                const DeviceSpec& device, const MemoryOptions& o) {
  const AllocatorGranularity& gran = allocator_granularity();
  MemoryBreakdown m;
  double segment_rounding = 0;  // reserved beyond allocated: large requests rounded up to whole segments
  const auto& ops = graph.ops;
  // Tables are counted on their own (placement decides how much of them this GPU holds); the rest are dense.
  const double params = static_cast<double>(graph.dense_params());
  m.embedding_tables = embedding_table_bytes(graph, o.training) * o.table_share;
  const double a = plan.bytes.act;
  // Bytes per element of the tensor ops[id] writes: an embedding bag's pooled vectors (and their gradient) at
  // pooled_elem_bytes, the one rule the time model costs them with; every other tensor at the activation precision.
  const auto written_bytes = [&](int id) {
    const int s = storage_of(ops, id);
    return s >= 0 && ops[s].kind == OpKind::kEmbeddingBag ? pooled_elem_bytes(ops[s], plan, runtime, o.embedding_plan)
                                                           : a;
  };
  const bool autocast_casts = plan.mixed && runtime.autocast_per_op_casts && !o.embedding_plan;
  const KeptBytes kept = [&](int storage, const Op& saver) {
    if (storage < 0 || ops[storage].kind != OpKind::kEmbeddingBag) return 0.0;
    const bool lower_precision_op =
        saver.kind == OpKind::kConv || saver.kind == OpKind::kMatmul || saver.kind == OpKind::kInteraction;
    return autocast_casts && lower_precision_op ? a : written_bytes(storage);
  };
  if (o.serving) {
    // Language-model inference: the weights as stored, the KV cache beside one pass's working buffers.
    m.weights = o.serving->weight_bytes;
    m.activations = o.serving->buffer_bytes + o.serving->kv_cache_bytes;
  } else {
    // A trained weight: its copy in the compute precision, plus the fp32 master under mixed precision. LoRA
    // trains only its adapters; the frozen model stays in the compute type alone (plan.bytes.weight: the
    // 16-bit copy under mixed precision), with no master.
    // Mixed precision keeps FP32 gradients only: autocast's FP16 weight copies pass their gradient back through
    // the cast, which frees it once the FP32 .grad has it (Hugging Face, "Model training anatomy": "4 bytes *
    // number of parameters for either fp32 or mixed precision training (gradients are always kept in fp32)").
    // apex amp O2 is the exception: the model is half, so autograd accumulates half gradients into it, and the
    // optimizer's FP32 masters get gradients of their own only after backward (below).
    const double grad_bytes = plan.mixed && !o.amp_o2 ? 4.0 : plan.bytes.weight;
    const ParamStateBytes per_param =
        trained_param_bytes(plan.bytes.weight, plan.mixed, grad_bytes, o.optimizer, o.training && o.optimizer_step);
    const double trained = o.lora ? o.lora->params : params;
    if (o.lora) m.weights = params * plan.bytes.weight;
    if (o.training) {
      add_param_states(m, trained, per_param);
      // What each op's backward frees: the saved buffers whose earliest saver it is (each its own allocation: rounded
      // to min_block_bytes, and from min_large_alloc_bytes up to whole segments), its dropout mask, its attention
      // scores.
      std::vector<double> freed_at(ops.size(), 0.0);
      double saved = 0, rounding = 0;
      for (const auto& b : saved_buffers(graph, kept)) {
        const double bytes = round_up(b.elems * (b.elem_bytes > 0 ? b.elem_bytes : a), gran.min_block_bytes);
        freed_at[b.first_saver] += bytes;
        saved += bytes;
        if (bytes >= gran.min_large_alloc_bytes) rounding += round_up(bytes, gran.round_large_bytes) - bytes;
      }
      // Beside them: masks at the runtime's bytes per element, and the intermediates of ops it runs as chains.
      double side = 0;
      const double mask_bytes = dropout_mask_elem_bytes(runtime, a);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const double out = static_cast<double>(ops[i].out_elems);
        const double kept_here = (ops[i].saves_mask ? out * mask_bytes : 0.0) +
                                 attention_score_bytes(ops[i], plan, runtime) +
                                 chain_intermediates(ops[i], runtime) * round_up(out * a, gran.min_block_bytes);
        freed_at[i] += kept_here;
        side += kept_here;
      }
      const double full = saved + side;
      // Checkpointed: the recomputed segment also holds its share of masks and attention scores (one of about
      // sqrt(n) segments).
      const double segments = std::max(1.0, std::ceil(std::sqrt(static_cast<double>(ops.size()))));
      m.activations = o.checkpointing
                          ? std::min(full, checkpointed_activation_elems(graph) * plan.bytes.act + side / segments)
                          : full;
      segment_rounding = full > 0 ? rounding * m.activations / full : 0;
      // Backward runs the ops in reverse; at op i autograd still holds what ops 0..i saved, plus the gradient of
      // op i's output and the one it makes for its input (none where the input needs no gradient). The peak over
      // the walk beyond everything saved is the working set at the peak (`transient`). With checkpointing the
      // recomputed segment stands in for the saved buffers: the largest gradient pair is added.
      // An embedding bag's output gradient is at its pooled vectors' bytes (autocast's cast back up hands it FP32).
      const auto pair_at = [&](std::size_t i) {
        const Op& op = ops[i];
        return static_cast<double>(op.out_elems) * written_bytes(static_cast<int>(i)) +
               (op.needs_input_grad ? static_cast<double>(op.in_elems) * a : 0.0);
      };
      double peak = 0, alive = 0, pair = 0;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        alive += freed_at[i];
        peak = std::max(peak, alive + pair_at(i));
        pair = std::max(pair, pair_at(i));
      }
      m.transient = o.checkpointing ? pair : std::max(0.0, peak - full);
      // A graph runtime's gradients are tensors of the step (step_scoped_gradients): none exist at the start of
      // backward, each op's backward makes its weights' gradients, and all of them are held after backward, when
      // the update (and a global-norm clip, which needs every gradient first) reads them. The buckets are then those
      // of the peak: the saved buffers, the gradients made so far and the pair in flight at the worst backward op,
      // or all gradients with nothing saved after backward. Gradient accumulation keeps accumulators across
      // micro-batches (persistent, as counted above); checkpointing and LoRA keep the persistent model.
      if (runtime.step_scoped_gradients && o.grad_accum <= 1 && !o.checkpointing && !o.lora) {
        std::vector<double> grad_from(ops.size() + 1, 0.0);  // gradient bytes of ops i..n-1's weights
        for (std::size_t i = ops.size(); i-- > 0;)
          grad_from[i] = grad_from[i + 1] + (ops[i].kind == OpKind::kEmbeddingBag
                                                 ? 0.0
                                                 : static_cast<double>(ops[i].params) * per_param.gradients);
        double best = grad_from[0], best_saved = 0, best_grads = grad_from[0], best_pair = 0;
        double saved_so_far = 0;
        for (std::size_t i = 0; i < ops.size(); ++i) {
          saved_so_far += freed_at[i];
          const double at = saved_so_far + grad_from[i] + pair_at(i);
          if (at > best) best = at, best_saved = saved_so_far, best_grads = grad_from[i], best_pair = pair_at(i);
        }
        m.activations = best_saved;
        m.gradients = best_grads;
        m.transient = best_pair;
        segment_rounding = full > 0 ? rounding * m.activations / full : 0;
      }
      // apex amp O2 makes the FP32 master gradients after backward, once the activations are freed
      // (apex/amp/_process_optimizer.py post_backward_with_master_weights: torch.empty_like of each master, the
      // half gradients unscaled into them; the patched step() sets them to None again). That phase holds the
      // parameter state plus 4 bytes per trained parameter, and is the peak when those outweigh the activations.
      if (plan.mixed && o.amp_o2 && o.optimizer_step)
        m.transient = std::max(m.transient, 4.0 * trained - m.activations);
      if (o.lora && !o.checkpointing) m.activations += o.lora->saved_elems * plan.bytes.act;
      if (o.optimizer_step && runtime.update_products_at_step_start &&
          !o.fused_optimizer.value_or(runtime.optimizer_fused))
        m.optimizer_state += trained * early_update_product_bytes(o.optimizer);
    } else {
      // Unfused attention also holds score-sized tensors while it runs: eager frameworks make each elementwise step
      // (scale, mask, softmax) a new tensor, so two are alive at once; fused chains keep one.
      // The live pair in bytes (live_buffer_elems at each tensor's own bytes: pooled vectors as written).
      double peak = 0;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        double in = static_cast<double>(op.in_elems) * a;
        for (int id : op.inputs)
          if (id >= 0) in += static_cast<double>(ops[static_cast<std::size_t>(id)].out_elems) * (written_bytes(id) - a);
        peak = std::max(peak, in + static_cast<double>(op.out_elems) * written_bytes(static_cast<int>(i)));
      }
      for (const auto& op : ops)
        if (op.kind == OpKind::kAttention && !op.attn.fused)
          peak = std::max(peak, (static_cast<double>(op.in_elems + op.out_elems) +
                                 (runtime.fuse_elementwise_chains ? 1.0 : 2.0) *
                                     static_cast<double>(op.attn.batch * op.attn.heads * op.attn.q_len *
                                                         op.attn.kv_len)) * a);
      m.activations = peak;
      add_param_states(m, trained, {per_param.weights, per_param.master, 0, 0});
    }
  }
  m.workspace = runtime.workspace_bytes + blas_workspace_bytes(runtime, device, o.training);
  m.runtime = runtime.context_bytes;
  if (o.training && o.reduction) m.comm_buffers = reduction_buffer_bytes(*o.reduction, o.precision, params);
  // The allocator's region is the memory free after the context less what it leaves to the system (TensorFlow:
  // max(5% of it, 300 MiB)): the step fits when the context plus what the region must hold stay within the rest.
  const double card = device.memory_bytes() * (o.serving ? o.serving->capacity_fraction : 1.0);
  const double free_after_context = std::max(0.0, card - runtime.context_bytes);
  const double reserve =
      runtime.allocator_reserve_fraction > 0 || runtime.allocator_reserve_min_bytes > 0
          ? std::max(runtime.allocator_reserve_fraction * free_after_context, runtime.allocator_reserve_min_bytes)
          : 0.0;
  finish_measures(m, segment_rounding, runtime.allocator_overhead, card - reserve);
  return m;
}

std::int64_t largest_that_fits(std::int64_t lo, std::int64_t hi, std::int64_t max_probe, std::int64_t ceiling,
                               const std::function<bool(std::int64_t)>& fits) {
  while (hi <= max_probe && fits(hi)) {
    lo = hi;
    hi = std::min(hi * 2, ceiling);
  }
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::int64_t largest_batch_that_fits(std::int64_t max_probe, const std::function<bool(std::int64_t)>& fits) {
  return largest_that_fits(0, 1, max_probe, std::numeric_limits<std::int64_t>::max(), fits);
}

}  // namespace perfcast
