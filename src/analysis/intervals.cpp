#include "analysis/intervals.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <set>

#include "analysis/validate.h"
#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "cost/kernel_cost.h"

namespace perfcast {

namespace {

std::string precision_class(const std::string& precision) {
  if (precision == "fp32" || precision == "tf32") return precision;
  if (precision == "amp" || precision == "fp16" || precision == "bf16" || precision == "amp-bf16" ||
      precision == "f16")
    return "half";
  if (precision == "int8" || precision == "fp8") return precision;
  return "quantized";  // GGUF types
}

std::string family_group(const std::string& family) {
  if (family == "cnn" || family == "cnn3d" || family == "detection" || family == "segmentation") return "conv";
  if (family == "transformer" || family == "vision_transformer") return "transformer";
  return family.empty() ? "other" : family;
}

std::string runtime_family(const std::string& runtime) {
  const auto dash = runtime.find('-');
  return dash == std::string::npos ? runtime : runtime.substr(0, dash);
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

struct Table {
  double level = 0;
  std::map<std::string, IntervalRegime> regimes;
  std::map<std::string, WhatIfSpread> what_ifs;
};

const Table& table() {
  static Table t;
  static std::once_flag once;
  std::call_once(once, [] {
    const auto path = data_dir() / "intervals.toml";
    if (!std::filesystem::exists(path)) return;  // no table yet: predictions carry no interval
    const toml::table doc = parse_toml_file(path);
    const TomlFields top(doc, path.string());
    t.level = top.number("level");
    if (const auto* arr = doc["regime"].as_array())
      for (const auto& node : *arr) {
        const auto* tab = node.as_table();
        if (!tab) continue;
        const TomlFields f(*tab, path.string() + " [[regime]]");
        IntervalRegime r;
        r.key = f.text("key");
        r.rows = f.count("rows");
        r.sources = static_cast<int>(f.number_or("sources", 0));
        r.low = f.number("low");
        r.median = f.number("median");
        r.high = f.number("high");
        t.regimes[r.key] = r;
      }
    if (const auto* arr = doc["what_if"].as_array())
      for (const auto& node : *arr) {
        const auto* tab = node.as_table();
        if (!tab) continue;
        const TomlFields f(*tab, path.string() + " [[what_if]]");
        WhatIfSpread w;
        w.kind = f.text("kind");
        w.pairs = f.count("pairs");
        w.spread = f.number("spread");
        t.what_ifs[w.kind] = w;
      }
  });
  return t;
}

// The regime in `regimes` that the most specific of `keys` names.
const IntervalRegime* lookup(const std::map<std::string, IntervalRegime>& regimes, const std::vector<std::string>& keys) {
  for (const auto& k : keys)
    if (auto it = regimes.find(k); it != regimes.end()) return &it->second;
  return nullptr;
}

// The q-quantile of values carrying weights (linear between the midpoints of their cumulative weights).
double weighted_quantile(std::vector<std::pair<double, double>> v, double q) {
  std::sort(v.begin(), v.end());
  double total = 0;
  for (const auto& [x, w] : v) total += w;
  if (v.empty() || total <= 0) return 0;
  double before = 0;
  double prev_at = -1, prev_x = v.front().first;
  for (const auto& [x, w] : v) {
    const double at = (before + w / 2) / total;  // this value's midpoint on the cumulative scale
    if (at >= q) {
      if (prev_at < 0) return x;
      return prev_x + (x - prev_x) * (q - prev_at) / (at - prev_at);
    }
    prev_at = at;
    prev_x = x;
    before += w;
  }
  return v.back().first;
}

std::map<std::string, IntervalRegime> fit_regimes(const std::vector<const IntervalSample*>& samples,
                                                 const IntervalSetup& setup) {
  std::map<std::string, std::vector<const IntervalSample*>> by_key;
  for (const auto* s : samples)
    for (const auto& k : s->keys) by_key[k].push_back(s);
  std::map<std::string, IntervalRegime> out;
  const double tail = (1.0 - setup.level) / 2.0;
  for (auto& [k, v] : by_key) {
    // Every source weighs the same inside a regime: one large benchmark log must not set the interval alone,
    // and a regime seen by too few sources falls back to a coarser one.
    std::map<std::string, int> per_source;
    for (const auto* s : v) ++per_source[s->source];
    if (k != "all" && (static_cast<int>(v.size()) < setup.min_rows ||
                       static_cast<int>(per_source.size()) < setup.min_sources))
      continue;
    std::vector<std::pair<double, double>> w;
    for (const auto* s : v) w.emplace_back(s->log_ratio, 1.0 / per_source[s->source]);
    IntervalRegime r;
    r.key = k;
    r.rows = static_cast<int>(v.size());
    r.sources = static_cast<int>(per_source.size());
    r.low = std::exp(weighted_quantile(w, tail));
    r.median = std::exp(weighted_quantile(w, 0.5));
    r.high = std::exp(weighted_quantile(w, 1.0 - tail));
    out[k] = r;
  }
  return out;
}

// Every prefix of `dims` as a regime key, longest (most specific) first.
std::vector<std::string> key_chain(const std::vector<std::pair<const char*, std::string>>& dims) {
  std::vector<std::string> keys;
  for (std::size_t n = dims.size(); n >= 1; --n) {
    std::string k;
    for (std::size_t i = 0; i < n; ++i) k += (i ? ";" : "") + std::string(dims[i].first) + "=" + dims[i].second;
    keys.push_back(k);
  }
  return keys;
}

bool covers(const IntervalRegime& r, double log_ratio) {
  return log_ratio >= std::log(r.low) && log_ratio <= std::log(r.high);
}

}  // namespace

std::vector<std::string> regime_keys(const PredictionFacts& p) {
  const auto& q = p.request;
  // A CPU's step comes from the CPU cost model (docs/cpu-model.md), whose errors are not the GPU kernel model's: CPU
  // rows form a chain of their own under `device=cpu`, down to `device=cpu` itself and never to a GPU regime or
  // "all". A CPU regime without enough rows (data/interval_setup.toml) leaves the prediction without an interval.
  if (p.device.kind == DeviceKind::kCpu) {
    const std::vector<std::pair<const char*, std::string>> dims{{"device", "cpu"},
                                                                {"mode", mode_string(q.mode)},
                                                                {"family", family_group(p.model_family)},
                                                                {"precision", precision_class(q.precision)},
                                                                {"bound", std::string(bound_name(p.primary))},
                                                                {"batch", q.batch <= 16 ? "small" : "large"},
                                                                {"arch", p.device.architecture},
                                                                {"runtime", runtime_family(q.runtime)}};
    return key_chain(dims);
  }
  std::vector<std::pair<const char*, std::string>> dims{{"mode", mode_string(q.mode)}};
  // A step whose host issues work more slowly than the GPU runs it (host_us > gpu_us, the host-bound rule of
  // docs/host-model.md) takes its time from the host model (per-op dispatch costs, the host's speed), whose errors
  // are not the kernel model's: such rows get their own branch right after the mode, so that they neither borrow
  // the quantiles of GPU-bound rows of their family and precision nor widen them. GPU-bound rows keep the keys
  // they had before the branch existed.
  if (host_bound(p)) dims.emplace_back("host", "bound");
  dims.insert(dims.end(), {{"family", family_group(p.model_family)},
                           {"precision", precision_class(q.precision)},
                           {"bound", std::string(bound_name(p.primary))},
                           {"batch", q.batch <= 16 ? "small" : "large"},
                           {"gpus", q.gpus * q.nodes > 1 ? "multi" : "one"},
                           {"arch", p.device.architecture},
                           {"runtime", runtime_family(q.runtime)}});
  std::vector<std::string> keys = key_chain(dims);
  keys.emplace_back("all");
  return keys;
}

std::optional<PredictionInterval> prediction_interval(const Prediction& p) {
  if (!p.memory.fits) return std::nullopt;
  const Table& t = table();
  const IntervalRegime* r = lookup(t.regimes, regime_keys(facts_of(p)));
  if (!r) return std::nullopt;
  return PredictionInterval{t.level, r->low, r->high, r->key, r->rows};
}

std::string no_interval_reason(const Prediction& p) {
  if (!p.memory.fits) return "";
  const IntervalSetup setup = interval_setup();
  if (p.device.kind == DeviceKind::kCpu)
    return fmt::format("no CPU regime of data/intervals.toml has {} measured CPU rows from {} sources "
                       "(data/interval_setup.toml), and CPU predictions do not borrow GPU residuals",
                       setup.min_rows, setup.min_sources);
  return "data/intervals.toml has no regime for it (run perfcast fit-intervals)";
}

std::optional<WhatIfSpread> what_if_spread(const std::string& category) {
  const std::string kind = category == "precision"   ? "precision"
                           : category == "batch"     ? "batch"
                           : category == "hardware"  ? "gpu"
                           : category == "scale-out" ? "gpus"
                                                     : "any";
  const auto& w = table().what_ifs;
  if (auto it = w.find(kind); it != w.end()) return it->second;
  if (auto it = w.find("any"); it != w.end()) return it->second;
  return std::nullopt;
}

std::map<std::string, WhatIfSpread> fit_what_ifs(const std::vector<std::vector<const ValidationRow*>>& files,
                                                 const IntervalSetup& setup) {
  // Every input column of a row, the one that varies left out (metric too: ratios compare like with like).
  const auto key_without = [](const ConfigRow& r, const std::string& skip) {
    const std::vector<std::pair<const char*, const std::string*>> cols{
        {"gpu", &r.gpu},       {"model", &r.model},         {"runtime", &r.runtime},
        {"mode", &r.mode},     {"precision", &r.precision}, {"batch", &r.batch},
        {"seq", &r.seq},       {"n_gpus", &r.n_gpus},       {"interconnect", &r.interconnect},
        {"data", &r.data},     {"optimizer_step", &r.optimizer_step}, {"runtime_version", &r.runtime_version},
        {"layout", &r.layout}, {"host", &r.host},           {"host_cores", &r.host_cores},
        {"gpu_decode", &r.gpu_decode}, {"prefetch", &r.prefetch}, {"context", &r.context},
        {"kv_precision", &r.kv_precision}, {"strategy", &r.strategy}, {"fused_optimizer", &r.fused_optimizer},
        {"grad_accum", &r.grad_accum}, {"attention", &r.attention}, {"metric", &r.metric}};
    std::string k;
    for (const auto& [name, v] : cols)
      if (skip != name) k += *v + "|";
    return k;
  };
  const auto value_of = [](const ConfigRow& r, const std::string& field) -> const std::string& {
    if (field == "precision") return r.precision;
    if (field == "batch") return r.batch;
    if (field == "gpu") return r.gpu;
    return r.n_gpus;
  };
  std::map<std::string, std::vector<double>> abs_r;
  for (const std::string field : {"precision", "batch", "gpu", "n_gpus"}) {
    const std::string kind = field == "n_gpus" ? "gpus" : field;
    for (const auto& rows : files) {
      std::map<std::string, std::vector<const ValidationRow*>> groups;
      for (const auto* v : rows) groups[key_without(v->result.row, field)].push_back(v);
      for (const auto& [k, g] : groups) {
        // Pairs within a group; a group is one configuration across the varied field, a handful of rows.
        const std::size_t n = std::min<std::size_t>(g.size(), 64);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = i + 1; j < n; ++j) {
            if (value_of(g[i]->result.row, field) == value_of(g[j]->result.row, field)) continue;
            // ratio = predicted / measured, so ln(measured ratio / predicted ratio) = ln(ratio_j / ratio_i).
            const double r = std::fabs(std::log(g[j]->ratio / g[i]->ratio));
            abs_r[kind].push_back(r);
            abs_r["any"].push_back(r);
          }
      }
    }
  }
  std::map<std::string, WhatIfSpread> out;
  for (auto& [kind, v] : abs_r) {
    if (static_cast<int>(v.size()) < setup.min_rows) continue;
    out[kind] = WhatIfSpread{kind, static_cast<int>(v.size()), std::exp(quantile(v, setup.level))};
  }
  return out;
}

IntervalSetup interval_setup() {
  const auto path = data_dir() / "interval_setup.toml";
  const toml::table doc = parse_toml_file(path);
  const TomlFields f(doc, path.string());
  IntervalSetup s;
  s.level = f.number("level");
  s.min_rows = f.count("min_rows");
  s.min_sources = f.count("min_sources");
  if (!(s.level > 0 && s.level < 1)) f.fail("level", "must lie between 0 and 1");
  if (s.min_rows < 1) f.fail("min_rows", "must be at least 1");
  if (const auto* arr = doc["cpu_calibration_files"].as_array())
    for (const auto& node : *arr)
      if (const auto v = node.value<std::string>()) s.cpu_calibration_files.push_back(*v);
  return s;
}

std::string source_id(const std::string& col) {
  std::string s = col;
  for (const char* scheme : {"https://", "http://"})
    if (s.rfind(scheme, 0) == 0) {
      s = s.substr(std::string(scheme).size());
      return s.substr(0, s.find('/'));
    }
  s = s.substr(0, s.find(':'));
  const auto first = s.find('/');
  if (first == std::string::npos) return s.empty() ? "unknown" : s;
  const auto second = s.find('/', first + 1);
  return s.substr(0, second);
}

IntervalFit fit_intervals(const std::vector<IntervalSample>& samples, const IntervalSetup& setup) {
  IntervalFit fit;
  fit.setup = setup;
  std::vector<const IntervalSample*> all;
  for (const auto& s : samples) all.push_back(&s);
  // One fit over every row: CPU rows carry only `device=cpu` keys, so they never enter a GPU regime (nor GPU rows a
  // CPU one). Coverage is judged for GPU rows (the figures the table always reported) and CPU rows apart.
  fit.regimes = fit_regimes(all, setup);
  std::map<std::string, std::vector<const IntervalSample*>> by_source;
  for (const auto& s : samples) by_source[s.source].push_back(&s);
  std::map<const IntervalSample*, bool> loso_in;
  for (const auto& [source, rows] : by_source) {
    std::vector<const IntervalSample*> rest;
    for (const auto& s : samples)
      if (s.source != source) rest.push_back(&s);
    const auto regimes = fit_regimes(rest, setup);
    for (const auto* s : rows) {
      const auto* r = lookup(regimes, s->keys);
      loso_in[s] = r && covers(*r, s->log_ratio);
    }
  }
  const auto group = [](const IntervalSample& s) { return s.host_bound ? "host_bound" : "gpu_bound"; };
  int gpu_rows = 0, in = 0, loso = 0;
  std::map<std::string, std::pair<int, int>> gpu_per_source, cpu_per_source;  // rows, LOSO rows inside
  std::set<std::string> cpu_sources;
  for (const auto& s : samples) {
    const auto* r = lookup(fit.regimes, s.keys);
    const bool inside = r && covers(*r, s.log_ratio);
    const bool out_inside = loso_in.at(&s);
    auto& per = s.cpu ? cpu_per_source[s.source] : gpu_per_source[s.source];
    ++per.first;
    per.second += out_inside ? 1 : 0;
    if (s.cpu) {
      ++fit.cpu.rows;
      fit.cpu.in_sample += inside ? 1 : 0;
      fit.cpu.loso += out_inside ? 1 : 0;
      fit.cpu.with_regime += r ? 1 : 0;
      continue;
    }
    ++gpu_rows;
    auto& g = fit.by_host[group(s)];
    ++g.rows;
    if (inside) {
      ++in;
      g.in_sample += 1;
    }
    if (out_inside) {
      ++loso;
      g.loso += 1;
    }
  }
  fit.samples = gpu_rows;
  fit.in_sample_coverage = gpu_rows == 0 ? 0 : static_cast<double>(in) / gpu_rows;
  fit.loso_coverage = gpu_rows == 0 ? 0 : static_cast<double>(loso) / gpu_rows;
  for (const auto& [src, c] : gpu_per_source)
    fit.leave_one_source_out[src] = {c.first, static_cast<double>(c.second) / c.first};
  for (const auto& [src, c] : cpu_per_source)
    fit.cpu.leave_one_source_out[src] = {c.first, static_cast<double>(c.second) / c.first};
  fit.cpu.sources = static_cast<int>(cpu_per_source.size());
  if (fit.cpu.rows > 0) {
    fit.cpu.in_sample /= fit.cpu.rows;
    fit.cpu.loso /= fit.cpu.rows;
  }
  for (auto& [name, g] : fit.by_host) {
    g.in_sample /= g.rows;
    g.loso /= g.rows;
  }
  return fit;
}

IntervalFit fit_intervals(const std::string& dir, const IntervalSetup& setup) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : calibration_files(dir)) files.emplace_back(f);
  // Calibration files whose names start with eval_ (data/validation/README.md): their CPU rows join the fit.
  std::set<std::string> cpu_only;
  for (const auto& name : setup.cpu_calibration_files)
    if (const auto f = std::filesystem::path(dir) / name; std::filesystem::exists(f)) {
      files.push_back(f);
      cpu_only.insert(name);
    }
  std::vector<IntervalSample> samples;
  std::vector<std::string> names;
  std::vector<ValidationReport> reports;
  for (const auto& f : files) {
    names.push_back(f.filename().string());
    reports.push_back(validate_file(f.string()));
    if (cpu_only.count(names.back()))
      std::erase_if(reports.back().rows, [](const ValidationRow& row) {
        return row.result.prediction->device.kind != DeviceKind::kCpu;
      });
    for (const auto& row : reports.back().rows) {
      IntervalSample s;
      s.cpu = row.result.prediction->device.kind == DeviceKind::kCpu;
      s.keys = regime_keys(*row.result.prediction);
      s.log_ratio = -std::log(row.ratio);  // ratio = predicted / measured
      s.source = source_id(row.result.row.source);
      s.file = names.back();
      s.host_bound = host_bound(*row.result.prediction);
      samples.push_back(std::move(s));
    }
  }
  IntervalFit fit = fit_intervals(samples, setup);
  fit.files = names;
  std::vector<std::vector<const ValidationRow*>> per_file;
  for (const auto& rep : reports) {
    per_file.emplace_back();
    for (const auto& row : rep.rows)
      if (row.result.prediction->device.kind != DeviceKind::kCpu) per_file.back().push_back(&row);
  }
  fit.what_ifs = fit_what_ifs(per_file, setup);
  return fit;
}

