// Activations that stay in L2 between kernels: the next kernel in stream order reads the tensor its predecessor
// just wrote, and where the L2 still holds it those reads do not reach DRAM (docs/kernel-model.md, "Reuse in L2
// between kernels").
#pragma once

#include <vector>

#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "graph/op.h"

namespace perfcast {

// The graph op a step entry runs (-1: none, such as weight casts and the optimizer) and whether it is the op's
// forward pass (or its recompute).
struct EntryOrigin {
  int op = -1;
  bool forward = false;
};

// Re-times every entry that reads a tensor written by the kernel just before it in stream order (a forward kernel
// its input; a backward kernel the gradient its only consumer's backward just wrote): that share of its reads
// comes from L2 (KernelCostModel::read_from_l2). Only adjacent kernels count: the activations a backward kernel
// saved long before come from DRAM, and an entry of several kernels (transposes around a convolution, Winograd
// transforms, a GEMM's dgrad and wgrad) keeps its reads. `origin` has one element per entry; `act_bytes` is the
// activation (and activation-gradient) element size.
void apply_l2_reuse(std::vector<OpCost>& entries, const std::vector<EntryOrigin>& origin, const std::vector<Op>& ops,
                    const KernelCostModel& km, double act_bytes);

}  // namespace perfcast
