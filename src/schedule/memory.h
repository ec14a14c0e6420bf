// Device memory of a step: weights, gradients, optimizer state, activations kept for backward, workspace
// and the runtime's own footprint, against the GPU's capacity.
#pragma once

#include "cost/precision.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

struct MemoryBreakdown {
  double weights = 0;          // fp32 masters plus low-precision copies under mixed precision
  double gradients = 0;
  double optimizer_state = 0;
  double activations = 0;      // saved for backward (training) or the live working set (inference)
  double workspace = 0;        // cuDNN/cuBLAS workspace
  double runtime = 0;          // CUDA context, library kernels
  double total = 0;            // sum, times the allocator overhead
  double capacity = 0;         // the GPU's memory
  bool fits = true;
};

// Bytes of optimizer state per parameter (fp32): momentum 4, Adam 8, LAMB 8.
double optimizer_state_bytes_per_param(OptimizerKind kind);

struct MemoryOptions {
  bool training = true;
  bool optimizer_step = true;
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
  bool checkpointing = false;  // keep only segment-boundary activations, recompute the rest in backward
};

MemoryBreakdown estimate_memory(const Graph& graph, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                                const DeviceSpec& device, const MemoryOptions& options);

// Activation elements kept for backward (no checkpointing): every distinct buffer some op saves.
double saved_activation_elems(const Graph& graph);

}  // namespace perfcast
