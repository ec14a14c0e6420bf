// perfcast plan: every (cloud instance type, count) that trains the model before a deadline, cheapest first,
// and the count past which adding instances stops paying.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/plan.h"
#include "cli/command.h"
#include "core/error.h"

namespace perfcast::cli {

namespace {

double positive_number(const std::string& text, const char* flag) {
  std::string t = text;
  if (!t.empty() && t.front() == '$') t.erase(0, 1);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size() || !(v > 0))
    throw InputError(fmt::format("{} must be a positive number, got '{}'", flag, text));
  return v;
}

std::string money(double usd) { return usd >= 1000 ? fmt::format("${:.0f}", usd) : fmt::format("${:.2f}", usd); }

std::string option_line(const PlanOption& o) {
  return fmt::format("{} x{} ({} GPU{}, {}): {} at {:.0f} samples/s, {} on demand{}, {:.1f} kWh", o.instance, o.count,
                     o.gpus_total, o.gpus_total == 1 ? "" : "s", o.precision, format_hours(o.hours), o.samples_per_s,
                     money(o.usd), o.spot_usd ? ", " + money(*o.spot_usd) + " spot" : std::string(), o.energy_kwh);
}

nlohmann::json option_json(const PlanOption& o) {
  return {{"instance", o.instance},       {"provider", o.provider},   {"gpu", o.gpu},
          {"precision", o.precision},     {"count", o.count},         {"gpus_total", o.gpus_total},
          {"samples_per_s", o.samples_per_s}, {"step_ms", o.step_ms}, {"scaling_efficiency", o.efficiency},
          {"comm_share", o.comm_share},   {"hours", o.hours},         {"usd_on_demand", o.usd},
          {"usd_spot", o.spot_usd ? nlohmann::json(*o.spot_usd) : nlohmann::json(nullptr)},
          {"energy_kwh", o.energy_kwh},   {"power_w", o.power_w},     {"meets_deadline", o.meets_deadline},
          {"within_budget", o.within_budget}, {"cheapest", o.cheapest}};
}

}  // namespace

