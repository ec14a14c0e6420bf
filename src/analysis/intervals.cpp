#include "analysis/intervals.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mutex>
#include <set>
#include <tuple>

#include "analysis/validate.h"
#include "core/data_files.h"
#include "core/error.h"
#include "core/median.h"
#include "core/toml_reader.h"
#include "import/config_csv.h"
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

struct Table {
  double level = 0;
  std::map<std::string, IntervalRegime> regimes;
  std::map<std::string, WhatIfSpread> what_ifs;
  // The support widening (absent from tables fitted without it: then every prediction takes its regime's low / high).
  std::string widening = "additive";
  std::map<std::string, std::vector<double>> bin_margins;  // margin group -> margin per support bin
  std::vector<std::string> support_components;
  int support_bins = 1;
  SupportTable support;
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
        r.quantile_low = f.number_or("quantile_low", r.low);
        r.quantile_high = f.number_or("quantile_high", r.high);
        r.margin = f.number_or("margin", 0);
        t.regimes[r.key] = r;
      }
    if (const auto w = doc["widening"].value<std::string>()) t.widening = *w;
    t.support_bins = static_cast<int>(top.number_or("support_bins", 1));
    if (const auto* arr = doc["support_components"].as_array())
      for (const auto& node : *arr)
        if (const auto v = node.value<std::string>()) t.support_components.push_back(*v);
    if (const auto* arr = doc["margin"].as_array())
      for (const auto& node : *arr) {
        const auto* tab = node.as_table();
        if (!tab || !tab->contains("bin")) continue;  // a table without support bins: one margin, in low / high
        const TomlFields f(*tab, path.string() + " [[margin]]");
        const auto bin = f.count("bin");
        auto& v = t.bin_margins[f.text("group")];
        if (static_cast<int>(v.size()) <= bin) v.resize(bin + 1, std::numeric_limits<double>::quiet_NaN());
        v[bin] = f.number("value");
      }
    if (const auto* sup = doc["support"].as_table())
      for (const auto& [component, values] : *sup)
        if (const auto* vt = values.as_table())
          for (const auto& [value, counts] : *vt)
            if (const auto* ct = counts.as_table()) {
              const TomlFields f(*ct, path.string() + " [support." + std::string(component.str()) + "]");
              t.support[std::string(component.str())][std::string(value.str())] = {f.count("rows"), f.count("sources")};
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

// The regime keys that end a chain (GPU rows end at "all", CPU rows at "device=cpu"): the last fallback of every
// prediction on that chain, fitted without the min_rows / min_sources floors (it has nothing coarser to fall back to)
// once it holds conformal_min_rows rows.
bool chain_root(const std::string& key) { return key == "all" || key == "device=cpu"; }
std::string chain_of(const std::string& key) { return key.rfind("device=cpu", 0) == 0 ? "cpu" : "gpu"; }
// The level of a key in its chain: the number of dimensions it names ("all" 0, "mode=train" 1, ...).
int depth_of(const std::string& key) { return static_cast<int>(std::count(key.begin(), key.end(), '=')); }

// The source-weighted quantiles of every regime with enough rows and sources (the band before the conformal widening).
std::map<std::string, IntervalRegime> fit_bands(const std::vector<const IntervalSample*>& samples,
                                               const IntervalSetup& setup) {
  std::map<std::string, std::vector<const IntervalSample*>> by_key;
  for (const auto* s : samples)
    for (const auto& k : s->keys) by_key[k].push_back(s);
  std::map<std::string, IntervalRegime> out;
  const double tail = (1.0 - setup.level) / 2.0;
  const int root_rows = conformal_min_rows(setup.level);
  for (auto& [k, v] : by_key) {
    // Every source weighs the same inside a regime: one large benchmark log must not set the interval alone,
    // and a regime seen by too few sources falls back to a coarser one.
    std::map<std::string, int> per_source;
    for (const auto* s : v) ++per_source[s->source];
    const int rows = static_cast<int>(v.size());
    if (chain_root(k) ? rows < root_rows
                      : rows < setup.min_rows || static_cast<int>(per_source.size()) < setup.min_sources)
      continue;
    std::vector<std::pair<double, double>> w;
    for (const auto* s : v) w.emplace_back(s->log_ratio, 1.0 / per_source[s->source]);
    IntervalRegime r;
    r.key = k;
    r.rows = rows;
    r.sources = static_cast<int>(per_source.size());
    r.low = r.quantile_low = std::exp(weighted_quantile(w, tail));
    r.median = std::exp(weighted_quantile(w, 0.5));
    r.high = r.quantile_high = std::exp(weighted_quantile(w, 1.0 - tail));
    out[k] = r;
  }
  return out;
}

// The margin group of a regime: its chain and, with per-level margins, its level in the chain.
std::string margin_group(const IntervalSetup& setup, const std::string& key) {
  return setup.margin_per_level ? fmt::format("{}:{}", chain_of(key), depth_of(key)) : chain_of(key);
}


// The support of `samples`: for every support component, the rows and distinct sources of each value.
SupportTable support_table(const std::vector<const IntervalSample*>& samples, const IntervalSetup& setup) {
  std::map<std::string, std::map<std::string, std::set<std::string>>> sources;
  SupportTable out;
  for (const auto* s : samples)
    for (const auto& [c, v] : s->components)
      if (std::find(setup.support_components.begin(), setup.support_components.end(), c) !=
          setup.support_components.end()) {
        ++out[c][v].rows;
        sources[c][v].insert(s->source);
      }
  for (auto& [c, values] : out)
    for (auto& [v, n] : values) n.sources = static_cast<int>(sources[c][v].size());
  return out;
}

// The support components of `components` whose value `table` has no source for, in setup order.
std::vector<std::string> novel_of(const SupportTable& table, const std::vector<std::string>& support_components,
                                  const std::vector<std::pair<std::string, std::string>>& components) {
  std::vector<std::string> out;
  for (const auto& c : support_components)
    for (const auto& [name, v] : components) {
      if (name != c) continue;
      const auto t = table.find(c);
      const bool seen = t != table.end() && t->second.count(v) && t->second.at(v).sources > 0;
      if (!seen) out.push_back(c);
    }
  return out;
}

int bin_of(std::size_t novel, int bins) { return static_cast<int>(std::min<std::size_t>(novel, std::max(bins, 1) - 1)); }

struct HeldOut {
  const IntervalSample* sample;
  std::string group;  // the margin group of the regime that judged it ("" with none)
  double score;
  int bin = 0;        // its support bin against the other sources' rows
  double lo = 0, md = 0, hi = 0;  // that regime's quantile band, ln (to judge the row under another margin)
};

// One held-out row scored against band `r` (fitted without its source): how far outside the band it lies (negative
// inside), in the units the widening adds; +inf where no band covered it at all.
HeldOut held_out_row(const IntervalSetup& setup, const IntervalSample* s, const IntervalRegime* r, int bin) {
  if (!r) return {s, "", std::numeric_limits<double>::infinity(), bin};
  HeldOut h{s, margin_group(setup, r->key), 0, bin, std::log(r->quantile_low), std::log(r->median),
            std::log(r->quantile_high)};
  h.score = conformal_score(setup.widening, h.lo, h.md, h.hi, s->log_ratio);
  return h;
}

// Every row judged by the bands fitted without its source (leave one source out), and its support bin judged by the
// other sources' rows: a setup only its own source measured is novel to them.
std::vector<HeldOut> held_out_scores(const std::vector<const IntervalSample*>& samples, const IntervalSetup& setup) {
  std::map<std::string, std::vector<const IntervalSample*>> by_source;
  for (const auto* s : samples) by_source[s->source].push_back(s);
  std::vector<HeldOut> out;
  for (const auto& [source, rows] : by_source) {
    std::vector<const IntervalSample*> rest;
    for (const auto* s : samples)
      if (s->source != source) rest.push_back(s);
    const auto bands = fit_bands(rest, setup);
    const SupportTable support = setup.support_bins > 1 ? support_table(rest, setup) : SupportTable{};
    for (const auto* s : rows) {
      const auto* r = lookup(bands, s->keys);
      const int bin =
          setup.support_bins > 1 ? bin_of(novel_of(support, setup.support_components, s->components).size(), setup.support_bins) : 0;
      out.push_back(held_out_row(setup, s, r, bin));
    }
  }
  return out;
}

struct Margins {
  std::map<std::string, double> pooled;               // group -> the conformal quantile of all its held-out scores
  std::map<std::string, std::vector<double>> by_bin;  // group -> one margin per support bin, non-decreasing
  // With fresh calibration rows: by_bin (and pooled) are the larger of the held-out calibration sources' margins
  // (held_out) and the fresh rows' (fresh); without, held_out is by_bin and fresh is empty.
  std::map<std::string, std::vector<double>> held_out, fresh;
};

// The margins of margin group `group` in `by_bin`, else those of its chain (a level group "gpu:2", margin_per_level,
// without margins of its own takes "gpu"'s); nullptr with neither. Every margin lookup goes through it.
const std::vector<double>* margins_of_group(const std::map<std::string, std::vector<double>>& by_bin,
                                            const std::string& group) {
  auto it = by_bin.find(group);
  if (it == by_bin.end()) it = by_bin.find(group.substr(0, group.find(':')));
  return it == by_bin.end() ? nullptr : &it->second;
}

// A group's margin for support bin `bin`: +inf past its last bin. The fit gives every group one margin per bin, and
// the table it writes leaves out a bin whose margin is infinite (its held-out rows mostly fell outside every band),
// so a bin past the end is one the fit judged with no interval; the setup gets none either (bin_of caps a setup's
// bin at the last one, so the last bin already holds the most novel setups).
double margin_in_bin(const std::vector<double>& margins, int bin) {
  return bin >= 0 && bin < static_cast<int>(margins.size()) ? margins[static_cast<std::size_t>(bin)]
                                                            : std::numeric_limits<double>::infinity();
}

// The margins `held_out` floored by `fresh`, bin by bin: the larger of the two, so that a margin never narrows an
// interval; both non-decreasing in the bin, so is their maximum. A level group the fresh rows have no margin for takes
// its chain's fresh margin (margins_of_group); a group with neither keeps its own, and a group without a held-out
// margin has no calibrated band to widen.
std::map<std::string, std::vector<double>> floored(const std::map<std::string, std::vector<double>>& held_out,
                                                   const std::map<std::string, std::vector<double>>& fresh) {
  auto out = held_out;
  for (auto& [g, bins] : out)
    if (const auto* f = margins_of_group(fresh, g))
      for (std::size_t b = 0; b < bins.size() && b < f->size(); ++b) bins[b] = std::max(bins[b], (*f)[b]);
  return out;
}

// The number of distinct sources of held-out rows.
int sources_of(const std::vector<const HeldOut*>& v) {
  std::set<std::string> s;
  for (const auto* h : v) s.insert(h->sample->source);
  return static_cast<int>(s.size());
}

// The widening of every margin group: the conformal quantile of its held-out scores; a group with fewer than
// conformal_min_rows scores takes its chain's. A row no band judged (its chain's root fell below conformal_min_rows
// without its source) says nothing about how wide a band must be and is left out. Per support bin, the same quantile
// over the group's held-out rows of that bin; a bin of fewer than conformal_min_rows sources pools with the next
// better-supported bins until it has them (the group's pooled margin when even all of them fall short), and a bin
// never takes a narrower margin than a better-supported one (the running maximum: widening only adds coverage).
Margins fit_margins(const std::vector<HeldOut>& held, const IntervalSetup& setup) {
  const double level = setup.level;
  std::map<std::string, std::vector<const HeldOut*>> by_group;
  for (const auto& h : held) {
    if (h.group.empty()) continue;
    const std::string chain = h.sample->cpu ? "cpu" : "gpu";
    by_group[chain].push_back(&h);
    if (h.group != chain) by_group[h.group].push_back(&h);
  }
  const auto quantile = [&](const std::vector<const HeldOut*>& v) {
    if (setup.margin_weights == MarginWeights::kRows) {
      std::vector<double> scores;
      for (const auto* h : v) scores.push_back(h->score);
      return conformal_quantile(scores, level);
    }
    std::map<std::string, int> per_source;
    for (const auto* h : v) ++per_source[h->sample->source];
    std::vector<std::pair<double, double>> w;
    for (const auto* h : v) w.emplace_back(h->score, 1.0 / per_source[h->sample->source]);
    const int sources = static_cast<int>(per_source.size());
    const bool source_level =
        setup.margin_weights == MarginWeights::kSourceLevel && sources >= conformal_min_rows(setup.level);
    return weighted_conformal_quantile(w, level, source_level ? sources : 0);
  };
  Margins out;
  const int min_sources = conformal_min_rows(setup.level);
  for (const auto& [g, v] : by_group) {
    if (static_cast<int>(v.size()) < conformal_min_rows(setup.level)) continue;
    const double pooled = quantile(v);
    out.pooled[g] = pooled;
    std::vector<double> bins;
    for (int b = 0; b < std::max(setup.support_bins, 1); ++b) {
      // The rows of bin b (kBin) or of bins b and above (kAtLeast), then of the next better-supported bins in turn.
      std::vector<const HeldOut*> pool;
      for (int lower = b; lower >= 0 && (pool.empty() || sources_of(pool) < min_sources); --lower)
        for (const auto* h : v)
          if (setup.support_pool == SupportPool::kAtLeast ? h->bin >= lower && (lower == b || h->bin < lower + 1)
                                                          : h->bin == lower)
            pool.push_back(h);
      const bool enough = sources_of(pool) >= min_sources && static_cast<int>(pool.size()) >= min_sources;
      double m = setup.support_bins > 1 && enough ? quantile(pool) : pooled;
      if (b > 0) m = std::max(m, bins.back());
      bins.push_back(m);
    }
    out.by_bin[g] = bins;
  }
  return out;
}

// The margins of the group that widens regime `key` (its level's group, else its chain's); nullptr with none.
const std::vector<double>* margins_of(const std::map<std::string, std::vector<double>>& by_bin,
                                      const IntervalSetup& setup, const std::string& key) {
  return margins_of_group(by_bin, margin_group(setup, key));
}

// The regime's quantile band widened by `margin`, as factors.
std::pair<double, double> widened(const IntervalSetup& setup, const IntervalRegime& r, double margin) {
  double lo = 0, hi = 0;
  widen_band(setup.widening, std::log(r.quantile_low), std::log(r.median), std::log(r.quantile_high), margin, lo, hi);
  return {std::exp(lo), std::exp(hi)};
}

// The fresh rows' margins (fit_margins over their scores) for the groups whose fresh rows come from at least
// conformal_min_rows(level) sources, the count below which fit_margins gives up the source-level rule for the
// effective count of rows: a floor that only widens must rest on sources, and one resting on a few sources' biases
// says nothing of the next source (with 2, level x (1 + 1/K) = 1.2 at 80%: no source-level quantile at all). Such a
// group keeps its held-out margin.
Margins fresh_floor(const std::vector<HeldOut>& scores, const IntervalSetup& setup) {
  Margins f = fit_margins(scores, setup);
  std::map<std::string, std::set<std::string>> sources;
  for (const auto& h : scores) {
    if (h.group.empty()) continue;
    sources[h.sample->cpu ? "cpu" : "gpu"].insert(h.sample->source);
    sources[h.group].insert(h.sample->source);
  }
  for (auto it = f.by_bin.begin(); it != f.by_bin.end();)
    if (static_cast<int>(sources[it->first].size()) < conformal_min_rows(setup.level)) {
      f.pooled.erase(it->first);
      it = f.by_bin.erase(it);
    } else {
      ++it;
    }
  return f;
}

// The bands of `bands` that a finite margin widens (margins_of's group, bin 0).
std::map<std::string, IntervalRegime> usable_bands(const std::map<std::string, IntervalRegime>& bands,
                                                   const std::map<std::string, std::vector<double>>& by_bin,
                                                   const IntervalSetup& setup) {
  std::map<std::string, IntervalRegime> out;
  for (const auto& [k, r] : bands) {
    const auto* m = margins_of(by_bin, setup, k);
    if (m && std::isfinite(margin_in_bin(*m, 0))) out[k] = r;
  }
  return out;
}

// The fresh calibration rows scored against the quantile bands of the calibration `samples` (those a finite held-out
// margin widens), their support bin judged against the calibration rows: to the calibration they are a new source.
// A fresh row whose source also has calibration rows is scored by the bands and support fitted without that source,
// so that no row is judged by a band its own source shaped.
std::vector<HeldOut> fresh_scores(const std::vector<const IntervalSample*>& fresh,
                                  const std::vector<const IntervalSample*>& samples,
                                  const std::map<std::string, IntervalRegime>& bands,
                                  const std::map<std::string, std::vector<double>>& held_out,
                                  const IntervalSetup& setup) {
  std::set<std::string> calibration_sources;
  for (const auto* s : samples) calibration_sources.insert(s->source);
  std::map<std::string, std::vector<const IntervalSample*>> by_source;
  for (const auto* s : fresh) by_source[s->source].push_back(s);
  const auto all_bands = usable_bands(bands, held_out, setup);
  const SupportTable all_support = setup.support_bins > 1 ? support_table(samples, setup) : SupportTable{};
  std::vector<HeldOut> out;
  for (const auto& [source, rows] : by_source) {
    std::map<std::string, IntervalRegime> own_bands;
    SupportTable own_support;
    const bool shared = calibration_sources.count(source) > 0;
    if (shared) {
      std::vector<const IntervalSample*> rest;
      for (const auto* s : samples)
        if (s->source != source) rest.push_back(s);
      own_bands = usable_bands(fit_bands(rest, setup), held_out, setup);
      if (setup.support_bins > 1) own_support = support_table(rest, setup);
    }
    const auto& b = shared ? own_bands : all_bands;
    const auto& support = shared ? own_support : all_support;
    for (const auto* s : rows) {
      const int bin =
          setup.support_bins > 1 ? bin_of(novel_of(support, setup.support_components, s->components).size(), setup.support_bins) : 0;
      out.push_back(held_out_row(setup, s, lookup(b, s->keys), bin));
    }
  }
  return out;
}

// The bands of `samples`, each widened by its group's margin for a supported setup (bin 0); a band whose margin is
// infinite (its group's held-out rows mostly fell outside every band) is left out, so that its rows fall back to a
// coarser regime or to none. With `fresh` rows, every margin is floored by theirs (fresh_scores, fit_margins), and
// their scores go to `fresh_out`.
std::map<std::string, IntervalRegime> calibrated_regimes(const std::vector<const IntervalSample*>& samples,
                                                        const IntervalSetup& setup, Margins* margins_out = nullptr,
                                                        const std::vector<const IntervalSample*>* fresh = nullptr,
                                                        std::vector<HeldOut>* fresh_out = nullptr) {
  auto bands = fit_bands(samples, setup);
  Margins margins = fit_margins(held_out_scores(samples, setup), setup);
  margins.held_out = margins.by_bin;
  if (fresh && !fresh->empty()) {
    auto scores = fresh_scores(*fresh, samples, bands, margins.held_out, setup);
    const Margins f = fresh_floor(scores, setup);
    margins.fresh = f.by_bin;
    margins.by_bin = floored(margins.held_out, f.by_bin);
    for (auto& [g, m] : margins.pooled)
      if (const auto p = f.pooled.find(g); p != f.pooled.end()) m = std::max(m, p->second);
    if (fresh_out) *fresh_out = std::move(scores);
  }
  std::map<std::string, IntervalRegime> out;
  for (auto& [k, r] : bands) {
    const auto* m = margins_of(margins.by_bin, setup, k);
    if (!m || !std::isfinite(margin_in_bin(*m, 0))) continue;
    r.margin = margin_in_bin(*m, 0);
    std::tie(r.low, r.high) = widened(setup, r, r.margin);
    out[k] = r;
  }
  if (margins_out) *margins_out = margins;
  return out;
}

// A row's interval from a calibrated table: the regime that judges it, widened by the margin of its support bin.
struct Judged {
  const IntervalRegime* regime = nullptr;
  double low = 1, high = 1;
  int bin = 0;
};
Judged judge(const std::map<std::string, IntervalRegime>& regimes, const Margins& margins, const SupportTable& support,
             const IntervalSetup& setup, const IntervalSample& s) {
  Judged j;
  j.regime = lookup(regimes, s.keys);
  if (setup.support_bins > 1)
    j.bin = bin_of(novel_of(support, setup.support_components, s.components).size(), setup.support_bins);
  if (!j.regime) return j;
  const auto* m = margins_of(margins.by_bin, setup, j.regime->key);
  const double margin = m ? margin_in_bin(*m, j.bin) : j.regime->margin;
  if (!std::isfinite(margin)) {
    j.regime = nullptr;
    return j;
  }
  std::tie(j.low, j.high) = widened(setup, *j.regime, margin);
  return j;
}

bool inside(const Judged& j, double log_ratio) {
  return j.regime && log_ratio >= std::log(j.low) && log_ratio <= std::log(j.high);
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

int conformal_min_rows(double level) {
  return static_cast<int>(std::ceil(2.0 / (1.0 - level) - 1.0 - 1e-9));
}

namespace {
// The fewest scores (sources, under the source-level rule) whose conformal quantile at `level` exists: the smallest K
// with ceil((K + 1) x level) <= K, i.e. level x (1 + 1/K) <= 1 (conformal_quantile below).
int first_source_level_k(double level) {
  int k = 1;
  while (std::ceil((k + 1.0) * level - 1e-9) > k) ++k;
  return k;
}
}  // namespace

double conformal_quantile(std::vector<double> scores, double level) {
  const auto n = static_cast<double>(scores.size());
  const auto k = static_cast<std::size_t>(std::ceil((n + 1.0) * level - 1e-9));
  if (k < 1 || k > scores.size()) return std::numeric_limits<double>::infinity();
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k - 1), scores.end());
  return scores[k - 1];
}

