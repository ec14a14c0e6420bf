// perfcast compare: one model on several GPUs side by side (`--gpu a,b:3,c`: three of b), or GPUs and CPUs (`--device`):
// throughput, time, cost and energy of a run on whole rentable instances, memory headroom and the fastest precision
// each device supports. A CPU's energy is its package at TDP; it has a cost only where the price catalog rents it.
#include <algorithm>
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/llm_parallel.h"
#include "analysis/plan.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/output_file.h"
#include "core/error.h"
#include "report/chart_page.h"
#include "report/json_vocabulary.h"
#include "report/messages.h"
#include "report/prediction_report.h"

namespace perfcast::cli {

namespace {

std::string money(std::optional<double> usd) {
  if (!usd) return "-";
  return format_usd(*usd);
}

// Decode and generate report what a user of a language model reads: tokens/s and ms per output token, the words
// predict prints for the same mode (its "tokens/s" beside the throughput and its serving line), not sequences/s.
bool token_mode(Mode m) { return m == Mode::kDecode || m == Mode::kGenerate; }

// Output tokens per sample of this prediction (the ratio predict's own tokens/s sets), 0 where it has none.
double tokens_per_sample(const Prediction& p) {
  return p.tokens_per_s && p.samples_per_s > 0 ? *p.tokens_per_s / p.samples_per_s : 0.0;
}

nlohmann::json row_json(const CompareRow& r, const RunSize& size) {
  nlohmann::json j{{"gpu", r.gpu}, {"gpus_per_node", r.gpus_per_node}, {"status", r.status}};
  if (r.prediction) j["device_kind"] = r.prediction->device.kind == DeviceKind::kCpu ? "cpu" : "gpu";
  if (r.prediction) {
    const Prediction& p = *r.prediction;
    const bool fits = p.memory.fits;
    j["precision"] = p.request.precision;
    j["batch"] = p.request.batch;
    j["fits"] = fits;
    // Not fitting: no throughput or step time (README, "Every command that reports").
    j["samples_per_s"] = fits ? nlohmann::json(p.samples_per_s) : nlohmann::json(nullptr);
    j["step_ms"] = fits ? nlohmann::json(p.step_us / 1e3) : nlohmann::json(nullptr);
    if (token_mode(p.request.mode)) {
      j["tokens_per_s"] = fits && p.tokens_per_s ? nlohmann::json(*p.tokens_per_s) : nlohmann::json(nullptr);
      put_with_alias(j, "time_per_output_token_ms", "ms_per_output_token",
                     fits && p.llm ? nlohmann::json(p.llm->time_per_output_token_ms) : nlohmann::json(nullptr));
    }
    j["gpus_total"] = p.scale ? p.scale->gpus_total : 1;
    j["scaling_efficiency"] = p.scale ? p.scale->efficiency : 1.0;
    if (r.scaling_baseline_differs) {
      // scaling_efficiency is against this run's own per-GPU step; one GPU alone places the tables in host memory.
      j["scaling_baseline"] = "one GPU keeps the embedding tables in host memory (read over PCIe); scaling_efficiency "
                              "is against a one-GPU step with this run's placement";
      j["one_gpu_samples_per_s"] = r.one_gpu_samples_per_s;
      j["speedup_over_one_gpu"] = r.one_gpu_samples_per_s > 0
                                      ? nlohmann::json(p.samples_per_s / r.one_gpu_samples_per_s)
                                      : nlohmann::json(nullptr);
    }
    j["memory_headroom_bytes"] = rounded_count_json(r.memory_headroom_bytes);
    put_with_alias(j, "avg_power_w", "avg_power_w_per_gpu",
                   p.power ? nlohmann::json(p.power->avg_power_w) : nlohmann::json(nullptr),
                   p.power ? p.power->avg_power_w : 0.0);
    j["samples_per_joule"] = fits && p.power ? nlohmann::json(p.power->samples_per_joule) : nlohmann::json(nullptr);
    if (p.device.kind == DeviceKind::kCpu) {
      // The package at TDP: not DRAM, fans or the rest of the server.
      const double w = cpu_package_power_w(p);
      j["package_power_w"] = w;
      j["package_power_basis"] = "CPU package TDP (all sockets); not DRAM or the rest of the server";
      j["package_power_source"] = cpu_package_power_source(p);
      j["samples_per_joule"] = fits && w > 0 ? nlohmann::json(p.samples_per_s / w) : nlohmann::json(nullptr);
      if (!r.rental) j["cost_note"] = "the price catalog has no instance with this CPU";
    }
  }
  if (r.run) {
    j["run"] = {{"samples", r.run->samples},
                {"epochs", size.epochs},
                {"hours", r.run->hours},
                {"hours_per_epoch", r.run->hours / size.epochs},
                {"energy_kwh", r.run->energy_kwh},
                {"energy_kwh_per_epoch", r.run->energy_kwh / size.epochs},
                {"host_rule", host_rule_name(r.run->powered.rule)},
                {"host_server", r.run->powered.server.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.run->powered.server)},
                {"gpus_powered", r.run->powered.gpus_powered},
                {"host_power_w", r.run->powered.host_w},
                {"idle_gpu_power_w", r.run->powered.idle_gpu_w},
                {"server_energy_kwh", r.run->server_energy_kwh},
                {"pue", r.run->pue},
                {"facility_energy_kwh", r.run->facility_energy_kwh},
                {"billed_hours", r.rental ? nlohmann::json(r.run->billed_hours) : nlohmann::json(nullptr)},
                {"usd_on_demand", r.rental ? nlohmann::json(r.run->usd) : nlohmann::json(nullptr)},
                {"usd_spot", r.run->spot_usd ? nlohmann::json(*r.run->spot_usd) : nlohmann::json(nullptr)},
                {"instances", r.rental ? r.rental->instances : 0},
                {"gpus_paid", r.rental ? r.rental->gpus_paid : 0}};
    put_with_alias(j["run"], "instance", "priced_on",
                   r.rental ? nlohmann::json(r.rental->instance->id) : nlohmann::json(nullptr),
                   r.rental ? r.rental->instance->id : std::string());
  }
  j["best_precision"] = r.best_precision.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.best_precision);
  j["best_samples_per_s"] = r.best_precision.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.best_samples_per_s);
  if (r.prediction && token_mode(r.prediction->request.mode))
    j["best_tokens_per_s"] = r.best_precision.empty() || tokens_per_sample(*r.prediction) <= 0
                                 ? nlohmann::json(nullptr)
                                 : nlohmann::json(r.best_samples_per_s * tokens_per_sample(*r.prediction));
  return j;
}