Command plan_command() {
  return {"plan", "find cloud instances and GPU counts that meet a training deadline, cheapest first", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              std::string deadline, budget, dataset_size, epochs = "1", prices, threshold = "0.8";
              std::string max_gpus = "64", top = "15";
              bool spot = false, json = false;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags, false);
            app.add_option("--deadline", s->deadline, "time the run must finish in: 24h, 90m, 2d, 3600s")->required();
            app.add_option("--budget", s->budget, "most the run may cost, USD");
            app.add_option("--dataset-size", s->dataset_size, "samples per epoch (default: the model's dataset)");
            app.add_option("--epochs", s->epochs, "epochs in the run")->capture_default_str();
            app.add_option("--prices", s->prices, "price catalog TOML (default: data/cloud/prices.toml)");
            app.add_option("--efficiency-threshold", s->threshold,
                           "scaling efficiency below which more instances stop paying")
                ->capture_default_str();
            app.add_option("--max-gpus", s->max_gpus, "largest total GPU count to consider")->capture_default_str();
            app.add_option("--top", s->top, "options to list (0 = all)")->capture_default_str();
            app.add_flag("--spot", s->spot, "rank by spot price where the catalog has one");
            app.add_flag("--json", s->json, "machine-readable output");
            return std::function<int()>([s] {
              PlanRequest req;
              // Without --batch, each GPU trains at the largest batch that fits it.
              if (s->flags.batch.empty()) s->flags.batch = "max";
              req.base = s->flags.to_request();
              req.deadline_hours = parse_duration_hours(s->deadline);
              if (!s->budget.empty()) req.budget_usd = positive_number(s->budget, "--budget");
              if (!s->dataset_size.empty()) req.size.dataset_samples = positive_number(s->dataset_size, "--dataset-size");
              req.size.epochs = positive_number(s->epochs, "--epochs");
              req.efficiency_threshold = positive_number(s->threshold, "--efficiency-threshold");
              if (req.efficiency_threshold > 1)
                throw InputError("--efficiency-threshold is a fraction in (0, 1], got " + s->threshold);
              const double max_gpus = positive_number(s->max_gpus, "--max-gpus");
              if (max_gpus != static_cast<int>(max_gpus)) throw InputError("--max-gpus must be a whole number");
              req.max_gpus = static_cast<int>(max_gpus);
              double top = 0;
              if (s->top != "0") top = positive_number(s->top, "--top");
              req.spot = s->spot;
              req.dp = data_parallel_options(req.base);
              const PriceCatalog catalog = s->prices.empty() ? default_price_catalog() : load_price_catalog(s->prices);
              const PlanResult res = plan(req, catalog);

              if (s->json) {
                nlohmann::json j;
                j["samples"] = res.samples;
                j["deadline_hours"] = req.deadline_hours;
                j["budget_usd"] = req.budget_usd ? nlohmann::json(*req.budget_usd) : nlohmann::json(nullptr);
                j["prices"] = catalog.file;
                j["meeting"] = nlohmann::json::array();
                for (const auto& o : res.meeting) j["meeting"].push_back(option_json(o));
                j["options"] = nlohmann::json::array();
                for (const auto& o : res.options) j["options"].push_back(option_json(o));
                j["fastest"] = res.fastest ? option_json(*res.fastest) : nlohmann::json(nullptr);
                j["scaling"] = nlohmann::json::array();
                for (const auto& sc : res.scaling)
                  j["scaling"].push_back({{"instance", sc.instance},
                                          {"gpus_per_instance", sc.gpus_per_instance},
                                          {"max_count", sc.max_count},
                                          {"last_paying_count", sc.last_paying_count},
                                          {"efficiency_after", sc.efficiency_after},
                                          {"always_pays", sc.always_pays}});
                j["skipped"] = res.skipped;
                std::cout << j.dump(2) << "\n";
                return 0;
              }

              const auto& b = req.base;
              std::cout << fmt::format(
                  "perfcast plan: {}, {} {} {}, batch {} per GPU; run: {:.0f} samples ({:g} epoch{}); deadline {}{}\n",
                  b.model, b.runtime, b.mode, b.precision, b.batch == 0 ? std::string("max") : std::to_string(b.batch),
                  res.samples, req.size.epochs, req.size.epochs == 1 ? "" : "s", format_hours(req.deadline_hours),
                  req.budget_usd ? ", budget " + money(*req.budget_usd) : std::string());
              std::cout << fmt::format("prices: {} ({} instance types, up to {} GPUs; {} options evaluated)\n\n",
                                       catalog.file, catalog.instances.size(), req.max_gpus, res.options.size());
              if (res.meeting.empty()) {
                std::cout << fmt::format("no option meets the deadline of {}{}.\n", format_hours(req.deadline_hours),
                                         req.budget_usd ? " within the budget of " + money(*req.budget_usd) : "");
                if (res.fastest) std::cout << "fastest option: " << option_line(*res.fastest) << "\n";
                if (res.cheapest_any) std::cout << "cheapest option: " << option_line(*res.cheapest_any) << "\n";
              } else {
                std::cout << fmt::format("{} option{} meet{} the deadline{}, cheapest first ({}):\n",
                                         res.meeting.size(), res.meeting.size() == 1 ? "" : "s",
                                         res.meeting.size() == 1 ? "s" : "", req.budget_usd ? " and budget" : "",
                                         req.spot ? "spot where known" : "on demand");
                std::cout << fmt::format("{:>4}  {:<24} {:>5} {:>5} {:>9} {:>11} {:>8} {:>6} {:>9} {:>10} {:>10} {:>10}\n",
                                         "rank", "instance", "count", "GPUs", "precision", "samples/s", "scaling",
                                         "comm", "time", "on demand", "spot", "energy");
                const std::size_t shown = top > 0 ? std::min<std::size_t>(res.meeting.size(), static_cast<std::size_t>(top))
                                                  : res.meeting.size();
                for (std::size_t i = 0; i < shown; ++i) {
                  const auto& o = res.meeting[i];
                  std::cout << fmt::format(
                      "{:>4}  {:<24} {:>5} {:>5} {:>9} {:>11.0f} {:>7.0f}% {:>5.0f}% {:>9} {:>10} {:>10} {:>6.1f} kWh{}\n",
                      i + 1, o.instance, o.count, o.gpus_total, o.precision, o.samples_per_s, 100 * o.efficiency,
                      100 * o.comm_share, format_hours(o.hours), money(o.usd),
                      o.spot_usd ? money(*o.spot_usd) : std::string("-"), o.energy_kwh, o.cheapest ? "  <- cheapest" : "");
                }
                if (shown < res.meeting.size())
                  std::cout << fmt::format("  ... {} more (--top 0 lists all)\n", res.meeting.size() - shown);
                if (res.fastest) std::cout << "\nfastest overall: " << option_line(*res.fastest) << "\n";
              }
              std::cout << fmt::format("\nwhere adding instances stops paying (scaling efficiency below {:.0f}%):\n",
                                       100 * req.efficiency_threshold);
              for (const auto& sc : res.scaling) {
                if (sc.single_only) {
                  std::cout << fmt::format("  {:<24} used alone (no network between instances in the catalog){}\n",
                                           sc.instance,
                                           sc.gpus_per_instance > 1
                                               ? fmt::format("; its {} GPUs scale at {:.0f}%", sc.gpus_per_instance,
                                                             100 * sc.efficiency_at_max)
                                               : std::string());
                  continue;
                }
                if (sc.always_pays)
                  std::cout << fmt::format("  {:<24} still pays at {} instance{} ({} GPUs), the most evaluated\n",
                                           sc.instance, sc.max_count, sc.max_count == 1 ? "" : "s",
                                           sc.max_count * sc.gpus_per_instance);
                else if (sc.last_paying_count == 0)
                  std::cout << fmt::format("  {:<24} below the threshold already at 1 instance ({} GPUs: {:.0f}%)\n",
                                           sc.instance, sc.gpus_per_instance, 100 * sc.efficiency_after);
                else
                  std::cout << fmt::format("  {:<24} pays up to {} instance{} ({} GPUs); at {} scaling is {:.1f}%\n",
                                           sc.instance, sc.last_paying_count, sc.last_paying_count == 1 ? "" : "s",
                                           sc.last_paying_count * sc.gpus_per_instance, sc.last_paying_count + 1,
                                           100 * sc.efficiency_after);
              }
              if (!res.skipped.empty()) {
                std::cout << "\nskipped:\n";
                for (const auto& k : res.skipped) std::cout << "  " << k << "\n";
              }
              std::cout << "\nscaling: throughput / (GPUs x one GPU of the type); comm: share of the step waiting on "
                           "gradient reduction; energy: GPU boards only.\n";
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