double weighted_conformal_quantile(std::vector<std::pair<double, double>> scores, double level, double n_eff) {
  double total = 0, squares = 0;
  for (const auto& [e, w] : scores) {
    total += w;
    squares += w * w;
  }
  if (scores.empty() || total <= 0) return std::numeric_limits<double>::infinity();
  if (n_eff <= 0) n_eff = total * total / squares;
  const double q = level * (1.0 + 1.0 / n_eff) - 1e-12;
  std::sort(scores.begin(), scores.end());
  double before = 0;
  for (const auto& [e, w] : scores) {
    before += w;
    if (before / total >= q) return e;
  }
  return std::numeric_limits<double>::infinity();
}

namespace {
// A band side narrower than this (in ln units, 0.1%) is taken as this wide by the scale widening, so that a
// degenerate side (every residual on one value) still scales; a numerical guard, far below any fitted side.
constexpr double kMinSide = 1e-3;
}  // namespace

double conformal_score(Widening w, double lo, double md, double hi, double r) {
  if (w == Widening::kAdditive) return std::max(lo - r, r - hi);
  return r >= md ? (r - md) / std::max(hi - md, kMinSide) : (md - r) / std::max(md - lo, kMinSide);
}

void widen_band(Widening w, double lo, double md, double hi, double by, double& out_lo, double& out_hi) {
  if (w == Widening::kAdditive) {
    out_lo = std::min(lo - by, md);
    out_hi = std::max(hi + by, md);
    return;
  }
  out_lo = md - std::max(by, 0.0) * std::max(md - lo, kMinSide);
  out_hi = md + std::max(by, 0.0) * std::max(hi - md, kMinSide);
}

