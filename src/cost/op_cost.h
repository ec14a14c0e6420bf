// Cost of one op in one phase (forward, backward, update) as GPU kernels on a device, under a runtime and
// a precision plan.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cost/kernel_cost.h"
#include "cost/precision.h"
#include "graph/op.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

enum class Phase : std::uint8_t { kForward, kBackward, kUpdate };

// How the runtime treats this op in the schedule (decided from the op and its producer).
enum class Fusion : std::uint8_t {
  kNone,        // own kernel(s)
  kIntoPrevious,  // merged into the producer's kernel: intermediate tensor never touches DRAM
  kFolded,      // removed entirely (batch norm folded into conv weights at inference)
  kSkipped,     // not run in this mode (loss and dropout at inference; reshape views; a concatenation an engine removes)
  kHorizontal,  // computed by a sibling GEMM's kernel over the concatenated weights (parallel_gemm_siblings)
};

struct OpCost {
  std::string name;
  OpKind kind = OpKind::kElementwise;
  Phase phase = Phase::kForward;
  Fusion fusion = Fusion::kNone;
  KernelCost cost;
  double host_us = 0;  // CPU time the framework spends issuing this entry (its launches included); set by schedule/
};

// What one request costs its ops with: specs as loaded (or as its switches made them) and what the request makes
// of them together. Built once per request and passed down; the specs themselves are never edited.
struct CostContext {
  // The runtime's tensor-core library efficiency for the kernels' GPU is looked up here, once.
  CostContext(const KernelCostModel& kernels, const RuntimeProfile& runtime, const PrecisionPlan& plan, bool training);
  const KernelCostModel& kernels;
  const RuntimeProfile& runtime;
  const PrecisionPlan& plan;
  bool training;
  double tensor_library_efficiency;  // the runtime's library_efficiency_by_sm entry for this GPU (1 without one)
  // cuDNN convolution algorithms: true = the fastest by timing (autotune), false = cuDNN's heuristic ([conv]
  // heuristic_fwd). The runtime's conv_autotune unless the request names one (PredictRequest::conv_algo).
  bool conv_autotune;
  // The one conv algorithm to cost ("gemm", "winograd_fused", "winograd_nonfused", "fft"), empty = choose: set only
  // by `perfcast fit-kernels --fit-conv` to cost a measured row with the algorithm cuDNN ran.
  std::string_view forced_conv_algorithm;
  // NHWC activations (--channels-last): PyTorch hands every depthwise convolution to cuDNN
  // (Convolution.cpp use_cudnn_depthwise: "always use cudnn_depthwise for channels_last format").
  bool channels_last = false;
  // Recommendation models whose embedding side runs at another precision than the MLPs (--embedding-precision):
  // the lookups' vectors and the interaction take their bytes and pipe from this plan; null = from `plan`.
  const PrecisionPlan* embedding_plan = nullptr;
  // The rate of the runtime's cuDNN/cuBLAS GEMMs on `pipe` (library_efficiency_on with the entry above).
  double library_efficiency(Pipe pipe) const;
};

// The rate of a runtime's cuDNN/cuBLAS GEMMs on `pipe` against the kernels the fit measured: its
// library_efficiency, times `tensor_library_efficiency` (its library_efficiency_by_sm entry for the GPU) on tensor
// pipes. Every library GEMM takes its rate from here: the CNN and encoder ops through CostContext, the language
// models' weight and attention GEMMs (cost/llm_kernels.cpp) directly.
double library_efficiency_on(const RuntimeProfile& runtime, double tensor_library_efficiency, Pipe pipe);

// Bytes per element of an embedding bag's pooled vectors as the lookup writes them, and of their gradient in
// backward: `embedding_plan`'s activation bytes where the request runs the embedding side at its own precision
// (--embedding-precision), the table's dtype under a runtime that autocasts op by op (the lookup is on no autocast
// list), the activation bytes otherwise. The one rule: the time model (op_cost.cpp) and the memory estimate
// (schedule/memory.cpp) both take it from here.
double pooled_elem_bytes(const Op& op, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                         const PrecisionPlan* embedding_plan);

// The share of the aligned tensor-core rate a cuBLAS GEMM keeps when its leading dimensions `n` and `k` (elements)
// are not 16-byte multiples, on runtimes that hand cuBLAS the tensors unpadded (RuntimeProfile::
// gemm_alignment_fallback); 1 otherwise. Every GEMM of such a runtime takes it: the graph ops' (op_cost.cpp), the LoRA
// data gradient (analysis/llm_predict.cpp) and the language models' weight and score GEMMs (cost/llm_kernels.cpp).
double gemm_alignment_efficiency(std::int64_t n, std::int64_t k, Pipe pipe, const RuntimeProfile& runtime,
                                 const KernelCostModel& km);

// The backward GEMMs of a matmul [m x k] x [k x n]: the data gradient dA = dY B^T ([m x k], depth n) and the weight
// gradient dB = A^T dY ([k x n], depth m). Their weight_operand carries the cuBLAS call's orientation to the tile
// search (false: either SGEMM tile set, KernelCostModel::search_tile): a linear layer's dA is an "nn" call and its
// dB an "nt" call ([gemm] cublas_nn_backward_both_sets, cublas_nt_backward_both_sets); an activation product's dA
// is "tn" (the plain set) and its dB "nt" (either set). The graph ops' backward (op_cost.cpp) and the frozen
// projections' data gradient (analysis/llm_predict.cpp) take them from here.
MatmulGeometry data_grad_geometry(const MatmulGeometry& g, const CostConstants& c);
MatmulGeometry weight_grad_geometry(const MatmulGeometry& g, const CostConstants& c);

// The entry run `times` times (fractions too: a Simpson weight over decode steps, or the share of an update that
// runs once every few micro-batches): its time, work, launches and host time scale; the per-launch compute and
// memory times stay, so what one launch keeps busy (power) does not change.
void repeat(OpCost& entry, double times);

// A kernel no graph op produces on its own (weight casts, optimizer updates, serving kernels) as a step entry.
OpCost kernel_entry(const std::string& name, OpKind kind, KernelCost cost, Phase phase = Phase::kForward);

// Fusion decision for ops[index] given the runtime and mode.
Fusion fusion_of(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training);

// Weight GEMMs (or ungrouped convolutions) that read the same input tensor with the same rows, reduction and
// repeats (convolutions: the same kernel, stride, padding and dilation) as ops[index], and whose outputs go through
// the same activation (itself included, in graph order; just {index} when there are none or ops[index] is neither),
// among the 65 ops after the shared input (a consumer further down is costed alone).
// A runtime with fuse_parallel_gemms runs them at inference as one layer of the summed columns (output channels),
// costed on the first of them (Fusion::kHorizontal on the others).
std::vector<std::size_t> parallel_gemm_siblings(const std::vector<Op>& ops, std::size_t index);

// True when a later op (a ReLU, or an add feeding one) runs inside ops[index]'s kernel.
bool has_fused_epilogue(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training);

// Forward or backward cost of ops[index] (its fusion decided by fusion_of).
OpCost cost_op(const std::vector<Op>& ops, std::size_t index, Phase phase, const CostContext& ctx);

}  // namespace perfcast
