// perfcast plan: every (cloud instance type, count) that trains the model before a deadline, cheapest first,
// and the count past which adding instances stops paying.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <iostream>
#include <optional>
#include <tuple>
#include <nlohmann/json.hpp>

#include "analysis/llm_parallel.h"
#include "analysis/plan.h"
#include "analysis/request_resolution.h"
#include "cli/command.h"
#include "cli/number_flags.h"
#include "core/output_file.h"
#include "core/error.h"
#include "core/limits.h"
#include "import/model_source.h"
#include "report/chart_page.h"
#include "report/json_vocabulary.h"
#include "report/messages.h"
#include "report/prediction_report.h"

namespace perfcast::cli {

namespace {

// --budget in USD, "$500" or "500".
double budget_flag(const std::string& text) {
  return number_flag(!text.empty() && text.front() == '$' ? std::string_view(text).substr(1) : text, "--budget");
}

// --max-gpus: a whole number up to the largest cluster perfcast predicts (data/limits.toml max_nodes x
// max_gpus_per_node), so that no count wraps in the cast to int.
int max_gpus_flag(const std::string& text) {
  const InputLimits& lim = input_limits();
  return static_cast<int>(count_flag(text, "--max-gpus", 1, lim.max_nodes * lim.max_gpus_per_node));
}

// --top: 0 lists every option; any count past the options lists them all.
std::size_t top_flag(const std::string& text) {
  return static_cast<std::size_t>(
      count_flag(text, "--top", 0, std::numeric_limits<std::int64_t>::max(), " (0: every option)"));
}

std::string option_line(const PlanOption& o, Lang lang) {
  return fmt::format(fmt::runtime(msg("plan.option", lang)), o.instance, o.count, o.gpus_total,
                     o.gpus_total == 1 ? "" : "s", o.precision, format_hours(o.run.hours), format_rate(o.samples_per_s),
                     format_usd(o.run.usd),
                     o.run.spot_usd ? fmt::format(fmt::runtime(msg("plan.spot_part", lang)), format_usd(*o.run.spot_usd)) : std::string(),
                     o.run.energy_kwh, o.run.server_energy_kwh, o.run.facility_energy_kwh, o.run.pue);
}

nlohmann::json option_json(const PlanOption& o) {
  return {{"instance", o.instance},       {"provider", o.provider},   {"gpu", o.gpu},
          {"precision", o.precision},     {"batch", o.batch},         {"count", o.count},         {"gpus_total", o.gpus_total},
          {"samples_per_s", o.samples_per_s}, {"step_ms", o.step_ms}, {"scaling_efficiency", o.efficiency},
          {"comm_share", o.comm_share},   {"hours", o.run.hours},     {"billed_hours", o.run.billed_hours},
          {"usd_on_demand", o.run.usd},
          {"usd_spot", o.run.spot_usd ? nlohmann::json(*o.run.spot_usd) : nlohmann::json(nullptr)},
          {"energy_kwh", o.run.energy_kwh}, {"power_w", o.run.power_w}, {"avg_power_w", o.run.power_w / o.gpus_total},
          {"host_rule", host_rule_name(o.run.powered.rule)}, {"host_power_w", o.run.powered.host_w},
          {"server_energy_kwh", o.run.server_energy_kwh}, {"pue", o.run.pue}, {"facility_energy_kwh", o.run.facility_energy_kwh},
          {"meets_deadline", o.meets_deadline},
          {"within_budget", o.within_budget}, {"cheapest", o.cheapest}};
}

nlohmann::json layout_json(const ParallelTrainingCost& c) {
  const auto& l = c.layout;
  nlohmann::json j = {{"layout", c.layout_text},
                      {"tp", l.tp},
                      {"pp", l.pp},
                      {"dp", l.dp},
                      {"zero", l.zero},
                      {"micro_batch", l.micro_batch},
                      {"global_batch", l.global_batch},
                      {"recompute", recompute_name(l.recompute)},
                      {"tokens_per_s_per_gpu", c.tokens_per_s_per_gpu},
                      {"mfu", c.mfu},
                      {"step_ms", c.step.step_us / 1e3},
                      {"memory_per_gpu_bytes", rounded_count_json(c.memory.total)},
                      {"gpu_hours", c.train_tokens > 0 ? nlohmann::json(c.run.hours * c.gpus) : nlohmann::json(nullptr)},
                      {"billed_hours", c.run.usd > 0 ? nlohmann::json(c.run.billed_hours) : nlohmann::json(nullptr)},
                      {"usd_per_gpu_hour", c.usd_per_gpu_hour > 0 ? nlohmann::json(c.usd_per_gpu_hour) : nlohmann::json(nullptr)},
                      {"usd_per_million_tokens", c.usd_per_million_tokens > 0 ? nlohmann::json(c.usd_per_million_tokens) : nlohmann::json(nullptr)},
                      // The power and energy keys as predict's "power" and plan's options name them.
                      {"avg_power_w", c.power.avg_power_w},
                      {"energy_per_step_j", c.power.energy_per_step_j},
                      {"host_rule", host_rule_name(HostRule::kGpuShare)},
                      {"host_power_w", c.run.powered.host_w},
                      {"pue", c.run.pue},
                      {"energy_kwh", c.train_tokens > 0 ? nlohmann::json(c.run.energy_kwh) : nlohmann::json(nullptr)},
                      {"server_energy_kwh", c.train_tokens > 0 ? nlohmann::json(c.run.server_energy_kwh) : nlohmann::json(nullptr)},
                      {"facility_energy_kwh", c.train_tokens > 0 ? nlohmann::json(c.run.facility_energy_kwh) : nlohmann::json(nullptr)}};
  // The run's size, time, dollars and instance as compare and plan's options name them (the old names beside).
  put_with_alias(j, "gpus_total", "gpus", c.gpus);
  put_with_alias(j, "hours", "train_hours", c.train_tokens > 0 ? nlohmann::json(c.run.hours) : nlohmann::json(nullptr));
  put_with_alias(j, "usd_on_demand", "train_usd", c.run.usd > 0 ? nlohmann::json(c.run.usd) : nlohmann::json(nullptr));
  put_with_alias(j, "instance", "price_instance",
                 c.price_instance.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.price_instance));
  return j;
}

// One layout column set: the layout's own figures, then (with --train-tokens) the run's time, GPU-hours, cost and
// energy, then the price it is costed on.
constexpr const char* kLayoutColumns =
    "  {:<58} {:>5} {:>9} {:>5} {:>8} {:>7} {:>6} {:>7} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9}  {}\n";

// Memory per GPU in GiB, as predict and compare print it (an "80GB" card holds 80 GiB); energy in kWh, as plan's
// instance table prints it.
std::string layout_row(const ParallelTrainingCost& c, Lang lang) {
  const bool run = c.train_tokens > 0;
  return fmt::format(fmt::runtime(kLayoutColumns), c.layout_text, c.gpus, fmt::format("{:.0f}", c.tokens_per_s_per_gpu),
                     fmt::format("{:.1f}", 100.0 * c.mfu), fmt::format("{:.0f}", c.step.step_us / 1e3),
                     fmt::format("{:.1f}", c.memory.total / (1024.0 * 1024 * 1024)),
                     fmt::format("{:.0f}", c.power.avg_power_w),
                     c.usd_per_million_tokens > 0 ? format_usd(c.usd_per_million_tokens) : "-",
                     run ? format_hours(c.run.hours) : "-", run ? fmt::format("{:.0f}", c.run.hours * c.gpus) : "-",
                     c.run.usd > 0 ? format_usd(c.run.usd) : "-",
                     run ? fmt::format("{:.0f}", c.run.energy_kwh) : "-",
                     run ? fmt::format("{:.0f}", c.run.server_energy_kwh) : "-",
                     run ? fmt::format("{:.0f}", c.run.facility_energy_kwh) : "-",
                     c.usd_per_gpu_hour > 0 ? fmt::format(fmt::runtime(msg("lay.priced", lang)), c.price_instance,
                                                          format_usd(c.usd_per_gpu_hour))
                                            : std::string());
}

// `plan --layouts`: training layouts of a decoder language model for a GPU count, and with --deadline the
// smallest count that meets it.
int plan_layouts_command(const PredictRequest& base, const std::string& deadline, std::optional<double> budget_usd,
                         int max_gpus, std::size_t top, bool json, std::optional<LayoutRank> rank,
                         const LayoutSearch& search, Lang lang) {
  const double hours = deadline.empty() ? 0.0 : parse_duration_hours(deadline);
  if (!deadline.empty()) check_deadline_hours(hours);
  // The budget judges the node counts of the deadline search, as plan's instance search judges its options.
  if (budget_usd && deadline.empty())
    throw InputError("--budget with --layouts needs --deadline and --train-tokens (the node counts it judges)");
  // --rank-by judges the node counts of the deadline search: without it there is nothing to rank.
  if (rank && deadline.empty())
    throw InputError("--rank-by with --layouts needs --deadline and --train-tokens (the node counts it ranks)");
  // --pue scales the run's facility energy, which only --train-tokens asks for: refused rather than read and unused.
  if (search.pue && base.train_tokens <= 0)
    throw InputError("--pue with --layouts needs --train-tokens (it scales the run's facility energy)");
  // The layout search is for decoder language models; another model is planned on cloud instances (plan without
  // --layouts), which a user who never typed --tp should hear rather than a message about the layout flags.
  if (const ModelSource model = resolve_model(base.model, import_options(base)); !model.decoder_llm)
    throw InputError("plan --layouts searches the training layouts of decoder language models; '" + base.model + "' (" +
                     model.family + ") is not one: plan without --layouts finds cloud instances for it");
  const LayoutPlan plan = plan_layouts(base, hours, max_gpus, search, budget_usd, rank);
  // Without --seq the layouts run at the model's default sequence length; the title says which.
  const std::int64_t seq = base.seq > 0 ? base.seq : resolve_model(base.model, import_options(base)).default_seq;
  if (json) {
    nlohmann::json j;
    j["model"] = base.model;
    j["seq"] = seq;
    j["gpu"] = base.gpu;
    put_with_alias(j, "gpus_total", "gpus", base.gpus * base.nodes);
    j["train_tokens"] = base.train_tokens > 0 ? nlohmann::json(base.train_tokens) : nlohmann::json(nullptr);
    j["deadline_hours"] = hours > 0 ? nlohmann::json(hours) : nlohmann::json(nullptr);
    j["budget_usd"] = budget_usd ? nlohmann::json(*budget_usd) : nlohmann::json(nullptr);
    j["layouts"] = nlohmann::json::array();
    for (const auto& c : plan.layouts) j["layouts"].push_back(layout_json(c));
    j["by_count"] = nlohmann::json::array();
    for (const auto& c : plan.by_count) j["by_count"].push_back(layout_json(c));
    j["meeting"] = plan.meeting ? layout_json(*plan.meeting) : nlohmann::json(nullptr);
    j["rank_by"] = hours > 0 ? nlohmann::json(layout_rank_name(plan.rank)) : nlohmann::json(nullptr);
    report_out() << j.dump(2) << "\n";
    return 0;
  }
  const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
  const int gpus = base.gpus * base.nodes;
  std::string o = fmt::format(m("lay.title"), base.model, gpus, base.gpu, gpus == 1 ? "" : "s", base.gpus, base.nodes,
                              base.nodes == 1 ? "" : "s", base.precision, seq,
                              base.train_tokens > 0 ? fmt::format(m("lay.tokens"), base.train_tokens) : "");
  const std::string header =
      fmt::format(fmt::runtime(kLayoutColumns), msg("lay.col.layout", lang), msg("lay.col.gpus", lang),
                  msg("lay.col.tokens", lang), msg("lay.col.mfu", lang), msg("lay.col.step", lang),
                  msg("lay.col.mem", lang), msg("lay.col.power", lang), msg("lay.col.cost_per_tok", lang),
                  msg("lay.col.time", lang), msg("lay.col.gpu_hours", lang), msg("lay.col.cost", lang),
                  msg("lay.col.energy", lang), msg("lay.col.server", lang), msg("lay.col.facility", lang),
                  msg("lay.col.priced", lang));
  const std::string units = fmt::format(fmt::runtime(kLayoutColumns), "", "", "", "%", "ms", "GiB", "W/GPU",
                                        msg("lay.unit.per_m_tok", lang), "", "GPU x h", msg("lay.unit.usd", lang), "kWh",
                                        "kWh", "kWh", "");
  if (plan.layouts.empty()) o += msg("lay.none", lang);
  else {
    o += fmt::format(m("lay.fit"), plan.layouts.size()) + header + units;
    for (std::size_t i = 0; i < plan.layouts.size() && (top == 0 || i < top); ++i) o += layout_row(plan.layouts[i], lang);
  }
  if (hours > 0) {
    const std::string budget_part = budget_usd ? fmt::format(m("plan.budget"), format_usd(*budget_usd)) : std::string();
    o += fmt::format(m("lay.by_count"), format_hours(hours), budget_part) + header + units;
    for (const auto& c : plan.by_count) o += layout_row(c, lang);
    const std::string_view what = msg(budget_usd ? "lay.what.deadline_budget" : "lay.what.deadline", lang);
    const std::string_view by = msg(plan.rank == LayoutRank::kCost   ? "lay.by.cost"
                                    : plan.rank == LayoutRank::kTime ? "lay.by.time"
                                                                     : "lay.by.gpu_hours",
                                    lang);
    const std::string_view why = msg(rank ? "lay.why.flag" : plan.rank == LayoutRank::kCost ? "lay.why.cost" : "lay.why.gpu_hours",
                                     lang);
    o += plan.meeting ? fmt::format(m("lay.meets"), what, by, why) + layout_row(*plan.meeting, lang)
                      : fmt::format(m("lay.none_meets"), max_gpus, what);
  }
  o += msg("lay.legend", lang);
  report_out() << o;
  return 0;
}

}  // namespace

