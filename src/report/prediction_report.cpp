#include "report/prediction_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "analysis/cloud.h"
#include "analysis/intervals.h"
#include "report/json_vocabulary.h"
#include "report/messages.h"
#include "schedule/llm_parallel.h"

namespace perfcast {

namespace {

struct OpRow {
  std::string name;
  OpKind kind = OpKind::kElementwise;
  double flops = 0, bytes = 0, time_us = 0, launches = 0;
  std::map<Bound, double> by_bound;
  std::map<Pipe, double> by_pipe;
  std::string forward_algorithm;  // a convolution's forward algorithm (implicit GEMM, Winograd, FFT), else ""
  Bound bound() const {
    return std::max_element(by_bound.begin(), by_bound.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  }
  // The pipe of the op's kernels with the most time: the roofline its point is drawn against.
  Pipe pipe() const {
    return std::max_element(by_pipe.begin(), by_pipe.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  }
};

// Forward, backward and update entries of the same op merged into one row, in first-seen order.
std::vector<OpRow> merge_ops(const Prediction& p) {
  std::vector<OpRow> rows;
  std::map<std::string, std::size_t> index;
  for (const auto& e : p.step.entries) {
    auto [it, fresh] = index.emplace(e.name, rows.size());
    if (fresh) rows.push_back(OpRow{e.name, e.kind, 0, 0, 0, 0, {}, {}, {}});
    OpRow& r = rows[it->second];
    if (e.kind == OpKind::kConv && e.phase == Phase::kForward) r.forward_algorithm = e.cost.algorithm;
    r.flops += e.cost.flops;
    r.bytes += e.cost.bytes;
    r.time_us += e.cost.time_us;
    r.launches += e.cost.launches;
    r.by_bound[e.cost.bound] += e.cost.time_us + 1e-12;
    r.by_pipe[e.cost.pipe] += e.cost.time_us + 1e-12;
  }
  return rows;
}

// One step as lanes of phases (forward, backward, update) for the page's timeline. The schedule overlaps the host's
// dispatch with the GPU's kernels (step = the longer of the two, schedule/step.h), so both lanes start at 0; each
// phase's part of its lane follows its kernels' time (with the inter-kernel gaps) and its launches.
nlohmann::json timeline_json(const Prediction& p) {
  struct Segment {
    Phase phase;
    double gpu = 0, launches = 0;
  };
  std::vector<Segment> segments;
  double gpu_total = 0, launch_total = 0;
  for (const auto& e : p.step.entries) {
    if (segments.empty() || segments.back().phase != e.phase) segments.push_back({e.phase});
    const double gpu = e.cost.time_us + e.cost.launches * p.runtime.gpu_gap_per_kernel_us;
    segments.back().gpu += gpu;
    segments.back().launches += e.cost.launches;
    gpu_total += gpu;
    launch_total += e.cost.launches;
  }
  auto out = nlohmann::json::array();
  if (gpu_total <= 0) return out;
  static constexpr const char* kPhase[] = {"forward", "backward", "update"};
  double gpu_at = 0, host_at = 0;
  for (const auto& s : segments) {
    const double gpu_ms = s.gpu / gpu_total * p.step.gpu_us / 1e3;
    const double host_ms = launch_total > 0 ? s.launches / launch_total * p.step.host_us / 1e3 : 0;
    const char* phase = kPhase[static_cast<int>(s.phase)];
    out.push_back({{"lane", "gpu"}, {"phase", phase}, {"start_ms", gpu_at}, {"end_ms", gpu_at + gpu_ms}});
    if (host_ms > 0)
      out.push_back({{"lane", "host"}, {"phase", phase}, {"start_ms", host_at}, {"end_ms", host_at + host_ms}});
    gpu_at += gpu_ms;
    host_at += host_ms;
  }
  // The gradient all-reduce overlaps backward and ends `exposed` after the GPU's last kernel.
  if (p.scale && p.scale->allreduce_ms > 0) {
    const double end = gpu_at + p.scale->exposed_comm_ms;
    out.push_back({{"lane", "communication"}, {"phase", "allreduce"}, {"start_ms", std::max(0.0, end - p.scale->allreduce_ms)},
                   {"end_ms", end}});
  }
  // The host prepares the next batch while this one runs; a blocking copy waits before the first kernel.
  if (p.input) {
    out.push_back({{"lane", "input"}, {"phase", "input_pipeline"}, {"start_ms", 0.0}, {"end_ms", p.input->step_ms}});
    if (p.input->serial_copy && p.input->h2d_ms > 0)
      out.push_back({{"lane", "input"}, {"phase", "host_to_device"}, {"start_ms", 0.0}, {"end_ms", p.input->h2d_ms}});
  }
  return out;
}

}  // namespace

std::string host_basis_text(const PoweredHardware& h, Lang lang) {
  const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  const std::string server =
      h.server.empty() ? fmt::format(m("host.generic"), cloud_terms().host_w_per_gpu_tdp_w()) : fmt::format(m("host.server"), h.server);
  if (h.rule == HostRule::kGpuShare)
    return fmt::format(m("host.gpu_share"), h.gpus_used, h.gpus_used == 1 ? "" : "s", server);
  const int idle = h.gpus_powered - h.gpus_used;
  return fmt::format(m("host.whole"), h.gpus_powered, h.gpus_powered == 1 ? "" : "s", server,
                     idle > 0 ? fmt::format(m("host.idle"), idle, idle == 1 ? "" : "s", h.idle_gpu_w / idle) : "");
}

std::string format_samples_per_s(double v) {
  if (!(v > 0) || v >= 1) return fmt::format("{:.1f}", v);
  return fmt::format("{:.{}f}", v, std::min(12, 2 - static_cast<int>(std::floor(std::log10(v)))));
}

std::string rows_text(std::size_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); }

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return fmt::format("{:.2f} {}", bytes, units[u]);
}

namespace {

// The energy of the whole server and of the data centre around it, beside the GPUs' (PowerCost).
struct SiteEnergy {
  PoweredHardware powered;             // the GPUs' share of their server (powered_hardware: predict rents nothing)
  double server_energy_per_step_j = 0; // all GPUs + host
  double server_energy_per_sample_j = 0;
  double pue = 1;
  double facility_energy_per_step_j = 0;
  double facility_energy_per_sample_j = 0;
};

SiteEnergy site_energy(const Prediction& p, std::optional<double> pue) {
  SiteEnergy e;
  // A training layout's GPUs (its samples/s are all of theirs), else a data-parallel fleet's, else one.
  const int gpus = p.parallel ? p.parallel->gpus : p.scale ? p.scale->gpus_total : 1;
  e.powered = powered_hardware(p.device, gpus);
  const double step_s = p.step_us * 1e-6;
  // Per step the GPUs' own energy (PowerCost) plus the rest of the server over the step.
  e.server_energy_per_step_j = p.power->energy_per_step_j * gpus + e.powered.server_w(0) * step_s;
  e.server_energy_per_sample_j = p.samples_per_s > 0 ? e.powered.server_w(p.power->avg_power_w * gpus) / p.samples_per_s : 0;
  e.pue = pue_for("", pue);
  e.facility_energy_per_step_j = e.server_energy_per_step_j * e.pue;
  e.facility_energy_per_sample_j = e.server_energy_per_sample_j * e.pue;
  return e;
}

}  // namespace

nlohmann::json prediction_json(const Prediction& p, std::optional<double> pue) {
  using nlohmann::json;
  const auto& r = p.request;
  json j;
  j["gpu"] = p.device.id;
  j["model"] = p.model_id;
  j["runtime"] = r.runtime;
  if (!r.runtime_version.empty()) j["runtime_version"] = r.runtime_version;
  j["mode"] = mode_string(r.mode);
  j["precision"] = r.precision;
  j["precision_note"] = p.precision_note;
  j["batch"] = r.batch;
  j["seq"] = p.sequence ? json(r.seq) : json(nullptr);
  if (p.sequence && r.seq_mean > 0) j["seq_mean"] = r.seq_mean;
  if (r.context > 0) j["context"] = r.context;
  if (!r.kv_precision.empty()) j["kv_precision"] = r.kv_precision;
  j["optimizer_step"] = r.mode == Mode::kTrain && r.optimizer_step;
  if (r.mode == Mode::kTrain && r.optimizer_step)
    j["update"] = {{"fused", r.fused_optimizer.value_or(p.runtime.optimizer_fused)}, {"grad_accum", r.grad_accum}};
  // A configuration that does not fit would fail with out-of-memory: its throughput and times are null, "fits"
  // false (README, "Every command that reports").
  j["fits"] = p.memory.fits;
  const bool fits = p.memory.fits;
  j["throughput"] = {{"samples_per_s", fits ? json(p.samples_per_s) : json(nullptr)},
                     {"tokens_per_s", fits && p.tokens_per_s ? json(*p.tokens_per_s) : json(nullptr)}};
  // The prediction interval (analysis/intervals.h): low/high bound the headline throughput (tokens/s where the
  // prediction has them, else samples/s) at `level`, from the residuals of the prediction's regime.
  if (const auto iv = prediction_interval(p)) {
    const double v = p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s;
    j["throughput"]["low"] = v * iv->low;
    j["throughput"]["high"] = v * iv->high;
    j["throughput"]["interval"] = {{"level", iv->level}, {"regime", iv->regime}, {"rows", iv->rows},
                                   {"unit", p.tokens_per_s ? "tokens_per_s" : "samples_per_s"},
                                   {"support_bin", iv->support_bin},
                                   {"novel_components", iv->novel_components},
                                   {"widened", iv->widened},
                                   {"width_ratio", iv->width_ratio}};
    if (!iv->novel_components.empty()) j["throughput"]["interval"]["support_note"] = support_note(*iv);
  } else {
    j["throughput"]["low"] = nullptr;
    j["throughput"]["high"] = nullptr;
    // Why there is none, as the text report says it (a configuration that does not fit has no throughput at all).
    if (const std::string why = no_interval_reason(p); !why.empty()) j["throughput"]["no_interval"] = why;
  }
  // CPU predictions: the processes the part runs (--instances; 1 = one process on every core), one process's
  // latency and throughput; throughput.samples_per_s is all of them.
  if (p.cpu_instances) {
    const CpuInstancesCost& c = *p.cpu_instances;
    j["cpu_instances"] = {{"instances", c.instances},
                          {"cores_per_instance", c.cores_per_instance},
                          {"instances_per_socket", c.instances_per_socket},
                          {"latency_ms", fits ? json(c.latency_ms) : json(nullptr)},
                          {"instance_samples_per_s", fits ? json(c.instance_samples_per_s) : json(nullptr)},
                          {"samples_per_s", fits ? json(p.samples_per_s) : json(nullptr)},
                          {"dram_gbps_per_instance", c.dram_gbps_per_instance},
                          {"l3_bytes_per_instance", c.l3_bytes_per_instance}};
  }
  if (p.anchor)
    j["anchor"] = {{"given", p.anchor->given},
                   {"unit", p.anchor->unit},
                   {"measured", p.anchor->measured},
                   {"predicted", p.anchor->predicted > 0 ? json(p.anchor->predicted) : json(nullptr)},
                   {"measured_over_predicted", p.anchor->predicted > 0 ? json(p.anchor->factor()) : json(nullptr)}};
  {
    // Per GPU: the parallel-training layout's own figure, else the whole run's tokens over its GPUs.
    const double gpus = p.parallel ? p.parallel->gpus : p.scale ? p.scale->gpus_total : 1;
    j["throughput"]["tokens_per_s_per_gpu"] =
        fits && p.parallel ? json(p.parallel->tokens_per_s_per_gpu)
                           : fits && p.tokens_per_s ? json(*p.tokens_per_s / gpus) : json(nullptr);
    j["mfu"] = fits && p.parallel ? json(p.parallel->mfu) : json(nullptr);
  }
  j["step_ms"] = fits ? json(p.step_us / 1e3) : json(nullptr);
  j["gpu_busy_ms"] = fits ? json(p.step.gpu_us / 1e3) : json(nullptr);
  j["host_dispatch_ms"] = fits ? json(p.step.host_us / 1e3) : json(nullptr);
  j["kernel_launches"] = count_json(p.step.launches);
  j["params"] = p.params;
  j["flops_per_sample"] = rounded_count_json(p.flops_per_sample);
  const auto& m = p.memory;
  j["memory"] = {{"weights_bytes", rounded_count_json(m.weights)},         {"master_weights_bytes", rounded_count_json(m.master_weights)},
                 {"gradients_bytes", rounded_count_json(m.gradients)},
                 {"optimizer_state_bytes", rounded_count_json(m.optimizer_state)}, {"activations_bytes", rounded_count_json(m.activations)},
                 {"workspace_bytes", rounded_count_json(m.workspace)},     {"runtime_bytes", rounded_count_json(m.runtime)},
                 {"comm_buffers_bytes", rounded_count_json(m.comm_buffers)}, {"embedding_tables_bytes", rounded_count_json(m.embedding_tables)},
                 {"transient_bytes", rounded_count_json(m.transient)},     {"allocated_bytes", rounded_count_json(m.allocated)},
                 {"reserved_bytes", rounded_count_json(m.reserved)},       {"total_bytes", rounded_count_json(m.total)},
                 {"capacity_bytes", rounded_count_json(m.capacity)},
                 {"fits", m.fits}};
  json shares = json::object();
  for (int i = 0; i < static_cast<int>(Bound::kCount); ++i)
    shares[std::string(bound_name(static_cast<Bound>(i)))] = p.bound_us[i] / p.step_us;
  // What bounds the step, the step's timeline and its power and energy describe a step that runs: a configuration
  // that does not fit has none of them (README: null throughput and step times; the text report says "no
  // throughput, step time or bottleneck"). Its ops keep their kernel costs.
  j["bottleneck"] = fits ? json{{"primary", bound_name(p.primary)}, {"share_of_step", shares}} : json(nullptr);
  json ops = json::array();
  for (const auto& o : merge_ops(p)) {
    if (o.launches == 0 && o.time_us == 0) continue;
    ops.push_back({{"name", o.name},
                   {"kind", op_kind_name(o.kind)},
                   {"flops", rounded_count_json(o.flops)},
                   {"bytes", rounded_count_json(o.bytes)},
                   {"time_ms", o.time_us / 1e3},
                   {"launches", count_json(o.launches)},
                   {"bound", bound_name(o.bound())},
                   {"pipe", pipe_name(o.pipe())}});
    if (!o.forward_algorithm.empty()) ops.back()["algorithm"] = o.forward_algorithm;
  }
  j["ops"] = ops;
  // How the GPU convolutions' cuDNN algorithms were chosen (--conv-algo, else the runtime's documented default).
  const bool has_conv = std::any_of(p.step.entries.begin(), p.step.entries.end(),
                                    [](const OpCost& e) { return e.kind == OpKind::kConv; });
  if (has_conv && !is_cpu_device(r.gpu)) j["conv_algo"] = conv_algo_name(conv_autotune_for(r.conv_algo, p.runtime));
  // The ceilings the ops' points sit under (the page's roofline): datasheet peaks of the pipes they run on.
  json peaks = json::object();
  for (const auto& o : ops) {
    const std::string pipe = o.at("pipe");
    for (int i = 0; i < kPipeCount; ++i)
      if (pipe_name(static_cast<Pipe>(i)) == pipe) peaks[pipe] = p.device.peak(static_cast<Pipe>(i));
  }
  j["roofline"] = {{"dram_gbps", p.device.mem_bw_gbps}, {"peak_tflops", peaks}};
  j["timeline"] = fits ? timeline_json(p) : json::array();
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
                      {"nodes", p.scale->nodes},
                      {"gpus_per_node", p.scale->gpus_per_node},
                      {"interconnect", p.scale->interconnect},
                      {"network", p.scale->network.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.scale->network)},
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
  if (p.power && fits) {
    const SiteEnergy e = site_energy(p, pue);
    j["power"] = {{"avg_power_w", p.power->avg_power_w},
                  {"energy_per_step_j", p.power->energy_per_step_j},
                  {"energy_per_sample_j", p.power->energy_per_sample_j},
                  {"samples_per_joule", p.power->samples_per_joule},
                  {"clock_factor", p.power->clock_factor},
                  {"host_power_w", e.powered.host_w},
                  {"host_rule", host_rule_name(e.powered.rule)},
                  {"host_server", e.powered.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.powered.server)},
                  {"server_energy_per_step_j", e.server_energy_per_step_j},
                  {"server_energy_per_sample_j", e.server_energy_per_sample_j},
                  {"pue", e.pue},
                  {"facility_energy_per_step_j", e.facility_energy_per_step_j},
                  {"facility_energy_per_sample_j", e.facility_energy_per_sample_j}};
  }
  else
    j["power"] = nullptr;
  if (p.parallel) {
    const auto& c = *p.parallel;
    const auto& l = c.layout;
    const auto& st = c.step;
    j["parallel_training"] = {
        {"layout", {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"cp", l.cp}, {"ep", l.ep}, {"vpp", l.vpp},
                    {"zero", l.zero}, {"fsdp", l.fsdp}, {"sequence_parallel", l.sequence_parallel},
                    {"micro_batch", l.micro_batch}, {"global_batch", l.global_batch},
                    {"microbatches_per_pipeline", st.microbatches}, {"recompute", recompute_name(l.recompute)},
                    {"offload_optimizer", l.offload_optimizer}}},
        {"model_flops_per_token", rounded_count_json(c.model_flops_per_token)},
        {"peak_tflops", c.peak_tflops},
        {"step_parts_ms", {{"compute", st.compute_us / 1e3}, {"recompute", st.recompute_us / 1e3},
                           {"pipeline_bubble", st.bubble_us / 1e3}, {"tp_comm", st.tp_comm_us / 1e3},
                           {"pp_p2p", st.pp_comm_us / 1e3}, {"cp_comm", st.cp_comm_us / 1e3},
                           {"ep_all_to_all", st.ep_comm_us / 1e3}, {"dp_exposed", st.dp_comm_us / 1e3},
                           {"dp_total", st.dp_comm_total_us / 1e3}, {"optimizer", st.optimizer_us / 1e3},
                           {"fp8_scaling", st.fp8_scaling_us / 1e3}, {"host_wait", st.host_wait_us / 1e3}}},
        // The host's work runs beside the GPU's (only host_wait adds to the step): kept out of step_parts_ms.
        {"host_work_ms", {{"issued", st.host_us / 1e3}, {"deepspeed", st.engine_host_us / 1e3}}},
        {"bubble_fraction", st.bubble_fraction},
        {"deepspeed_allgather_launches_per_step", st.zero3_allgather_launches},
        {"memory_per_gpu_bytes", {{"weights", rounded_count_json(c.memory.weights)}, {"master_weights", rounded_count_json(c.memory.master_weights)},
                                  {"gradients", rounded_count_json(c.memory.gradients)}, {"optimizer_state", rounded_count_json(c.memory.optimizer_state)},
                                  {"activations", rounded_count_json(c.memory.activations)}, {"workspace", rounded_count_json(c.memory.workspace)},
                                  {"comm_buffers", rounded_count_json(c.memory.comm_buffers)}, {"runtime", rounded_count_json(c.memory.runtime)},
                                  {"total", rounded_count_json(c.memory.total)}}},
        {"train_tokens", c.train_tokens > 0 ? json(c.train_tokens) : json(nullptr)},
        {"usd_per_gpu_hour", c.usd_per_gpu_hour > 0 ? json(c.usd_per_gpu_hour) : json(nullptr)}};
    // The run's size, time, dollars and instance as compare and plan name them (the old names beside).
    json& pt = j["parallel_training"];
    put_with_alias(pt, "gpus_total", "gpus", c.gpus);
    put_with_alias(pt, "hours", "train_hours", c.train_tokens > 0 && fits ? json(c.run.hours) : json(nullptr));
    put_with_alias(pt, "usd_on_demand", "train_usd", c.run.usd > 0 && fits ? json(c.run.usd) : json(nullptr));
    put_with_alias(pt, "instance", "price_instance", c.price_instance.empty() ? json(nullptr) : json(c.price_instance),
                   c.price_instance);
  } else {
    j["parallel_training"] = nullptr;
  }
  if (p.llm)
    j["llm"] = {{"time_to_first_token_ms", p.llm->time_to_first_token_ms},
                {"time_per_output_token_ms", p.llm->time_per_output_token_ms},
                {"kv_cache_bytes", rounded_count_json(p.llm->kv_cache_bytes)}};
  else
    j["llm"] = nullptr;
  return j;
}

