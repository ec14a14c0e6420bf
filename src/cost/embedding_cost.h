// Cost of recommendation-model ops: embedding-bag lookups as the memory system serves them (row gathers at DRAM
// sector granularity, an L2 hit rate from the ids' distribution, atomic scatter-add and the table update in
// backward) and the dot interaction. Constants from data/recsys.toml.
#pragma once

#include "cost/kernel_cost.h"
#include "graph/op.h"

namespace perfcast {

struct RecsysConstants {
  double sector_bytes = 0;                 // DRAM access granularity
  double gather_bandwidth_efficiency = 0;  // random row gathers against a streaming kernel's bandwidth
  double l2_row_share = 0;                 // share of L2 holding hot rows
  double atomic_bandwidth_efficiency = 0;  // backward scatter-add with atomics
  double pcie_gather_efficiency = 0;       // rows read from host memory over PCIe
};

// data/recsys.toml, loaded once.
const RecsysConstants& recsys_constants();

// Bytes a row of `dim` elements of `elem_bytes` takes from DRAM (whole sectors).
double row_dram_bytes(std::int64_t dim, double elem_bytes, double sector_bytes);

// Share of lookups served by L2 when `l2_bytes` of cache hold the most frequent rows: the cache is split over
// the tables in proportion to their lookups, each keeps its top-ranked rows, and a table whose ids follow
// P(rank r) ~ r^-alpha hits with the probability mass of those rows (alpha = 0: uniform ids).
double embedding_l2_hit_rate(const EmbeddingBagGeometry& g, double l2_bytes, double sector_bytes);

// Probability that an id drawn from a table of `rows` rows with P(rank r) ~ r^-alpha is among its top `k`.
double zipf_top_share(double k, double rows, double alpha);

// Forward (gather + pool) or backward (scatter-add + table update) of an embedding bag on this GPU.
KernelCost embedding_bag_cost(const Op& op, bool backward, double act_bytes, const KernelCostModel& km);

// Forward or backward of the dot interaction: a memory-bound kernel that keeps each sample's Gram tile on chip
// (NVIDIA's dot_based_interact kernels, FBGEMM/TorchRec's bmm + tril_indices).
KernelCost interaction_cost(const Op& op, bool backward, double act_bytes, Pipe pipe, const KernelCostModel& km);

}  // namespace perfcast
