#include "analysis/plan.h"

#include "cost/cpu_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "analysis/intervals.h"
#include "analysis/request_resolution.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/parallel.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"
#include "schedule/embedding_placement.h"

namespace perfcast {

bool wants_best_precision(const PredictRequest& request) { return request.precision == "best"; }

Prediction predict_best_precision(const PredictRequest& request, const DataParallelOptions& options,
                                  PrecisionChoice choice) {
  const bool training = request.mode == Mode::kTrain;
  const bool serving = is_llm_pass(request.mode);
  // Serving a language model: the candidates are weight types (GGUF block types on llama.cpp), as in advise.
  const std::vector<std::string> candidates =
      serving ? (find_runtime(request.runtime).llm_gguf
                     ? std::vector<std::string>{"f16", "q8_0", "q6_k", "q4_k_m", "q4_0"}
                     : std::vector<std::string>{"fp16", "bf16", "int8", "int4", "fp8"})
      : training ? std::vector<std::string>{"fp32", "tf32", "amp", "amp-bf16"}
                 : std::vector<std::string>{"fp32", "tf32", "fp16", "amp", "int8", "fp8"};
  // kFastestTellable: the first candidate (the full precision: FP32, or FP16 weights when serving) stays when the
  // fastest beats it by no more than the model can tell apart, the 80% spread of measured precision what-ifs
  // (data/intervals.toml [[what_if]] kind "precision", fitted by `perfcast fit-intervals`). FP16 that the model
  // puts 0.04% ahead of FP32 on a GTX 1080 Ti is not a reason to leave FP32.
  const auto spread = what_if_spread_of_kind("precision");
  const double margin = choice == PrecisionChoice::kFastestTellable && spread ? spread->spread : 1.0;
  std::optional<Prediction> best, best_unfit, first;
  // The reason shown when no candidate runs: the first that is not a precision the GPU lacks (a memory fit, say),
  // since a later candidate's missing hardware support would hide why the supported ones failed.
  std::string reason, precision_reason;
  for (const auto& c : candidates) {
    PredictRequest r = request;
    r.precision = c;
    try {
      Prediction p = predict_data_parallel(r, options);
      auto& slot = p.memory.fits ? best : best_unfit;
      if (c == candidates.front() && p.memory.fits) first = p;
      if (!slot || p.samples_per_s > slot->samples_per_s) slot = std::move(p);
    } catch (const UnsupportedError& e) {
      const bool lacks_precision = e.reason().id.rfind("precision.", 0) == 0;
      std::string& slot = lacks_precision ? precision_reason : reason;
      if (slot.empty()) slot = e.what();
    }
  }
  if (best && first && best->samples_per_s <= margin * first->samples_per_s) return *first;
  if (best) return *best;
  if (best_unfit) return *best_unfit;
  if (reason.empty()) reason = precision_reason;
  throw UnsupportedError("no precision runs " + request.model + " on " + request.gpu +
                         (reason.empty() ? "" : ": " + reason));
}

void check_run_size(const RunSize& size) {
  const InputLimits& lim = input_limits();
  if (size.dataset_samples != 0 &&
      !(size.dataset_samples >= 1 && size.dataset_samples == std::floor(size.dataset_samples)))
    throw InputError(fmt::format("--dataset-size is a whole number of samples, got {}", size.dataset_samples));
  if (size.dataset_samples > static_cast<double>(lim.max_dataset_samples))
    throw InputError(fmt::format("--dataset-size {:.3g} exceeds the limit of {:.3g} samples (data/limits.toml "
                                 "max_dataset_samples)", size.dataset_samples, static_cast<double>(lim.max_dataset_samples)));
  if (!(size.epochs > 0)) throw InputError("--epochs must be positive");
  if (size.epochs > static_cast<double>(lim.max_epochs))
    throw InputError(fmt::format("--epochs {:.3g} exceeds the limit of {} (data/limits.toml max_epochs)", size.epochs,
                                 lim.max_epochs));
}

void check_deadline_hours(double hours) {
  if (!(hours > 0)) throw InputError("the deadline must be a positive duration");
  if (hours > static_cast<double>(input_limits().max_deadline_hours))
    throw InputError(fmt::format("the deadline of {:.3g} h exceeds the limit of {} h (data/limits.toml max_deadline_hours)",
                                 hours, input_limits().max_deadline_hours));
}

double run_samples(const Prediction& p, const RunSize& size) {
  check_run_size(size);
  double per_epoch = size.dataset_samples;
  if (per_epoch <= 0) {
    const auto d = default_dataset_samples(p);
    if (!d) throw InputError("model '" + p.model_id + "' has no default dataset; give --dataset-size (samples per epoch)");
    per_epoch = *d;
  }
  // A fraction of an epoch is a real run (--epochs 0.1), but one of less than a sample is none: its time, cost and
  // energy would print as zero and every option would "meet" the deadline.
  const double samples = per_epoch * size.epochs;
  if (samples < 1)
    throw InputError(fmt::format("--epochs {:g} of {:.0f} sample{} is {:.3g} samples, less than one: a run trains at "
                                 "least one sample (give more --epochs or --dataset-size)",
                                 size.epochs, per_epoch, per_epoch == 1 ? "" : "s", samples));
  return samples;
}

namespace {

struct Single {
  Prediction p;
  GradientProfile g;
};

// The costs of one option given its throughput, the power of all its GPUs and its scaling: compare's rule
// (cost_of_run), the instances powered whole; an option runs on every GPU of its instances, so none is idle.
void price_option(PlanOption& o, double power_w, const DeviceSpec& device, const InstanceType& inst, int count,
                  double samples, const PlanRequest& req) {
  o.run = cost_of_run(device, o.gpus_total, samples, o.samples_per_s, power_w, &inst, count, req.pue,
                      RunBasis::kWholeInstancesRented);
  o.meets_deadline = o.run.hours <= req.deadline_hours;
  const double ranked = req.spot && o.run.spot_usd ? *o.run.spot_usd : o.run.usd;
  o.within_budget = !req.budget_usd || ranked <= *req.budget_usd;
}

// An option's identity: the instance type and count, and the precision and batch its GPUs run.
PlanOption option_of(const InstanceType& inst, int count, const PredictRequest& run) {
  PlanOption o;
  o.instance = inst.id;
  o.provider = inst.provider;
  o.gpu = inst.gpu;
  o.precision = run.precision;
  o.batch = run.batch;
  o.count = count;
  o.gpus_total = inst.gpus * count;
  return o;
}

PlanOption evaluate(const Single& s, const InstanceType& inst, int count, double samples, const PlanRequest& req) {
  const Prediction& p = s.p;
  PlanOption o = option_of(inst, count, p.request);
  double step_us = p.step_us;
  if (o.gpus_total > 1) {
    DataParallelOptions dp = req.dp;
    dp.nics_per_node = inst.network_ports;
    const ScaleOutCost sc = scale_out(p.device, replica_step(p), s.g, inst.gpus, count, inst.interconnect, count > 1 ? inst.network : "", dp);
    step_us = (sc.base_step_ms + sc.exposed_comm_ms) * 1e3;
    o.efficiency = sc.efficiency;
    o.comm_share = sc.comm_share;
    o.fits = p.memory.total + (sc.bucket_buffer_bytes - p.memory.comm_buffers) * p.runtime.allocator_overhead <=
             p.memory.capacity;
  }
  o.step_ms = step_us / 1e3;
  o.samples_per_s = static_cast<double>(p.request.batch) * o.gpus_total / (step_us * 1e-6);
  // Waiting draws the clocks-up wait power (PowerCost::wait_power_w, above the at-rest idle power): the step's
  // kernels cost the same energy, the extra time costs the wait power.
  double energy_step_j = 0;
  if (p.power) energy_step_j = p.power->energy_per_step_j + p.power->wait_power_w * (step_us - p.step_us) * 1e-6;
  price_option(o, energy_step_j / (step_us * 1e-6) * o.gpus_total, p.device, inst, count, samples, req);
  return o;
}

// A model with embedding tables on several GPUs: the whole fleet predicted as `predict --gpus --nodes` places the
// tables (table-wise shards, all-to-all), not one GPU's prediction scaled. `q` carries the model, GPU, precision and
// batch (0: --batch max, sized for this fleet's share of the tables).
Prediction predict_fleet(PredictRequest q, const InstanceType& inst, int count, const PlanRequest& req) {
  q.gpus = inst.gpus;
  q.nodes = count;
  q.interconnect = inst.interconnect;
  q.network = count > 1 ? inst.network : "";
  DataParallelOptions dp = req.dp;
  dp.nics_per_node = inst.network_ports;
  return wants_best_precision(q) ? predict_best_precision(q, dp) : predict_data_parallel(q, dp);
}

// The option of a fleet's prediction; `samples` is filled from it when no earlier option set it.
PlanOption fleet_option(const Prediction& f, const InstanceType& inst, int count, double& samples,
                        const PlanRequest& req) {
  PlanOption o = option_of(inst, count, f.request);
  o.fits = f.memory.fits;
  if (!o.fits) return o;
  if (samples == 0) samples = run_samples(f, req.size);
  o.step_ms = f.step_us / 1e3;
  o.samples_per_s = f.samples_per_s;
  if (f.scale) {
    o.efficiency = f.scale->efficiency;
    o.comm_share = f.scale->comm_share;
  }
  price_option(o, f.power ? f.power->avg_power_w * o.gpus_total : 0, f.device, inst, count, samples, req);
  return o;
}

// A fleet's prediction, or why it cannot run.
struct Fleet {
  std::optional<Prediction> p;
  std::string unsupported;
};

double rank_cost(const PlanOption& o, bool spot) { return spot && o.run.spot_usd ? *o.run.spot_usd : o.run.usd; }

}  // namespace

PlanResult plan(const PlanRequest& req, const PriceCatalog& catalog) {
  check_deadline_hours(req.deadline_hours);
  check_run_size(req.size);
  if (req.budget_usd && !(*req.budget_usd > 0)) throw InputError("--budget must be a positive amount of USD");
  if (req.max_gpus <= 0) throw InputError("--max-gpus must be positive");
  if (!(req.efficiency_threshold > 0 && req.efficiency_threshold <= 1))
    throw InputError("--efficiency-threshold must be in (0, 1]");
  PlanResult res;
  // The single-GPU prediction of every GPU the instances offer (nullopt: cannot run, with the reason), predicted
  // on every worker thread in the order the instances first name them.
  std::vector<std::string> gpu_ids;
  for (const auto& inst : catalog.instances)
    if (inst.gpus <= req.max_gpus && std::find(gpu_ids.begin(), gpu_ids.end(), inst.gpu) == gpu_ids.end())
      gpu_ids.push_back(inst.gpu);
  // --batch max (plan's default) is sized twice per GPU type: alone, and beside the gradient reduction's buffers
  // (data parallelism over 2 or more GPUs, as `predict --gpus N --batch max` sizes it), so that an option of
  // several GPUs runs at a batch that fits there instead of being skipped at the one-GPU maximum. A model with
  // embedding tables is instead sized at each fleet size, since each GPU's share of the tables shrinks as the fleet
  // grows (8 A100-40GB hold a 1/8 share of dlrm's 89.5 GiB where 2 cannot hold half).
  const bool batch_max = req.base.batch == 0;
  const bool tables = resolve_model(req.base.model, import_options(req.base))
                          .build(ModelOptions{1, req.base.seq})
                          .table_params() > 0;
  std::vector<std::optional<Single>> singles(gpu_ids.size()), multis(gpu_ids.size());
  std::vector<std::string> why(gpu_ids.size()), why_multi(gpu_ids.size());
  const auto single_at = [](const PredictRequest& r) {
    Prediction p = wants_best_precision(r) ? predict_best_precision(r) : predict(r);
    if (!p.memory.fits) throw UnsupportedError("does not fit in memory at batch " + std::to_string(p.request.batch));
    const ModelSource model = resolve_model(p.request.model, import_options(p.request));
    const Graph graph = model.build(ModelOptions{p.request.batch, p.request.seq});
    GradientProfile g = gradient_profile(p, graph);
    return Single{std::move(p), std::move(g)};
  };
  parallel_for(gpu_ids.size(), [&](std::size_t i) {
    PredictRequest r = req.base;
    r.gpu = gpu_ids[i];
    r.gpus = 1;
    r.nodes = 1;
    r.interconnect.clear();
    r.network.clear();
    try {
      singles[i] = single_at(r);
    } catch (const UnsupportedError& e) {
      why[i] = e.what();
    }
    if (!batch_max || tables || !singles[i]) return;
    try {
      PredictRequest two = r;
      two.gpus = 2;
      const Prediction sized = wants_best_precision(two) ? predict_best_precision(two, req.dp) : predict(two);
      if (!sized.memory.fits)
        throw UnsupportedError("does not fit in memory at batch " + std::to_string(sized.request.batch) +
                               " beside the gradient reduction's buffers");
      r.batch = sized.request.batch;
      r.precision = sized.request.precision;
      multis[i] = single_at(r);
    } catch (const UnsupportedError& e) {
      why_multi[i] = e.what();
    }
  });
  std::map<std::string, std::optional<Single>> cache, cache_multi;  // gpu id -> prediction (nullopt: cannot run)
  std::map<std::string, std::string> reasons, reasons_multi;
  for (std::size_t i = 0; i < gpu_ids.size(); ++i) {
    cache.emplace(gpu_ids[i], std::move(singles[i]));
    cache_multi.emplace(gpu_ids[i], std::move(multis[i]));
    if (!why[i].empty()) reasons[gpu_ids[i]] = std::move(why[i]);
    if (!why_multi[i].empty()) reasons_multi[gpu_ids[i]] = std::move(why_multi[i]);
  }
  // With tables, every fleet of several GPUs is predicted whole, on every worker thread, before the options are
  // priced in order below.
  std::map<std::pair<std::string, int>, Fleet> fleets;  // (instance id, count) -> its prediction
  if (tables) {
    std::vector<std::pair<const InstanceType*, int>> jobs;
    for (const auto& inst : catalog.instances)
      for (int count = 1; inst.gpus <= req.max_gpus && count * inst.gpus <= req.max_gpus; ++count) {
        if (count > 1 && inst.network.empty()) break;
        if (inst.gpus * count > 1) jobs.emplace_back(&inst, count);
      }
    std::vector<Fleet> done(jobs.size());
    parallel_for(jobs.size(), [&](std::size_t i) {
      const auto& [inst, count] = jobs[i];
      const std::optional<Single>& single = cache.at(inst->gpu);
      PredictRequest q = batch_max || !single ? req.base : single->p.request;
      q.gpu = inst->gpu;
      try {
        done[i].p = predict_fleet(q, *inst, count, req);
      } catch (const UnsupportedError& e) {
        done[i].unsupported = e.what();
      }
    });
    for (std::size_t i = 0; i < jobs.size(); ++i)
      fleets.emplace(std::make_pair(jobs[i].first->id, jobs[i].second), std::move(done[i]));
  }
  for (const auto& inst : catalog.instances) {
    if (inst.gpus > req.max_gpus) continue;
    const std::optional<Single>& single = cache[inst.gpu];
    // Without tables, a GPU type that cannot run one GPU runs no fleet either; with them, a fleet holds a smaller
    // share of the tables than one GPU does.
    if (!single && !tables) {
      res.skipped.push_back(inst.id + ": " + reasons[inst.gpu]);
      continue;
    }
    if (single && res.samples == 0) res.samples = run_samples(single->p, req.size);
    InstanceScaling sc;
    sc.instance = inst.id;
    sc.gpus_per_instance = inst.gpus;
    sc.max_count = 0;
    sc.last_paying_count = 0;
    sc.single_only = inst.network.empty();
    bool paying = true;
    int no_fit_from = 0, no_fit_to = 0;  // counts whose GPUs cannot hold their share of the embedding tables
    std::int64_t no_fit_batch = 0;       // the batch they were tried at (fixed --batch)
    std::string no_fit_reason;           // or why no batch fits (--batch max)
    for (int count = 1; count * inst.gpus <= req.max_gpus; ++count) {
      if (count > 1 && inst.network.empty()) break;
      const bool several = inst.gpus * count > 1;
      PlanOption o;
      if (tables && several) {
        const Fleet& fleet = fleets.at({inst.id, count});
        if (fleet.p) {
          o = fleet_option(*fleet.p, inst, count, res.samples, req);
        } else if (!batch_max) {
          res.skipped.push_back(fmt::format("{} x{} ({} GPUs): {}", inst.id, count, inst.gpus * count,
                                            fleet.unsupported));
          break;
        } else {
          // No batch fits beside this fleet's share of the tables (or no precision runs it).
          o.fits = false;
          no_fit_reason = fleet.unsupported;
        }
        if (!o.fits) {
          // More instances hold smaller shards of the tables: a larger count may fit where this one does not.
          if (!no_fit_from) no_fit_from = count;
          no_fit_to = count;
          if (o.batch > 0) no_fit_batch = o.batch;
          continue;
        }
      } else {
        if (!single) {  // one GPU of a type whose fleets may still hold the tables
          res.skipped.push_back(inst.id + ": " + reasons[inst.gpu]);
          continue;
        }
        const std::optional<Single>& chosen = several && batch_max ? cache_multi[inst.gpu] : single;
        if (!chosen) {
          res.skipped.push_back(fmt::format("{} x{} ({} GPUs): {}", inst.id, count, inst.gpus * count,
                                            reasons_multi[inst.gpu]));
          break;
        }
        try {
          o = evaluate(*chosen, inst, count, res.samples, req);
        } catch (const UnsupportedError& e) {
          res.skipped.push_back(fmt::format("{} x{} ({} GPUs): {}", inst.id, count, inst.gpus * count, e.what()));
          break;
        }
        if (!o.fits) {
          res.skipped.push_back(fmt::format("{} x{}: the gradient reduction's buffers do not fit beside batch {}",
                                            inst.id, count, chosen->p.request.batch));
          break;
        }
      }
      sc.max_count = count;
      sc.efficiency_at_max = o.efficiency;
      if (paying && o.efficiency >= req.efficiency_threshold) {
        sc.last_paying_count = count;
      } else if (paying) {
        paying = false;
        sc.always_pays = false;
        sc.efficiency_after = o.efficiency;
      }
      res.options.push_back(std::move(o));
    }
    if (no_fit_from) {
      const std::string counts =
          fmt::format("{} x{}{} ({} GPUs per instance)", inst.id, no_fit_from,
                      no_fit_to > no_fit_from ? fmt::format("-{}", no_fit_to) : "", inst.gpus);
      res.skipped.push_back(
          no_fit_batch > 0
              ? fmt::format("{}: each GPU's share of the embedding tables does not fit beside batch {}", counts,
                            no_fit_batch)
              : fmt::format("{}: {}", counts, no_fit_reason));
    }
    // An instance type none of whose counts could run has no scaling to report (its reason is under skipped).
    if (sc.max_count > 0) res.scaling.push_back(sc);
  }
  if (res.options.empty()) {
    std::string why = res.skipped.empty() ? "the price catalog has no instance within --max-gpus" : res.skipped.front();
    throw UnsupportedError("no instance type can run this model (" + why + ")");
  }
  for (const auto& o : res.options) {
    if (!res.fastest || o.run.hours < res.fastest->run.hours) res.fastest = o;
    if (!res.cheapest_any || rank_cost(o, req.spot) < rank_cost(*res.cheapest_any, req.spot)) res.cheapest_any = o;
    if (o.meets_deadline && o.within_budget) res.meeting.push_back(o);
  }
  std::stable_sort(res.meeting.begin(), res.meeting.end(), [&](const PlanOption& a, const PlanOption& b) {
    const double ca = rank_cost(a, req.spot), cb = rank_cost(b, req.spot);
    return ca != cb ? ca < cb : a.run.hours < b.run.hours;
  });
  // Per GPU type its cheapest option and, when clearly faster, its fastest: the choices that differ.
  std::map<std::string, const PlanOption*> cheapest_of, fastest_of;
  for (const auto& o : res.meeting) {
    if (!cheapest_of.count(o.gpu)) cheapest_of[o.gpu] = &o;
    if (!fastest_of.count(o.gpu) || o.run.hours < fastest_of[o.gpu]->run.hours) fastest_of[o.gpu] = &o;
  }
  constexpr double kClearlyFaster = 0.9;  // a "faster" variant must save at least 10% of the time to be listed
  for (const auto& o : res.meeting) {
    const bool cheapest = cheapest_of[o.gpu] == &o;
    const bool fastest = fastest_of[o.gpu] == &o && o.run.hours < kClearlyFaster * cheapest_of[o.gpu]->run.hours;
    if (cheapest || fastest) res.shortlist.push_back(o);
  }
  if (!res.meeting.empty()) {
    res.meeting.front().cheapest = true;
    res.shortlist.front().cheapest = true;
    for (auto& o : res.options)
      if (o.instance == res.meeting.front().instance && o.count == res.meeting.front().count) o.cheapest = true;
  }
  return res;
}

std::vector<GpuCount> parse_gpu_counts(const std::string& text, const std::string& flag, int default_count) {
  if (text.find_first_not_of(' ') == std::string::npos) throw InputError(flag + " needs at least one GPU id");
  std::vector<GpuCount> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string part = text.substr(start, comma - start);
    start = comma + 1;
    const auto b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
    if (b == std::string::npos) {
      // "a,,b" or a trailing comma: a GPU left out by a slip, not an entry to skip.
      throw InputError(flag + ": entry " + std::to_string(out.size() + 1) + " of '" + text +
                       "' is empty; list GPU ids separated by single commas (a100-sxm4-80gb,gtx-1080-ti:2)");
    }
    part = part.substr(b, e - b + 1);
    GpuCount g;
    const auto colon = part.rfind(':');
    // A GPU file path may hold a colon only before its last path separator; a count follows the last colon.
    if (colon != std::string::npos && part.find('/', colon) == std::string::npos) {
      const std::string n = part.substr(colon + 1);
      g.gpu = part.substr(0, colon);
      int v = 0;
      const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
      if (ec != std::errc() || ptr != n.data() + n.size() || v <= 0)
        throw InputError(flag + " takes id or id:count with a positive whole count, got '" + part + "'");
      g.count = v;
    } else {
      g.gpu = part;
    }
    if (g.gpu.empty()) throw InputError(flag + ": an entry has no GPU id ('" + part + "')");
    // The same GPU twice at the same count would be the same row twice; at two counts it is a scaling comparison.
    const auto resolved = [default_count](int count) { return count > 0 ? count : default_count; };
    for (const GpuCount& seen : out)
      if (seen.gpu == g.gpu && resolved(seen.count) == resolved(g.count))
        throw InputError(flag + ": " + g.gpu + (g.count > 0 ? ":" + std::to_string(g.count) : std::string()) +
                         " is listed twice; use " + g.gpu + ":2 for two of them on each node, or list it once");
    out.push_back(g);
  }
  if (out.empty()) throw InputError(flag + " needs at least one GPU id");
  return out;
}