namespace {
// The batch bounds of the regime keys and the support buckets (data/interval_setup.toml), read once; apart from
// interval_setup(), which names support components and so calls support_components().
struct BatchBuckets {
  std::int64_t small_max = 0;                // regime_batch_small_max
  std::vector<std::int64_t> support_bounds;  // support_batch_bounds, ascending
};
const BatchBuckets& batch_buckets() {
  static const BatchBuckets b = [] {
    const auto path = data_dir() / "interval_setup.toml";
    const toml::table doc = parse_toml_file(path);
    const TomlFields f(doc, path.string());
    BatchBuckets out;
    out.small_max = f.count("regime_batch_small_max");
    for (const int v : f.count_list("support_batch_bounds", 1, 1 << 20)) {
      if (!out.support_bounds.empty() && v <= out.support_bounds.back())
        f.fail("support_batch_bounds", "must ascend");
      out.support_bounds.push_back(v);
    }
    if (out.support_bounds.empty()) f.fail("support_batch_bounds", "must name at least one bound");
    return out;
  }();
  return b;
}
// A batch in a regime key: "small" up to regime_batch_small_max, else "large".
std::string batch_regime(std::int64_t batch) { return batch <= batch_buckets().small_max ? "small" : "large"; }
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
                                                                {"batch", batch_regime(q.batch)},
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
                           {"batch", batch_regime(q.batch)},
                           {"gpus", q.gpus * q.nodes > 1 ? "multi" : "one"},
                           {"arch", p.device.architecture},
                           {"runtime", runtime_family(q.runtime)}});
  std::vector<std::string> keys = key_chain(dims);
  keys.emplace_back("all");
  return keys;
}

namespace {
// A batch as a support bucket (data/interval_setup.toml support_batch_bounds: 1, 2-8, 9-64, 65-512, more).
std::string batch_bucket(std::int64_t batch) {
  const auto& bounds = batch_buckets().support_bounds;
  std::int64_t lower = 1;
  for (const auto upper : bounds) {
    if (batch <= upper) return lower >= upper ? std::to_string(upper) : fmt::format("{}-{}", lower, upper);
    lower = upper + 1;
  }
  return ">" + std::to_string(bounds.back());
}
// The major.minor of a dotted version ("2.4.1" -> "2.4"; "" stays "").
std::string major_minor(const std::string& v) {
  const auto a = v.find('.');
  if (a == std::string::npos) return v;
  const auto b = v.find('.', a + 1);
  return b == std::string::npos ? v : v.substr(0, b);
}
}  // namespace

std::vector<std::pair<std::string, std::string>> support_components(const PredictionFacts& p) {
  const auto& q = p.request;
  const std::string version = major_minor(q.runtime_version);
  return {{"gpu", q.gpu},
          {"arch", p.device.architecture},
          {"runtime", q.runtime + " " + mode_string(q.mode)},
          {"version", runtime_family(q.runtime) + " " + (version.empty() ? "unversioned" : version)},
          {"precision", precision_class(q.precision)},
          {"family", p.model_family.empty() ? "other" : p.model_family},
          {"model", q.model},
          {"batch", batch_bucket(q.batch)},
          {"host", host_bound(p) ? "bound" : "gpu"},
          {"gpus", q.gpus * q.nodes > 1 ? "multi" : "one"}};
}

std::optional<PredictionInterval> prediction_interval(const Prediction& p) {
  if (!p.memory.fits) return std::nullopt;
  const Table& t = table();
  const PredictionFacts facts = facts_of(p);
  const IntervalRegime* r = lookup(t.regimes, regime_keys(facts));
  if (!r) return std::nullopt;
  PredictionInterval iv;
  iv.level = t.level;
  iv.low = r->low;
  iv.high = r->high;
  iv.regime = r->key;
  iv.rows = r->rows;
  if (t.support_bins <= 1 || t.bin_margins.empty()) return iv;
  // The support widening: the regime's quantile band widened by the margin fitted for setups as novel as this one
  // (its level's margin group, else its chain's, as the fit chose them). The table names its groups, so the lookup
  // tries a level's group first (margin_per_level) and falls back to the chain's, as margins_of does for the fit.
  iv.novel_components = novel_of(t.support, t.support_components, support_components(facts));
  iv.support_bin = bin_of(iv.novel_components.size(), t.support_bins);
  IntervalSetup setup;
  setup.widening = t.widening == "scale" ? Widening::kScale : Widening::kAdditive;
  setup.margin_per_level = true;
  const auto* m = margins_of(t.bin_margins, setup, r->key);
  if (!m) return iv;
  // A bin the fit wrote no finite margin for judged its held-out rows with no interval (judge()): so does predict.
  const double margin = margin_in_bin(*m, iv.support_bin);
  if (!std::isfinite(margin)) return std::nullopt;
  if (margin <= r->margin) return iv;
  std::tie(iv.low, iv.high) = widened(setup, *r, margin);
  iv.widened = true;
  iv.width_ratio = std::log(iv.high / iv.low) / std::log(r->high / r->low);
  return iv;
}

std::string support_note(const PredictionInterval& iv) {
  if (iv.novel_components.empty()) return "";
  return fmt::format("few calibration rows resemble this setup (none has its {}): {}",
                     fmt::join(iv.novel_components, ", "),
                     iv.widened ? fmt::format("interval widened by {:.1f}%", 100 * (iv.width_ratio - 1))
                                : std::string("held-out rows this new needed no wider interval"));
}

std::string no_interval_reason(const Prediction& p) {
  if (!p.memory.fits) return "";
  const IntervalSetup setup = interval_setup();
  if (p.device.kind == DeviceKind::kCpu)
    return fmt::format("data/intervals.toml has no CPU regime (the root device=cpu needs {} measured CPU rows for a "
                       "two-sided {:.0f}% conformal band, finer ones {} rows from {} sources; data/interval_setup.toml), "
                       "and CPU predictions do not borrow GPU residuals",
                       conformal_min_rows(setup.level), setup.level * 100, setup.min_rows, setup.min_sources);
  return "data/intervals.toml has no regime for it (run perfcast fit-intervals)";
}

std::optional<WhatIfSpread> what_if_spread_of_kind(const std::string& kind) {
  const auto& w = table().what_ifs;
  if (auto it = w.find(kind); it != w.end()) return it->second;
  if (auto it = w.find("any"); it != w.end()) return it->second;
  return std::nullopt;
}

std::optional<WhatIfSpread> what_if_spread(const std::string& category) {
  return what_if_spread_of_kind(category == "precision"   ? "precision"
                                : category == "batch"     ? "batch"
                                : category == "hardware"  ? "gpu"
                                : category == "scale-out" ? "gpus"
                                                          : "any");
}

std::string what_if_kind_of_pair(const std::string& varied) {
  if (varied == "precision" || varied == "gpus") return varied;
  return "any";
}

std::vector<WhatIfSample> what_if_samples(const std::vector<std::vector<const ValidationRow*>>& files) {
  // The row's setup with the varied column left out (import/config_csv.h setup_key), and for precision what varies
  // with it, as the precision pairs `validate` judges are formed (analysis/what_if_pairs.cpp). GPU-count samples
  // keep the interconnect and strategy in the key, so they pair multi-GPU runs only: 1 -> N pairs (2.7% median
  // error, 832 of them) would narrow the pooled spread that precision+batch pairs take (published.csv's pairs
  // inside 71% -> 62% when tried).
  const auto key_without = [](const ConfigRow& r, const std::string& field) {
    if (field == "precision") return setup_key(r, {kPrecisionPairSkip.begin(), kPrecisionPairSkip.end()});
    return setup_key(r, {std::string_view(field)});
  };
  const auto value_of = [](const ConfigRow& r, const std::string& field) -> const std::string& {
    if (field == "precision") return r.precision;
    if (field == "batch") return r.batch;
    if (field == "gpu") return r.gpu;
    return r.n_gpus;
  };
  std::vector<WhatIfSample> out;
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
            out.push_back({kind, std::fabs(std::log(g[j]->ratio / g[i]->ratio)), source_id(g[i]->result.row.source),
                           source_id(g[j]->result.row.source)});
          }
      }
    }
  }
  return out;
}