std::string runtime_label(const PredictRequest& r) {
  return r.runtime_version.empty() ? r.runtime : r.runtime + " " + r.runtime_version;
}

nlohmann::json count_json(double v) {
  if (std::isfinite(v) && std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 9.0e15)
    return static_cast<std::int64_t>(std::llround(v));
  return v;
}

nlohmann::json rounded_count_json(double v) {
  if (std::isfinite(v) && std::fabs(v) < 9.0e15) return static_cast<std::int64_t>(std::llround(v));
  return v;
}

// Two decimals, or three significant digits below 0.1 so that a small figure (a DLRM sample's GFLOP and joules)
// does not print as 0.00.
namespace {
std::string two_decimals_or_significant(double x) {
  return x == 0 || std::abs(x) >= 0.1 ? fmt::format("{:.2f}", x) : fmt::format("{:.3g}", x);
}
}  // namespace

std::string does_not_fit_text(const Prediction& p, Lang lang) {
  return fmt::format(fmt::runtime(msg("p.does_not_fit", lang)), format_bytes(p.memory.total),
                     format_bytes(p.memory.capacity));
}

std::string titled_device(const Prediction& p) {
  const std::int64_t gpus = static_cast<std::int64_t>(p.request.gpus) * p.request.nodes;
  return gpus > 1 ? fmt::format("{} x {}", gpus, p.device.id) : p.device.id;
}

