// Prediction intervals from the model's own residuals on measured runs (issue 13).
//
// Every measured row of the calibration files (data/validation, not eval_*) gives a residual
// r = ln(measured / predicted). Rows are grouped by regime: mode, model family, precision, what bounds the step,
// batch regime, GPU count, architecture and runtime, in that order of importance. `perfcast fit-intervals` keeps,
// for every prefix of that list with enough rows, a band of r and writes data/intervals.toml. A prediction takes the
// band of the most specific regime in the table, so the interval is wide where the model has been weak and narrow
// where it has held.
//
// A band is built in steps (split-conformal, docs/interval-fit.md):
//  1. the source-weighted (1-level)/2 and (1+level)/2 quantiles of the regime's residuals (asymmetric: they carry
//     the regime's bias);
//  2. a widening chosen out of sample: every calibration row is judged by the bands fitted without its source
//     (leave one source out), its nonconformity score is how far outside that band it falls, and each group of
//     regimes (a chain -- GPU or CPU -- and, with margin_per_level, a level of it) widens its bands by a conformal
//     quantile of its scores: counted in rows, the ceil((n+1) x level)-th smallest of n, so that at least `level` of
//     held-out rows land inside; counted in sources (MarginWeights::kSourceLevel, shipped), every source weighing the
//     same and the source the exchangeable unit, so that a fresh source's rows land inside at `level` on average over
//     sources (a new setup's error is a bias its rows share plus noise within it);
//  3. a fresh-source floor (data/interval_setup.toml fresh_calibration_files): older evaluation files, whose rows were
//     predicted by a model never tuned to their sources, serve as calibration for the interval width only. Each of
//     their rows is scored against the quantile bands of all calibration rows (the bands fitted without its source
//     where that source also has calibration rows), each group takes the same source-level conformal quantile of
//     those scores per support bin, and the shipped margin is the larger of the two: the held-out calibration
//     sources' (step 2) and the fresh sources'. The calibration sources informed model choices, so their held-out
//     residuals understate a fresh source's; a margin never narrows an interval;
//  4. with support bins (data/interval_setup.toml support_*), one such margin per bin of novelty: a setup's bin is the
//     number of its support components (GPU, architecture, runtime and mode, version, precision, family, batch,
//     host-bound, GPU count) whose value no calibration source measured, judged for a held-out row against the other
//     sources' rows, so rows only their own source covers are the novel setups; margins never shrink with novelty.
//     The support counts are fitted and stored with the table, never read from the CSVs at predict time.
//
// Honesty: the table is fitted on the calibration rows, so coverage on them is in-sample. The fresh-source floor is
// judged leaving each fresh file out (and each fresh source out): the floor refitted without the file's rows judges
// them. fit-intervals also reports leave-one-source-out coverage with the whole procedure (every step) refitted
// without each source, over rows and with every source weighing the same, the same leaving out each publisher (the
// owner of a source's repositories) with all its sources, and `perfcast validate` reports coverage on the frozen
// evaluation files the table never saw (those not named as fresh calibration files).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "analysis/validate.h"

