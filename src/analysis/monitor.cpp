#include "analysis/monitor.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cctype>
#include <cmath>
#include <set>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "device/catalog.h"

namespace perfcast {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct CompareThresholds {
  double busy_gap_points = 0;
  double power_gap_fraction = 0;
  double clock_gap_fraction = 0;
  double memory_gap_fraction = 0;
  double throttle_share = 0;
};

const CompareThresholds& thresholds() {
  static const CompareThresholds t = [] {
    const auto path = data_dir() / "monitor.toml";
    const toml::table doc = parse_toml_file(path);
    const TomlFields f(TomlFields(doc, path.string()).table("compare"), path.string() + " [compare]");
    CompareThresholds c;
    c.busy_gap_points = f.number("busy_gap_points");
    c.power_gap_fraction = f.number("power_gap_fraction");
    c.clock_gap_fraction = f.number("clock_gap_fraction");
    c.memory_gap_fraction = f.number("memory_gap_fraction");
    c.throttle_share = f.number("throttle_share");
    if (!(c.busy_gap_points > 0 && c.busy_gap_points < 100)) f.fail("busy_gap_points", "must be in (0, 100)");
    for (auto [v, key] : {std::pair{c.power_gap_fraction, "power_gap_fraction"}, {c.clock_gap_fraction, "clock_gap_fraction"},
                          {c.memory_gap_fraction, "memory_gap_fraction"}, {c.throttle_share, "throttle_share"}})
      if (!(v > 0 && v < 1)) f.fail(key, "must be in (0, 1)");
    return c;
  }();
  return t;
}

// Lower-case words of a device name or id that carry a digit ("a100", "1080", "h200", "40gb"): what tells boards apart.
std::set<std::string> model_tokens(const std::string& text) {
  std::set<std::string> out;
  std::string word;
  auto flush = [&] {
    if (std::any_of(word.begin(), word.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      out.insert(word);
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else flush();
  }
  flush();
  return out;
}

bool same_device(const std::string& sampled_name, const MonitorExpectation& e) {
  const auto sampled = model_tokens(sampled_name);
  if (sampled.empty()) return true;  // nothing to tell them apart by
  auto expected = model_tokens(e.gpu_name);
  expected.merge(model_tokens(e.gpu_id));
  // The chip's model number ("a100", "h200", "1080") is the first word with a digit that the sampled name holds.
  for (const auto& t : sampled)
    if (expected.count(t)) return true;
  return false;
}

std::string top_slowing_reason(const GpuActivity& a) {
  static const std::set<std::string> kSlowing{"power cap", "hardware slowdown", "thermal slowdown (software)",
                                             "thermal slowdown (hardware)", "power brake (hardware)"};
  std::string best;
  int most = 0;
  for (const auto& [words, n] : a.reasons)
    if (kSlowing.count(words) && n > most) {
      best = words;
      most = n;
    }
  return best;
}

}  // namespace

void MeasureStats::add(double v) {
  if (!std::isfinite(v)) return;
  min = count ? std::min(min, v) : v;
  max = count ? std::max(max, v) : v;
  sum += v;
  ++count;
}

void MeasureStats::merge(const MeasureStats& o) {
  if (o.count == 0) return;
  min = count ? std::min(min, o.min) : o.min;
  max = count ? std::max(max, o.max) : o.max;
  sum += o.sum;
  count += o.count;
}

void MonitorAccumulator::add_to(GpuActivity& a, const GpuSample& s) {
  ++a.samples;
  a.util_gpu_pct.add(s.util_gpu_pct);
  a.util_mem_pct.add(s.util_mem_pct);
  a.mem_used_bytes.add(s.mem_used_bytes);
  a.power_w.add(s.power_w);
  a.sm_clock_mhz.add(s.sm_clock_mhz);
  a.mem_clock_mhz.add(s.mem_clock_mhz);
  a.pcie_tx.add(s.pcie_tx_bytes_per_s);
  a.pcie_rx.add(s.pcie_rx_bytes_per_s);
  a.temperature_c.add(s.temperature_c);
  for (const auto& w : throttle_reason_words(s.throttle_mask)) ++a.reasons[w];
  const bool busy = s.util_gpu_pct > 0;
  if (busy) ++a.busy_samples;
  if (busy && throttle_slows_clocks(s.throttle_mask)) ++a.slowed_samples;
}

void MonitorAccumulator::merge_into(GpuActivity& into, const GpuActivity& from) {
  into.samples += from.samples;
  into.util_gpu_pct.merge(from.util_gpu_pct);
  into.util_mem_pct.merge(from.util_mem_pct);
  into.mem_used_bytes.merge(from.mem_used_bytes);
  into.power_w.merge(from.power_w);
  into.sm_clock_mhz.merge(from.sm_clock_mhz);
  into.mem_clock_mhz.merge(from.mem_clock_mhz);
  into.pcie_tx.merge(from.pcie_tx);
  into.pcie_rx.merge(from.pcie_rx);
  into.temperature_c.merge(from.temperature_c);
  for (const auto& [w, n] : from.reasons) into.reasons[w] += n;
  into.busy_samples += from.busy_samples;
  into.slowed_samples += from.slowed_samples;
}

void MonitorAccumulator::add(const std::vector<GpuSample>& round) {
  if (round.empty()) return;
  if (session_.rounds == 0) first_time_ = round.front().time_s;
  ++session_.rounds;
  session_.seconds = round.front().time_s - first_time_;
  for (const auto& s : round) {
    if (s.gpu < 0) continue;
    if (static_cast<std::size_t>(s.gpu) >= gpus_.size()) gpus_.resize(static_cast<std::size_t>(s.gpu) + 1);
    PerGpu& g = gpus_[static_cast<std::size_t>(s.gpu)];
    g.span.gpu = s.gpu;
    if (!s.name.empty()) g.span.name = s.name;
    if (std::isfinite(s.mem_total_bytes)) g.span.mem_total_bytes = s.mem_total_bytes;
    if (std::isfinite(s.power_limit_w)) g.span.power_limit_w = s.power_limit_w;
    if (std::isfinite(s.sm_clock_max_mhz)) g.span.sm_clock_max_mhz = s.sm_clock_max_mhz;
    const bool busy = s.util_gpu_pct > 0;
    if (!busy) {
      // Idle: before the job it is left out; after a busy sample it waits in `pending` until the job shows
      // it is still running (it then joins the span) or the session ends (it stays out).
      if (g.started) add_to(g.pending, s);
      else ++g.span.idle_edge_samples;
      continue;
    }
    g.started = true;
    merge_into(g.span, g.pending);
    g.pending = GpuActivity{};
    add_to(g.span, s);
  }
}

MonitorSession MonitorAccumulator::session() const {
  MonitorSession out = session_;
  for (const auto& g : gpus_) {
    GpuActivity a = g.span;
    a.idle_edge_samples += g.pending.samples;
    if (!g.started) {
      // No kernel ran: the whole session is its span, so that its idle readings still show.
      merge_into(a, g.pending);
    }
    out.gpus.push_back(std::move(a));
  }
  return out;
}

MonitorSession run_monitor(GpuSampler& sampler, const MonitorOptions& options, const std::atomic<bool>& stop,
                           const std::function<void(const std::vector<GpuSample>&)>& on_round) {
  if (!(options.interval_s > 0)) throw InputError("the interval must be positive");
  MonitorAccumulator acc(sampler.source());
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  double first_time = -1;
  for (long round_no = 0; !stop.load(); ++round_no) {
    if (options.count > 0 && round_no >= options.count) break;
    const double now_s = std::chrono::duration<double>(clock::now() - start).count();
    std::vector<GpuSample> round = sampler.next_round(now_s);
    if (round.empty()) break;
    if (first_time < 0) first_time = round.front().time_s;
    if (options.duration_s > 0 && round.front().time_s - first_time > options.duration_s) break;
    acc.add(round);
    if (on_round) on_round(round);
    if (!sampler.live()) continue;
    if (options.count > 0 && round_no + 1 >= options.count) break;
    if (options.duration_s > 0 && now_s + options.interval_s - first_time > options.duration_s + 1e-9) break;
    // Sleep to the next tick; a signal (Ctrl-C) cuts the sleep short and `stop` ends the loop.
    const auto next = start + std::chrono::duration_cast<clock::duration>(
                                  std::chrono::duration<double>(options.interval_s * static_cast<double>(round_no + 1)));
    while (!stop.load()) {
      const auto left = next - clock::now();
      if (left <= clock::duration::zero()) break;
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      if (::nanosleep(&ts, nullptr) != 0 && errno != EINTR) break;
    }
  }
  return acc.session();
}

MonitorExpectation expectation_from(const Prediction& p) {
  // NVML samples GPUs: a CPU prediction has no busy share, board power or SM clock to set beside them (a saved
  // CPU prediction is refused by find_gpu in expectation_from_json with the same words).
  if (p.device.kind == DeviceKind::kCpu)
    throw InputError("'" + p.device.id +
                     "' is a CPU (perfcast cpus): monitor samples GPUs, so --compare needs a GPU id (--gpu)");
  if (!p.memory.fits)
    throw InputError(fmt::format("the prediction does not fit {} ({:.1f} GiB of {:.1f}): the job would fail with "
                                 "out-of-memory, so there is nothing to compare",
                                 p.device.id, p.memory.total / kGiB, p.memory.capacity / kGiB));
  MonitorExpectation e;
  e.gpu_id = p.device.id;
  e.gpu_name = p.device.name;
  e.job = fmt::format("{} {} {} batch {} ({})", p.model_id, mode_name(p.request.mode), p.request.precision, p.request.batch,
                      p.request.runtime);
  const double step = p.step_us;
  e.busy_pct = p.power ? 100 * p.power->busy_share : 100 * std::min(p.step.gpu_us, step) / step;
  e.power_w = p.power ? p.power->avg_power_w : 0;
  e.sm_clock_mhz = p.device.boost_clock_mhz * (p.power ? p.power->clock_factor : 1.0);
  e.memory_bytes = p.memory.total;
  e.capacity_bytes = p.memory.capacity;
  e.fits = p.memory.fits;
  e.primary_bound = std::string(bound_name(p.primary));
  e.input_share = step > 0 ? (p.bound_us[static_cast<int>(Bound::kInputPipeline)] +
                              p.bound_us[static_cast<int>(Bound::kHostToDevice)]) / step
                           : 0;
  e.gpus = p.request.gpus;
  return e;
}

MonitorExpectation expectation_from_json(const nlohmann::json& j, const std::string& where) {
  const auto fail = [&](const std::string& why) -> void {
    throw InputError("'" + where + "' is not a saved `perfcast predict --json` prediction: " + why);
  };
  if (!j.is_object()) fail("not a JSON object");
  const auto number = [&](const nlohmann::json& o, const char* key) {
    if (!o.is_object() || !o.contains(key) || !o[key].is_number()) fail(std::string("no number '") + key + "'");
    const double v = o[key].get<double>();
    if (!std::isfinite(v) || v < 0) fail(std::string("'") + key + "' is not a finite non-negative number");
    return v;
  };
  const auto text = [&](const nlohmann::json& o, const char* key) {
    if (!o.contains(key) || !o[key].is_string()) fail(std::string("no text '") + key + "'");
    return o[key].get<std::string>();
  };
  if (!j.contains("fits") || !j["fits"].is_boolean()) fail("no 'fits'");
  if (!j.contains("memory") || !j["memory"].is_object()) fail("no 'memory'");
  MonitorExpectation e;
  e.gpu_id = text(j, "gpu");
  const DeviceSpec d = find_gpu(e.gpu_id);
  e.gpu_name = d.name;
  e.memory_bytes = number(j["memory"], "total_bytes");
  e.capacity_bytes = number(j["memory"], "capacity_bytes");
  e.fits = j["fits"].get<bool>();
  if (!e.fits)
    throw InputError(fmt::format("the saved prediction '{}' does not fit {} ({:.1f} GiB of {:.1f}): the job would "
                                 "fail with out-of-memory, so there is nothing to compare",
                                 where, e.gpu_id, e.memory_bytes / kGiB, e.capacity_bytes / kGiB));
  const double step = number(j, "step_ms");
  if (step <= 0) fail("'step_ms' is zero");
  e.busy_pct = 100 * std::min(number(j, "gpu_busy_ms"), step) / step;
  double clock_factor = 1;
  if (j.contains("power") && j["power"].is_object()) {
    e.power_w = number(j["power"], "avg_power_w");
    clock_factor = number(j["power"], "clock_factor");
  }
  e.sm_clock_mhz = d.boost_clock_mhz * clock_factor;
  e.job = fmt::format("{} {} {} batch {} ({})", j.value("model", std::string("?")), j.value("mode", std::string("?")),
                      j.value("precision", std::string("?")), j.contains("batch") ? j["batch"].dump() : "?",
                      j.value("runtime", std::string("?")));
  if (j.contains("bottleneck") && j["bottleneck"].is_object()) {
    const auto& b = j["bottleneck"];
    if (b.contains("primary") && b["primary"].is_string()) e.primary_bound = b["primary"].get<std::string>();
    if (b.contains("share_of_step") && b["share_of_step"].is_object())
      for (const char* k : {"input_pipeline", "host_to_device"})
        if (b["share_of_step"].contains(k) && b["share_of_step"][k].is_number())
          e.input_share += b["share_of_step"][k].get<double>();
  }
  if (j.contains("scale_out") && j["scale_out"].is_object() && j["scale_out"].contains("gpus_total") &&
      j["scale_out"]["gpus_total"].is_number_integer())
    e.gpus = std::max(1, j["scale_out"]["gpus_total"].get<int>());
  return e;
}

std::vector<MonitorFinding> compare_with_prediction(const MonitorSession& session, const MonitorExpectation& e) {
  const CompareThresholds& t = thresholds();
  std::vector<MonitorFinding> out;
  int ran = 0;
  for (const auto& a : session.gpus) {
    if (!a.ran_job()) {
      out.push_back({a.gpu, "idle", 0, 0, "", true,
                     fmt::format("GPU {} ({}) ran no kernel during the session: not compared", a.gpu, a.name)});
      continue;
    }
    ++ran;
    if (!same_device(a.name, e))
      out.push_back({a.gpu, "device", 0, 0, "", false,
                     fmt::format("GPU {} is {}, but the prediction is for {} ({}): predict for this GPU's catalog id",
                                 a.gpu, a.name, e.gpu_id, e.gpu_name)});
    // Busy share.
    const double busy = a.util_gpu_pct.mean();
    if (std::isfinite(busy)) {
      MonitorFinding f{a.gpu, "gpu_busy", busy, e.busy_pct, "%", true, ""};
      const std::string head = fmt::format("GPU {} busy {:.0f}% where {:.0f}% was predicted", a.gpu, busy, e.busy_pct);
      if (busy < e.busy_pct - t.busy_gap_points) {
        f.as_predicted = false;
        f.text = head + ": the GPU waits for work, so the input pipeline or the host (data loading, Python, "
                        "synchronisations) is the bottleneck";
        if (e.gpus > 1) f.text += ", or the GPUs wait on each other's gradients";
        const double rx = a.pcie_rx.mean();
        if (std::isfinite(rx)) f.text += fmt::format(" (host-to-GPU traffic averaged {:.2f} GB/s)", rx / 1e9);
      } else if (busy > e.busy_pct + t.busy_gap_points) {
        f.as_predicted = false;
        f.text = head + fmt::format(": the predicted step waits on {} for {:.0f}% of its time, the job does not (it "
                                    "keeps the GPU fed better than predicted), or another process shares the GPU",
                                    e.primary_bound.empty() ? "the host" : e.primary_bound, 100 - e.busy_pct);
      } else {
        f.text = head + ": as predicted";
      }
      out.push_back(std::move(f));
    }
    // Power.
    const double power = a.power_w.mean();
    if (std::isfinite(power) && e.power_w > 0) {
      MonitorFinding f{a.gpu, "power", power, e.power_w, "W", true, ""};
      const std::string head = fmt::format("board power {:.0f} W where {:.0f} W was predicted", power, e.power_w);
      if (power < e.power_w * (1 - t.power_gap_fraction)) {
        f.as_predicted = false;
        f.text = head + ": the chip does less work per second than predicted (idle gaps, or kernels bound by memory "
                        "rather than math)";
      } else if (power > e.power_w * (1 + t.power_gap_fraction)) {
        f.as_predicted = false;
        f.text = head + ": its kernels keep more of the chip busy than the power model gives them";
      } else {
        f.text = head + ": as predicted";
      }
      out.push_back(std::move(f));
    }
    // Clocks.
    const double clock = a.sm_clock_mhz.mean();
    if (std::isfinite(clock) && e.sm_clock_mhz > 0) {
      MonitorFinding f{a.gpu, "sm_clock", clock, e.sm_clock_mhz, "MHz", true, ""};
      const std::string head = fmt::format("SM clock {:.0f} MHz where {:.0f} MHz was predicted", clock, e.sm_clock_mhz);
      const double slowed = a.busy_samples ? static_cast<double>(a.slowed_samples) / a.busy_samples : 0;
      if (clock < e.sm_clock_mhz * (1 - t.clock_gap_fraction)) {
        f.as_predicted = false;
        const std::string reason = top_slowing_reason(a);
        f.text = head + (slowed >= t.throttle_share && !reason.empty()
                             ? fmt::format(": held down by {} in {:.0f}% of the busy samples", reason, 100 * slowed)
                             : ": no clock-lowering reason was reported, so application or locked clocks "
                               "(nvidia-smi -lgc/-ac) or a lower boost table");
      } else if (clock > e.sm_clock_mhz * (1 + t.clock_gap_fraction)) {
        f.as_predicted = false;
        f.text = head + ": the board sustains more boost than the power model gives it, so its kernels run faster "
                        "than predicted";
      } else {
        f.text = head + ": as predicted";
        if (slowed >= t.throttle_share)
          f.text += fmt::format(" ({} in {:.0f}% of the busy samples)", top_slowing_reason(a), 100 * slowed);
      }
      out.push_back(std::move(f));
    }
    // Memory.
    const double used = a.mem_used_bytes.count ? a.mem_used_bytes.max : kNotReported;
    if (std::isfinite(used) && e.memory_bytes > 0) {
      MonitorFinding f{a.gpu, "memory", used / kGiB, e.memory_bytes / kGiB, "GiB", true, ""};
      const std::string head =
          fmt::format("memory used up to {:.1f} GiB where {:.1f} GiB was predicted", used / kGiB, e.memory_bytes / kGiB);
      if (used > e.memory_bytes * (1 + t.memory_gap_fraction)) {
        f.as_predicted = false;
        f.text = head + ": the caching allocator keeps freed blocks, another process shares the GPU, or the job's "
                        "batch or model is larger than the prediction's";
      } else if (used < e.memory_bytes * (1 - t.memory_gap_fraction)) {
        f.as_predicted = false;
        f.text = head + ": a smaller batch or model than the prediction's, activation checkpointing, or an "
                        "estimate that counts buffers the framework reuses";
      } else {
        f.text = head + ": as predicted";
      }
      out.push_back(std::move(f));
    }
  }
  if (ran < e.gpus)
    out.push_back({-1, "gpus", static_cast<double>(ran), static_cast<double>(e.gpus), "", false,
                   fmt::format("{} GPU{} ran the job where the prediction is for {}", ran, ran == 1 ? "" : "s", e.gpus)});
  return out;
}

}  // namespace perfcast