std::map<std::string, WhatIfSpread> fit_what_ifs(const std::vector<WhatIfSample>& pairs, const IntervalSetup& setup) {
  // The score |r| needs no fitted band, so its conformal quantile over the calibration pairs is already an
  // out-of-sample bound for a fresh exchangeable pair; leave-one-source-out coverage checks it across sources.
  const auto spreads = [&](const std::string& skip_a, const std::string& skip_b) {
    std::map<std::string, std::vector<double>> by_kind;
    std::map<std::string, std::set<std::string>> kind_sources;
    for (const auto& p : pairs) {
      if (!skip_a.empty() && (p.source_a == skip_a || p.source_b == skip_a || p.source_a == skip_b ||
                              p.source_b == skip_b))
        continue;
      for (const std::string& k : {p.kind, std::string("any")}) {
        by_kind[k].push_back(p.abs_log);
        kind_sources[k].insert({p.source_a, p.source_b});
      }
    }
    // As for regimes: a kind needs min_rows pairs from min_sources sources, else its what-ifs take the pooled "any".
    std::map<std::string, double> out;
    for (const auto& [k, v] : by_kind)
      if (static_cast<int>(v.size()) >= setup.min_rows &&
          (k == "any" || static_cast<int>(kind_sources[k].size()) >= setup.min_sources))
        out[k] = conformal_quantile(v, setup.level);
    return out;
  };
  const auto all = spreads("", "");
  std::map<std::string, WhatIfSpread> out;
  std::map<std::string, std::set<std::string>> sources;
  for (const auto& p : pairs)
    for (const std::string& k : {p.kind, std::string("any")}) {
      ++out[k].pairs;
      sources[k].insert(p.source_a);
      sources[k].insert(p.source_b);
    }
  // Leave one source out: each pair judged by the spreads fitted without its sources (both, when they differ); a
  // kind with too few pairs left falls back to "any" as a prediction does.
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> without;
  std::map<std::string, std::pair<int, int>> loso;  // kind -> pairs judged, inside
  for (const auto& p : pairs) {
    const auto key = std::minmax(p.source_a, p.source_b);
    auto it = without.find(key);
    if (it == without.end()) it = without.emplace(key, spreads(key.first, key.second)).first;
    const auto& m = it->second;
    for (const std::string& k : {p.kind, std::string("any")}) {
      double bound = std::numeric_limits<double>::infinity();
      if (auto f = m.find(k); f != m.end()) bound = f->second;
      else if (auto any = m.find("any"); any != m.end()) bound = any->second;
      ++loso[k].first;
      loso[k].second += p.abs_log <= bound ? 1 : 0;
    }
  }
  for (auto it = out.begin(); it != out.end();) {
    auto& [k, w] = *it;
    const auto s = all.find(k);
    if (s == all.end() || !std::isfinite(s->second)) {
      it = out.erase(it);
      continue;
    }
    w.kind = k;
    w.spread = std::exp(s->second);
    w.sources = static_cast<int>(sources[k].size());
    w.loso = static_cast<double>(loso[k].second) / loso[k].first;
    ++it;
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
  const std::string widening = f.text("widening");
  if (widening == "additive") s.widening = Widening::kAdditive;
  else if (widening == "scale") s.widening = Widening::kScale;
  else f.fail("widening", "must be additive or scale");
  s.margin_per_level = f.boolean("margin_per_level");
  if (const auto w = f.text("margin_weights"); w == "rows") s.margin_weights = MarginWeights::kRows;
  else if (w == "sources") s.margin_weights = MarginWeights::kSources;
  else if (w == "source_level") s.margin_weights = MarginWeights::kSourceLevel;
  else f.fail("margin_weights", "must be rows, sources or source_level");
  // A list of file names; a non-text or empty entry is refused, never skipped.
  const auto file_list = [&](const char* key, std::vector<std::string>& out) {
    if (!doc.contains(key)) return;
    const auto* arr = doc[key].as_array();
    if (!arr) f.fail(key, "must be a list of file names");
    for (const auto& node : *arr) {
      const auto v = node.value<std::string>();
      if (!v || v->empty()) f.fail(key, "must hold file names (text)");
      out.push_back(*v);
    }
  };
  file_list("eval_named_calibration_files", s.eval_named_calibration_files);
  file_list("fresh_calibration_files", s.fresh_calibration_files);
  s.support_bins = static_cast<int>(f.number_or("support_bins", 1));
  if (doc.contains("support_pool")) {
    if (const auto w = f.text("support_pool"); w == "bin") s.support_pool = SupportPool::kBin;
    else if (w == "at_least") s.support_pool = SupportPool::kAtLeast;
    else f.fail("support_pool", "must be bin or at_least");
  }
  if (s.support_bins < 1) f.fail("support_bins", "must be at least 1");
  if (const auto* arr = doc["support_components"].as_array())
    for (const auto& node : *arr)
      if (const auto v = node.value<std::string>()) {
        PredictionFacts probe;
        bool known = false;
        for (const auto& [c, value] : support_components(probe)) known = known || c == *v;
        if (!known) f.fail("support_components", "names an unknown component '" + *v + "'");
        s.support_components.push_back(*v);
      }
  if (s.support_bins > 1 && s.support_components.empty())
    f.fail("support_components", "must name components when support_bins > 1");
  return s;
}

std::string source_id(const std::string& col) {
  std::string s = col;
  for (const char* scheme : {"https://", "http://"})
    if (s.rfind(scheme, 0) == 0) {
      s = s.substr(std::string(scheme).size());
      if (s.rfind("github.com/", 0) != 0) return s.substr(0, s.find('/'));
      break;
    }
  // A GitHub address ("github.com/owner/repo/..."; with or without the scheme) names the repository, as the
  // "owner/repo:path" form does: the host alone would make one source of every repository on GitHub.
  if (s.rfind("github.com/", 0) == 0) {
    s = s.substr(std::string("github.com/").size());
    const auto owner = s.find('/');
    if (owner == std::string::npos) return s.substr(0, s.find(' '));
    const auto end = s.find_first_of("/ #?", owner + 1);
    return s.substr(0, end);
  }
  s = s.substr(0, s.find(':'));
  const auto first = s.find('/');
  if (first == std::string::npos) return s.empty() ? "unknown" : s;
  const auto second = s.find('/', first + 1);
  return s.substr(0, second);
}

std::string publisher_id(const std::string& source) {
  const auto slash = source.find('/');
  return slash == std::string::npos ? source : source.substr(0, slash);
}


namespace {

// The margin of a held-out row's group (else its chain) and bin in `by_bin`; +inf with none.
double margin_of_row(const std::map<std::string, std::vector<double>>& by_bin, const HeldOut& h) {
  const auto* m = h.group.empty() ? nullptr : margins_of_group(by_bin, h.group);
  return m ? margin_in_bin(*m, h.bin) : std::numeric_limits<double>::infinity();
}

// Whether a held-out row lies inside its band widened by `margin` (a row without a band, or an infinite margin, has
// no interval: outside), and that interval's width high / low (0 with none).
bool inside_with(const IntervalSetup& setup, const HeldOut& h, double margin, double& width) {
  width = 0;
  if (h.group.empty() || !std::isfinite(margin)) return false;
  double lo = 0, hi = 0;
  widen_band(setup.widening, h.lo, h.md, h.hi, margin, lo, hi);
  width = std::exp(hi - lo);
  return h.sample->log_ratio >= lo && h.sample->log_ratio <= hi;
}

// The fresh calibration rows judged before the floor (held-out calibration margins), after it in sample, and after it
// with the floor refitted without their file and without their source; the calibration rows in sample before it.
void fresh_report(IntervalFit& fit, const std::vector<IntervalSample>& samples, const std::vector<HeldOut>& held,
                  const Margins& margins) {
  const IntervalSetup& setup = fit.setup;
  auto& fr = fit.fresh;
  fr.present = true;
  fr.held_out_margins = margins.held_out;
  fr.fresh_margins = margins.fresh;
  std::set<std::string> calibration_sources;
  for (const auto& s : samples) calibration_sources.insert(s.source);
  // The shipped margins with the fresh floor refitted without the rows `leave` names, for those rows.
  using ByBin = std::map<std::string, std::vector<double>>;
  const auto without = [&](const auto& leave) {
    std::vector<HeldOut> rest;
    for (const auto& h : held)
      if (!leave(h)) rest.push_back(h);
    return floored(margins.held_out, fresh_floor(rest, setup).by_bin);
  };
  std::map<std::string, ByBin> by_file, by_source;
  for (const auto& h : held) {
    if (!by_file.count(h.sample->file))
      by_file[h.sample->file] = without([&](const HeldOut& o) { return o.sample->file == h.sample->file; });
    if (!by_source.count(h.sample->source))
      by_source[h.sample->source] = without([&](const HeldOut& o) { return o.sample->source == h.sample->source; });
  }
  struct Tally {
    int rows = 0, before = 0, after = 0, lofo = 0, loso = 0;
    std::vector<double> width_before, width_after;
    std::map<std::string, std::pair<int, int>> files, sources;  // rows, inside when left out
  };
  std::map<std::string, Tally> per_file;
  Tally gpu, cpu;
  for (const auto& h : held) {
    fr.overlap_rows += calibration_sources.count(h.sample->source) ? 1 : 0;
    double wb = 0, wa = 0, unused = 0;
    const bool before = inside_with(setup, h, margin_of_row(margins.held_out, h), wb);
    const bool after = inside_with(setup, h, margin_of_row(margins.by_bin, h), wa);
    const bool lofo = inside_with(setup, h, margin_of_row(by_file.at(h.sample->file), h), unused);
    const bool loso = inside_with(setup, h, margin_of_row(by_source.at(h.sample->source), h), unused);
    for (Tally* t : {&per_file[h.sample->file], h.sample->cpu ? &cpu : &gpu}) {
      ++t->rows;
      t->before += before;
      t->after += after;
      t->lofo += lofo;
      t->loso += loso;
      if (wb > 0) t->width_before.push_back(wb);
      if (wa > 0) t->width_after.push_back(wa);
      auto& f = t->files[h.sample->file];
      ++f.first;
      f.second += lofo;
      auto& s = t->sources[h.sample->source];
      ++s.first;
      s.second += loso;
    }
  }
  const auto coverage = [](const Tally& t) {
    IntervalFit::FreshCalibration::Coverage c;
    const auto share = [&](int k) { return t.rows ? static_cast<double>(k) / t.rows : 0.0; };
    const auto weighted = [](const std::map<std::string, std::pair<int, int>>& m) {
      double sum = 0;
      for (const auto& [name, n] : m) sum += static_cast<double>(n.second) / n.first;
      return m.empty() ? 0.0 : sum / static_cast<double>(m.size());
    };
    c.rows = t.rows;
    c.files = static_cast<int>(t.files.size());
    c.sources = static_cast<int>(t.sources.size());
    c.before = share(t.before);
    c.after = share(t.after);
    c.left_out_file = share(t.lofo);
    c.left_out_source = share(t.loso);
    c.files_weighted = weighted(t.files);
    c.sources_weighted = weighted(t.sources);
    c.width_before = median(t.width_before);
    c.width_after = median(t.width_after);
    return c;
  };
  for (const auto& [file, t] : per_file) fr.by_file[file] = coverage(t);
  fr.gpu = coverage(gpu);
  fr.cpu = coverage(cpu);
  // The calibration rows in sample with the held-out margins alone: what the floor costs them in width.
  Margins before;
  before.by_bin = margins.held_out;
  int gpu_rows = 0, gpu_in = 0, cpu_rows = 0, cpu_in = 0;
  std::vector<double> gpu_width, cpu_width;
  for (const auto& s : samples) {
    const Judged j = judge(fit.regimes, before, fit.support, setup, s);
    (s.cpu ? cpu_rows : gpu_rows) += 1;
    (s.cpu ? cpu_in : gpu_in) += inside(j, s.log_ratio) ? 1 : 0;
    if (j.regime) (s.cpu ? cpu_width : gpu_width).push_back(j.high / j.low);
  }
  fr.in_sample_before = gpu_rows ? static_cast<double>(gpu_in) / gpu_rows : 0;
  fr.cpu_in_sample_before = cpu_rows ? static_cast<double>(cpu_in) / cpu_rows : 0;
  fr.median_width_before = median(gpu_width);
  fr.cpu_median_width_before = median(cpu_width);
}

}  // namespace

IntervalFit fit_intervals(const std::vector<IntervalSample>& samples, const IntervalSetup& setup,
                          const std::vector<IntervalSample>& fresh) {
  IntervalFit fit;
  fit.setup = setup;
  std::vector<const IntervalSample*> all, fresh_all;
  for (const auto& s : samples) all.push_back(&s);
  for (const auto& s : fresh) fresh_all.push_back(&s);
  // The fresh rows without those of `sources` (the sources a leave-out refit drops): a source's rows never choose
  // the widening they are judged by, whichever file holds them.
  const auto fresh_without = [&](const std::set<std::string>& sources) {
    std::vector<const IntervalSample*> out;
    for (const auto* s : fresh_all)
      if (!sources.count(s->source)) out.push_back(s);
    return out;
  };
  // One fit over every row: CPU rows carry only `device=cpu` keys, so they never enter a GPU regime (nor GPU rows a
  // CPU one), and the widening is chosen per chain. Coverage is judged for GPU rows (the figures the table always
  // reported) and CPU rows apart.
  Margins margins;
  std::vector<HeldOut> fresh_held;  // the fresh rows scored against the bands of all calibration rows
  fit.regimes = calibrated_regimes(all, setup, &margins, &fresh_all, &fresh_held);
  fit.margins = margins.pooled;
  fit.bin_margins = margins.by_bin;
  fit.support = support_table(all, setup);
  const auto bands = fit_bands(all, setup);
  // Leave one source out, the whole procedure refitted without the source: its bands and, from the remaining
  // sources' held-out rows, its widening (so the widening never sees the rows it is judged on).
  std::map<std::string, std::vector<const IntervalSample*>> by_source;
  for (const auto& s : samples) by_source[s.source].push_back(&s);
  struct HeldOutJudgement {
    bool judged = false, inside = false, quantile_inside = false;  // a calibrated band found; inside it; in the band alone
    double width = 0;  // high / low of the calibrated band (0: none)
    int bin = 0;       // the row's support bin against the other sources
  };
  std::map<const IntervalSample*, HeldOutJudgement> loso_in;
  for (const auto& [source, rows] : by_source) {
    std::vector<const IntervalSample*> rest;
    for (const auto& s : samples)
      if (s.source != source) rest.push_back(&s);
    Margins m;
    const auto fresh_rest = fresh_without({source});
    const auto calibrated = calibrated_regimes(rest, setup, &m, &fresh_rest);
    const auto quantiles = fit_bands(rest, setup);
    const SupportTable support = support_table(rest, setup);
    for (const auto* s : rows) {
      const Judged j = judge(calibrated, m, support, setup, *s);
      const auto* q = lookup(quantiles, s->keys);
      loso_in[s] = {j.regime != nullptr, inside(j, s->log_ratio), q && covers(*q, s->log_ratio),
                    j.regime ? j.high / j.low : 0.0, j.bin};
    }
  }
  // Leave one publisher out (the owner of the repositories, or the site): the publisher's sources are often one
  // harness seen through several repositories or pages, so a publisher left out whole is the nearest thing on
  // calibration rows to a source from an organisation never seen. The whole procedure is refitted without it; a
  // publisher of one source gives the leave-one-source-out fit above.
  std::map<std::string, std::vector<const IntervalSample*>> by_publisher;
  for (const auto& s : samples) by_publisher[publisher_id(s.source)].push_back(&s);
  int lopo_rows = 0, lopo_in = 0;
  for (const auto& [publisher, rows] : by_publisher) {
    std::set<std::string> sources;
    int gpu_rows = 0;
    for (const auto* s : rows) {
      sources.insert(s->source);
      gpu_rows += s->cpu ? 0 : 1;
    }
    if (gpu_rows == 0) continue;
    std::map<std::string, IntervalRegime> calibrated;
    Margins m;
    SupportTable support;
    if (sources.size() > 1) {
      std::vector<const IntervalSample*> rest;
      for (const auto& s : samples)
        if (publisher_id(s.source) != publisher) rest.push_back(&s);
      const auto fresh_rest = fresh_without(sources);
      calibrated = calibrated_regimes(rest, setup, &m, &fresh_rest);
      support = support_table(rest, setup);
    }
    int in = 0;
    for (const auto* s : rows) {
      if (s->cpu) continue;
      in += (sources.size() > 1 ? inside(judge(calibrated, m, support, setup, *s), s->log_ratio) : loso_in.at(s).inside)
                ? 1
                : 0;
    }
    lopo_rows += gpu_rows;
    lopo_in += in;
    const double c = static_cast<double>(in) / gpu_rows;
    fit.leave_one_publisher_out[publisher] = {gpu_rows, c, 0};
    fit.lopo_publisher_weighted += c;
    fit.lopo_publishers_below_60 += c < 0.6 ? 1 : 0;
  }
  if (!fit.leave_one_publisher_out.empty())
    fit.lopo_publisher_weighted /= static_cast<double>(fit.leave_one_publisher_out.size());
  fit.lopo_coverage = lopo_rows ? static_cast<double>(lopo_in) / lopo_rows : 0;
  struct Tally {
    int rows = 0, in = 0, loso = 0, q_in = 0, q_loso = 0, with_regime = 0, loso_judged = 0;
    std::vector<double> width, q_width;
  };
  // The mean of the per-source shares (every source the same) and the number of sources under 60%.
  const auto per_source_stats = [](const std::map<std::string, Tally>& per, bool quantile, int* below_60) {
    double sum = 0;
    int below = 0;
    for (const auto& [src, t] : per) {
      const double c = t.rows ? static_cast<double>(quantile ? t.q_loso : t.loso) / t.rows : 0;
      sum += c;
      below += c < 0.6 ? 1 : 0;
    }
    if (below_60) *below_60 = below;
    return per.empty() ? 0.0 : sum / static_cast<double>(per.size());
  };
  const auto mean_of = [](const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  Tally gpu, cpu;
  std::map<std::string, Tally> gpu_per_source, cpu_per_source, by_host;
  std::vector<double> loso_widths;
  for (const auto& s : samples) {
    const Judged in_sample = judge(fit.regimes, margins, fit.support, setup, s);
    const auto* r = in_sample.regime;
    const auto* q = lookup(bands, s.keys);
    // Plain copies, not a structured binding: C++20 lambdas may not capture bindings before Clang 16.
    const auto& held_out = loso_in.at(&s);
    const bool judged = held_out.judged, out_in = held_out.inside, q_out_in = held_out.quantile_inside;
    const auto add = [&](Tally& t) {
      ++t.rows;
      t.in += inside(in_sample, s.log_ratio) ? 1 : 0;
      t.q_in += q && covers(*q, s.log_ratio) ? 1 : 0;
      t.loso += out_in ? 1 : 0;
      t.loso_judged += judged ? 1 : 0;
      t.q_loso += q_out_in ? 1 : 0;
      t.with_regime += r ? 1 : 0;
      if (r) t.width.push_back(in_sample.high / in_sample.low);
      if (q) t.q_width.push_back(q->quantile_high / q->quantile_low);
    };
    add(s.cpu ? cpu : gpu);
    fit.loso_inside.push_back(out_in ? 1 : 0);
    fit.loso_width.push_back(held_out.width);
    fit.loso_bin.push_back(held_out.bin);
    if (!s.cpu && held_out.width > 0) loso_widths.push_back(held_out.width);
    add(s.cpu ? cpu_per_source[s.source] : gpu_per_source[s.source]);
    if (!s.cpu) add(by_host[s.host_bound ? "host_bound" : "gpu_bound"]);
  }
  const auto share = [](int k, int n) { return n == 0 ? 0.0 : static_cast<double>(k) / n; };
  fit.samples = gpu.rows;
  fit.in_sample_coverage = share(gpu.in, gpu.rows);
  fit.loso_coverage = share(gpu.loso, gpu.rows);
  fit.quantile_in_sample = share(gpu.q_in, gpu.rows);
  fit.quantile_loso = share(gpu.q_loso, gpu.rows);
  fit.median_width = median(gpu.width);
  fit.quantile_median_width = median(gpu.q_width);
  for (const auto& [src, t] : gpu_per_source)
    fit.leave_one_source_out[src] = {t.rows, share(t.loso, t.rows), share(t.q_loso, t.rows)};
  for (const auto& [src, t] : cpu_per_source)
    fit.cpu.leave_one_source_out[src] = {t.rows, share(t.loso, t.rows), share(t.q_loso, t.rows)};
  fit.cpu.rows = cpu.rows;
  fit.cpu.sources = static_cast<int>(cpu_per_source.size());
  fit.cpu.with_regime = cpu.with_regime;
  fit.cpu.loso_with_interval = cpu.loso_judged;
  fit.cpu.in_sample = share(cpu.in, cpu.rows);
  fit.cpu.loso = share(cpu.loso, cpu.rows);
  fit.cpu.quantile_in_sample = share(cpu.q_in, cpu.rows);
  fit.cpu.quantile_loso = share(cpu.q_loso, cpu.rows);
  fit.cpu.median_width = median(cpu.width);
  fit.cpu.quantile_median_width = median(cpu.q_width);
  fit.loso_source_weighted = per_source_stats(gpu_per_source, false, &fit.loso_sources_below_60);
  fit.quantile_loso_source_weighted = per_source_stats(gpu_per_source, true, nullptr);
  fit.mean_width = mean_of(gpu.width);
  fit.cpu.loso_source_weighted = per_source_stats(cpu_per_source, false, &fit.cpu.loso_sources_below_60);
  fit.cpu.quantile_loso_source_weighted = per_source_stats(cpu_per_source, true, nullptr);
  fit.cpu.mean_width = mean_of(cpu.width);
  for (const auto& [name, t] : by_host) fit.by_host[name] = {t.rows, share(t.in, t.rows), share(t.loso, t.rows)};
  fit.loso_median_width = median(loso_widths);
  if (!fresh.empty()) fresh_report(fit, samples, fresh_held, margins);
  // The same fit with one margin per group (the intervals before the support widening), judged the same ways, and
  // the GPU rows per support bin before and after.
  IntervalFit pooled_fit;
  if (setup.support_bins > 1) {
    IntervalSetup one = setup;
    one.support_bins = 1;
    pooled_fit = fit_intervals(samples, one, fresh);
    fit.pooled = {true,
                  pooled_fit.in_sample_coverage,
                  pooled_fit.loso_coverage,
                  pooled_fit.loso_source_weighted,
                  pooled_fit.lopo_coverage,
                  pooled_fit.lopo_publisher_weighted,
                  pooled_fit.median_width,
                  pooled_fit.loso_median_width};
  }
  struct BinTally {
    std::map<std::string, std::pair<int, int>> before, after;  // source -> rows, inside
    std::vector<double> width_before, width_after;
  };
  std::map<int, BinTally> bins;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].cpu) continue;
    auto& t = bins[fit.loso_bin[i]];
    const bool before = pooled_fit.loso_inside.empty() ? fit.loso_inside[i] : pooled_fit.loso_inside[i];
    const double width_before = pooled_fit.loso_width.empty() ? fit.loso_width[i] : pooled_fit.loso_width[i];
    auto& b = t.before[samples[i].source];
    auto& a = t.after[samples[i].source];
    ++b.first;
    ++a.first;
    b.second += before ? 1 : 0;
    a.second += fit.loso_inside[i] ? 1 : 0;
    if (width_before > 0) t.width_before.push_back(width_before);
    if (fit.loso_width[i] > 0) t.width_after.push_back(fit.loso_width[i]);
  }
  for (const auto& [bin, t] : bins) {
    auto& c = fit.by_support[bin];
    c.sources = static_cast<int>(t.after.size());
    int in_before = 0, in_after = 0;
    for (const auto& [src, n] : t.before) {
      c.rows += n.first;
      in_before += n.second;
      c.loso_sources_before += static_cast<double>(n.second) / n.first / c.sources;
    }
    for (const auto& [src, n] : t.after) {
      in_after += n.second;
      c.loso_sources_after += static_cast<double>(n.second) / n.first / c.sources;
    }
    c.loso_before = share(in_before, c.rows);
    c.loso_after = share(in_after, c.rows);
    c.width_before = median(t.width_before);
    c.width_after = median(t.width_after);
  }
  return fit;
}

