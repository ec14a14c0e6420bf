#include "analysis/what_if_pairs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string_view>

#include "analysis/intervals.h"
#include "core/data_files.h"
#include "core/median.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// `from_label` and `to_label` name the varied input on each side ("fp32" -> "amp", "1" -> "8").
WhatIfPair pair_of(const ValidationRow& from, const ValidationRow& to, const std::string& file, const char* varied,
                   std::string from_label, std::string to_label) {
  const ConfigRow& r = to.result.row;
  WhatIfPair p;
  p.file = file;
  p.varied = varied;
  p.from = std::move(from_label);
  p.to = std::move(to_label);
  p.line_from = from.result.row.line;
  p.line_to = r.line;
  p.gpu = r.gpu;
  p.model = r.model;
  p.runtime = to.result.prediction->request.runtime;
  p.mode = mode_string(to.result.prediction->request.mode);
  p.batch = r.batch;
  p.interconnect = r.interconnect;
  p.measured = *r.measured / *from.result.row.measured;
  p.predicted = to.predicted / from.predicted;
  p.error_pct = std::fabs(p.predicted / p.measured - 1.0) * 100.0;
  p.from_bias_pct = (from.ratio - 1.0) * 100.0;
  p.to_bias_pct = (to.ratio - 1.0) * 100.0;
  return p;
}

// Benchmarks often choose the memory layout by precision (NVIDIA's DeepLearningExamples run AMP channels-last and
// FP32 NCHW): the published what-if is then "half precision in its layout against FP32 in its own". Two rows of a
// setup pair when their layouts are equal, or when the layout follows the precision: no row of the half precision in
// the FP32 row's layout and no FP32 row in the half row's layout, so that the pair is the setup's only one.
bool layouts_pair(const std::vector<const ValidationRow*>& setup, const ValidationRow& fp32, const ValidationRow& half) {
  const std::string& lf = fp32.result.row.layout;
  const std::string& lh = half.result.row.layout;
  if (lf == lh) return true;
  return std::none_of(setup.begin(), setup.end(), [&](const ValidationRow* v) {
    const ConfigRow& r = v->result.row;
    return (r.precision == half.result.row.precision && r.layout == lf) || (r.precision == "fp32" && r.layout == lh);
  });
}

// Metrics already divided by the GPU count: their N-GPU / 1-GPU ratio is the efficiency itself.
bool per_gpu_metric(const std::string& metric) { return metric == "tokens_per_s_per_gpu" || metric == "mfu"; }

}  // namespace

WhatIfPairSetup what_if_pair_setup() {
  const auto path = data_dir() / "what_if_pairs.toml";
  const toml::table doc = parse_toml_file(path);
  const TomlFields f(doc, path.string());
  WhatIfPairSetup s;
  s.gain_threshold = f.number("gain_threshold");
  s.poor_scaling_below = f.number("poor_scaling_below");
  s.worst_listed = f.count("worst_listed");
  if (!(s.gain_threshold > 1)) f.fail("gain_threshold", "must be above 1 (a gain)");
  if (!(s.poor_scaling_below > 0 && s.poor_scaling_below <= 1)) f.fail("poor_scaling_below", "must lie in (0, 1]");
  return s;
}

std::string precision_pair_class(const std::string& precision) {
  if (precision == "amp" || precision == "fp16" || precision == "bf16" || precision == "amp-bf16") return "half";
  return precision;
}

bool in_precision_target(const WhatIfPair& p) { return p.varied != "gpus" && p.to != "tf32"; }

namespace {

// The what-if interval of the pair's kind (data/intervals.toml), and whether the measured ratio lies inside it.
void set_spread(WhatIfPair& p) {
  if (const auto w = what_if_spread_of_kind(what_if_kind_of_pair(p.varied))) {
    p.spread = w->spread;
    p.inside = std::fabs(std::log(p.measured / p.predicted)) <= std::log(w->spread);
  }
}

// Rows that do not fit have no throughput to compare; a board-power row measures no throughput.
bool has_throughput(const ValidationRow& v) {
  return v.result.prediction->memory.fits && v.predicted > 0 && !is_power_metric(v.result.row.metric);
}

}  // namespace