std::string interval_fit_toml(const IntervalFit& fit) {
  std::string files;
  for (const auto& f : fit.files) files += (files.empty() ? "" : ", ") + f;
  std::string s = fmt::format(
      "# Prediction intervals: quantiles of measured / predicted throughput per regime.\n"
      "# Generated by `perfcast fit-intervals` (src/analysis/intervals.h) from the calibration files of\n"
      "# data/validation ({}); do not edit by hand. {} rows; in-sample coverage {:.1f}%, leave-one-source-out\n"
      "# coverage {:.1f}% at level {:.2f} (GPU rows). {} CPU rows from {} sources (regimes under device=cpu): in-sample\n"
      "# coverage {:.1f}%, leave-one-source-out {:.1f}%. Setup: data/interval_setup.toml.\n"
      "level = {}\n",
      files, fit.samples, fit.in_sample_coverage * 100, fit.loso_coverage * 100, fit.setup.level, fit.cpu.rows,
      fit.cpu.sources, fit.cpu.in_sample * 100, fit.cpu.loso * 100, fit.setup.level);
  for (const auto& [k, w] : fit.what_ifs)
    s += fmt::format("\n[[what_if]]\nkind = \"{}\"\npairs = {}\nspread = {:.4f}\n", k, w.pairs, w.spread);
  for (const auto& [k, r] : fit.regimes)
    s += fmt::format("\n[[regime]]\nkey = \"{}\"\nrows = {}\nsources = {}\nlow = {:.4f}\nmedian = {:.4f}\nhigh = {:.4f}\n", k,
                     r.rows, r.sources, r.low, r.median, r.high);
  return s;
}