std::string compare_text(const PredictRequest& base, const std::vector<CompareRow>& rows, const RunSize& size,
                         const PriceCatalog& catalog, Lang lang) {
  const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  std::string o;
  // Without a row that ran, the run size is unknown for that reason, not for want of --dataset-size.
  const bool any_predicted = std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) { return r.prediction; });
  std::string run_desc(msg(any_predicted ? "cmp.no_run" : "cmp.no_row", lang));
  for (const auto& r : rows)
    if (r.run) {
      run_desc = fmt::format(m("cmp.run"), size.epochs, lang == Lang::kEn && size.epochs != 1 ? "s" : "", r.run->samples,
                             std::llround(r.run->samples) == 1 ? "" : "s");
      break;
    }
  o += fmt::format(m("cmp.title"), base.model, base.runtime, mode_name(base.mode), base.precision,
                   base.batch == 0 ? std::string(msg("cmp.max", lang)) : std::to_string(base.batch), run_desc);
  // The device column is as wide as its longest id (two-socket CPU ids run past 18 characters).
  std::size_t id_width = 18;
  for (const auto& r : rows) id_width = std::max(id_width, r.gpu.size());
  const bool tokens = token_mode(base.mode);
  o += fmt::format("{:<{}} {:>5} {:>9} {:>6} {:>11} {:>9} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>9} {:>11}  {}\n",
                   msg("cmp.col.gpu", lang), id_width, msg("cmp.col.count", lang), msg("cmp.col.precision", lang),
                   msg("cmp.col.batch", lang),
                   msg(tokens ? "cmp.col.tokens" : "cmp.col.samples", lang),
                   msg(tokens ? "cmp.col.ms_per_token" : "cmp.col.step", lang), msg("cmp.col.scaling", lang),
                   msg("cmp.col.time", lang), msg("cmp.col.cost", lang), msg("cmp.col.energy", lang),
                   msg("cmp.col.server_energy", lang), msg("cmp.col.facility_energy", lang), msg("cmp.col.power", lang),
                   msg("cmp.col.mem_free", lang), msg("cmp.col.best", lang));
  for (const auto& r : rows) {
    if (!r.prediction) {
      o += fmt::format("{:<{}} {:>5} {}\n", r.gpu, id_width, r.gpus_per_node, r.status);
      continue;
    }
    const Prediction& p = *r.prediction;
    const double gpus_total = p.scale ? p.scale->gpus_total : 1;
    const double per_sample = tokens ? tokens_per_sample(p) : 0.0;
    const std::string best =
        r.best_precision.empty() ? "-"
        : per_sample > 0
            ? fmt::format("{} ({} {})", r.best_precision, format_rate(r.best_samples_per_s * per_sample),
                          msg("cmp.tokens_unit", lang))
            : fmt::format("{} ({}/s)", r.best_precision, format_rate(r.best_samples_per_s));
    if (!p.memory.fits) {
      o += fmt::format("{:<{}} {:>5} {:>9} {:>6} {}; {}: {}\n", r.gpu, id_width, r.gpus_per_node, p.request.precision,
                       p.request.batch, does_not_fit_text(p, lang), msg("cmp.col.best", lang), best);
      continue;
    }
    // Server and facility energy are a GPU's (a CPU's energy is its package alone: cmp.cpu_energy says so).
    const bool site = r.run && r.run->power_w > 0 && p.device.kind == DeviceKind::kGpu;
    o += fmt::format("{:<{}} {:>5} {:>9} {:>6} {:>11.1f} {:>9.1f} {:>9} {:>11} {:>10} {:>10} {:>10} {:>10} {:>9} {:>11}  {}\n",
                     r.gpu, id_width, r.gpus_per_node, p.request.precision, p.request.batch,
                     per_sample > 0 ? *p.tokens_per_s : p.samples_per_s,
                     per_sample > 0 && p.llm ? p.llm->time_per_output_token_ms : p.step_us / 1e3,
                     r.scaling_baseline_differs ? std::string(msg("cmp.scaling_na", lang))
                     : p.scale                  ? fmt::format("{:.0f}%", 100 * p.scale->efficiency)
                                                : std::string("-"),
                     r.run ? format_hours(r.run->hours) : std::string("-"),
                     r.run && r.rental ? money(r.run->usd) : std::string("-"),
                     r.run && r.run->power_w > 0 ? fmt::format("{:.2f} kWh", r.run->energy_kwh) : std::string("-"),
                     site ? fmt::format("{:.2f} kWh", r.run->server_energy_kwh) : std::string("-"),
                     site ? fmt::format("{:.2f} kWh", r.run->facility_energy_kwh) : std::string("-"),
                     p.power                       ? fmt::format("{:.0f} W", p.power->avg_power_w * gpus_total)
                     : cpu_package_power_w(p) > 0 ? fmt::format("{:.0f} W", cpu_package_power_w(p))
                                                   : std::string("-"),
                     format_bytes(r.memory_headroom_bytes), best);
  }
  o += "\n";
  for (const auto& r : rows)
    if (r.rental && r.run)
      o += fmt::format(m("cmp.priced"), r.gpu, r.rental->instances, r.rental->instance->id, r.rental->instance->gpus,
                       r.rental->instance->gpus == 1 ? "" : "s", money(r.rental->usd_per_hour), r.rental->gpus_paid,
                       r.rental->gpus_paid == 1 ? "" : "s");
  // Which hardware each GPU row's server energy counts: the instances rented, powered whole, or with none the GPUs'
  // share of their server (powered_hardware, the rule predict and plan use too).
  for (const auto& r : rows)
    if (r.run && r.prediction && r.prediction->device.kind == DeviceKind::kGpu && r.prediction->memory.fits)
      o += fmt::format(m("cmp.host"), r.gpu, host_basis_text(r.run->powered, lang), r.run->powered.host_w, r.run->pue);
  // A scaling column of n/a: one GPU runs another table placement, so say what that one GPU does and the speedup.
  for (const auto& r : rows)
    if (r.scaling_baseline_differs && r.prediction && r.one_gpu_samples_per_s > 0)
      o += fmt::format(m("cmp.scaling_baseline"), r.gpu, r.prediction->scale ? r.prediction->scale->gpus_total : 1,
                       r.prediction->samples_per_s / r.one_gpu_samples_per_s, r.one_gpu_samples_per_s,
                       100 * (r.prediction->scale ? r.prediction->scale->efficiency : 1.0));
  // A CPU row's energy is its package at TDP (the file's figure, not a measurement of the load), and the price catalog
  // rents GPU instances only: say both beside the row rather than leave the columns unexplained.
  for (const auto& r : rows) {
    if (!r.prediction || r.prediction->device.kind != DeviceKind::kCpu) continue;
    const CpuSpec* cpu = r.prediction->device.cpu ? &*r.prediction->device.cpu : nullptr;
    const int sockets = cpu ? cpu->sockets : 1;
    const double w = cpu_package_power_w(*r.prediction);
    o += fmt::format(m("cmp.cpu_energy"), r.gpu, w, sockets, sockets != 1 ? "s" : "", w / sockets);
    if (!r.rental) o += fmt::format(m("cmp.cpu_no_price"), r.gpu, catalog.file);
  }
  const auto speedups = gpu_over_cpu(rows);
  if (!speedups.empty()) o += "\n";
  for (const auto& x : speedups)
    o += fmt::format(m("cmp.gpu_over_cpu"), x.gpu, x.cpu, x.speedup, x.gpu_samples_per_s, x.cpu_samples_per_s, x.claim,
                     x.claim_off_by > 1 ? fmt::format(m("cmp.claim_high"), x.claim_off_by)
                                        : std::string(msg("cmp.claim_holds", lang)));
  o += fmt::format(m("cmp.legend"), catalog.file);
  return o;
}

}  // namespace