IntervalFit fit_intervals(const std::string& dir, const IntervalSetup& setup) {
  std::vector<std::filesystem::path> files;
  for (const auto& f : calibration_files(dir)) files.emplace_back(f);
  // The fresh calibration files are checked before anything is predicted: each must be in `dir` and must not be a
  // calibration file already (its rows would then judge bands they shaped).
  std::vector<std::filesystem::path> fresh_files;
  {
    std::set<std::string> calibration;
    for (const auto& f : files) calibration.insert(f.filename().string());
    calibration.insert(setup.eval_named_calibration_files.begin(), setup.eval_named_calibration_files.end());
    std::vector<std::string> candidates;  // the evaluation files in `dir`, for a typo's suggestion
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (const auto name = e.path().filename().string();
          e.path().extension() == ".csv" && name.rfind("eval_", 0) == 0 && !calibration.count(name))
        candidates.push_back(name);
    std::sort(candidates.begin(), candidates.end());
    std::set<std::string> seen;
    for (const auto& name : setup.fresh_calibration_files) {
      if (calibration.count(name))
        throw InputError(fmt::format("data/interval_setup.toml fresh_calibration_files names '{}', a calibration file "
                                     "already: list evaluation files (eval_*.csv) whose rows no choice was made with",
                                     name));
      if (candidates.empty())
        throw InputError(fmt::format("data/interval_setup.toml fresh_calibration_files names '{}': no evaluation files "
                                     "(eval_*.csv) in {}",
                                     name, dir));
      if (std::find(candidates.begin(), candidates.end(), name) == candidates.end())
        throw_unknown("fresh calibration file (data/interval_setup.toml fresh_calibration_files)", name, candidates);
      if (seen.insert(name).second) fresh_files.push_back(std::filesystem::path(dir) / name);
    }
  }
  // Calibration files whose names start with eval_ (data/validation/README.md): their CPU rows join the fit.
  std::set<std::string> cpu_only;
  for (const auto& name : setup.eval_named_calibration_files)
    if (const auto f = std::filesystem::path(dir) / name; std::filesystem::exists(f)) {
      files.push_back(f);
      cpu_only.insert(name);
    }
  std::vector<IntervalSample> samples, fresh;
  std::vector<std::string> names;
  std::vector<ValidationReport> reports;
  const auto sample_of = [](const ValidationRow& row, const std::string& file) {
    IntervalSample s;
    s.cpu = row.result.prediction->device.kind == DeviceKind::kCpu;
    s.keys = regime_keys(*row.result.prediction);
    s.log_ratio = -std::log(row.ratio);  // ratio = predicted / measured
    s.source = source_id(row.result.row.source);
    s.file = file;
    s.host_bound = host_bound(*row.result.prediction);
    s.components = support_components(*row.result.prediction);
    return s;
  };
  for (const auto& f : files) {
    names.push_back(f.filename().string());
    reports.push_back(validate_file(f.string()));
    if (cpu_only.count(names.back()))
      std::erase_if(reports.back().rows, [](const ValidationRow& row) {
        return row.result.prediction->device.kind != DeviceKind::kCpu;
      });
    // Board-power rows are no throughput residuals: they enter no band, support count or what-if spread.
    std::erase_if(reports.back().rows,
                  [](const ValidationRow& row) { return is_power_metric(row.result.row.metric); });
    for (const auto& row : reports.back().rows) samples.push_back(sample_of(row, names.back()));
  }
  // The fresh rows set the margins' floor only: not the bands, the support counts or the what-if spreads.
  std::vector<std::string> fresh_names;
  for (const auto& f : fresh_files) {
    fresh_names.push_back(f.filename().string());
    for (const auto& row : validate_file(f.string()).rows)
      if (!is_power_metric(row.result.row.metric)) fresh.push_back(sample_of(row, fresh_names.back()));
  }
  IntervalFit fit = fit_intervals(samples, setup, fresh);
  fit.files = names;
  fit.fresh.files = fresh_names;
  {
    // The date the table was fitted (UTC), written beside every fitted number's source (data/intervals.toml).
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char day[16];
    std::strftime(day, sizeof day, "%Y-%m-%d", &utc);
    fit.fitted_on = day;
  }
  std::vector<std::vector<const ValidationRow*>> per_file;
  for (const auto& rep : reports) {
    per_file.emplace_back();
    for (const auto& row : rep.rows)
      if (row.result.prediction->device.kind != DeviceKind::kCpu) per_file.back().push_back(&row);
  }
  fit.what_ifs = fit_what_ifs(what_if_samples(per_file), setup);
  return fit;
}