std::vector<CompareRow> compare(const PredictRequest& base, const std::vector<GpuCount>& gpus, const RunSize& size,
                                const PriceCatalog& catalog, const DataParallelOptions& options,
                                std::optional<double> pue) {
  if (gpus.empty()) throw InputError("--gpu needs at least one GPU id");
  check_run_size(size);
  // One row per GPU, predicted on every worker thread, in the order given.
  std::vector<CompareRow> rows(gpus.size());
  parallel_for(gpus.size(), [&](std::size_t i) {
    const GpuCount& entry = gpus[i];
    CompareRow row;
    row.gpu = entry.gpu;
    PredictRequest r = base;
    r.gpu = entry.gpu;
    if (entry.count > 0) r.gpus = entry.count;
    // --instances, --cores and --numa-pages describe a CPU's processes and pages; the GPUs of the same comparison run one
    // process each and take neither.
    if (!is_cpu_device(r.gpu)) {
      r.instances = 1;
      r.cores = 0;
      r.numa_pages.clear();
    }
    row.gpus_per_node = r.gpus;
    try {
      Prediction p = wants_best_precision(r) ? predict_best_precision(r, options) : predict_data_parallel(r, options);
      row.memory_headroom_bytes = p.memory.capacity - p.memory.total;
      double samples = 0;
      if (p.memory.fits && (size.dataset_samples > 0 || default_dataset_samples(p))) samples = run_samples(p, size);
      if (samples > 0) {
        row.rental = rent(catalog, p.device.id, r.gpus, r.nodes);
        row.run = row.rental ? run_cost(p, samples, row.rental->instance, row.rental->instances, pue)
                             : run_cost(p, samples, nullptr, 1, pue);
      }
      if (p.scale && p.scale->gpus_total > 1 && looks_up_tables(p.step) && !reads_tables_from_host(p.step) &&
          p.memory.fits) {
        PredictRequest one = r;
        one.gpus = 1;
        one.nodes = 1;
        one.precision = p.request.precision;  // "best" resolved: the same precision on one GPU
        try {
          const Prediction single = predict_data_parallel(one, options);
          if (reads_tables_from_host(single.step) && single.memory.fits) {
            row.scaling_baseline_differs = true;
            row.one_gpu_samples_per_s = single.samples_per_s;
          }
        } catch (const UnsupportedError&) {
          // No one-GPU run to set beside it: the efficiency stays as computed.
        }
      }
      row.prediction = std::move(p);
    } catch (const UnsupportedError& e) {
      row.status = std::string("unsupported: ") + e.what();
    }
    try {
      PredictRequest b = r;
      b.precision = "best";
      const Prediction best = predict_best_precision(b, options, PrecisionChoice::kFastestTellable);
      if (best.memory.fits) {
        row.best_precision = best.request.precision;
        row.best_samples_per_s = best.samples_per_s;
      }
    } catch (const UnsupportedError&) {
    }
    rows[i] = std::move(row);
  });
  return rows;
}

std::vector<GpuOverCpu> gpu_over_cpu(const std::vector<CompareRow>& rows) {
  std::vector<GpuOverCpu> out;
  const auto usable = [](const CompareRow& r) { return r.prediction && r.prediction->memory.fits && r.prediction->samples_per_s > 0; };
  for (const auto& g : rows) {
    if (!usable(g) || g.prediction->device.kind != DeviceKind::kGpu) continue;
    for (const auto& c : rows) {
      if (!usable(c) || c.prediction->device.kind != DeviceKind::kCpu) continue;
      GpuOverCpu x;
      x.gpu = g.gpu;
      x.cpu = c.gpu;
      x.gpu_samples_per_s = g.prediction->samples_per_s;
      x.cpu_samples_per_s = c.prediction->samples_per_s;
      x.speedup = x.gpu_samples_per_s / x.cpu_samples_per_s;
      x.claim = cpu_cost_constants().gpu_over_cpu_claim;
      x.claim_off_by = x.claim / x.speedup;
      out.push_back(x);
    }
  }
  return out;
}

}  // namespace perfcast
