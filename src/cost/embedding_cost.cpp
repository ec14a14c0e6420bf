#include "cost/embedding_cost.h"

#include <algorithm>
#include <cmath>

#include "core/data_files.h"
#include "core/toml_reader.h"
#include "graph/op_arithmetic.h"

namespace perfcast {

namespace {

RecsysConstants load() {
  const auto path = data_dir() / "recsys.toml";
  const toml::table root = parse_toml_file(path);
  TomlFields top(root, path.string());
  RecsysConstants c;
  TomlFields g(top.table("gather"), path.string() + " [gather]");
  c.sector_bytes = g.number("sector_bytes");
  c.gather_bandwidth_efficiency = g.number("gather_bandwidth_efficiency");
  c.l2_row_share = g.number("l2_row_share");
  TomlFields s(top.table("scatter"), path.string() + " [scatter]");
  c.atomic_bandwidth_efficiency = s.number("atomic_bandwidth_efficiency");
  TomlFields h(top.table("host"), path.string() + " [host]");
  c.pcie_gather_efficiency = h.number("pcie_gather_efficiency");
  if (c.sector_bytes <= 0 || c.gather_bandwidth_efficiency <= 0 || c.atomic_bandwidth_efficiency <= 0 ||
      c.pcie_gather_efficiency <= 0 || c.l2_row_share < 0 || c.l2_row_share > 1)
    throw InputError(path.string() + ": recsys constants must be positive (l2_row_share within 0..1)");
  return c;
}

}  // namespace

const RecsysConstants& recsys_constants() {
  static const RecsysConstants c = load();
  return c;
}

double row_dram_bytes(std::int64_t dim, double elem_bytes, double sector_bytes) {
  return std::ceil(static_cast<double>(dim) * elem_bytes / sector_bytes) * sector_bytes;
}

double zipf_top_share(double k, double rows, double alpha) {
  if (rows <= 1 || k >= rows) return 1.0;
  if (k <= 0) return 0.0;
  // Continuous approximation of the rank distribution: integral of r^-alpha from 1 to k over 1 to rows.
  const auto mass = [alpha](double x) {
    if (std::abs(alpha - 1.0) < 1e-9) return std::log(x);
    return (std::pow(x, 1.0 - alpha) - 1.0) / (1.0 - alpha);
  };
  const double top = std::max(1.0, k);
  if (alpha <= 0) return k / rows;
  return std::clamp(mass(top) / mass(rows), 0.0, 1.0);
}

double embedding_l2_hit_rate(const EmbeddingBagGeometry& g, double l2_bytes, double sector_bytes) {
  double pool_total = 0;
  for (double p : g.pooling) pool_total += p;
  if (pool_total <= 0) return 0;
  const double row = row_dram_bytes(g.dim, g.table_elem_bytes, sector_bytes);
  double hits = 0;
  for (std::size_t t = 0; t < g.rows.size(); ++t) {
    const double budget_rows = l2_bytes * g.pooling[t] / pool_total / row;
    hits += g.pooling[t] * zipf_top_share(budget_rows, static_cast<double>(g.rows[t]), g.zipf_alpha);
  }
  return hits / pool_total;
}

KernelCost embedding_bag_cost(const Op& op, bool backward, double act_bytes, const KernelCostModel& km) {
  const RecsysConstants& c = recsys_constants();
  const EmbeddingBagGeometry& g = op.bag;
  const double hit = embedding_l2_hit_rate(g, km.device().l2_bytes * c.l2_row_share, c.sector_bytes);
  const double row = row_dram_bytes(g.dim, g.table_elem_bytes, c.sector_bytes);
  const double lookups = g.lookups();
  const double ids = lookups * 8.0;  // int64 indices
  const double pooled = static_cast<double>(op.out_elems) * act_bytes;
  const double gathered = lookups * (1.0 - hit) * row;
  // The gathers run at a share of the streaming bandwidth: charge them as that many more streamed bytes.
  const double gather_equivalent = gathered / c.gather_bandwidth_efficiency;
  // One gather (forward) and one scatter-add plus one update (backward) per lookup op: per table where the model
  // code calls a layer per table, each with its launch floor.
  const double ops = static_cast<double>(std::max<std::int64_t>(1, g.lookup_ops));
  if (!backward) {
    KernelCost k = km.streaming(lookups * static_cast<double>(g.dim), ids + gather_equivalent + pooled, ops);
    k.bytes = ids + gathered + pooled;
    return k;
  }
  // Scatter-add: each lookup reads its bag's gradient and adds it into its row with atomics (hot rows in L2).
  const double scatter = lookups * (1.0 - hit) * row;
  const double scatter_equivalent = scatter / c.atomic_bandwidth_efficiency;
  const double grad_in = lookups * static_cast<double>(g.dim) * act_bytes;
  KernelCost k = km.streaming(lookups * static_cast<double>(g.dim), ids + grad_in + scatter_equivalent, ops);
  k.bytes = ids + grad_in + scatter;
  // The table update: touched rows (sparse optimizers, a miss share of them from DRAM) or every row.
  Work update = embedding_update_work(g);
  if (g.optimizer != EmbeddingOptimizer::kAdamDense) update.bytes *= (1.0 - hit);
  accumulate(k, km.streaming(update.flops, update.bytes, ops));
  return k;
}

KernelCost interaction_cost(const Op& op, bool backward, double act_bytes, Pipe pipe, const KernelCostModel& km) {
  const Work w = backward ? backward_work(op, ElemBytes{act_bytes, act_bytes}) : forward_work(op, ElemBytes{act_bytes, act_bytes}, true);
  return km.streaming(w.flops, w.bytes, 1, pipe);
}

}  // namespace perfcast
