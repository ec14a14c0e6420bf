// The one definition of every op's arithmetic: FLOPs and DRAM bytes, forward and backward. It feeds the cost
// model, the tests and the reports. FLOPs count a multiply-add as 2.
#pragma once

#include "graph/graph.h"
#include "graph/op.h"

namespace perfcast {

// Storage bytes per element of activations and of weights as the kernels read them.
struct ElemBytes {
  double act = 4;
  double weight = 4;
};

struct Work {
  double flops = 0;
  double bytes = 0;
  Work& operator+=(const Work& o) {
    flops += o.flops;
    bytes += o.bytes;
    return *this;
  }
};

// Forward pass of one op. `training` keeps batch-norm statistics passes and dropout masks.
Work forward_work(const Op& op, ElemBytes eb, bool training);

// All backward kernels of one op (input gradient when needed, weight gradient when it has weights).
Work backward_work(const Op& op, ElemBytes eb);

// Rows of an embedding bag one batch touches (at most the table's rows, at most its lookups), all tables.
double embedding_unique_rows(const EmbeddingBagGeometry& g);
// The table update of one training step (in backward for the sparse optimizers, over every row for kAdamDense).
Work embedding_update_work(const EmbeddingBagGeometry& g);

// Optimizer update of `params` fp32 master weights.
Work optimizer_work(OptimizerKind kind, double params);
// The same update as an eager framework's optimizer runs it (torch.optim's for-loop and foreach implementations):
// one elementwise kernel per operation, each reading and writing whole tensors.
Work unfused_optimizer_work(OptimizerKind kind, double params);
// Elementwise operations (kernels per tensor) of that unfused update.
int unfused_optimizer_ops(OptimizerKind kind);

// FLOPs of a GEMM: `rows` rows (every batch's together; an expected count may be fractional) of depth k times a
// [k x n] matrix, a multiply-add counted as 2. Every GEMM-shaped kernel's FLOPs come from here.
double gemm_flops(double rows, double n, double k);
// (query, key) pairs one head of one sequence scores under a causal mask of `window` keys (itself included) when
// the queries are the last q_len of kv_len positions: sum over queries of min(position + 1, window).
double windowed_causal_pairs(double q_len, double kv_len, double window);
// Share of the q_len x kv_len score matrix a kernel computes: 1 unfused (every score, the masked ones included);
// a fused causal kernel skips the blocks above the diagonal (1/2); a flash kernel given the window also skips the
// blocks left of it (windowed_causal_pairs); the memory-efficient kernel handed the window as an explicit mask
// (Hugging Face's sdpa path) computes every block.
double attention_computed_share(const AttentionGeometry& a);
// The same for a matmul geometry (batch x m rows).
double matmul_flops(const MatmulGeometry& m);

// Multiply-accumulates per sample of conv and matmul ops (the figure papers publish as "FLOPs" or MACs).
double conv_linear_macs(const Graph& g);

// Elements of an op's second parameter tensor (a bias, or the beta of a norm's gamma and beta); 0 when its
// parameters are one tensor. Schedules count parameter tensors (AccumulateGrad nodes, all-reduce buckets) with it.
double second_param_elems(const Op& op);

// GEMM view of a convolution (implicit GEMM): rows = N*out spatial, cols = c_out/groups, depth = c_in/groups*k.
MatmulGeometry conv_as_gemm(const ConvGeometry& c);

}  // namespace perfcast