std::string interval_fit_markdown(const IntervalFit& fit) {
  std::string s = fmt::format(
      "# Prediction intervals (generated by `perfcast fit-intervals`)\n\n"
      "{} measured rows of the calibration files; {} regimes with at least {} rows from at least {} sources (plus `all`),\n"
      "every source weighing the same inside a regime. Level {:.0f}%.\n\n"
      "| coverage | share of rows inside their interval |\n|---|---:|\n"
      "| in sample (the table judged on the rows it was fitted on) | {:.1f}% |\n"
      "| leave one source out (each source judged by a table fitted without it) | {:.1f}% |\n\n"
      "## Leave-one-source-out coverage per source\n\n| source | rows | coverage |\n|---|---:|---:|\n",
      fit.samples, fit.regimes.size() - 1, fit.setup.min_rows, fit.setup.min_sources, fit.setup.level * 100, fit.in_sample_coverage * 100,
      fit.loso_coverage * 100);
  for (const auto& [src, c] : fit.leave_one_source_out)
    s += fmt::format("| {} | {} | {:.0f}% |\n", src, c.rows, c.coverage * 100);
  s += "\n## Coverage of host-bound and GPU-bound rows\n\nA row is host-bound when its predicted host time exceeds its "
       "GPU time (docs/host-model.md); such rows form their own branch of the regime keys (`host=bound`).\n\n"
       "| rows | count | in sample | leave one source out |\n|---|---:|---:|---:|\n";
  for (const auto& [name, g] : fit.by_host)
    s += fmt::format("| {} | {} | {:.1f}% | {:.1f}% |\n", name == "host_bound" ? "host-bound" : "GPU-bound", g.rows,
                     g.in_sample * 100, g.loso * 100);
  const auto& c = fit.cpu;
  s += fmt::format(
      "\n## CPU rows\n\nCPU predictions take their interval from regimes of their own (`device=cpu;...`, down to "
      "`device=cpu`), never from GPU residuals; the coverages above are over GPU rows only. {} CPU rows from {} sources; "
      "{} of them with a `device=cpu` regime in the table (a regime needs {} rows from {} sources); a row without one "
      "counts as outside.\n\n"
      "| CPU rows | in sample | leave one source out |\n|---:|---:|---:|\n| {} | {:.1f}% | {:.1f}% |\n\n"
      "| source | CPU rows | leave-one-source-out coverage |\n|---|---:|---:|\n",
      c.rows, c.sources, c.with_regime, fit.setup.min_rows, fit.setup.min_sources, c.rows, c.in_sample * 100,
      c.loso * 100);
  for (const auto& [src, sc] : c.leave_one_source_out)
    s += fmt::format("| {} | {} | {:.0f}% |\n", src, sc.rows, sc.coverage * 100);
  s += "\n## What-if speedups\n\nMeasured pairs of rows in one file that differ in one input only; a predicted speedup S "
       "lies in [S / spread, S x spread] at the level above.\n\n| varied input | pairs | spread |\n|---|---:|---:|\n";
  for (const auto& [k, w] : fit.what_ifs) s += fmt::format("| {} | {} | {:.2f} |\n", k, w.pairs, w.spread);
  s += "\n## Widest and narrowest regimes (measured / predicted)\n\n| regime | rows | low | median | high |\n"
       "|---|---:|---:|---:|---:|\n";
  std::vector<const IntervalRegime*> v;
  for (const auto& [k, r] : fit.regimes) v.push_back(&r);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->high / a->low > b->high / b->low; });
  const std::size_t n = std::min<std::size_t>(8, v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i < n || i + n >= v.size())
      s += fmt::format("| `{}` | {} | {:.2f} | {:.2f} | {:.2f} |\n", v[i]->key, v[i]->rows, v[i]->low, v[i]->median,
                       v[i]->high);
  return s;
}

}  // namespace perfcast
