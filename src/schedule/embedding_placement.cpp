#include "schedule/embedding_placement.h"

#include <algorithm>
#include <functional>
#include <vector>
#include <fmt/format.h>

#include "cost/embedding_cost.h"
#include "schedule/memory.h"

namespace perfcast {

namespace {

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / 1073741824.0); }

// The host placement's PCIe row transfers, as add_placement_costs names them in the step.
constexpr const char* kHostRowsForward = "embedding.host_rows.forward";
constexpr const char* kHostRowsBackward = "embedding.host_rows.backward";

}  // namespace

EmbeddingPlacement place_embeddings(const Graph& graph, const DeviceSpec& device, const Fabric& fabric, bool training,
                                    const StrategySpec& strategy, bool fits_on_device) {
  EmbeddingPlacement p;
  p.table_bytes = embedding_table_bytes(graph, training);
  if (p.table_bytes <= 0) return p;
  p.gpus = fabric.gpus();
  double missed_row_bytes = 0;
  std::vector<double> table_pooled_bytes;  // per table: its pooled vectors for one GPU's batch
  const RecsysConstants& c = recsys_constants();
  for (const auto& op : graph.ops) {
    if (op.kind != OpKind::kEmbeddingBag) continue;
    const auto& g = op.bag;
    for (std::size_t t = 0; t < g.rows.size(); ++t)
      table_pooled_bytes.push_back(static_cast<double>(g.batch) * static_cast<double>(g.dim) * g.table_elem_bytes);
    const double hit = embedding_l2_hit_rate(g, device.l2_bytes * c.l2_row_share, c.sector_bytes);
    missed_row_bytes += g.lookups() * (1.0 - hit) * row_dram_bytes(g.dim, g.table_elem_bytes, c.sector_bytes);
  }
  if (p.gpus > 1) {
    // Table-wise sharding: each GPU looks up its whole tables for every sample of the global batch and sends the
    // pooled vectors of other GPUs' samples to them; backward returns their gradients. Tables are dealt to the
    // least-loaded GPU, largest first (the balance distributed-embeddings' memory_balanced and TorchRec's planner
    // reach for tables of equal lookups), and the busiest GPU sets the step.
    p.where = TablePlacement::kSharded;
    p.share_per_gpu = 1.0 / p.gpus;
    const double n = p.gpus;
    std::vector<double> load(static_cast<std::size_t>(p.gpus), 0.0);
    std::vector<double> sorted = table_pooled_bytes;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    double total = 0;
    for (double b : sorted) {
      *std::min_element(load.begin(), load.end()) += b;
      total += b;
    }
    const double busiest = *std::max_element(load.begin(), load.end());
    p.lookup_scale = total > 0 ? busiest * n / total : 1.0;
    // The busiest GPU sends its tables' vectors for the other GPUs' samples: (n-1)/n of n batches' worth.
    const double bytes = busiest * n;
    const bool across_nodes = fabric.nodes > 1;
    const double bw = across_nodes ? std::min(fabric.all_to_all_bw_gbps, fabric.inter_bw_gbps / fabric.gpus_per_node)
                                   : fabric.all_to_all_bw_gbps;
    const double latency = across_nodes ? fabric.inter_latency_us : fabric.intra_latency_us;
    // Each all-to-all is one collective of the framework's: Horovod's background thread picks it up at its next
    // cycle (half a cycle on average) and negotiates it.
    const double pickup = strategy.cycle_ms * 1e3 / 2.0 + strategy.per_collective_us;
    const double us = all_to_all_us(p.gpus, bytes, bw, latency) + pickup;
    p.all_to_all_forward_us = us;
    p.all_to_all_backward_us = training ? us : 0.0;
    p.note = fmt::format("embedding tables {} sharded table-wise over {} GPUs ({} each; the busiest GPU does {:.2f}x "
                         "an even share of the lookups); all-to-all of the pooled vectors {:.2f} ms forward{}",
                         gib(p.table_bytes), p.gpus, gib(p.table_bytes / n), p.lookup_scale, us / 1e3,
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

bool reads_tables_from_host(const StepCost& step) {
  return std::any_of(step.entries.begin(), step.entries.end(),
                     [](const OpCost& e) { return e.name == kHostRowsForward || e.name == kHostRowsBackward; });
}

bool looks_up_tables(const StepCost& step) {
  return std::any_of(step.entries.begin(), step.entries.end(),
                     [](const OpCost& e) { return e.kind == OpKind::kEmbeddingBag; });
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
  entry(kHostRowsForward, placement.host_forward_us, Bound::kHostToDevice, Phase::kForward);
  entry(kHostRowsBackward, placement.host_backward_us, Bound::kHostToDevice, Phase::kBackward);
  step.step_us = std::max(step.gpu_us, step.host_us);
}

}  // namespace perfcast
