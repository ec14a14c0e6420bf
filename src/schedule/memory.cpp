#include "schedule/memory.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

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

double saved_activation_elems(const Graph& graph) {
  const auto& ops = graph.ops;
  std::unordered_set<int> saved;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.saves_input)
      for (int in : op.inputs) saved.insert(storage_of(ops, in));
    if (op.saves_output) saved.insert(storage_of(ops, static_cast<int>(i)));
  }
  double elems = 0;
  for (int id : saved) elems += elems_of(ops, id);
  return elems;
}

double saved_mask_bytes(const Graph& graph) {
  double bytes = 0;
  for (const auto& op : graph.ops)
    if (op.saves_mask) bytes += static_cast<double>(op.out_elems);
  return bytes;
}

double saved_attention_score_bytes(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime) {
  const double a = plan.bytes.act;
  double bytes = 0;
  for (const auto& op : graph.ops) {
    if (op.kind != OpKind::kAttention || op.attn.fused) continue;
    const auto& at = op.attn;
    // The probabilities at the activation precision, and in eager training with dropout its one-byte mask.
    // PyTorch's autograd also holds the dropped probabilities the PV GEMM read (and, under autocast, an FP32
    // softmax output): counting those puts Lambda's published BERT batch sizes on 80 GB cards, which ran, 4-11%
    // over the card (data/validation/check_recent.csv), so the estimate stays at what the measurements allow.
    double per = a;
    if (!runtime.fuse_elementwise_chains && at.dropout) per += 1.0;
    bytes += per * static_cast<double>(at.batch * at.heads * at.q_len * at.kv_len);
  }
  return bytes;
}

namespace {

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

MemoryBreakdown estimate_memory(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                                const DeviceSpec& device, const MemoryOptions& o) {
  MemoryBreakdown m;
  const auto& ops = graph.ops;
  // Tables are counted on their own (placement decides how much of them this GPU holds); the rest are dense.
  const double params = static_cast<double>(graph.dense_params());
  m.embedding_tables = embedding_table_bytes(graph, o.training) * o.table_share;
  if (o.serving) {
    // Language-model inference: the weights as stored, the KV cache beside one pass's working buffers.
    m.weights = o.serving->weight_bytes;
    m.activations = o.serving->buffer_bytes + o.serving->kv_cache_bytes;
  } else {
    // A trained weight: its copy in the compute precision, plus the fp32 master under mixed precision. LoRA
    // trains only its adapters; the frozen model stays in the compute type (half under mixed precision).
    const double trained_bytes = plan.mixed ? 4.0 + plan.bytes.weight : plan.bytes.weight;
    const double trained = o.lora ? o.lora->params : params;
    m.weights = o.lora ? params * (plan.mixed ? 2.0 : plan.bytes.weight) + trained * trained_bytes
                       : params * trained_bytes;
    if (o.training) {
      m.gradients = trained * trained_bytes;
      if (o.optimizer_step) m.optimizer_state = trained * optimizer_state_bytes_per_param(o.optimizer);
      const double side = saved_mask_bytes(graph) + saved_attention_score_bytes(graph, plan, runtime);
      const double full = saved_activation_elems(graph) * plan.bytes.act + side;
      // Checkpointed: the recomputed segment also holds its share of masks and attention scores (one of about
      // sqrt(n) segments).
      const double segments = std::max(1.0, std::ceil(std::sqrt(static_cast<double>(ops.size()))));
      m.activations = o.checkpointing
                          ? std::min(full, checkpointed_activation_elems(graph) * plan.bytes.act + side / segments)
                          : full;
      if (o.lora && !o.checkpointing) m.activations += o.lora->saved_elems * plan.bytes.act;
    } else {
      m.activations = live_buffer_elems(graph) * plan.bytes.act;
    }
  }
  m.workspace = runtime.workspace_bytes;
  m.runtime = runtime.context_bytes;
  if (o.training && o.reduction) m.comm_buffers = reduction_buffer_bytes(*o.reduction, o.precision, params);
  m.total = (m.weights + m.gradients + m.optimizer_state + m.activations + m.workspace + m.comm_buffers +
             m.embedding_tables) *
                runtime.allocator_overhead +
            m.runtime;
  m.capacity = device.memory_bytes() * (o.serving ? o.serving->capacity_fraction : 1.0);
  m.fits = m.total <= m.capacity;
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
