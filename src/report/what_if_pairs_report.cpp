#include "report/what_if_pairs_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fmt/ranges.h>
#include <map>

namespace perfcast {

namespace {

constexpr const char* kPooled = "all files";

struct Scope {
  std::string file, scope;
  std::vector<const WhatIfPair*> pairs;
};

// Per file then pooled: the precision scopes (the target pool, then each precision class), or the gpus scope.
std::vector<Scope> scopes(const std::vector<std::string>& files, const std::vector<WhatIfPair>& pairs,
                          const std::string& varied) {
  std::vector<std::string> names = files;
  names.emplace_back(kPooled);
  std::vector<Scope> out;
  for (const auto& f : names) {
    std::map<std::string, std::vector<const WhatIfPair*>> by;
    for (const auto& p : pairs) {
      if (p.varied != varied || (f != kPooled && p.file != f)) continue;
      if (varied == "gpus") {
        by["1 -> N GPUs"].push_back(&p);
        continue;
      }
      if (in_precision_target(p)) by[kPrecisionTargetScope].push_back(&p);
      by["fp32 -> " + precision_pair_class(p.to)].push_back(&p);
    }
    for (auto& [k, v] : by) out.push_back({f, k, std::move(v)});
  }
  return out;
}

std::string pair_setup(const WhatIfPair& p) {
  return fmt::format("{} {} {} {} b{}", p.gpu, p.model, p.runtime, p.mode, p.batch);
}

std::vector<const WhatIfPair*> worst(const std::vector<WhatIfPair>& pairs, const std::string& varied,
                                     const WhatIfPairSetup& setup) {
  std::vector<const WhatIfPair*> v;
  for (const auto& p : pairs)
    if (p.varied == varied) v.push_back(&p);
  const auto gap = [&](const WhatIfPair* p) {
    return varied == "gpus" ? std::fabs(p->predicted_efficiency - p->measured_efficiency) : p->error_pct;
  };
  std::sort(v.begin(), v.end(), [&](auto* a, auto* b) { return gap(a) > gap(b); });
  if (v.size() > static_cast<std::size_t>(setup.worst_listed)) v.resize(static_cast<std::size_t>(setup.worst_listed));
  return v;
}

// The share of a scope's pairs inside their what-if interval ("-" when no pair has one).
std::string coverage_cell(const WhatIfPairStats& st) {
  return st.with_spread == 0 ? "-" : fmt::format("{:.0f}", st.coverage * 100);
}

}  // namespace

std::string what_if_pairs_markdown(const std::vector<std::string>& files, const std::vector<WhatIfPair>& pairs,
                                   const WhatIfPairSetup& setup) {
  std::string s = "## What-if pairs: rows that differ in one input only\n\n";
  s += fmt::format(
      "Ratio = throughput(B) / throughput(A) of two measured rows; the predicted ratio uses both predicted rows, so an "
      "error common to the pair cancels. Ratio error = |predicted ratio / measured ratio - 1|. Wrong side: one of the "
      "two ratios reaches a {:.0f}% gain and the other does not. Efficiency = throughput(N) / (N x throughput(1)); "
      "its error is |predicted - measured| in points (100 x); rows measured below {:.2f} scale poorly. Issue 13's "
      "targets: precision median ratio error <= 10%, at most 1 pair in 20 on the wrong side; poorly scaling rows <= "
      "8 points. Inside: the share of pairs whose measured ratio lies in the predicted ratio's what-if interval "
      "(data/intervals.toml; precision+batch pairs vary two inputs and take the pooled `any` spread). Files: {}.\n",
      (setup.gain_threshold - 1) * 100, setup.poor_scaling_below, fmt::join(files, ", "));
  for (const std::string varied : {"precision", "precision+batch"}) {
    s += varied == "precision"
             ? "\n### Precision (B: amp, fp16, bf16, int8, fp8 or tf32; A: fp32 on the same model, GPU, batch and setup; its layout may differ where the benchmark chose it by precision)\n\n"
             : "\n### Precision with the batch each run chose (A: the setup's one fp32 row, at another batch than B)\n\n";
    s += "| file | scope | pairs | median ratio error | mean ratio error | wrong side | inside |\n"
         "|---|---|---:|---:|---:|---:|---:|\n| | | | % | % | pairs | % |\n";
    for (const auto& sc : scopes(files, pairs, varied)) {
      const auto st = what_if_pair_stats(sc.pairs, setup);
      s += fmt::format("| {} | {} | {} | {:.1f} | {:.1f} | {} ({:.0f}%) | {} |\n", sc.file, sc.scope, st.pairs,
                       st.median_error_pct, st.mean_error_pct, st.wrong_side, 100.0 * st.wrong_side / st.pairs,
                       coverage_cell(st));
    }
  }
  s += "\n### GPU count (B: N GPUs data-parallel; A: 1 GPU, same setup; interconnect, strategy, grad_accum may differ)\n\n";
  s += "| file | pairs | median speedup error | efficiency error mean / median | bias | poorly scaling rows | "
       "their error mean / median | their bias | inside |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
       "| | | % | points | points | | points | points | % |\n";
  for (const auto& sc : scopes(files, pairs, "gpus")) {
    const auto st = what_if_pair_stats(sc.pairs, setup);
    s += fmt::format("| {} | {} | {:.1f} | {:.1f} / {:.1f} | {:+.1f} | {} | {:.1f} / {:.1f} | {:+.1f} | {} |\n", sc.file,
                     st.pairs, st.median_error_pct, st.efficiency_mean_points, st.efficiency_median_points,
                     st.efficiency_bias_points, st.poor, st.poor_mean_points, st.poor_median_points,
                     st.poor_bias_points, coverage_cell(st));
  }
  s += "\n### Worst precision pairs (same batch, then each run's batch)\n\nRow bias: each row's own predicted / measured "
       "- 1 (which side of the pair misses).\n\n| file | lines | setup | A -> B | measured | predicted | error | row bias A "
       "/ B |\n|---|---|---|---|---:|---:|---:|---:|\n| | | | | x | x | % | % |\n";
  auto listed = worst(pairs, "precision", setup);
  const auto own_batch = worst(pairs, "precision+batch", setup);
  listed.insert(listed.end(), own_batch.begin(), own_batch.end());
  for (const auto* p : listed)
    s += fmt::format("| {} | {}, {} | {} | {} -> {} | {:.2f} | {:.2f} | {:.1f}{} | {:+.0f} / {:+.0f} |\n", p->file,
                     p->line_from, p->line_to, pair_setup(*p), p->from, p->to, p->measured, p->predicted, p->error_pct,
                     p->wrong_side ? " (wrong side)" : "", p->from_bias_pct, p->to_bias_pct);
  s += "\n### Worst scaling-efficiency rows\n\n| file | lines | setup | GPUs | interconnect | measured | predicted | "
       "error | row bias 1 / N |\n|---|---|---|---:|---|---:|---:|---:|---:|\n| | | | | | efficiency | efficiency | points | % |\n";
  for (const auto* p : worst(pairs, "gpus", setup))
    s += fmt::format("| {} | {}, {} | {} | {} | {} | {:.2f} | {:.2f} | {:+.1f} | {:+.0f} / {:+.0f} |\n", p->file,
                     p->line_from, p->line_to, pair_setup(*p), p->to, p->interconnect.empty() ? "-" : p->interconnect,
                     p->measured_efficiency, p->predicted_efficiency,
                     (p->predicted_efficiency - p->measured_efficiency) * 100, p->from_bias_pct, p->to_bias_pct);
  return s;
}

nlohmann::json what_if_pairs_json(const std::vector<std::string>& files, const std::vector<WhatIfPair>& pairs,
                                  const WhatIfPairSetup& setup) {
  nlohmann::json j;
  j["files"] = files;
  j["gain_threshold"] = setup.gain_threshold;
  j["poor_scaling_below"] = setup.poor_scaling_below;
  for (const std::string varied : {"precision", "precision+batch", "gpus"})
    for (const auto& sc : scopes(files, pairs, varied)) {
      const auto st = what_if_pair_stats(sc.pairs, setup);
      nlohmann::json e = {{"file", sc.file}, {"scope", sc.scope}, {"pairs", st.pairs},
                          {"median_error_pct", st.median_error_pct}, {"mean_error_pct", st.mean_error_pct},
                          {"with_interval", st.with_spread},
                          {"coverage", st.with_spread ? nlohmann::json(st.coverage) : nlohmann::json(nullptr)}};
      if (varied != "gpus") e["wrong_side"] = st.wrong_side;
      else
        e.update({{"efficiency_mean_points", st.efficiency_mean_points},
                  {"efficiency_median_points", st.efficiency_median_points},
                  {"efficiency_bias_points", st.efficiency_bias_points}, {"poor", st.poor},
                  {"poor_mean_points", st.poor_mean_points}, {"poor_median_points", st.poor_median_points},
                  {"poor_bias_points", st.poor_bias_points}});
      j[varied].push_back(e);
    }
  for (const auto& p : pairs) {
    nlohmann::json e = {{"file", p.file},         {"varied", p.varied},       {"from", p.from},
                        {"to", p.to},             {"line_from", p.line_from}, {"line_to", p.line_to},
                        {"gpu", p.gpu},           {"model", p.model},         {"runtime", p.runtime},
                        {"mode", p.mode},         {"batch", p.batch},         {"measured", p.measured},
                        {"predicted", p.predicted}, {"error_pct", p.error_pct},
                        {"from_bias_pct", p.from_bias_pct}, {"to_bias_pct", p.to_bias_pct},
                        {"spread", p.spread > 0 ? nlohmann::json(p.spread) : nlohmann::json(nullptr)},
                        {"inside_interval", p.spread > 0 ? nlohmann::json(p.inside) : nlohmann::json(nullptr)}};
    if (p.varied != "gpus") e["wrong_side"] = p.wrong_side;
    else
      e.update({{"interconnect", p.interconnect}, {"measured_efficiency", p.measured_efficiency},
                {"predicted_efficiency", p.predicted_efficiency}});
    j["pairs"].push_back(e);
  }
  return j;
}

}  // namespace perfcast