std::string prediction_title(const Prediction& p, Lang lang) {
  const auto& r = p.request;
  return fmt::format(fmt::runtime(msg("p.title", lang)), r.model, titled_device(p), p.device.name, runtime_label(r), mode_name(r.mode),
                     r.precision, r.batch) +
         (p.sequence ? fmt::format(fmt::runtime(msg("p.title_seq", lang)), r.seq) : "") +
         (p.sequence && r.seq_mean > 0 ? fmt::format(fmt::runtime(msg("p.title_seq_mean", lang)), r.seq_mean) : "") +
         (r.context > 0 ? fmt::format(fmt::runtime(msg("p.title_context", lang)), r.context) : "");
}

namespace {

// The parallel-training lines: layout, tokens/s per GPU, MFU and its formula, the step's parts, the run.
std::string parallel_text(const ParallelTrainingCost& c, Lang lang) {
  const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  const auto& st = c.step;
  std::string s = fmt::format(m("p.parallel"), c.layout_text, c.gpus, c.tokens_per_s_per_gpu, 100.0 * c.mfu,
                              c.model_flops_per_token / 1e9, c.peak_tflops, st.compute_us / 1e3, st.recompute_us / 1e3,
                              st.bubble_us / 1e3, 100.0 * st.bubble_fraction, st.tp_comm_us / 1e3, st.pp_comm_us / 1e3,
                              st.cp_comm_us / 1e3, st.ep_comm_us / 1e3, st.dp_comm_us / 1e3, st.dp_comm_total_us / 1e3,
                              st.optimizer_us / 1e3, st.host_wait_us / 1e3, st.fp8_scaling_us / 1e3);
  if (c.train_tokens <= 0) return s;
  const std::string cost =
      c.run.usd > 0 ? fmt::format(m("p.train_cost"), format_usd(c.run.usd), c.usd_per_gpu_hour, c.price_instance) : "";
  if (lang == Lang::kZh) return s + fmt::format(m("p.train_run"), c.train_tokens, c.gpus, format_hours(c.run.hours), cost);
  return s + fmt::format(m("p.train_run"), c.train_tokens, format_hours(c.run.hours), c.gpus, cost);
}

}  // namespace

