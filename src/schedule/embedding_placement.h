// Where a recommendation model's embedding tables live and what that costs per step: in the GPU's memory, sharded
// table-wise over the GPUs with an all-to-all of the pooled vectors (TorchRec, HugeCTR, NVIDIA's hybrid-parallel
// DLRM), or in host memory read over PCIe (FBGEMM's UVM / host placement) when one GPU cannot hold them.
#pragma once

#include <string>

#include "device/device_spec.h"
#include "graph/graph.h"
#include "schedule/collectives.h"
#include "schedule/step.h"

namespace perfcast {

enum class TablePlacement : std::uint8_t { kNone, kDevice, kSharded, kHost };

struct EmbeddingPlacement {
  TablePlacement where = TablePlacement::kNone;
  double table_bytes = 0;       // all tables with their optimizer state (training)
  double share_per_gpu = 1;     // share of table_bytes each GPU holds
  int gpus = 1;
  // Sharded: the busiest GPU's lookups over the lookups of one GPU's batch into every table (1 when the tables
  // split evenly; whole tables per GPU make it ceil(T/n) / (T/n) for T equal tables).
  double lookup_scale = 1;
  double all_to_all_forward_us = 0;   // pooled vectors to the GPUs that own the samples
  double all_to_all_backward_us = 0;  // their gradients back to the tables' owners
  double host_forward_us = 0;   // missed rows read from host memory over PCIe
  double host_backward_us = 0;  // and the updated rows written back
  std::string note;             // one line for the report
};

// Tables on `gpus` GPUs joined by `fabric`: sharded when several, on the device when `fits_on_device` says one GPU
// holds them beside the rest of the step, else in host memory. The pooled vectors cross the all-to-all in the
// tables' element type, and each all-to-all pays `strategy`'s per-collective cost (Horovod's cycle pickup).
EmbeddingPlacement place_embeddings(const Graph& graph, const DeviceSpec& device, const Fabric& fabric, bool training,
                                    const StrategySpec& strategy, bool fits_on_device);

// Adds the placement's transfers to the step as entries (communication for all-to-all, host-to-device for PCIe
// gathers) and re-derives the step's totals.
void add_placement_costs(StepCost& step, const EmbeddingPlacement& placement, double gpu_gap_per_kernel_us,
                         double host_overhead_per_kernel_us);

// Whether `step` reads embedding rows from host memory over PCIe (the transfers add_placement_costs adds for
// TablePlacement::kHost), and whether it looks rows up in embedding tables at all.
bool reads_tables_from_host(const StepCost& step);
bool looks_up_tables(const StepCost& step);

}  // namespace perfcast
