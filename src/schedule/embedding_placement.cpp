#include "schedule/embedding_placement.h"

#include <algorithm>
#include <fmt/format.h>

#include "cost/embedding_cost.h"
#include "schedule/memory.h"

namespace perfcast {

namespace {

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / 1073741824.0); }

}  // namespace

EmbeddingPlacement place_embeddings(const Graph& graph, const DeviceSpec& device, const Fabric& fabric, bool training,
                                    double act_bytes, bool fits_on_device) {
  EmbeddingPlacement p;
  p.table_bytes = embedding_table_bytes(graph, training);
  if (p.table_bytes <= 0) return p;
  p.gpus = fabric.gpus();
  double pooled_bytes = 0, missed_row_bytes = 0;
  const RecsysConstants& c = recsys_constants();
  for (const auto& op : graph.ops) {
    if (op.kind != OpKind::kEmbeddingBag) continue;
    pooled_bytes += static_cast<double>(op.out_elems) * act_bytes;
    const double hit = embedding_l2_hit_rate(op.bag, device.l2_bytes * c.l2_row_share, c.sector_bytes);
    missed_row_bytes += op.bag.lookups() * (1.0 - hit) * row_dram_bytes(op.bag.dim, op.bag.table_elem_bytes, c.sector_bytes);
  }
  if (p.gpus > 1) {
    // Table-wise sharding: each GPU looks up its tables for every sample of the global batch and sends the pooled
    // vectors of other GPUs' samples to them, (n-1)/n of its per-GPU share; backward returns their gradients.
    p.where = TablePlacement::kSharded;
    p.share_per_gpu = 1.0 / p.gpus;
    const double n = p.gpus;
    const double bytes = pooled_bytes * (n - 1.0) / n;
    const bool across_nodes = fabric.nodes > 1;
    const double bw = across_nodes ? std::min(fabric.intra_bw_gbps, fabric.inter_bw_gbps / fabric.gpus_per_node)
                                   : fabric.intra_bw_gbps;
    const double latency = across_nodes ? fabric.inter_latency_us : fabric.intra_latency_us;
    const double us = bytes / (bw * 1e3) + (n - 1.0) * latency;
    p.all_to_all_forward_us = us;
    p.all_to_all_backward_us = training ? us : 0.0;
    p.note = fmt::format("embedding tables {} sharded table-wise over {} GPUs ({} each); all-to-all of the pooled "
                         "vectors {:.2f} ms forward{}",
                         gib(p.table_bytes), p.gpus, gib(p.table_bytes / n), us / 1e3,
                         training ? fmt::format(" + {:.2f} ms backward", us / 1e3) : "");
    return p;
  }
  if (fits_on_device) {
    p.where = TablePlacement::kDevice;
    p.note = fmt::format("embedding tables {} in GPU memory", gib(p.table_bytes));
    return p;
  }
  // Host memory: rows the L2 does not hold cross PCIe one by one (FBGEMM EmbeddingLocation.MANAGED without a
  // cache); training writes the updated rows back.
  p.where = TablePlacement::kHost;
  p.share_per_gpu = 0;
  const double link = fabric.host_link_gbps * c.pcie_gather_efficiency * 1e3;  // bytes per us
  p.host_forward_us = missed_row_bytes / link;
  p.host_backward_us = training ? 2.0 * missed_row_bytes / link : 0.0;
  p.note = fmt::format("embedding tables {} exceed {}'s memory: placed in host memory, missed rows read over PCIe "
                       "({:.2f} ms forward{})",
                       gib(p.table_bytes), device.id, p.host_forward_us / 1e3,
                       training ? fmt::format(", {:.2f} ms backward", p.host_backward_us / 1e3) : "");
  return p;
}

void add_placement_costs(StepCost& step, const EmbeddingPlacement& placement, double gpu_gap_per_kernel_us,
                         double host_overhead_per_kernel_us) {
  const auto entry = [&](const char* name, double us, Bound bound, Phase phase) {
    if (us <= 0) return;
    KernelCost k;
    k.time_us = us;
    k.memory_us = us;
    k.launches = 1;
    k.bound = bound;
    // In execution order: after the forward lookups (their output moves), before the backward lookups (their
    // incoming gradients move), so the gradient timeline of the data-parallel stage stays right.
    auto at = step.entries.end();
    for (auto it = step.entries.begin(); it != step.entries.end(); ++it)
      if (it->kind == OpKind::kEmbeddingBag && it->phase == phase) {
        at = phase == Phase::kForward ? it + 1 : it;
        if (phase == Phase::kBackward) break;
      }
    step.entries.insert(at, kernel_entry(name, OpKind::kEmbeddingBag, k, phase));
    step.gpu_us += us + gpu_gap_per_kernel_us;
    step.host_us += host_overhead_per_kernel_us;
    step.launches += 1;
  };
  entry("embedding.all_to_all.forward", placement.all_to_all_forward_us, Bound::kCommunication, Phase::kForward);
  entry("embedding.all_to_all.backward", placement.all_to_all_backward_us, Bound::kCommunication, Phase::kBackward);
  entry("embedding.host_rows.forward", placement.host_forward_us, Bound::kHostToDevice, Phase::kForward);
  entry("embedding.host_rows.backward", placement.host_backward_us, Bound::kHostToDevice, Phase::kBackward);
  step.step_us = std::max(step.gpu_us, step.host_us);
}

}  // namespace perfcast
