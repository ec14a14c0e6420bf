#include "report/prediction_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace perfcast {

namespace {

struct OpRow {
  std::string name;
  OpKind kind = OpKind::kElementwise;
  double flops = 0, bytes = 0, time_us = 0, launches = 0;
  std::map<Bound, double> by_bound;
  Bound bound() const {
    return std::max_element(by_bound.begin(), by_bound.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  }
};

// Forward, backward and update entries of the same op merged into one row, in first-seen order.
std::vector<OpRow> merge_ops(const Prediction& p) {
  std::vector<OpRow> rows;
  std::map<std::string, std::size_t> index;
  for (const auto& e : p.step.entries) {
    auto [it, fresh] = index.emplace(e.name, rows.size());
    if (fresh) rows.push_back(OpRow{e.name, e.kind, 0, 0, 0, 0, {}});
    OpRow& r = rows[it->second];
    r.flops += e.cost.flops;
    r.bytes += e.cost.bytes;
    r.time_us += e.cost.time_us;
    r.launches += e.cost.launches;
    r.by_bound[e.cost.bound] += e.cost.time_us + 1e-12;
  }
  return rows;
}

}  // namespace

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return fmt::format("{:.2f} {}", bytes, units[u]);
}

nlohmann::json prediction_json(const Prediction& p) {
  using nlohmann::json;
  const auto& r = p.request;
  json j;
  j["gpu"] = p.device.id;
  j["model"] = p.model_id;
  j["runtime"] = r.runtime;
  if (!r.runtime_version.empty()) j["runtime_version"] = r.runtime_version;
  j["mode"] = r.mode;
  j["precision"] = r.precision;
  j["precision_note"] = p.precision_note;
  j["batch"] = r.batch;
  j["seq"] = p.sequence ? json(r.seq) : json(nullptr);
  if (r.context > 0) j["context"] = r.context;
  if (!r.kv_precision.empty()) j["kv_precision"] = r.kv_precision;
  j["optimizer_step"] = r.mode == "train" && r.optimizer_step;
  if (r.mode == "train" && r.optimizer_step)
    j["update"] = {{"fused", r.fused_optimizer.value_or(p.runtime.optimizer_fused)}, {"grad_accum", r.grad_accum}};
  j["throughput"] = {{"samples_per_s", p.samples_per_s},
                     {"tokens_per_s", p.tokens_per_s ? json(*p.tokens_per_s) : json(nullptr)}};
  j["step_ms"] = p.step_us / 1e3;
  j["gpu_busy_ms"] = p.step.gpu_us / 1e3;
  j["host_dispatch_ms"] = p.step.host_us / 1e3;
  j["kernel_launches"] = std::round(p.step.launches);
  j["params"] = p.params;
  j["flops_per_sample"] = p.flops_per_sample;
  const auto& m = p.memory;
  j["memory"] = {{"weights_bytes", m.weights},         {"gradients_bytes", m.gradients},
                 {"optimizer_state_bytes", m.optimizer_state}, {"activations_bytes", m.activations},
                 {"workspace_bytes", m.workspace},     {"runtime_bytes", m.runtime},
                 {"comm_buffers_bytes", m.comm_buffers},
                 {"total_bytes", m.total},             {"capacity_bytes", m.capacity},
                 {"fits", m.fits}};
  json shares = json::object();
  for (int i = 0; i < static_cast<int>(Bound::kCount); ++i)
    shares[std::string(bound_name(static_cast<Bound>(i)))] = p.bound_us[i] / p.step_us;
  j["bottleneck"] = {{"primary", bound_name(p.primary)}, {"share_of_step", shares}};
  json ops = json::array();
  for (const auto& o : merge_ops(p)) {
    if (o.launches == 0 && o.time_us == 0) continue;
    ops.push_back({{"name", o.name},
                   {"kind", op_kind_name(o.kind)},
                   {"flops", o.flops},
                   {"bytes", o.bytes},
                   {"time_ms", o.time_us / 1e3},
                   {"launches", o.launches},
                   {"bound", bound_name(o.bound())}});
  }
  j["ops"] = ops;
  j["notes"] = p.notes;
  if (p.input)
    j["input_pipeline"] = {{"host", p.input->host},
                           {"cores", p.input->cores},
                           {"decode_ms_per_sample_per_core", p.input->decode_ms_per_sample},
                           {"host_samples_per_s", p.input->host_samples_per_s},
                           {"h2d_ms", p.input->h2d_ms},
                           {"h2d_blocking", p.input->serial_copy},
                           {"step_ms", p.input->step_ms},
                           {"bound", p.input->bound},
                           {"limited_by", p.input->limited_by}};
  else
    j["input_pipeline"] = nullptr;
  if (p.scale)
    j["scale_out"] = {{"gpus_total", p.scale->gpus_total},
                      {"allreduce_ms", p.scale->allreduce_ms},
                      {"exposed_comm_ms", p.scale->exposed_comm_ms},
                      {"exposed_parts_ms", {{"collectives", p.scale->comm_wait_ms},
                                            {"stragglers", p.scale->sync_wait_ms},
                                            {"overlap_slowdown", p.scale->overlap_slowdown_ms},
                                            {"replica_overhead", p.scale->replica_overhead_ms},
                                            {"bucket_copies", p.scale->bucket_copy_ms}}},
                      {"efficiency", p.scale->efficiency},
                      {"algorithm", p.scale->algorithm},
                      {"strategy", p.scale->strategy}};
  else
    j["scale_out"] = nullptr;
  if (p.power)
    j["power"] = {{"avg_power_w", p.power->avg_power_w},
                  {"energy_per_step_j", p.power->energy_per_step_j},
                  {"clock_factor", p.power->clock_factor}};
  else
    j["power"] = nullptr;
  if (p.llm)
    j["llm"] = {{"time_to_first_token_ms", p.llm->time_to_first_token_ms},
                {"time_per_output_token_ms", p.llm->time_per_output_token_ms},
                {"kv_cache_bytes", p.llm->kv_cache_bytes}};
  else
    j["llm"] = nullptr;
  return j;
}