Command plan_command() {
  return {"plan", "find cloud instances and GPU counts that meet a training deadline, cheapest first", [](CLI::App& app) {
            struct State {
              RequestFlags flags;
              std::string deadline, budget, dataset_size, epochs = "1", prices, threshold = "0.8";
              std::string max_gpus = "64", top = "15", pue, rank_by;
              bool spot = false;
              bool layouts = false;
              std::string gpu;
              ReportFlags report;
            };
            auto s = std::make_shared<State>();
            add_request_flags(app, s->flags, fleet_defaults(), false);
            app.add_option("--deadline", s->deadline, "time the run must finish in: 24h, 90m, 2d, 3600s");
            app.add_flag("--layouts", s->layouts,
                         "search training layouts (tp x pp x dp x ZeRO x micro-batch x recompute) of a decoder language "
                         "model on --gpu for --gpus x --nodes; with --deadline and --train-tokens also node counts");
            app.add_option("--gpu", s->gpu, "GPU id for --layouts (without --layouts plan searches every GPU type in the price catalog)");
            app.add_option("--budget", s->budget, "most the run may cost, USD");
            app.add_option("--dataset-size", s->dataset_size, "samples per epoch (default: the model's dataset)");
            app.add_option("--epochs", s->epochs, "epochs in the run")->capture_default_str();
            app.add_option("--prices", s->prices, "price catalog TOML (default: data/cloud/prices.toml)");
            app.add_option("--efficiency-threshold", s->threshold,
                           "scaling efficiency below which more instances stop paying")
                ->capture_default_str();
            app.add_option("--max-gpus", s->max_gpus, "largest total GPU count to consider")->capture_default_str();
            app.add_option("--top", s->top,
                           "options to list: per GPU type its cheapest and, when 10% faster, its fastest (0 = every "
                           "option that meets the deadline)")
                ->capture_default_str();
            app.add_flag("--spot", s->spot, "rank by spot price where the catalog has one");
            app.add_option("--pue", s->pue,
                           "power usage effectiveness for the facility energy, from 1 (no overhead) (default: each provider's, "
                           "data/cloud/providers.toml)");
            app.add_option("--rank-by", s->rank_by,
                           "with --layouts --deadline: pick the node count by cost, time or gpu-hours (default: cost "
                           "when every count has a price, else gpu-hours)");
            add_report_flags(app, s->report);
            return std::function<int()>([s] {
              const Lang lang = parse_lang(s->report.lang);
              // plan searches GPU cloud instances (or, with --layouts, a GPU's training layouts): the CPU flags
              // --cores and --instances have no device to apply to, so they are refused rather than checked against
              // a GPU the user never named.
              const auto refuse_cpu_flag = [](const std::string& value, const char* flag) {
                if (!value.empty())
                  throw InputError(fmt::format(
                      "{} applies to CPU devices in predict, compare and advise; plan searches GPU instances", flag));
              };
              refuse_cpu_flag(s->flags.cores, "--cores");
              refuse_cpu_flag(s->flags.instances, "--instances");
              if (s->layouts) {
                PredictRequest base = s->flags.to_request();
                if (s->gpu.empty()) throw InputError("--layouts needs --gpu");
                if (!s->flags.batch.empty())
                  throw InputError("--batch does not apply to plan --layouts: it searches --micro-batch itself "
                                   "(--global-batch sets the sequences per optimizer step)");
                if (!s->report.html.empty()) throw InputError("--layouts reports as text or --json");
                base.gpu = s->gpu;
                base.mode = Mode::kTrain;
                if (s->flags.precision.empty()) base.precision = "amp-bf16";
                // The layouts price the run on data/cloud/prices.toml's on-demand rates and count tokens, not epochs:
                // flags of the instance search would otherwise be read and silently left out.
                for (const auto& [given, flag, why] : std::initializer_list<std::tuple<bool, const char*, const char*>>{
                         {!s->prices.empty(), "--prices", "the layouts are priced on data/cloud/prices.toml's on-demand rates"},
                         {s->spot, "--spot", "the layouts are priced on data/cloud/prices.toml's on-demand rates"},
                         {!s->dataset_size.empty(), "--dataset-size", "the run's size is --train-tokens"},
                         {s->epochs != "1", "--epochs", "the run's size is --train-tokens"}})
                  if (given) throw InputError(fmt::format("{} does not apply to plan --layouts: {}", flag, why));
                std::optional<double> budget;
                if (!s->budget.empty()) budget = budget_flag(s->budget);
                const int max_gpus = max_gpus_flag(s->max_gpus);
                std::optional<LayoutRank> rank;
                if (!s->rank_by.empty()) rank = parse_layout_rank(s->rank_by);
                LayoutSearch search;
                if (!s->pue.empty()) search.pue = pue_flag(s->pue);
                return plan_layouts_command(base, s->deadline, budget, max_gpus, top_flag(s->top), s->report.json, rank,
                                            search, lang);
              }
              if (s->deadline.empty()) throw InputError("plan needs --deadline (or --layouts)");
              // The instance search ranks by cost (--spot: spot cost); --rank-by picks among --layouts' node counts.
              if (!s->rank_by.empty()) {
                parse_layout_rank(s->rank_by);  // a typo is named as a typo first
                throw InputError("--rank-by applies to plan --layouts; the instance search ranks by on-demand cost "
                                 "(--spot: spot cost)");
              }
              // --gpu names the GPU of --layouts only: the instance search always covers every GPU type in the price
              // catalog, so a --gpu here would be ignored while the user reads the plan as one for that card.
              if (!s->gpu.empty())
                throw InputError("plan --gpu applies to --layouts; without it plan searches every GPU type in the "
                                 "price catalog (--prices FILE with only that GPU's instances narrows it, compare --gpu " +
                                 s->gpu + " sets GPUs side by side)");
              if (!s->report.html.empty()) check_output_path(s->report.html);
              PlanRequest req;
              req.base = s->flags.to_request();
              if (wants_parallel_training(req.base))
                throw InputError("the training-layout flags (--tp --pp --zero ...) apply to plan --layouts");
              // Without --precision, each GPU type runs the fastest precision it supports (plan searches them).
              if (s->flags.precision.empty()) req.base.precision = "best";
              req.deadline_hours = parse_duration_hours(s->deadline);
              if (!s->budget.empty()) req.budget_usd = budget_flag(s->budget);
              if (!s->dataset_size.empty()) req.size.dataset_samples = number_flag(s->dataset_size, "--dataset-size");
              req.size.epochs = number_flag(s->epochs, "--epochs");
              req.efficiency_threshold =
                  number_flag(s->threshold, "--efficiency-threshold", {0, true, 1, "a fraction in (0, 1]"});
              req.max_gpus = max_gpus_flag(s->max_gpus);
              const double top = static_cast<double>(top_flag(s->top));
              req.spot = s->spot;
              if (!s->pue.empty()) req.pue = pue_flag(s->pue);
              req.dp = data_parallel_options(req.base);
              const PriceCatalog catalog = s->prices.empty() ? default_price_catalog() : load_price_catalog(s->prices);
              const PlanResult res = plan(req, catalog);

              const auto m = [lang](std::string_view key) { return fmt::runtime(msg(key, lang)); };
              const auto& b = req.base;
              std::string o;
              o += fmt::format(m("plan.title"), b.model, b.runtime, mode_name(b.mode), b.precision,
                               b.batch == 0 ? std::string(msg("cmp.max", lang)) : std::to_string(b.batch), res.samples,
                               std::llround(res.samples) == 1 ? "" : "s", req.size.epochs, req.size.epochs == 1 ? "" : "s", format_hours(req.deadline_hours),
                               req.budget_usd ? fmt::format(m("plan.budget"), format_usd(*req.budget_usd)) : std::string());
              o += fmt::format(m("plan.prices"), catalog.file, catalog.instances.size(), req.max_gpus, res.options.size());
              if (res.meeting.empty()) {
                o += fmt::format(m("plan.none"), format_hours(req.deadline_hours),
                                 req.budget_usd ? fmt::format(m("plan.within_budget"), format_usd(*req.budget_usd)) : "");
                if (res.fastest) o += std::string(msg("plan.fastest", lang)) + option_line(*res.fastest, lang) + "\n";
                if (res.cheapest_any) o += std::string(msg("plan.cheapest", lang)) + option_line(*res.cheapest_any, lang) + "\n";
              } else {
                // The shortlist (per GPU type: cheapest, and fastest when clearly faster) unless --top 0 asks for all.
                const auto& list = top == 0 ? res.meeting : res.shortlist;
                o += fmt::format(m("plan.meeting"), res.meeting.size(), res.meeting.size() == 1 ? "" : "s",
                                 res.meeting.size() == 1 ? "s" : "", req.budget_usd ? msg("plan.and_budget", lang) : "",
                                 msg(req.spot ? "plan.spot" : "plan.on_demand", lang));
                const std::size_t shown =
                    top > 0 ? std::min<std::size_t>(list.size(), static_cast<std::size_t>(top)) : list.size();
                // The batch column as wide as its widest value (a recommendation model's batch runs to millions).
                std::size_t batch_width = 6;
                for (std::size_t i = 0; i < shown; ++i)
                  batch_width = std::max(batch_width, std::to_string(list[i].batch).size());
                o += fmt::format("{:>4}  {:<24} {:>5} {:>5} {:>9} {:>{}} {:>11} {:>8} {:>6} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
                                 msg("plan.col.rank", lang), msg("plan.col.instance", lang), msg("plan.col.count", lang),
                                 msg("plan.col.gpus", lang), msg("plan.col.precision", lang), msg("plan.col.batch", lang),
                                 batch_width,
                                 msg("plan.col.samples", lang), msg("plan.col.scaling", lang), msg("plan.col.comm", lang),
                                 msg("plan.col.time", lang), msg("plan.col.on_demand", lang), msg("plan.col.spot", lang),
                                 msg("plan.col.energy", lang), msg("plan.col.server_energy", lang),
                                 msg("plan.col.facility_energy", lang));
                for (std::size_t i = 0; i < shown; ++i) {
                  const auto& x = list[i];
                  o += fmt::format(
                      "{:>4}  {:<24} {:>5} {:>5} {:>9} {:>{}} {:>11} {:>7.0f}% {:>5.0f}% {:>9} {:>10} {:>10} {:>6.1f} kWh {:>6.1f} kWh {:>6.1f} kWh{}\n",
                      i + 1, x.instance, x.count, x.gpus_total, x.precision, x.batch, batch_width, format_rate(x.samples_per_s), 100 * x.efficiency,
                      100 * x.comm_share, format_hours(x.run.hours), format_usd(x.run.usd),
                      x.run.spot_usd ? format_usd(*x.run.spot_usd) : std::string("-"), x.run.energy_kwh,
                      x.run.server_energy_kwh, x.run.facility_energy_kwh, x.cheapest ? msg("plan.cheapest_mark", lang) : "");
                }
                if (shown < res.meeting.size()) o += fmt::format(m("plan.more"), res.meeting.size() - shown);
                if (res.fastest) o += std::string(msg("plan.fastest_overall", lang)) + option_line(*res.fastest, lang) + "\n";
              }
              o += fmt::format(m("plan.scaling_title"), 100 * req.efficiency_threshold);
              for (const auto& sc : res.scaling) {
                if (sc.single_only) {
                  o += fmt::format(m("plan.single"), sc.instance,
                                   sc.gpus_per_instance > 1 ? fmt::format(m("plan.single_scale"), sc.gpus_per_instance,
                                                                          100 * sc.efficiency_at_max)
                                                            : std::string());
                  continue;
                }
                if (sc.always_pays)
                  o += fmt::format(m("plan.always"), sc.instance, sc.max_count, sc.max_count == 1 ? "" : "s",
                                   sc.max_count * sc.gpus_per_instance, sc.max_count * sc.gpus_per_instance == 1 ? "" : "s");
                else if (sc.last_paying_count == 0)
                  o += fmt::format(m("plan.below"), sc.instance, sc.gpus_per_instance, 100 * sc.efficiency_after,
                                   sc.gpus_per_instance == 1 ? "" : "s");
                else
                  o += fmt::format(m("plan.pays"), sc.instance, sc.last_paying_count, sc.last_paying_count == 1 ? "" : "s",
                                   sc.last_paying_count * sc.gpus_per_instance, sc.last_paying_count + 1,
                                   100 * sc.efficiency_after,
                                   sc.last_paying_count * sc.gpus_per_instance == 1 ? "" : "s");
              }
              if (!res.skipped.empty()) {
                o += msg("plan.skipped", lang);
                for (const auto& k : res.skipped) o += "  " + k + "\n";
              }
              o += msg("plan.legend", lang);
              if (!s->report.json) report_out() << o;
              // The JSON is the --json output and the HTML page's data (its charts).
              if (s->report.json || !s->report.html.empty()) {
                nlohmann::json j;
                j["samples"] = res.samples;
                j["deadline_hours"] = req.deadline_hours;
                j["budget_usd"] = req.budget_usd ? nlohmann::json(*req.budget_usd) : nlohmann::json(nullptr);
                j["prices"] = catalog.file;
                j["pue"] = req.pue ? nlohmann::json(*req.pue) : nlohmann::json(nullptr);
                j["meeting"] = nlohmann::json::array();
                for (const auto& x : res.meeting) j["meeting"].push_back(option_json(x));
                j["options"] = nlohmann::json::array();
                for (const auto& x : res.options) j["options"].push_back(option_json(x));
                j["shortlist"] = nlohmann::json::array();
                for (const auto& x : res.shortlist) j["shortlist"].push_back(option_json(x));
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
                if (!s->report.html.empty())
                  write_output_file(s->report.html,
                                    render_chart_page(ChartPage::kPlan, j, lang, o.substr(0, o.find('\n')), preformatted_html(o)));
                if (s->report.json) report_out() << j.dump(2) << "\n";
              }

              return 0;
            });
          }};
}

}  // namespace perfcast::cli