namespace perfcast {

struct PredictionInterval {
  double level = 0;    // e.g. 0.8
  double low = 1;      // throughput factors: the interval is [predicted x low, predicted x high]
  double high = 1;
  std::string regime;  // the regime key whose residuals gave it
  int rows = 0;        // measured rows behind it
  // The setup's support (IntervalSetup::support_components): the components whose value no calibration source
  // measured, and whether the margin fitted for setups as novel (its support bin) is wider than a supported one's.
  std::vector<std::string> novel_components;
  int support_bin = 0;   // min(novel components, support_bins - 1)
  bool widened = false;  // the interval is wider than the same regime's for a setup the calibration rows cover
  double width_ratio = 1; // its log width over that supported interval's (1 when not widened)
};

// The regime keys of a prediction, most specific first; the last is "all" (a CPU's last is "device=cpu").
std::vector<std::string> regime_keys(const PredictionFacts& p);

// The components of a prediction's setup whose support in the calibration rows decides how far its interval widens
// (component, value): GPU model, architecture, runtime and mode, framework version (major.minor), precision class,
// model family, model, batch bucket, host-bound or not, one GPU or several.
std::vector<std::pair<std::string, std::string>> support_components(const PredictionFacts& p);

// The interval for a prediction from data/intervals.toml; nullopt when it does not fit in memory (no throughput).
std::optional<PredictionInterval> prediction_interval(const Prediction& p);
// One line saying that few calibration rows resemble the interval's setup and whether that widened it ("" when every
// support component of the setup was measured).
std::string support_note(const PredictionInterval& iv);
// Why a prediction that fits carries no interval, in one line ("" when it does not fit); for a prediction whose
// prediction_interval gave none (the callers already hold that answer).
std::string no_interval_reason(const Prediction& p);

// One measured row's residual for the fit.
struct IntervalSample {
  std::vector<std::string> keys;  // regime_keys of its prediction
  double log_ratio = 0;           // ln(measured / predicted)
  std::string source;             // where it was measured (the source column's repository or host)
  std::string file;
  bool host_bound = false;        // its predicted step waits on the host (the host=bound branch of the keys)
  bool cpu = false;               // a CPU prediction (keys under device=cpu)
  std::vector<std::pair<std::string, std::string>> components;  // support_components of its prediction
};

struct IntervalRegime {
  std::string key;
  int rows = 0;
  int sources = 0;
  double low = 1, median = 1, high = 1;  // the interval's bounds and the median, as measured/predicted
  double quantile_low = 1, quantile_high = 1;  // the bounds before the conformal widening (the residual quantiles)
  double margin = 0;                            // the widening its group took (data/interval_setup.toml widening)
};

// How a band is widened: `additive` adds a margin m to both log bounds ([ln low - m, ln high + m], conformalised
// quantile regression); `scale` multiplies each side's log distance from the median by a factor f.
enum class Widening { kAdditive, kScale };

// The fewest rows that give a two-sided conformal band at `level`: both ends need an order statistic,
// floor((n+1)(1-level)/2) >= 1, so n >= 2/(1-level) - 1 (9 rows at 80%).
int conformal_min_rows(double level);
// The ceil((n+1) x level)-th smallest of the n scores (+inf when that exceeds n): the split-conformal quantile, with
// which a fresh exchangeable score falls at or below it with probability >= level.
double conformal_quantile(std::vector<double> scores, double level);
// The same with weighted scores (weight, e.g. 1 / rows of its source): the smallest score whose cumulative weight share
// reaches level x (1 + 1/n_eff); n_eff, when not given (0), is the effective count (sum w)^2 / sum w^2. With equal
// weights, exactly the order statistic above. With weights 1 / rows of the source and n_eff the number of sources, the
// pooled-CDF rule for grouped data (Dunn, Wasserman and Ramdas 2022): the exchangeable unit is the source, not the row.
double weighted_conformal_quantile(std::vector<std::pair<double, double>> scores, double level, double n_eff = 0);
// A residual's nonconformity score against the log band [lo, hi] with median md: additive, max(lo - r, r - hi);
// scale, the distance from md over that side's half-width. A band widened by w covers r exactly when score <= w.
double conformal_score(Widening w, double lo, double md, double hi, double r);
// The log band [lo, hi] widened by `by` (a negative additive margin narrows it, never past the median).
void widen_band(Widening w, double lo, double md, double hi, double by, double& out_lo, double& out_hi);

// A what-if's speedup interval: measured pairs of rows that differ in one input only (precision, batch, GPU model,
// GPU count) give r = ln(measured ratio / predicted ratio); `spread` is the `level` quantile of |r| as a factor, so
// a predicted speedup S lies in [S / spread, S x spread].
struct WhatIfSpread {
  std::string kind;  // precision | batch | gpu | gpus | any (all kinds pooled)
  int pairs = 0;
  double spread = 1;
  int sources = 0;      // sources its pairs come from
  double loso = 0;      // share of pairs inside a spread fitted without their source
};
// The kind whose spread judges a measured pair of `perfcast validate --pairs` (precision, precision+batch: two inputs
// varied, so "any"; gpus).
std::string what_if_kind_of_pair(const std::string& varied);
// The spread of a what-if kind from data/intervals.toml ("any" when the kind has none).
std::optional<WhatIfSpread> what_if_spread_of_kind(const std::string& kind);

// The spread for an advisor strategy category (precision, batch, hardware, scale-out; others take "any").
std::optional<WhatIfSpread> what_if_spread(const std::string& strategy_category);

// How a margin group's held-out scores weigh in its conformal quantile (data/interval_setup.toml margin_weights):
// kRows, every row the same (a source of 1000 rows sets the margin alone); kSources, every source the same, with the
// effective count of those weights; kSourceLevel, every source the same and the source as the exchangeable unit
// (n_eff = the group's number of sources), so that a fresh source's rows land inside at `level` on average over
// sources; a group with fewer sources than conformal_min_rows(level) has no finite source-level quantile and takes
// kSources' rule.
enum class MarginWeights { kRows, kSources, kSourceLevel };

// Which held-out rows fit a support bin's margin: kBin, the rows of that bin; kAtLeast, the rows with at least that
// many new components (bin 0: every row, the pooled margin).
enum class SupportPool { kBin, kAtLeast };

struct IntervalSetup {
  double level = 0.8;
  int min_rows = 25;
  int min_sources = 3;
  Widening widening = Widening::kAdditive;
  bool margin_per_level = false;  // one widening per level of each chain (else one per chain)
  MarginWeights margin_weights = MarginWeights::kRows;
  // Calibration files named eval_* (data/validation/README.md): their CPU rows join the fit, and none of them may
  // be a fresh calibration file.
  std::vector<std::string> eval_named_calibration_files;
  // Evaluation files (eval_*) that calibrate the interval width only: their rows' scores against the calibration
  // bands set a floor under each group's margin (the fresh-source margin); they never enter a band, a support count
  // or a point prediction.
  std::vector<std::string> fresh_calibration_files;
  // Support widening: a prediction's support bin is the number of support_components (names of
  // support_components(PredictionFacts)) whose value no calibration source measured, capped at support_bins - 1; each
  // margin group takes one margin per bin, fitted on the held-out rows of that bin (novelty judged against the other
  // sources), made non-decreasing in the bin. support_bins = 1: one margin per group.
  std::vector<std::string> support_components;
  int support_bins = 1;
  SupportPool support_pool = SupportPool::kBin;
};
IntervalSetup interval_setup();  // data/interval_setup.toml

// How many calibration rows and sources measured one value of a support component.
struct SupportCount {
  int rows = 0;
  int sources = 0;
};
// component -> value -> its calibration rows and sources (values no row has are absent).
using SupportTable = std::map<std::string, std::map<std::string, SupportCount>>;

struct IntervalFit {
  IntervalSetup setup;
  std::vector<std::string> files;
  std::string fitted_on;  // the UTC date of the fit (YYYY-MM-DD; "" for fits of samples given directly)
  std::map<std::string, IntervalRegime> regimes;
  std::map<std::string, double> margins;  // the widening of each margin group ("gpu", "gpu:3", "cpu", ...), all bins pooled
  // The widening of each margin group per support bin (index = bin), non-decreasing; regimes' low / high are bin 0's.
  std::map<std::string, std::vector<double>> bin_margins;
  SupportTable support;  // the support components' values over all calibration rows
  std::map<std::string, WhatIfSpread> what_ifs;
  int samples = 0;
  double in_sample_coverage = 0;
  struct SourceCoverage {
    int rows = 0;
    double coverage = 0;           // share of its rows inside an interval fitted (both steps) without the source
    double quantile_coverage = 0;  // the same with the quantile bands alone (no widening)
  };
  std::map<std::string, SourceCoverage> leave_one_source_out;
  double loso_coverage = 0;  // over all rows
  // Leave-one-source-out coverage with every source weighing the same (the mean of the per-source coverages), the
  // number of sources under 60%, and the mean over rows of high / low in sample: what a fresh setup meets.
  double loso_source_weighted = 0, quantile_loso_source_weighted = 0;
  int loso_sources_below_60 = 0;
  double mean_width = 0;
  // Leave one publisher out (publisher_id: the owner of the repositories, or the site), the whole procedure refitted
  // without the publisher's sources: GPU rows, per publisher and over rows, the mean of the per-publisher coverages and
  // the number of publishers under 60% (quantile_coverage unused).
  std::map<std::string, SourceCoverage> leave_one_publisher_out;
  double lopo_coverage = 0, lopo_publisher_weighted = 0;
  int lopo_publishers_below_60 = 0;
  // The quantile bands alone (step 1, no widening), judged the same ways: what the widening adds.
  double quantile_in_sample = 0, quantile_loso = 0;
  // Median over the rows of high / low of the interval that judges them in sample, with and without the widening.
  double median_width = 0, quantile_median_width = 0;
  // The same two coverages over the host-bound rows alone ("host_bound") and the others ("gpu_bound").
  struct GroupCoverage {
    int rows = 0;
    double in_sample = 0;
    double loso = 0;
  };
  std::map<std::string, GroupCoverage> by_host;
  // GPU rows by the support bin they had when their source was left out (novelty against the other sources): their
  // leave-one-source-out coverage and median interval width (high / low) with one margin per group (before the
  // support widening) and with the margin of their bin (after).
  struct SupportBinCoverage {
    int rows = 0, sources = 0;
    double loso_before = 0, loso_after = 0;
    double loso_sources_before = 0, loso_sources_after = 0;  // every source the same
    double width_before = 0, width_after = 0;
  };
  std::map<int, SupportBinCoverage> by_support;
  // The headline figures of the same fit with one margin per group (support_bins = 1), when support_bins > 1.
  struct Pooled {
    bool present = false;
    double in_sample = 0, loso = 0, loso_source_weighted = 0, lopo = 0, lopo_publisher_weighted = 0;
    double median_width = 0, loso_median_width = 0;
  } pooled;
  double loso_median_width = 0;  // median over GPU rows of the width of the interval that judged them held out
  // Per sample (in the order given): inside the interval fitted without its source; that interval's width (0: none);
  // its support bin then.
  std::vector<char> loso_inside;
  std::vector<double> loso_width;
  std::vector<int> loso_bin;
  // The fresh-source margin (IntervalSetup::fresh_calibration_files): the margins before it and its own, and the
  // coverage of the fresh rows before (held-out calibration margins only), after in sample, and after with the floor
  // refitted without their file (leave one file out) or without their source. A row no band judged counts as outside.
  struct FreshCalibration {
    bool present = false;
    std::vector<std::string> files;
    std::map<std::string, std::vector<double>> held_out_margins;  // group -> per support bin, calibration sources alone
    std::map<std::string, std::vector<double>> fresh_margins;     // group -> per support bin, the fresh rows' quantile
    int overlap_rows = 0;  // fresh rows whose source also has calibration rows (scored by bands fitted without it)
    struct Coverage {
      int rows = 0, sources = 0, files = 0;
      double before = 0, after = 0;   // share of rows inside: held-out calibration margins; the shipped margins
      double left_out_file = 0;       // inside the shipped margins with the fresh floor refitted without their file
      double left_out_source = 0;     // ... without their source
      double files_weighted = 0;      // left_out_file with every file the same (mean of the per-file shares)
      double sources_weighted = 0;    // left_out_source with every source the same
      double width_before = 0, width_after = 0;  // median high / low of the intervals that judge the rows
    };
    std::map<std::string, Coverage> by_file;  // every fresh file, GPU and CPU rows together
    Coverage gpu, cpu;                        // per chain
    // The calibration rows judged in sample with the held-out calibration margins alone (before the floor).
    double in_sample_before = 0, median_width_before = 0;          // GPU rows
    double cpu_in_sample_before = 0, cpu_median_width_before = 0;  // CPU rows
  } fresh;
  // The CPU rows (device=cpu regimes), judged apart: the figures above are over GPU rows only.
  struct CpuCoverage {
    int rows = 0, sources = 0;
    int with_regime = 0;  // rows with a device=cpu regime in the table
    int loso_with_interval = 0;  // rows a calibrated band judged when their source was left out
    double in_sample = 0, loso = 0;
    double quantile_in_sample = 0, quantile_loso = 0;
    double median_width = 0, quantile_median_width = 0;
    std::map<std::string, SourceCoverage> leave_one_source_out;
    double loso_source_weighted = 0, quantile_loso_source_weighted = 0;
    int loso_sources_below_60 = 0;
    double mean_width = 0;
  } cpu;
};

// The source a measurement row names: "owner/repo" of a GitHub-style "owner/repo:path" or of a github.com address, or
// the host of another URL.
std::string source_id(const std::string& source_column);
// The publisher of a source: the owner of an "owner/repo" source, else the source itself (a site's host).
std::string publisher_id(const std::string& source);

// Predicts every measured row of the calibration files in `dir` (files not named eval_*) and of the setup's fresh
// calibration files, and fits the table. A fresh calibration file that is missing from `dir`, or that is a calibration
// file already, is an InputError.
IntervalFit fit_intervals(const std::string& dir, const IntervalSetup& setup);
// The fit of calibration `samples`; `fresh` (rows of the fresh calibration files) set the fresh-source floor only.
IntervalFit fit_intervals(const std::vector<IntervalSample>& samples, const IntervalSetup& setup,
                          const std::vector<IntervalSample>& fresh = {});
// One measured what-if: |ln(measured ratio / predicted ratio)| of a pair of rows that differ in one input.
struct WhatIfSample {
  std::string kind;    // precision | batch | gpu | gpus
  double abs_log = 0;  // the score; a predicted speedup S covers the measured one when abs_log <= ln(spread)
  std::string source_a, source_b;  // the sources of its two rows (a leave-one-source-out fit drops it for either)
};
// The what-if pairs within each file's rows (already predicted).
std::vector<WhatIfSample> what_if_samples(const std::vector<std::vector<const ValidationRow*>>& files);
// Every kind's spread: the conformal quantile of its scores; `any` pools the kinds. A kind needs min_rows pairs.
std::map<std::string, WhatIfSpread> fit_what_ifs(const std::vector<WhatIfSample>& pairs, const IntervalSetup& setup);
std::string interval_fit_toml(const IntervalFit& fit);
std::string interval_fit_markdown(const IntervalFit& fit);

}  // namespace perfcast