namespace {

const char* widening_name(Widening w) { return w == Widening::kAdditive ? "additive" : "scale"; }
const char* margin_weights_name(MarginWeights w) {
  return w == MarginWeights::kRows ? "rows" : w == MarginWeights::kSources ? "sources" : "source_level";
}

// How a margin group's widening is chosen from its held-out scores, in words.
std::string margin_rule(const IntervalSetup& su) {
  const int level = static_cast<int>(std::lround(su.level * 100));
  switch (su.margin_weights) {
    case MarginWeights::kRows:
      return fmt::format("the ceil((n+1) x {:.2f})-th smallest of its n scores, the finite-sample split-conformal "
                         "quantile, so that at least {}% of held-out rows would have landed inside",
                         su.level, level);
    case MarginWeights::kSources:
      return fmt::format("the smallest score whose share of the weight reaches {:.2f} x (1 + 1/n_eff), every source "
                         "weighing the same (each row 1 / its source's rows; n_eff the effective count of those weights)",
                         su.level);
    case MarginWeights::kSourceLevel:
      break;
  }
  return fmt::format(
      "the smallest score whose share of the weight reaches {:.2f} x (1 + 1/K), every source weighing the same (each "
      "row 1 / its source's rows) and K the group's number of sources: the source, not the row, is the exchangeable "
      "unit (the pooled-CDF rule for grouped data, Dunn, Wasserman and Ramdas 2022), so that a fresh source's rows land "
      "inside at {}% on average over sources; a group of fewer than {} sources (no finite source-level quantile at "
      "{}%) takes the effective count of the weights instead of K",
      su.level, level, conformal_min_rows(su.level), level);
}

std::string margin_text(const IntervalSetup& setup, double m) {
  if (!std::isfinite(m)) return "none (too few held-out rows inside any band)";
  return setup.widening == Widening::kAdditive ? fmt::format("{:+.3f} (x{:.3f} on each bound)", m, std::exp(m))
                                               : fmt::format("x{:.3f}", m);
}


}  // namespace