std::string prediction_text(const Prediction& p, Lang lang, int max_ops, std::optional<double> pue) {
  const auto& r = p.request;
  const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  const bool fits = p.memory.fits;
  std::string s = prediction_title(p, lang) + "\n";
  if (!p.precision_note.empty()) {
    const std::string translated = lang == Lang::kZh ? reason_text(p.precision_note_code, lang) : "";
    s += std::string(msg("p.note", lang)) + (translated.empty() ? p.precision_note : translated) + "\n";
  }
  for (const auto& n : p.notes) s += std::string(msg("p.note", lang)) + n + "\n";
  s += "\n";
  // A configuration that does not fit has no throughput to report: it would fail with out-of-memory.
  if (!fits)
    s += fmt::format(m("p.throughput_no_fit"), does_not_fit_text(p, lang));
  else
    s += fmt::format(m("p.throughput"), format_samples_per_s(p.samples_per_s),
                     p.tokens_per_s ? fmt::format(m("p.tokens"), *p.tokens_per_s) : "");
  if (const auto iv = prediction_interval(p)) {
    const double v = p.tokens_per_s ? *p.tokens_per_s : p.samples_per_s;
    // Both bounds to the same decimals, three significant digits of the upper one ("161 - 438", "27.9 - 78.0",
    // "0.172 - 0.530"), never in exponent notation beside a throughput printed in plain digits ("1.109e+04 -
    // 3.246e+04 tokens/s" under "17846 tokens/s"); each bound's own four digits read "160.6 - 438", "27.94 - 78".
    const double upper = v * iv->high;
    const int decimals =
        upper >= 100 || !(upper > 0) ? 0 : std::clamp(2 - static_cast<int>(std::floor(std::log10(upper))), 0, 6);
    const auto bound = [decimals](double x) { return fmt::format("{:.{}f}", x, decimals); };
    s += fmt::format(m("p.interval"), iv->level * 100, bound(v * iv->low), bound(v * iv->high),
                     msg(p.tokens_per_s ? "p.interval_tokens" : "p.interval_samples", lang), iv->rows, iv->regime);
    if (!iv->novel_components.empty())
      s += iv->widened ? fmt::format(m("p.thin_support"), fmt::join(iv->novel_components, ", "), 100 * (iv->width_ratio - 1))
                       : fmt::format(m("p.thin_support_same"), fmt::join(iv->novel_components, ", "));
  } else if (const std::string why = no_interval_reason(p); !why.empty()) {
    s += fmt::format(m("p.no_interval"), interval_setup().level * 100, why);
  }
  if (p.anchor) {
    const std::string_view unit = msg(p.anchor->unit == "tokens_per_s" ? "p.interval_tokens" : "p.interval_samples", lang);
    s += p.anchor->predicted > 0
             ? fmt::format(m("p.anchor"), format_samples_per_s(p.anchor->measured), unit,
                            (p.anchor->factor() - 1) * 100)
             : fmt::format(m("p.anchor_no_fit"), format_samples_per_s(p.anchor->measured), unit);
  }
  if (fits && p.cpu_instances && p.cpu_instances->instances > 1) {
    const CpuInstancesCost& c = *p.cpu_instances;
    s += fmt::format(m("p.instances"), c.instances, c.cores_per_instance, c.latency_ms, r.batch, c.instance_samples_per_s,
                     c.dram_gbps_per_instance, format_bytes(c.l3_bytes_per_instance), c.instances_per_socket);
  }
  if (fits)
    s += fmt::format(m(p.device.kind == DeviceKind::kCpu ? "p.step_cpu" : "p.step"), p.step_us / 1e3, p.step.gpu_us / 1e3, p.step.host_us / 1e3,
                     p.parallel ? fmt::format(m("p.model_launches"), std::llround(p.step.launches))
                                : fmt::format("{}", std::llround(p.step.launches)));
  if (r.mode == Mode::kTrain && r.optimizer_step && !p.parallel) {  // parallel training: one fused Adam, in its lines
    const bool fused = r.fused_optimizer.value_or(p.runtime.optimizer_fused);
    s += fmt::format(m("p.update"), msg(fused ? "p.fused" : "p.unfused", lang),
                     std::string(msg(fused ? "p.fused_how" : "p.unfused_how", lang)) +
                         (r.grad_accum > 1 ? fmt::format(m("p.accum"), r.grad_accum) : ""));
  }
  s += fmt::format(m("p.params"), static_cast<double>(p.params) / 1e6);
  s += fmt::format(m("p.work"), two_decimals_or_significant(p.flops_per_sample / 1e9));
  s += fmt::format(m("p.memory"), format_bytes(p.memory.total), format_bytes(p.memory.capacity),
                   msg(fits ? "p.fits" : "p.no_fit", lang));
  s += fmt::format(m("p.memory_parts"), format_bytes(p.memory.weights),
                   p.memory.master_weights > 0 ? fmt::format(m("p.masters"), format_bytes(p.memory.master_weights)) : "",
                   format_bytes(p.memory.gradients),
                   format_bytes(p.memory.optimizer_state), format_bytes(p.memory.activations),
                   format_bytes(p.memory.workspace), format_bytes(p.memory.runtime),
                   (p.memory.comm_buffers > 0 ? fmt::format(m("p.buckets"), format_bytes(p.memory.comm_buffers)) : "") +
                       (p.memory.embedding_tables > 0 ? fmt::format(m("p.tables"), format_bytes(p.memory.embedding_tables))
                                                      : ""));
  if (p.device.kind != DeviceKind::kCpu)  // torch.cuda's (PyTorch runtimes only) and nvidia-smi's; a CPU has neither
    s += fmt::format(m(p.runtime.framework == "pytorch" ? "p.memory_measures" : "p.memory_measures_other"), format_bytes(p.memory.allocated), format_bytes(p.memory.reserved),
                     format_bytes(p.memory.total));
  if (!fits) {
    // A parallel training layout sizes its micro-batch itself (--batch max does not apply); its memory levers differ.
    // Inference at batch 1, or with weights alone past capacity, fits at no batch: --batch max would fail too.
    // Training likewise at batch 1; with the weights alone past capacity checkpointing cannot help either.
    // Training state (weights, masters, gradients, optimizer moments) past capacity: no batch or recomputation helps.
    const bool weights_too_big = p.memory.weights >= p.memory.capacity;
    const bool state_too_big = p.memory.weights + p.memory.master_weights + p.memory.gradients +
                                   p.memory.optimizer_state >= p.memory.capacity;
    const bool no_batch_fits = p.request.batch <= 1 || weights_too_big;
    const bool train = p.request.mode == Mode::kTrain;
    s += std::string(msg(p.parallel                          ? "p.no_fit_rest_parallel"
                         : train && weights_too_big          ? "p.no_fit_rest_weights"
                         : train && state_too_big            ? "p.no_fit_rest_state"
                         : train && no_batch_fits            ? "p.no_fit_rest_train_no_batch"
                         : train                             ? "p.no_fit_rest"
                         : no_batch_fits                                     ? "p.no_fit_rest_infer_no_batch"
                                                                             : "p.no_fit_rest_infer",
                         lang)) +
         "\n";
    return s;
  }
  if (p.parallel) s += parallel_text(*p.parallel, lang);
  if (p.llm)
    s += fmt::format(m("p.serving"), p.llm->time_to_first_token_ms, p.llm->time_per_output_token_ms,
                     format_bytes(p.llm->kv_cache_bytes));
  if (p.input && p.request.data == "host")
    s += fmt::format(m("p.input_copy"), p.input->h2d_ms,
                     msg(p.request.pinned_memory.value_or(p.request.prefetch) ? "p.pinned" : "p.pageable", lang),
                     msg(p.input->serial_copy ? "p.copy_blocking"
                         : p.primary == Bound::kHostToDevice ? "p.copy_bounds"
                                                             : "p.copy_beside",
                         lang));
  else if (p.input)
    s += fmt::format(m("p.input"), p.input->host_samples_per_s, p.input->host, p.input->cores,
                     p.input->decode_ms_per_sample, p.input->limited_by, p.input->bound ? msg("p.bounds_step", lang) : "");
  if (p.scale) {
    // Every part of the exposed time that is not zero, the largest first, so that the parts add up to the total
    // (the JSON's exposed_parts_ms holds the same five).
    std::vector<std::pair<double, std::string>> parts;
    for (const auto& [ms, key] : {std::pair{p.scale->comm_wait_ms, "p.scale_collectives"},
                                  std::pair{p.scale->sync_wait_ms, "p.scale_stragglers"},
                                  std::pair{p.scale->overlap_slowdown_ms, "p.scale_overlap"},
                                  std::pair{p.scale->replica_overhead_ms, "p.scale_replicas"},
                                  std::pair{p.scale->bucket_copy_ms, "p.scale_buckets"}})
      if (ms > 0) parts.emplace_back(ms, std::string(msg(key, lang)));
    std::stable_sort(parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    std::string named;
    for (std::size_t i = 0; i < parts.size(); ++i)
      named += fmt::format(m(i == 0 ? "p.scale_first_part" : "p.scale_next_part"), parts[i].first, parts[i].second);
    if (!named.empty()) named = fmt::format(m("p.scale_parts"), named);
    s += fmt::format(
        m("p.scale"), p.scale->gpus_total, p.scale->nodes, p.scale->gpus_per_node, p.scale->strategy, p.scale->algorithm,
        p.scale->interconnect, p.scale->network.empty() ? "" : " + " + p.scale->network, 100.0 * p.scale->efficiency,
        p.scale->allreduce_ms,
        r.mode == Mode::kTrain && r.grad_accum > 1 ? fmt::format(m("p.scale_accum"), r.grad_accum) : "",
        p.scale->exposed_comm_ms, named);
  }
  if (p.power)
  {
    s += fmt::format(m("p.power"), p.power->avg_power_w, p.power->limit_w, 100.0 * p.power->clock_factor,
                     two_decimals_or_significant(p.power->energy_per_sample_j));
    const SiteEnergy e = site_energy(p, pue);
    s += fmt::format(m("p.site_energy"), two_decimals_or_significant(e.server_energy_per_sample_j), e.powered.host_w,
                     host_basis_text(e.powered, lang), two_decimals_or_significant(e.facility_energy_per_sample_j), e.pue);
  }
  const auto bound_label = [lang](Bound b) {
    return lang == Lang::kZh ? fmt::format("{}（{}）", msg("bound." + std::string(bound_name(b)), lang), bound_name(b))
                             : std::string(bound_name(b));
  };
  s += fmt::format(m("p.bottleneck"), bound_label(p.primary));
  for (int i = 0; i < static_cast<int>(Bound::kCount); ++i)
    if (p.bound_us[i] > 0)
      s += fmt::format(m("p.bound_share"), bound_label(static_cast<Bound>(i)),
                       100.0 * p.bound_us[i] / p.step_us);

  auto rows = merge_ops(p);
  // Parallel training reports its step by part (above), not per op.
  if (rows.empty()) return s;
  std::stable_sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) { return a.time_us > b.time_us; });
  s += "\n  " + std::string(msg("p.top_ops", lang)) + "\n";
  s += fmt::format("  {:<32} {:<13} {:>10} {:>10} {:>9} {:>7} {:>10} {:<15}\n", msg("p.col.op", lang),
                   msg("p.col.kind", lang), "GFLOP", "MB", msg("p.col.time", lang), msg("p.col.share", lang), "TFLOP/s",
                   msg("p.col.bound", lang));
  s += fmt::format("  {:<32} {:<13} {:>10} {:>10} {:>9} {:>7} {:>10} {:<15}\n", "", "", "", "", "ms", "%",
                   msg("p.col.achieved", lang), "");
  int shown = 0;
  for (const auto& o : rows) {
    if (shown++ >= max_ops || o.time_us <= 0) break;
    s += fmt::format("  {:<32} {:<13} {:>10.2f} {:>10.1f} {:>9.3f} {:>7.1f} {:>10.2f} {:<15}\n",
                     o.name.substr(0, 32), op_kind_name(o.kind), o.flops / 1e9, o.bytes / 1e6, o.time_us / 1e3,
                     100.0 * o.time_us / p.step_us, o.flops / (o.time_us * 1e6), bound_name(o.bound()));
  }
  s += "\n" + std::string(msg("p.legend", lang)) + "\n";
  return s;
}

}  // namespace perfcast