std::string runtime_label(const PredictRequest& r) {
  return r.runtime_version.empty() ? r.runtime : r.runtime + " " + r.runtime_version;
}

std::string prediction_text(const Prediction& p, int max_ops) {
  const auto& r = p.request;
  std::string s;
  s += fmt::format("perfcast prediction: {} on {} ({}), {} {} {}, batch {}{}\n", r.model, p.device.id, p.device.name,
                   runtime_label(r), r.mode, r.precision, r.batch,
                   (p.sequence ? fmt::format(", seq {}", r.seq) : "") +
                       (r.context > 0 ? fmt::format(", context {}", r.context) : ""));
  if (!p.precision_note.empty()) s += "  note: " + p.precision_note + "\n";
  for (const auto& n : p.notes) s += "  note: " + n + "\n";
  s += "\n";
  s += fmt::format("  throughput      {:>12.1f} samples/s{}\n", p.samples_per_s,
                   p.tokens_per_s ? fmt::format("   ({:.0f} tokens/s)", *p.tokens_per_s) : "");
  s += fmt::format("  step time       {:>12.2f} ms   (GPU busy {:.2f} ms, host dispatch {:.2f} ms, {} launches)\n",
                   p.step_us / 1e3, p.step.gpu_us / 1e3, p.step.host_us / 1e3, static_cast<long>(p.step.launches));
  if (r.mode == "train" && r.optimizer_step)
    s += fmt::format(
        "  update          {:>12}   {}\n", r.fused_optimizer.value_or(p.runtime.optimizer_fused) ? "fused" : "unfused",
        (r.fused_optimizer.value_or(p.runtime.optimizer_fused) ? "one kernel over weights, gradients, state"
                                                               : "one pass over the tensors per operation") +
            (r.grad_accum > 1 ? fmt::format("; once per {} micro-batches", r.grad_accum) : ""));
  s += fmt::format("  parameters      {:>12.2f} M\n", static_cast<double>(p.params) / 1e6);
  s += fmt::format("  work per sample {:>12.2f} GFLOP\n", p.flops_per_sample / 1e9);
  s += fmt::format("  memory          {:>12}   of {} -> {}\n", format_bytes(p.memory.total),
                   format_bytes(p.memory.capacity), p.memory.fits ? "fits" : "DOES NOT FIT");
  s += fmt::format("    weights {}, gradients {}, optimizer {}, activations {}, workspace {}, runtime {}{}\n",
                   format_bytes(p.memory.weights), format_bytes(p.memory.gradients),
                   format_bytes(p.memory.optimizer_state), format_bytes(p.memory.activations),
                   format_bytes(p.memory.workspace), format_bytes(p.memory.runtime),
                   p.memory.comm_buffers > 0 ? ", gradient buckets " + format_bytes(p.memory.comm_buffers) : "");
  if (p.llm)
    s += fmt::format("  serving         {:>12.1f} ms to first token, {:.2f} ms per output token, KV cache {}\n",
                     p.llm->time_to_first_token_ms, p.llm->time_per_output_token_ms, format_bytes(p.llm->kv_cache_bytes));
  if (p.input && p.request.data == "host")
    s += fmt::format("  input copy      {:>12.2f} ms per step from {} host memory{}\n", p.input->h2d_ms,
                     p.request.pinned_memory.value_or(p.request.prefetch) ? "pinned" : "pageable",
                     p.input->serial_copy ? ", blocking: added to every step"
                     : p.primary == Bound::kHostToDevice ? ", prefetched, longer than the GPU step -> bounds the step"
                                                          : ", prefetched beside the step");
  else if (p.input)
    s += fmt::format("  input pipeline  {:>12.0f} samples/s on {} ({} cores, {:.2f} ms per sample per core, {}-bound){}\n",
                     p.input->host_samples_per_s, p.input->host, p.input->cores, p.input->decode_ms_per_sample,
                     p.input->limited_by, p.input->bound ? " -> bounds the step" : "");
  if (p.scale)
    s += fmt::format(
        "  scale-out       {:>12} GPUs ({} x {}), {}: {} over {}{}: efficiency {:.0f}%, all-reduce {:.2f} ms{}, "
        "exposed {:.2f} ms per step{}\n",
        p.scale->gpus_total, p.scale->nodes, p.scale->gpus_per_node, p.scale->strategy, p.scale->algorithm,
        p.scale->interconnect, p.scale->network.empty() ? "" : " + " + p.scale->network, 100.0 * p.scale->efficiency,
        p.scale->allreduce_ms,
        r.mode == "train" && r.grad_accum > 1 ? fmt::format(" once per {} micro-batches", r.grad_accum) : "",
        p.scale->exposed_comm_ms,
        p.scale->bucket_copy_ms > 0 ? fmt::format(" ({:.2f} ms of it copying gradients into and out of buckets)", p.scale->bucket_copy_ms)
                                    : "");
  if (p.power)
    s += fmt::format("  power           {:>12.0f} W per GPU average (limit {:.0f} W, sustained clock {:.0f}% of boost), "
                     "{:.2f} J per sample\n",
                     p.power->avg_power_w, p.power->limit_w, 100.0 * p.power->clock_factor, p.power->energy_per_sample_j);
  s += fmt::format("  bottleneck      {}\n", bound_name(p.primary));
  for (int i = 0; i < static_cast<int>(Bound::kCount); ++i)
    if (p.bound_us[i] > 0)
      s += fmt::format("    {:<16} {:>6.1f}% of step\n", bound_name(static_cast<Bound>(i)),
                       100.0 * p.bound_us[i] / p.step_us);

  auto rows = merge_ops(p);
  std::stable_sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) { return a.time_us > b.time_us; });
  s += fmt::format("\n  top ops by time (forward + backward + update)\n");
  s += fmt::format("  {:<32} {:<13} {:>10} {:>10} {:>9} {:>7} {:>10} {:<15}\n", "op", "kind", "GFLOP", "MB", "time",
                   "share", "TFLOP/s", "bound");
  s += fmt::format("  {:<32} {:<13} {:>10} {:>10} {:>9} {:>7} {:>10} {:<15}\n", "", "", "", "", "ms", "%", "achieved",
                   "");
  int shown = 0;
  for (const auto& o : rows) {
    if (shown++ >= max_ops || o.time_us <= 0) break;
    s += fmt::format("  {:<32} {:<13} {:>10.2f} {:>10.1f} {:>9.3f} {:>7.1f} {:>10.2f} {:<15}\n",
                     o.name.substr(0, 32), op_kind_name(o.kind), o.flops / 1e9, o.bytes / 1e6, o.time_us / 1e3,
                     100.0 * o.time_us / p.step_us, o.flops / (o.time_us * 1e6), bound_name(o.bound()));
  }
  s += "\n  legend: bound = what limits the kernel: tensor_compute/cuda_compute (achievable pipe rate x tile and\n"
       "  wave efficiency), dram_bandwidth (bytes / achievable bandwidth), latency (launch floor and gaps),\n"
       "  host_overhead (framework dispatch slower than the GPU). TFLOP/s achieved = FLOPs / time.\n";
  return s;
}

}  // namespace perfcast