std::string interval_fit_toml(const IntervalFit& fit) {
  std::string files;
  for (const auto& f : fit.files) files += (files.empty() ? "" : ", ") + f;
  std::string s = fmt::format(
      "# Prediction intervals: bounds of measured / predicted throughput per regime (split-conformal, docs/interval-fit.md).\n"
      "# Generated by `perfcast fit-intervals` (src/analysis/intervals.h) from the calibration files of\n"
      "# data/validation ({}); do not edit by hand. low / high: the regime's source-weighted quantiles\n"
      "# (quantile_low / quantile_high) widened by its group's margin ({} widening), a conformal quantile of the\n"
      "# nonconformity scores of the group's rows judged by bands fitted without their source. {} GPU rows: in-sample\n"
      "# coverage {:.1f}%, leave-one-source-out coverage {:.1f}% over rows, {:.1f}% with every source the same (whole\n"
      "# procedure refitted without each source), {:.1f}% / {:.1f}% leaving each publisher out, at level {:.2f}; margin\n"
      "# weights: {}. {} CPU rows from {} sources (regimes under device=cpu): in-sample coverage {:.1f}%, leave-one-source-out\n"
      "# {:.1f}%. Setup: data/interval_setup.toml.\n"
      "level = {}\nwidening = \"{}\"\n"
      "# Every number below was fitted by fitted_by on fitted_on from the files above (docs/interval-fit.md says how).\n"
      "fitted_by = \"perfcast fit-intervals (src/analysis/intervals.cpp)\"\nfitted_on = \"{}\"\n",
      files, widening_name(fit.setup.widening), fit.samples, fit.in_sample_coverage * 100, fit.loso_coverage * 100,
      fit.loso_source_weighted * 100, fit.lopo_coverage * 100, fit.lopo_publisher_weighted * 100, fit.setup.level,
      margin_weights_name(fit.setup.margin_weights), fit.cpu.rows, fit.cpu.sources, fit.cpu.in_sample * 100, fit.cpu.loso * 100, fit.setup.level,
      widening_name(fit.setup.widening), fit.fitted_on.empty() ? "unknown" : fit.fitted_on);
  const auto quoted = [](const std::string& v) {
    std::string q = "\"";
    for (const char c : v) q += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  if (fit.setup.support_bins > 1) {
    std::string names;
    for (const auto& c : fit.setup.support_components) names += (names.empty() ? "" : ", ") + quoted(c);
    s += fmt::format(
        "# Support widening: a prediction's support bin is the number of these components of its setup whose value no\n"
        "# calibration row has (the [support.*] tables below), at most support_bins - 1; its interval is its regime's\n"
        "# quantile band widened by its group's margin for that bin ([[margin]] bin), fitted on the rows of that bin\n"
        "# judged leaving their source out (novelty against the other sources). Regimes' low / high are bin 0's.\n"
        "support_components = [{}]\nsupport_bins = {}\n",
        names, fit.setup.support_bins);
  }
  const auto& fr = fit.fresh;
  if (fr.present) {
    std::string names;
    for (const auto& f : fr.files) names += (names.empty() ? "" : ", ") + f;
    s += fmt::format(
        "# Fresh-source floor: the rows of {} (data/interval_setup.toml fresh_calibration_files; evaluation files whose\n"
        "# sources no choice was made with) scored against these bands; [[margin]] held_out is the held-out calibration\n"
        "# sources' margin, fresh the fresh rows' (the same source-level conformal quantile), value the larger of the two.\n",
        names);
  }
  // A margin's held_out / fresh parts (with the fresh-source floor), for its [[margin]] table.
  const auto parts = [&](const std::string& g, std::size_t b) {
    if (!fr.present) return std::string();
    const auto part = [&](const std::map<std::string, std::vector<double>>& m, const char* name) {
      const auto it = m.find(g);
      if (it == m.end() || b >= it->second.size() || !std::isfinite(it->second[b])) return std::string();
      return fmt::format("{} = {:.4f}\n", name, it->second[b]);
    };
    return part(fr.held_out_margins, "held_out") + part(fr.fresh_margins, "fresh");
  };
  for (const auto& [g, m] : fit.margins) {
    const auto bins = fit.bin_margins.find(g);
    if (fit.setup.support_bins > 1 && bins != fit.bin_margins.end()) {
      for (std::size_t b = 0; b < bins->second.size(); ++b)
        if (std::isfinite(bins->second[b]))
          s += fmt::format("\n[[margin]]\ngroup = \"{}\"\nbin = {}\nvalue = {:.4f}\npooled = {:.4f}\n{}", g, b,
                           bins->second[b], m, parts(g, b));
    } else if (std::isfinite(m)) {
      s += fmt::format("\n[[margin]]\ngroup = \"{}\"\nvalue = {:.4f}\n{}", g, m, parts(g, 0));
    }
  }
  for (const auto& [k, w] : fit.what_ifs)
    s += fmt::format("\n[[what_if]]\nkind = \"{}\"\npairs = {}\nsources = {}\nspread = {:.4f}\nloso_coverage = {:.3f}\n",
                     k, w.pairs, w.sources, w.spread, w.loso);
  for (const auto& [k, r] : fit.regimes)
    s += fmt::format(
        "\n[[regime]]\nkey = \"{}\"\nrows = {}\nsources = {}\nlow = {:.4f}\nmedian = {:.4f}\nhigh = {:.4f}\n"
        "quantile_low = {:.4f}\nquantile_high = {:.4f}\nmargin = {:.4f}\n",
        k, r.rows, r.sources, r.low, r.median, r.high, r.quantile_low, r.quantile_high, r.margin);
  if (fit.setup.support_bins > 1) {
    s += "\n# Support: the calibration rows and distinct sources of every value of each support component.\n";
    for (const auto& [c, values] : fit.support) {
      s += fmt::format("\n[support.{}]\n", c);
      for (const auto& [v, n] : values)
        s += fmt::format("{} = {{ rows = {}, sources = {} }}\n", quoted(v), n.rows, n.sources);
    }
  }
  return s;
}

namespace {

// The fresh-source margin section of docs/interval-fit.md.
std::string fresh_markdown(const IntervalFit& fit) {
  const auto& su = fit.setup;
  const auto& fr = fit.fresh;
  std::string names;
  for (const auto& f : fr.files) names += (names.empty() ? "`" : ", `") + f + "`";
  std::string s = fmt::format(
      "\n## Fresh-source margin\n\n"
      "The calibration sources informed model choices (docs/calibration.md), so even left out in turn their residuals "
      "are smaller than those of a source the model was never tuned to, and the held-out margin above them alone "
      "leaves too many of a fresh source's rows outside. The rows of {} older evaluation files ({}), predicted by a "
      "model never tuned to their sources, therefore calibrate the interval width (data/interval_setup.toml "
      "fresh_calibration_files). They never enter a band, a support count, a what-if spread or a point prediction, and "
      "stay evaluation files for point predictions. Each of their rows is scored against the quantile band that "
      "judges it in this table (fitted on all calibration rows; fitted without its source for the {} rows whose "
      "source also has calibration rows), with its support bin judged against the calibration rows (to them it is a "
      "new source). Each margin group takes the same rule as the held-out margin over those scores, per support bin, "
      "and ships the larger of the two margins, bin by bin. The larger rather than the fresh margin alone: both "
      "estimate what a source the margin never saw meets, the maximum never narrows an interval the held-out "
      "calibration sources call for, and the maximum of two margins non-decreasing in the bin is non-decreasing too. "
      "A group whose fresh rows come from fewer than {} sources takes no floor: below that count the held-out margins "
      "give up the source-level rule too (at {:.0f}%), and a floor resting on a few sources' biases says nothing of "
      "the next source (with K sources, {:.2f} x (1 + 1/K) > 1 for every K below {}: no source-level quantile at all). "
      "The "
      "leave-one-source-out and leave-one-publisher-out figures on this page refit the "
      "floor too, without the left-out sources' fresh rows.{}\n\n"
      "The floor is itself judged out of sample: each fresh file's rows are judged by the floor refitted without that "
      "file (leave one file out: a file is one gathering of sources, so this is the stricter test), and likewise "
      "without each source. Before: the held-out calibration margins alone (the intervals without this section).\n\n"
      "| fresh rows | files | sources | rows | before | after, in sample | after, leave one file out: rows | files (each "
      "the same) | leave one source out: rows | sources (each the same) | median width: before | after |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      fr.files.size(), names, fr.overlap_rows, conformal_min_rows(su.level), su.level * 100, su.level,
      first_source_level_k(su.level),
      " One margin widens both bounds, over the two-sided scores (a margin per bound, the quantile at (1 + level) / 2 "
      "of its side's scores alone, was tried in session 23 and removed: docs/calibration.md).");
  for (const auto& [name, c] : {std::pair<const char*, const IntervalFit::FreshCalibration::Coverage&>{"GPU", fr.gpu},
                                {"CPU", fr.cpu}})
    if (c.rows)
      s += fmt::format("| {} | {} | {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} |\n",
                       name, c.files, c.sources, c.rows, c.before * 100, c.after * 100, c.left_out_file * 100,
                       c.files_weighted * 100, c.left_out_source * 100, c.sources_weighted * 100, c.width_before,
                       c.width_after);
  s += "\n| fresh file | rows | sources | before | after, in sample | after, file left out | after, each source left out |\n"
       "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [file, c] : fr.by_file)
    s += fmt::format("| {} | {} | {} | {:.0f}% | {:.0f}% | {:.0f}% | {:.0f}% |\n", file, c.rows, c.sources,
                     c.before * 100, c.after * 100, c.left_out_file * 100, c.left_out_source * 100);
  s += "\n| margin group | support bin | held-out calibration sources | fresh sources | shipped (the larger) |\n"
       "|---|---:|---:|---:|---:|\n";
  for (const auto& [group, bins] : fit.bin_margins)
    for (std::size_t b = 0; b < bins.size(); ++b) {
      const std::string& g = group;  // a structured binding cannot be captured before C++20 in clang
      const auto at = [&](const std::map<std::string, std::vector<double>>& m) {
        const auto it = m.find(g);
        return it == m.end() || b >= it->second.size() ? std::string("none (too few sources)")
                                                       : margin_text(su, it->second[b]);
      };
      s += fmt::format("| {} | {} | {} | {} | {} |\n", g, b, at(fr.held_out_margins), at(fr.fresh_margins),
                       margin_text(su, bins[b]));
    }
  s += fmt::format(
      "\n| calibration rows, in sample | before | after | median width: before | after |\n|---|---:|---:|---:|---:|\n"
      "| GPU | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} |\n| CPU | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} |\n",
      fr.in_sample_before * 100, fit.in_sample_coverage * 100, fr.median_width_before, fit.median_width,
      fr.cpu_in_sample_before * 100, fit.cpu.in_sample * 100, fr.cpu_median_width_before, fit.cpu.median_width);
  return s;
}

}  // namespace

std::string interval_fit_markdown(const IntervalFit& fit) {
  const auto& su = fit.setup;
  std::string s = fmt::format(
      "# Prediction intervals (generated by `perfcast fit-intervals`)\n\n"
      "{} measured GPU rows of the calibration files; {} regimes with at least {} rows from at least {} sources (plus "
      "the roots `all` and `device=cpu`, which need {} rows), every source weighing the same inside a regime. Level "
      "{:.0f}%.\n\n"
      "**Method (split-conformal).** Each regime's band starts as the source-weighted {:.0f}% and {:.0f}% quantiles of "
      "its residuals r = ln(measured / predicted) (asymmetric where the model is biased). Every calibration row is then "
      "judged by the bands fitted without its source (leave one source out) and scored by how far outside its band it "
      "falls ({}). Each margin group ({}) widens its bands by {}; a "
      "level with fewer than {} held-out rows takes its chain's margin. Bands stay regime-dependent: wide where the "
      "model is weak, narrow where it holds. The leave-one-source-out figures below refit the whole procedure (bands and "
      "margins) without each source, so a source's rows never choose the widening they are judged by.{}\n\n"
      "A new setup's error is a bias shared by its rows (its harness, host, versions) plus noise within it, so the "
      "figure that matters for a fresh source is the leave-one-source-out coverage with every source weighing the same "
      "(the mean of the per-source coverages below), not the row-weighted one, which one large benchmark log "
      "dominates.\n\n"
      "| coverage ({} GPU rows, {} sources) | in sample | leave one source out, rows | leave one source out, sources "
      "(each the same) | sources under 60% | median width (high / low) | mean width |\n|---|---:|---:|---:|---:|---:|---:|\n"
      "| quantile bands alone (before the widening) | {:.1f}% | {:.1f}% | {:.1f}% | | {:.3f} | |\n"
      "| calibrated (quantile bands widened) | {:.1f}% | {:.1f}% | {:.1f}% | {} | {:.3f} | {:.3f} |\n\n"
      "## Margins\n\n| group | {} |\n|---|---|\n",
      fit.samples, fit.regimes.size() - (fit.regimes.count("all") ? 1 : 0) - (fit.regimes.count("device=cpu") ? 1 : 0),
      su.min_rows, su.min_sources, conformal_min_rows(su.level), su.level * 100, (1 - su.level) / 2 * 100,
      (1 + su.level) / 2 * 100,
      su.widening == Widening::kAdditive
          ? "additive: max(ln low - r, r - ln high), a margin added to both log bounds"
          : "scale: the distance from the median over that side's half-width, a factor on both sides",
      su.margin_per_level ? "a chain, GPU or CPU, and a level of it: the number of dimensions a key names" : "a chain, GPU or CPU",
      margin_rule(su), conformal_min_rows(su.level),
      fit.fresh.present
          ? " Every margin then takes a floor from fresh sources, rows of evaluation files the model was never tuned to "
            "(Fresh-source margin below), judged leaving each of their files out; the margins below are the shipped ones."
          : "",
      fit.samples, fit.leave_one_source_out.size(),
      fit.quantile_in_sample * 100, fit.quantile_loso * 100, fit.quantile_loso_source_weighted * 100,
      fit.quantile_median_width, fit.in_sample_coverage * 100, fit.loso_coverage * 100, fit.loso_source_weighted * 100,
      fit.loso_sources_below_60, fit.median_width, fit.mean_width,
      fit.fresh.present ? "widening: the held-out rows', floored by the fresh sources'" : "held-out rows' widening");
  for (const auto& [g, m] : fit.margins)
    s += fmt::format("| {} | {} |\n", g, margin_text(su, m));
  if (fit.fresh.present) s += fresh_markdown(fit);
  s += "\n## Leave-one-source-out coverage per source\n\n| source | rows | quantile bands alone | calibrated |\n"
       "|---|---:|---:|---:|\n";
  for (const auto& [src, c] : fit.leave_one_source_out)
    s += fmt::format("| {} | {} | {:.0f}% | {:.0f}% |\n", src, c.rows, c.quantile_coverage * 100, c.coverage * 100);
  s += fmt::format(
      "\n## Leave one publisher out\n\nA publisher is the owner of a source's repositories (NVIDIA for DeepLearningExamples, "
      "TensorRT and TensorRT-LLM; lambdal for both Lambda benchmarks) or the site: several sources of one publisher share "
      "its harness and hosts, so the whole procedure is refitted without all of them, as for an organisation never seen "
      "(a publisher of one source is the leave-one-source-out fit). GPU rows: {:.1f}% over rows, {:.1f}% with every "
      "publisher the same, {} of {} publishers under 60%.\n\n| publisher | rows | calibrated |\n|---|---:|---:|\n",
      fit.lopo_coverage * 100, fit.lopo_publisher_weighted * 100, fit.lopo_publishers_below_60,
      fit.leave_one_publisher_out.size());
  for (const auto& [pub, c] : fit.leave_one_publisher_out)
    s += fmt::format("| {} | {} | {:.0f}% |\n", pub, c.rows, c.coverage * 100);
  if (su.support_bins > 1) {
    std::string names;
    for (const auto& c : su.support_components) names += (names.empty() ? "`" : ", `") + c + "`";
    s += fmt::format(
        "\n## Support widening\n\nA fresh source often brings a setup the calibration rows cover thinly. A prediction's "
        "support bin is the number of the components {} of its setup whose value no calibration source measured "
        "(at most {}; the counts are data/intervals.toml's [support.*] tables, fitted with the margins). Left out in turn, "
        "a source's rows are judged for novelty against the other sources' rows only, so a setup only its own source "
        "measured counts as new. Each margin group takes one margin per bin: the same source-level conformal quantile "
        "as above, over the held-out scores of the rows {}; a pool of fewer than {} sources takes the next "
        "better-supported bin's rows too, and a bin never takes a narrower margin than a better-supported one (the "
        "running maximum, which only adds coverage). Before: one margin per group, all bins pooled (the intervals "
        "without this section). Widths are those of the intervals that judged the rows held out.\n\n"
        "| GPU rows, support bin when held out | rows | sources | leave one source out, rows: before | after | "
        "sources (each the same): before | after | median width: before | after |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        names, su.support_bins - 1, su.support_pool == SupportPool::kAtLeast ? "with at least that many new components" : "of that bin",
        conformal_min_rows(su.level));
    for (const auto& [bin, c] : fit.by_support)
      s += fmt::format("| {}{} new component{} | {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} |\n",
                       bin, bin == su.support_bins - 1 && bin > 0 ? " or more" : "", bin == 1 ? "" : "s", c.rows,
                       c.sources, c.loso_before * 100, c.loso_after * 100, c.loso_sources_before * 100,
                       c.loso_sources_after * 100, c.width_before, c.width_after);
    const auto& b = fit.pooled;
    s += fmt::format(
        "\n| GPU rows, all bins | in sample | leave one source out, rows | sources (each the same) | leave one publisher "
        "out, rows | publishers (each the same) | median width in sample | median width held out |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n"
        "| before (one margin per group) | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} |\n"
        "| after (one margin per support bin) | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} |\n\n"
        "| margin group | pooled | {} |\n|---|---:|{}\n",
        b.in_sample * 100, b.loso * 100, b.loso_source_weighted * 100, b.lopo * 100, b.lopo_publisher_weighted * 100,
        b.median_width, b.loso_median_width, fit.in_sample_coverage * 100, fit.loso_coverage * 100,
        fit.loso_source_weighted * 100, fit.lopo_coverage * 100, fit.lopo_publisher_weighted * 100, fit.median_width,
        fit.loso_median_width, [&] {
          std::string h;
          for (int i = 0; i < su.support_bins; ++i) h += (i ? " | " : "") + fmt::format("bin {}", i);
          return h;
        }(),
        [&] {
          std::string h;
          for (int i = 0; i < su.support_bins; ++i) h += "---:|";
          return h;
        }());
    for (const auto& [g, bins] : fit.bin_margins) {
      const double pooled = fit.margins.count(g) ? fit.margins.at(g) : 0;
      s += fmt::format("| {} | {} |", g, margin_text(su, pooled));
      for (std::size_t b = 0; b < bins.size(); ++b) s += fmt::format(" {} |", margin_text(su, bins[b]));
      s += "\n";
    }
  }
  s += "\n## Coverage of host-bound and GPU-bound rows (calibrated)\n\nA row is host-bound when its predicted host time "
       "exceeds its GPU time (docs/host-model.md); such rows form their own branch of the regime keys (`host=bound`).\n\n"
       "| rows | count | in sample | leave one source out |\n|---|---:|---:|---:|\n";
  for (const auto& [name, g] : fit.by_host)
    s += fmt::format("| {} | {} | {:.1f}% | {:.1f}% |\n", name == "host_bound" ? "host-bound" : "GPU-bound", g.rows,
                     g.in_sample * 100, g.loso * 100);
  const auto& c = fit.cpu;
  s += fmt::format(
      "\n## CPU rows\n\nCPU predictions take their interval from regimes of their own (`device=cpu;...`, down to "
      "`device=cpu`), never from GPU residuals, and the CPU chain takes its own margin; the coverages above are over GPU "
      "rows only. {} CPU rows from {} sources; {} of them with a `device=cpu` regime in the table (a regime below the "
      "root needs {} rows from {} sources, the root `device=cpu` {} rows: the fewest for a two-sided conformal band "
      "at {:.0f}%); a row without one counts as outside.\n\n"
      "| CPU rows | in sample | leave one source out, rows | leave one source out, sources (each the same) | "
      "median width (high / low) |\n|---|---:|---:|---:|---:|\n"
      "| quantile bands alone | {:.1f}% | {:.1f}% | {:.1f}% | {:.3f} |\n| calibrated | {:.1f}% | {:.1f}% | {:.1f}% | "
      "{:.3f} |\n\n"
      "Left out in turn, {} of the {} CPU rows found a calibrated CPU band at all (a row without one counts as "
      "outside): the refit without a source chooses its margin from the other sources' rows judged by bands fitted "
      "without two sources, and needs {} such rows. The shipped margin is the conformal quantile of all {} rows, each "
      "judged by the band fitted without its source.\n\n"
      "| source | CPU rows | quantile bands alone | calibrated |\n|---|---:|---:|---:|\n",
      c.rows, c.sources, c.with_regime, su.min_rows, su.min_sources, conformal_min_rows(su.level), su.level * 100,
      c.quantile_in_sample * 100, c.quantile_loso * 100, c.quantile_loso_source_weighted * 100,
      c.quantile_median_width, c.in_sample * 100, c.loso * 100, c.loso_source_weighted * 100, c.median_width, c.loso_with_interval, c.rows, conformal_min_rows(su.level), c.rows);
  for (const auto& [src, sc] : c.leave_one_source_out)
    s += fmt::format("| {} | {} | {:.0f}% | {:.0f}% |\n", src, sc.rows, sc.quantile_coverage * 100, sc.coverage * 100);
  s += fmt::format(
      "\n## What-if speedups\n\nMeasured pairs of rows in one file that differ in one input only; score |ln(measured "
      "ratio / predicted ratio)|. A kind's spread is the ceil((n+1) x {:.2f})-th smallest of its n scores, so a "
      "predicted speedup S lies in [S / spread, S x spread] at the level above; `any` pools the kinds and serves what-ifs "
      "of other kinds. Leave one source out: each pair judged by the spreads fitted without its sources. `perfcast "
      "validate --pairs` reports the coverage of these spreads on any file.\n\n"
      "| varied input | pairs | sources | spread | leave-one-source-out coverage |\n|---|---:|---:|---:|---:|\n",
      su.level);
  for (const auto& [k, w] : fit.what_ifs)
    s += fmt::format("| {} | {} | {} | {:.3f} | {:.1f}% |\n", k, w.pairs, w.sources, w.spread, w.loso * 100);
  s += "\n## Widest and narrowest regimes (measured / predicted)\n\n| regime | rows | quantile low | quantile high | low | "
       "median | high |\n|---|---:|---:|---:|---:|---:|---:|\n";
  std::vector<const IntervalRegime*> v;
  for (const auto& [k, r] : fit.regimes) v.push_back(&r);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->high / a->low > b->high / b->low; });
  const std::size_t n = std::min<std::size_t>(8, v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (i < n || i + n >= v.size())
      s += fmt::format("| `{}` | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", v[i]->key, v[i]->rows,
                       v[i]->quantile_low, v[i]->quantile_high, v[i]->low, v[i]->median, v[i]->high);
  return s;
}

}  // namespace perfcast
