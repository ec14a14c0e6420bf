// perfcast compare: one model on several GPUs side by side: throughput, time, cost and energy of a run,
// memory headroom and the fastest precision each GPU supports.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/plan.h"
#include "cli/command.h"
#include "core/error.h"
#include "report/prediction_report.h"

namespace perfcast::cli {

namespace {

double positive_number(const std::string& text, const char* flag) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !(v > 0))
    throw InputError(fmt::format("{} must be a positive number, got '{}'", flag, text));
  return v;
}

std::vector<std::string> split_ids(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
  }
  return out;
}

std::string money(std::optional<double> usd) {
  if (!usd) return "-";
  if (*usd >= 1000) return fmt::format("${:.0f}", *usd);
  return fmt::format("${:.2f}", *usd);
}

}  // namespace

Command compare_command() {
  return {"compare", "compare GPUs side by side for one model (throughput, time, cost, energy, memory)", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              std::string gpus = "gtx-1080-ti,v100-sxm2-16gb,a100-sxm4-40gb,h100-sxm5-80gb";
              std::string dataset_size, epochs = "1", prices;
              bool json = false;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags, false);
            app.add_option("--gpu", s->gpus, "comma-separated GPU ids to compare")->capture_default_str();
            app.add_option("--dataset-size", s->dataset_size, "samples per epoch (default: the model's dataset)");
            app.add_option("--epochs", s->epochs, "epochs in the run")->capture_default_str();
            app.add_option("--prices", s->prices, "price catalog TOML (default: data/cloud/prices.toml)");
            app.add_flag("--json", s->json, "machine-readable output");
            return std::function<int()>([s] {
              // Without --batch, each GPU trains at the largest batch that fits it.
              if (s->flags.batch.empty()) s->flags.batch = "max";
              const PredictRequest base = s->flags.to_request();
              RunSize size;
              if (!s->dataset_size.empty()) size.dataset_samples = positive_number(s->dataset_size, "--dataset-size");
              size.epochs = positive_number(s->epochs, "--epochs");
              const PriceCatalog catalog = s->prices.empty() ? default_price_catalog() : load_price_catalog(s->prices);
              const DataParallelOptions dp = data_parallel_options(base);
              const auto rows = compare(base, split_ids(s->gpus), size, catalog, dp);

              if (s->json) {
                nlohmann::json out = nlohmann::json::array();
                for (const auto& r : rows) {
                  nlohmann::json j{{"gpu", r.gpu}, {"status", r.status}};
                  if (r.prediction) {
                    const Prediction& p = *r.prediction;
                    j["precision"] = p.request.precision;
                    j["samples_per_s"] = p.samples_per_s;
                    j["step_ms"] = p.step_us / 1e3;
                    j["gpus_total"] = p.scale ? p.scale->gpus_total : 1;
                    j["scaling_efficiency"] = p.scale ? p.scale->efficiency : 1.0;
                    j["memory_headroom_bytes"] = r.memory_headroom_bytes;
                    j["fits"] = p.memory.fits;
                    j["avg_power_w_per_gpu"] = p.power ? p.power->avg_power_w : 0.0;
                    j["samples_per_joule"] = p.power ? p.power->samples_per_joule : 0.0;
                  }
                  if (r.run) {
                    j["run"] = {{"samples", r.run->samples},
                                {"epochs", size.epochs},
                                {"hours", r.run->hours},
                                {"hours_per_epoch", r.run->hours / size.epochs},
                                {"energy_kwh", r.run->energy_kwh},
                                {"energy_kwh_per_epoch", r.run->energy_kwh / size.epochs},
                                {"usd_on_demand", r.priced_on.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.run->usd)},
                                {"usd_spot", r.run->spot_usd ? nlohmann::json(*r.run->spot_usd) : nlohmann::json(nullptr)},
                                {"priced_on", r.priced_on}};
                  }
                  j["best_precision"] = r.best_precision;
                  j["best_samples_per_s"] = r.best_samples_per_s;
                  out.push_back(j);
                }
                std::cout << out.dump(2) << "\n";
                return 0;
              }

              std::string run_desc = "no run size (give --dataset-size)";
              for (const auto& r : rows)
                if (r.run) {
                  run_desc = fmt::format("{:g} epoch{} = {:.0f} samples", size.epochs, size.epochs == 1 ? "" : "s", r.run->samples);
                  break;
                }
              const int n = base.gpus * base.nodes;
              std::cout << fmt::format("perfcast compare: {}, {} {} {}, batch {} per GPU, {} GPU{} each; run: {}\n\n",
                                       base.model, base.runtime, base.mode, base.precision,
                                       base.batch == 0 ? std::string("max") : std::to_string(base.batch), n,
                                       n == 1 ? "" : "s", run_desc);
              std::cout << fmt::format("{:<18} {:>9} {:>11} {:>9} {:>9} {:>11} {:>10} {:>10} {:>9} {:>11}  {}\n", "gpu",
                                       "precision", "samples/s", "step ms", "scaling", "time", "cost", "energy",
                                       "power", "mem free", "best precision");
              for (const auto& r : rows) {
                if (!r.prediction) {
                  std::cout << fmt::format("{:<18} {}\n", r.gpu, r.status);
                  continue;
                }
                const Prediction& p = *r.prediction;
                const double gpus_total = p.scale ? p.scale->gpus_total : 1;
                const std::string best =
                    r.best_precision.empty() ? "-" : fmt::format("{} ({:.0f}/s)", r.best_precision, r.best_samples_per_s);
                std::cout << fmt::format(
                    "{:<18} {:>9} {:>11.1f} {:>9.1f} {:>9} {:>11} {:>10} {:>10} {:>9} {:>11}  {}\n", r.gpu,
                    p.request.precision, p.samples_per_s, p.step_us / 1e3,
                    p.scale ? fmt::format("{:.0f}%", 100 * p.scale->efficiency) : std::string("-"),
                    r.run ? format_hours(r.run->hours) : std::string("-"),
                    r.run && !r.priced_on.empty() ? money(r.run->usd) : std::string("-"),
                    r.run ? fmt::format("{:.2f} kWh", r.run->energy_kwh) : std::string("-"),
                    p.power ? fmt::format("{:.0f} W", p.power->avg_power_w * gpus_total) : std::string("-"),
                    p.memory.fits ? format_bytes(r.memory_headroom_bytes) : std::string("no fit"), best);
              }
              std::cout << "\n";
              for (const auto& r : rows)
                if (!r.priced_on.empty())
                  std::cout << fmt::format("  {}: priced at {} per GPU-hour on demand, {}\n", r.gpu,
                                           money([&] {
                                             for (const auto& i : catalog.instances)
                                               if (i.id == r.priced_on) return i.on_demand_usd_per_hour / i.gpus;
                                             return 0.0;
                                           }()),
                                           r.priced_on);
              std::cout << fmt::format(
                  "\nscaling: throughput / (GPUs x one GPU); energy: GPU boards only; power: all GPUs, average over the "
                  "step; mem free: per GPU.\nprices: {} (list prices with dates and sources in the file)\n",
                  catalog.file);
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