Command compare_command() {
  return {"compare", "compare GPUs side by side for one model (throughput, time, cost, energy, memory)", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              ReportFlags report;
              std::string gpus = "gtx-1080-ti,v100-sxm2-16gb,a100-sxm4-40gb,h100-sxm5-80gb";
              std::string devices;  // --device: GPUs and CPUs
              std::string dataset_size, epochs = "1", prices, pue;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags, fleet_defaults(), false);
            // compare refuses the training-layout flags (below); ZeRO stages are not listed in its help.
            app.get_option("--zero")->group("");
            app.add_option("--gpu", s->gpus,
                           "comma-separated GPU ids to compare, each optionally with a count per node: "
                           "gtx-1080-ti:3,a100-sxm4-40gb")
                ->capture_default_str();
            auto* gpu_option = app.get_option("--gpu");
            app.add_option("--device", s->devices,
                           "comma-separated GPU and CPU ids (perfcast gpus, perfcast cpus) in place of --gpu: "
                           "gtx-1080-ti,xeon-e5-2690-v4-2s; with both kinds it prints each GPU's speedup over each CPU");
            app.add_option("--dataset-size", s->dataset_size, "samples per epoch (default: the model's dataset)");
            app.add_option("--epochs", s->epochs, "epochs in the run")->capture_default_str();
            app.add_option("--prices", s->prices, "price catalog TOML (default: data/cloud/prices.toml)");
            app.add_option("--pue", s->pue,
                           "power usage effectiveness for the facility energy, from 1 (no overhead) (default: the rented instance's "
                           "provider's, data/cloud/providers.toml)");
            add_report_flags(app, s->report);
            return std::function<int()>([s, gpu_option] {
              const Lang lang = parse_lang(s->report.lang);
              if (!s->report.html.empty()) check_output_path(s->report.html);
              if (!s->devices.empty() && gpu_option->count() > 0)
                throw InputError("--gpu and --device name the same thing: give one");
              const PredictRequest base = s->flags.to_request();
              const auto entries = parse_gpu_counts(s->devices.empty() ? s->gpus : s->devices,
                                                    s->devices.empty() ? "--gpu" : "--device", base.gpus);
              if (s->devices.empty())
                for (const auto& e : entries)
                  if (is_cpu_device(e.gpu))
                    throw InputError("'" + e.gpu + "' is a CPU (perfcast cpus): compare CPUs with --device");
              if (base.instances > 1 &&
                  std::none_of(entries.begin(), entries.end(), [](const GpuCount& e) { return is_cpu_device(e.gpu); }))
                throw InputError("--instances splits a CPU into processes: compare has no CPU in --device (perfcast cpus)");
              if (base.cores > 0 &&
                  std::none_of(entries.begin(), entries.end(), [](const GpuCount& e) { return is_cpu_device(e.gpu); }))
                throw InputError("--cores sets a CPU process's cores: compare has no CPU in --device (perfcast cpus)");
              if (wants_parallel_training(base))
                throw InputError("the training-layout flags (--tp --pp --zero ...) apply to predict and plan --layouts, not compare");
              RunSize size;
              if (!s->dataset_size.empty()) size.dataset_samples = number_flag(s->dataset_size, "--dataset-size");
              size.epochs = number_flag(s->epochs, "--epochs");
              const PriceCatalog catalog = s->prices.empty() ? default_price_catalog() : load_price_catalog(s->prices);
              const DataParallelOptions dp = data_parallel_options(base);
              std::optional<double> pue;
              if (!s->pue.empty()) pue = pue_flag(s->pue);
              const auto rows = compare(base, entries, size, catalog, dp, pue);
              const std::string text = compare_text(base, rows, size, catalog, lang);
              nlohmann::json out = nlohmann::json::array();
              const auto speedups = gpu_over_cpu(rows);
              for (const auto& r : rows) {
                nlohmann::json j = row_json(r, size);
                for (const auto& x : speedups)
                  if (x.cpu == r.gpu)
                    j["gpu_speedup_over_this_cpu"][x.gpu] = {{"speedup", x.speedup}, {"claim", x.claim},
                                                             {"claim_off_by", x.claim_off_by}};
                out.push_back(j);
              }
              if (!s->report.html.empty())
                write_output_file(s->report.html, render_chart_page(ChartPage::kCompare, out, lang,
                                                                    text.substr(0, text.find('\n')), preformatted_html(text)));
              if (s->report.json) {
                report_out() << out.dump(2) << "\n";
              } else {
                report_out() << text;
              }
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
