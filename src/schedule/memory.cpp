#include "schedule/memory.h"

#include <algorithm>
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

MemoryBreakdown estimate_memory(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                                const DeviceSpec& device, bool training, bool optimizer_step, OptimizerKind optimizer) {
  MemoryBreakdown m;
  const auto& ops = graph.ops;
  const double params = static_cast<double>(graph.params());
  m.weights = params * (plan.mixed ? 4.0 + plan.bytes.weight : plan.bytes.weight);
  if (training) {
    m.gradients = params * (plan.mixed ? plan.bytes.weight + 4.0 : plan.bytes.weight);
    if (optimizer_step) m.optimizer_state = params * optimizer_state_bytes_per_param(optimizer);
    // Every distinct buffer some op keeps for its backward pass.
    std::unordered_set<int> saved;
    double attention_probs = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.saves_input)
        for (int in : op.inputs) saved.insert(storage_of(ops, in));
      if (op.saves_output) saved.insert(storage_of(ops, static_cast<int>(i)));
      if (op.kind == OpKind::kAttention && !op.attn.fused)
        attention_probs += static_cast<double>(op.attn.batch * op.attn.heads * op.attn.q_len * op.attn.kv_len);
    }
    double elems = attention_probs;
    for (int id : saved) elems += elems_of(ops, id);
    m.activations = elems * plan.bytes.act;
  } else {
    // Inference frees each tensor after its last use: the peak is the largest producer/consumer pair
    // (plus a concat's inputs held together).
    double peak = 0;
    for (const auto& op : ops) peak = std::max(peak, static_cast<double>(op.in_elems + op.out_elems));
    m.activations = peak * plan.bytes.act;
  }
  m.workspace = runtime.workspace_bytes;
  m.runtime = runtime.context_bytes;
  m.total = (m.weights + m.gradients + m.optimizer_state + m.activations + m.workspace) * runtime.allocator_overhead +
            m.runtime;
  m.capacity = device.memory_bytes();
  m.fits = m.total <= m.capacity;
  return m;
}

}  // namespace perfcast
