// A training loop whose unfused optimizer is its own per-tensor Python loop (set by a harness, data/harnesses): what
// it runs on each parameter tensor, beside or instead of the runtime's grouped update. Held by HarnessProfile (as
// loaded) and RuntimeProfile (once the harness is applied).
#pragma once

namespace perfcast {

struct PerTensorOptimizer {
  // Each parameter's gradient is clipped on its own, reading the clip coefficient on the host (a sync per tensor):
  // kernels and Python-level calls per tensor, passes over its gradient. 0 kernels: no per-tensor clip.
  double clip_per_tensor_kernels = 0;
  double clip_per_tensor_host_ops = 0;
  double clip_per_tensor_grad_passes = 0;
  // Each parameter tensor is updated with its own in-place ops, whatever the runtime's grouping: kernels and
  // Python-level calls per tensor, FP32 passes over a tensor's parameter-sized buffers per element, and what weight
  // decay adds on the tensors it applies to (weights of GEMMs, convolutions and embeddings; not biases or norm
  // scales). 0 kernels: the runtime's own unfused update and its grouping.
  double update_per_tensor_kernels = 0;
  double update_per_tensor_host_ops = 0;
  double update_per_tensor_passes = 0;
  double update_decay_kernels = 0;
  double update_decay_passes = 0;

  bool operator==(const PerTensorOptimizer&) const = default;
};

}  // namespace perfcast
