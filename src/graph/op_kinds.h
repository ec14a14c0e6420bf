// The op-kind table: one row per OpKind with every per-kind fact the stages look up (name, cost rule, trace
// class, host issue cost, how its weights are updated). Per-kind formulas (FLOPs and bytes, kernel shapes, ONNX
// nodes) stay in switches over OpKind without a `default:`, so -Werror=switch names each one a new kind misses.
#pragma once

#include <array>
#include <string_view>

#include "graph/op.h"

namespace perfcast {

// Which cost rule times an op's kernels. GPU: cost/op_cost.cpp cost_op; CPU: cost/cpu_cost.cpp cost_cpu_op
// (kEmbeddingBag and kInteraction run there as streaming passes).
enum class CostRule : std::uint8_t {
  kConv,          // implicit GEMM, Winograd, FFT or depthwise (conv_cost)
  kMatmul,        // GEMM with its dgrad/wgrad shapes (matmul_cost)
  kAttention,     // attention core, unfused or fused (attention_cost)
  kEmbeddingBag,  // row gathers, scatter-add and table update (embedding_cost.cpp)
  kInteraction,   // batched Gram products on the matmul pipe (embedding_cost.cpp)
  kStreaming,     // memory-bound kernel over forward_work/backward_work bytes (KernelCostModel::streaming)
};

struct OpKindInfo {
  OpKind kind;
  std::string_view name;         // stable lower-case name, used in JSON, tables and CSV
  CostRule cost_rule;            // which cost rule times it
  std::string_view trace_class;  // `perfcast trace`'s kernel class for it (the classes of data/trace_kernels.toml)
  bool library_call;             // issued as a cuDNN/cuBLAS call: the host adds host_library_call_us per issue
  bool updates_in_backward;      // its weights are updated inside its own backward kernel: no optimizer pass over
                                 // them and no gradient all-reduce (FBGEMM's fused backward-optimizer)
};

// Rows in OpKind order. Adding a kind: add its row here (the static_asserts below fail until it exists and sits
// at its enum value), then its formulas where the compiler's -Wswitch points (op_arithmetic.cpp, the cost rule).
inline constexpr std::array<OpKindInfo, kOpKindCount> kOpKinds{{
    // kind                   name             cost rule                 trace class    library  upd.in bwd
    {OpKind::kConv,           "conv",          CostRule::kConv,          "conv",        true,    false},
    {OpKind::kMatmul,         "matmul",        CostRule::kMatmul,        "matmul",      true,    false},
    {OpKind::kAttention,      "attention",     CostRule::kAttention,     "attention",   false,   false},
    {OpKind::kElementwise,    "elementwise",   CostRule::kStreaming,     "elementwise", false,   false},
    {OpKind::kNorm,           "norm",          CostRule::kStreaming,     "norm",        false,   false},
    {OpKind::kPool,           "pool",          CostRule::kStreaming,     "pool",        false,   false},
    {OpKind::kSoftmax,        "softmax",       CostRule::kStreaming,     "softmax",     false,   false},
    {OpKind::kEmbedding,      "embedding",     CostRule::kStreaming,     "embedding",   false,   false},
    // Layout copies count as elementwise traffic in a trace (data/trace_kernels.toml puts transposes there).
    {OpKind::kDataMovement,   "data_movement", CostRule::kStreaming,     "elementwise", false,   false},
    {OpKind::kLoss,           "loss",          CostRule::kStreaming,     "loss",        false,   false},
    {OpKind::kOptimizer,      "optimizer",     CostRule::kStreaming,     "optimizer",   false,   false},
    // FBGEMM's lookup kernels share the trace's "embedding" class; the dot interaction is a batched product.
    {OpKind::kEmbeddingBag,   "embedding_bag", CostRule::kEmbeddingBag,  "embedding",   false,   true},
    {OpKind::kInteraction,    "interaction",   CostRule::kInteraction,   "matmul",      false,   false},
}};

namespace op_kinds_detail {
constexpr bool rows_complete() {
  for (int i = 0; i < kOpKindCount; ++i) {
    const OpKindInfo& row = kOpKinds[static_cast<std::size_t>(i)];
    // A missing row is value-initialised (kind kConv, empty name), so it fails one of these.
    if (static_cast<int>(row.kind) != i || row.name.empty() || row.trace_class.empty()) return false;
  }
  return true;
}
}  // namespace op_kinds_detail

static_assert(kOpKinds.size() == static_cast<std::size_t>(kOpKindCount), "one row per OpKind");
static_assert(op_kinds_detail::rows_complete(),
              "kOpKinds: every OpKind needs a row, in enum order, with a name and a trace class");

// The row of `kind`.
constexpr const OpKindInfo& op_kind_info(OpKind kind) { return kOpKinds[static_cast<std::size_t>(kind)]; }

}  // namespace perfcast