std::vector<WhatIfPair> precision_pairs(const std::vector<ValidationRow>& rows, const std::string& file) {
  const WhatIfPairSetup setup = what_if_pair_setup();
  static const std::vector<std::string_view> same_batch(kPrecisionPairSkip.begin(), kPrecisionPairSkip.end());
  static const std::vector<std::string_view> own_batch = [] {
    std::vector<std::string_view> s = same_batch;
    s.push_back("batch");
    return s;
  }();
  std::vector<WhatIfPair> out;
  // A group with two rows of one value (a repeated measurement) pairs each with the other side.
  std::map<std::string, std::vector<const ValidationRow*>> by_precision, by_precision_batch;
  for (const auto& v : rows) {
    if (!has_throughput(v)) continue;
    by_precision[setup_key(v.result.row, same_batch)].push_back(&v);
    by_precision_batch[setup_key(v.result.row, own_batch)].push_back(&v);
  }
  const auto add = [&](WhatIfPair p) {
    p.wrong_side = (p.measured >= setup.gain_threshold) != (p.predicted >= setup.gain_threshold);
    set_spread(p);
    out.push_back(std::move(p));
  };
  for (const auto& [k, g] : by_precision)
    for (const auto* base : g) {
      if (base->result.row.precision != "fp32") continue;
      for (const auto* other : g) {
        const std::string& to = other->result.row.precision;
        if (to == "fp32" || !layouts_pair(g, *base, *other)) continue;
        add(pair_of(*base, *other, file, "precision", "fp32", to));
      }
    }
  // The batch each precision's run chose (benchmarks often double it at half precision): only where the setup has
  // one fp32 row and one row of the other precision, so that the pair is unambiguous.
  for (const auto& [k, g] : by_precision_batch) {
    std::map<std::string, std::vector<const ValidationRow*>> per;
    for (const auto* v : g) per[v->result.row.precision].push_back(v);
    const auto base = per.find("fp32");
    if (base == per.end() || base->second.size() != 1) continue;
    for (const auto& [to, rows_to] : per) {
      if (to == "fp32" || rows_to.size() != 1 ||
          rows_to.front()->result.row.batch == base->second.front()->result.row.batch)
        continue;
      add(pair_of(*base->second.front(), *rows_to.front(), file, "precision+batch",
                  "fp32 b" + base->second.front()->result.row.batch, to));
    }
  }
  return out;
}

std::vector<WhatIfPair> what_if_pairs(const ValidationReport& rep) {
  std::vector<WhatIfPair> out = rep.precision_pairs;
  const std::string file = std::filesystem::path(rep.file).filename().string();
  std::map<std::string, std::vector<const ValidationRow*>> by_gpus;
  for (const auto& v : rep.rows)
    if (has_throughput(v))
      by_gpus[setup_key(v.result.row, {kGpuCountPairSkip.begin(), kGpuCountPairSkip.end()})].push_back(&v);
  for (const auto& [k, g] : by_gpus)
    for (const auto* one : g) {
      if (one->result.prediction->request.gpus * one->result.prediction->request.nodes != 1) continue;
      for (const auto* many : g) {
        const int n = many->result.prediction->request.gpus * many->result.prediction->request.nodes;
        if (n <= 1) continue;
        WhatIfPair p = pair_of(*one, *many, file, "gpus", "1", std::to_string(n));
        const double per = per_gpu_metric(many->result.row.metric) ? 1.0 : static_cast<double>(n);
        p.measured_efficiency = p.measured / per;
        p.predicted_efficiency = p.predicted / per;
        set_spread(p);
        out.push_back(std::move(p));
      }
    }
  return out;
}

WhatIfPairStats what_if_pair_stats(const std::vector<const WhatIfPair*>& pairs, const WhatIfPairSetup& setup) {
  WhatIfPairStats s;
  s.pairs = static_cast<int>(pairs.size());
  std::vector<double> err, eff, eff_signed, poor, poor_signed;
  for (const auto* p : pairs) {
    err.push_back(p->error_pct);
    if (p->wrong_side) ++s.wrong_side;
    if (p->spread > 0) {
      ++s.with_spread;
      s.coverage += p->inside ? 1 : 0;
    }
    if (p->varied != "gpus") continue;
    const double d = (p->predicted_efficiency - p->measured_efficiency) * 100.0;
    eff.push_back(std::fabs(d));
    eff_signed.push_back(d);
    if (p->measured_efficiency < setup.poor_scaling_below) {
      poor.push_back(std::fabs(d));
      poor_signed.push_back(d);
    }
  }
  if (s.with_spread > 0) s.coverage /= s.with_spread;
  s.median_error_pct = median(err);
  s.mean_error_pct = mean(err);
  s.efficiency_mean_points = mean(eff);
  s.efficiency_median_points = median(eff);
  s.efficiency_bias_points = mean(eff_signed);
  s.poor = static_cast<int>(poor.size());
  s.poor_mean_points = mean(poor);
  s.poor_median_points = median(poor);
  s.poor_bias_points = mean(poor_signed);
  return s;
}

}  // namespace perfcast
