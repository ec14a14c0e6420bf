#include "schedule/data_parallel.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "device/architecture.h"
#include "graph/op_arithmetic.h"
#include "graph/op_kinds.h"

namespace perfcast {

double expected_max_normal(int n) {
  if (n <= 1) return 0;
  // Blom: E[max of n] ~ Phi^-1((n - 0.375) / (n + 0.25)); inverse normal CDF by Acklam's rational approximation.
  const double p = (n - 0.375) / (n + 0.25);
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  if (p > 0.97575) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

namespace {

// Parameter tensors of one op: weights plus a separate bias (or the second of gamma/beta).
void op_tensors(const Op& op, std::vector<double>& out) {
  const double params = static_cast<double>(op.params);
  // Embedding tables are sharded (model parallel) and updated in their backward kernels: no all-reduce.
  if (params <= 0 || op_kind_info(op.kind).updates_in_backward) return;
  const double second = std::min(second_param_elems(op), params / 2);
  out.push_back(params - second);
  if (second > 0) out.push_back(second);
}

}  // namespace

GradientProfile gradient_profile(const StepCost& step, const Graph& graph, const std::string& precision, bool training,
                                 double gap_per_kernel_us) {
  GradientProfile g;
  g.training = training;
  const GradientBytes bytes = gradient_bytes(precision);
  g.mixed = bytes.mixed;
  g.param_bytes = bytes.param;
  g.compute_bytes = bytes.compute;

  // Timeline of one GPU's step; a host-bound step stretches every kernel by the same factor.
  const double gap = gap_per_kernel_us;
  const double stretch = step.gpu_us > 0 ? std::max(1.0, step.step_us / step.gpu_us) : 1.0;
  // Keyed by views of the graph's own names (no copies); `seen` by op index.
  std::unordered_map<std::string_view, std::size_t> by_name;
  by_name.reserve(graph.ops.size());
  for (std::size_t i = 0; i < graph.ops.size(); ++i) by_name.emplace(graph.ops[i].name, i);
  std::vector<bool> seen(graph.ops.size(), false);
  double t = 0;
  std::vector<double> elems;
  for (const auto& e : step.entries) {
    const double dt = (e.cost.time_us + e.cost.launches * gap) * stretch;
    t += dt;
    if (e.kind == OpKind::kNorm) g.norm_us += dt;
    if (e.phase == Phase::kForward) g.forward_us = t;
    if (e.phase != Phase::kBackward) continue;
    g.backward_end_us = t;
    const auto it = by_name.find(e.name);
    if (it == by_name.end() || graph.ops[it->second].params <= 0 || seen[it->second]) continue;
    seen[it->second] = true;
    elems.clear();
    op_tensors(graph.ops[it->second], elems);
    for (double n : elems) g.tensors.push_back({n, t});
  }
  if (g.backward_end_us == 0) g.backward_end_us = g.forward_us;
  // Parameters whose backward entry was not found (shared weights): ready when backward ends.
  for (std::size_t i = 0; i < graph.ops.size(); ++i)
    if (const Op& op = graph.ops[i]; op.params > 0 && !seen[i]) {
      elems.clear();
      op_tensors(op, elems);
      for (double n : elems) g.tensors.push_back({n, g.backward_end_us});
    }
  std::stable_sort(g.tensors.begin(), g.tensors.end(),
                   [](const auto& a, const auto& b) { return a.ready_us < b.ready_us; });
  g.step_us = step.step_us;
  return g;
}

namespace {

struct Bucket {
  double bytes = 0;
  double ready_us = 0;
};

std::vector<Bucket> make_buckets(const GradientProfile& g, const StrategySpec& s, double bytes_per_elem) {
  std::vector<Bucket> out;
  const double cap = s.bucket_mb * 1048576.0;
  const double first_cap = s.first_bucket_mb > 0 ? s.first_bucket_mb * 1048576.0 : cap;
  const double cycle = s.cycle_ms * 1e3;
  auto tick = [&](double ready) {
    if (cycle <= 0) return ready;
    const double since = ready - g.forward_us;  // the background thread cycles from the start of backward
    return g.forward_us + std::ceil(std::max(since, 0.0) / cycle - 1e-9) * cycle;
  };
  Bucket cur;
  double cur_tick = -1;
  for (const auto& t : g.tensors) {
    const double bytes = t.elems * bytes_per_elem;
    const double this_tick = tick(t.ready_us);
    const double limit = out.empty() ? first_cap : cap;
    const bool close = cur.bytes > 0 && (cap <= 0 || cur.bytes + bytes > limit || (cycle > 0 && this_tick > cur_tick));
    if (close) {
      out.push_back(cur);
      cur = Bucket{};
    }
    cur.bytes += bytes;
    cur.ready_us = cycle > 0 ? this_tick : t.ready_us;
    cur_tick = this_tick;
  }
  if (cur.bytes > 0) out.push_back(cur);
  return out;
}

}  // namespace

ScaleOutCost scale_out(const DeviceSpec& device, const ReplicaStep& single, const GradientProfile& g,
                       int gpus_per_node, int nodes, const std::string& interconnect, const std::string& network,
                       const DataParallelOptions& o) {
  const Fabric f = resolve_fabric(device, gpus_per_node, nodes, interconnect, network, o.nics_per_node);
  const StrategySpec& s = o.strategy.empty() ? strategy_for_runtime(single.runtime) : find_strategy(o.strategy);
  const int n = f.gpus();
  ScaleOutCost c;
  c.gpus_total = n;
  c.gpus_per_node = gpus_per_node;
  c.nodes = nodes;
  c.interconnect = f.intra_id;
  c.network = nodes > 1 ? f.inter_id : "";
  c.strategy = s.id;

  // One GPU's step on this node: the host pipeline now feeds every GPU of the node.
  double base_us = single.kernel_step_us;
  double copy_shift_us = 0;  // a blocking input copy runs before the step's first kernel
  if (single.input) {
    const double decode_ms = single.input->decode_ms(static_cast<double>(single.batch) * gpus_per_node);
    if (single.input->serial_copy) {
      copy_shift_us = single.input->h2d_ms * 1e3;
      base_us = std::max(base_us + copy_shift_us, decode_ms * 1e3);
    } else {
      base_us = std::max(base_us, std::max(decode_ms, single.input->h2d_ms) * 1e3);
    }
  }
  c.base_step_ms = base_us / 1e3;
  const double single_total_us = single.total_step_us;  // the one-GPU prediction's whole step

  double added_us = 0;
  if (n > 1) {
    // Gradient accumulation (training): the gradients are reduced once per weight update, after `accum`
    // micro-batches (DDP no_sync, Horovod backward_passes_per_step, BERT's allreduce_post_accumulation), and the
    // micro-batches share that cost. A loop that all-reduces every micro-batch (DDP without no_sync) is not this.
    const double accum = g.training ? std::max(1, single.grad_accum) : 1.0;
    // Waiting for the slowest of n GPUs at the synchronous step boundary.
    const double sync_us = s.sync_cv * expected_max_normal(n) * base_us;
    c.sync_wait_ms = sync_us / 1e3;
    added_us += sync_us;
    if (g.training) {
      const double bpe = o.fp16_gradients ? 2.0 : (s.grad_dtype == "compute" ? g.compute_bytes : g.param_bytes);
      double total_elems = 0;
      for (const auto& t : g.tensors) total_elems += t.elems;
      c.gradient_bytes = total_elems * bpe;
      const auto buckets = make_buckets(g, s, bpe);
      // Buffers the reduction keeps (compression makes a further temporary copy, not counted).
      c.bucket_buffer_bytes = reduction_buffer_bytes(s, single.precision, total_elems);
      c.collectives = static_cast<int>(buckets.size());
      auto coll = [&](double bytes) {
        if (s.reduce == "copy-to-device") return copy_to_device(f, bytes);
        if (s.reduce == "parameter-server") {
          CollectiveCost ps = parameter_server(f, bytes);
          ps.us /= 2;  // the push; the pull follows the update
          return ps;
        }
        return allreduce(f, bytes, o.hierarchical || s.hierarchical);
      };
      // Single communication stream: a bucket starts when it is ready (or after backward when the framework
      // does not overlap) and when the previous one is done.
      const double scale_t = (base_us - copy_shift_us) / std::max(g.step_us, 1e-9);
      const double bwd_end = copy_shift_us + g.backward_end_us * scale_t;
      // Copies between GPUs without peer access are staged through host memory by the framework's copy
      // thread and do not run beside compute.
      // Under a compiler that hands gradients over only when a compiled cluster ends (TensorFlow's XLA
      // auto-clustering), collectives start after backward.
      const bool overlap = s.overlap && !(s.reduce == "copy-to-device" && f.staged_through_host) &&
                           !single.gradients_at_cluster_end;
      // Bucket copies: each reads and writes the bucket's bytes at the card's achievable DRAM bandwidth.
      const double dram_efficiency =
          device.measured ? architecture_for(device).dram_efficiency : architecture_of(device).dram_efficiency;
      const double copy_us_per_byte = s.bucket_copies * 2.0 / (device.mem_bw_gbps * 1e3 * dram_efficiency);
      double comm_free = 0, overlapped = 0, total = 0, largest = 0;
      std::string algorithm;
      for (const auto& b : buckets) {
        const CollectiveCost cc = coll(b.bytes);
        const double dur = cc.us + s.per_collective_us + (s.bucket_copies_on_comm_stream ? copy_us_per_byte * b.bytes : 0);
        const double ready = copy_shift_us + b.ready_us * scale_t;
        // After backward, a framework that polls on a cycle (Horovod) picks the gradients up at its next tick:
        // half a cycle later on average.
        const double after_backward = bwd_end + 0.5 * s.cycle_ms * 1e3;
        const double start = std::max(overlap ? ready : after_backward, comm_free);
        if (start < bwd_end) overlapped += std::min(dur, bwd_end - start);
        comm_free = start + dur;
        total += dur;
        if (b.bytes >= largest) {
          largest = b.bytes;
          algorithm = cc.algorithm;
          c.bus_bw_gbps = cc.bus_bw_gbps;
        }
      }
      if (s.reduce == "parameter-server") {
        // Weights are pulled after the update, before the next forward pass: nothing to hide behind.
        const double pull = parameter_server(f, c.gradient_bytes).us / 2;
        comm_free = std::max(comm_free, bwd_end) + pull;
        total += pull;
      }
      c.allreduce_ms = total / 1e3;
      c.algorithm = algorithm;
      const double slowdown = s.overlap_slowdown * overlapped / accum;
      const double comm_added = std::max((comm_free - bwd_end) / accum, slowdown);
      c.overlap_slowdown_ms = std::min(slowdown, comm_added) / 1e3;
      c.comm_wait_ms = comm_added / 1e3 - c.overlap_slowdown_ms;
      added_us += comm_added;
      // Copies on the compute stream (DDP: into the bucket as each gradient is ready, back after the all-reduce)
      // hold the step up for their whole length.
      if (!s.bucket_copies_on_comm_stream && s.bucket_copies > 0) {
        const double copies = copy_us_per_byte * c.gradient_bytes / accum;
        c.bucket_copy_ms = copies / 1e3;
        added_us += copies;
      }
      // Empirical: see [strategy.replicated] replica_slowdown in data/interconnects.toml.
      if (g.mixed && s.replica_slowdown > 0 && g.norm_us > 0) {
        const double r = s.replica_slowdown * std::sqrt(n - 1.0) * base_us;
        c.replica_overhead_ms = r / 1e3;
        added_us += r;
      }
    } else {
      c.algorithm = "none (inference: no gradients)";
    }
  }
  // What the GPUs wait at the barrier; a slower node input pipeline is in base_step_ms (finalize_prediction
  // counts it as input-pipeline time).
  c.exposed_comm_ms = added_us / 1e3;
  const double total_us = base_us + added_us;
  c.efficiency = total_us > 0 ? single_total_us / total_us : 1;
  c.comm_share = total_us > 0 ? added_us / total_us : 0;
  return c;
}

}  // namespace perfcast
