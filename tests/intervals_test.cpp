// Prediction intervals (issue 13): fitted to the residuals of the calibration files, reported by predict, the
// --configs CSV and validate, and judged by their coverage.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "analysis/intervals.h"
#include "cli_runner.h"

namespace perfcast {
namespace {

TEST(Intervals, SourceIdsNameTheRepositoryOrTheHost) {
  // The source column as data/validation/README.md describes it: "owner/repo:path@commit" or a URL.
  EXPECT_EQ(source_id("lambdal/lambda-tensorflow-benchmark:logs/7502-A100.logs/x/throughput/1@c17619db"),
            "lambdal/lambda-tensorflow-benchmark");
  EXPECT_EQ(source_id("https://developer.nvidia.com/deep-learning-performance-training-inference"),
            "developer.nvidia.com");
  EXPECT_EQ(source_id(""), "unknown");
}

TEST(Intervals, HostBoundStepsTakeTheirOwnBranchAfterTheMode) {
  // docs/host-model.md: a step is host-bound when the host's total exceeds the GPU's. Such a step's residual comes
  // from the host model, so its regimes must not be those of GPU-bound rows of the same family and precision.
  PredictionFacts p;
  p.request = {"a10", "mobilenet_v2", "pytorch", Mode::kInfer, "fp32", "synthetic", 1, 1, 1};
  p.device.architecture = "ampere";
  p.model_family = "cnn";
  p.primary = Bound::kHost;
  p.step = {7000, 900};
  const auto keys = regime_keys(p);
  EXPECT_EQ(keys.back(), "all");
  EXPECT_EQ(keys[keys.size() - 2], "mode=infer");
  EXPECT_EQ(keys[keys.size() - 3], "mode=infer;host=bound");
  EXPECT_EQ(keys[keys.size() - 4], "mode=infer;host=bound;family=conv");
  // The same request with the GPU the slower side: the keys it had before the branch existed.
  p.primary = Bound::kMemory;
  p.step = {900, 7000};
  const auto gpu_keys = regime_keys(p);
  EXPECT_EQ(gpu_keys[gpu_keys.size() - 3], "mode=infer;family=conv");
  for (const auto& k : gpu_keys) EXPECT_EQ(k.find("host="), std::string::npos) << k;
}

// Samples whose ln(measured/predicted) is uniform on [-a, a] in each of `sources` sources.
std::vector<IntervalSample> uniform_samples(int sources, int per_source, double a) {
  std::vector<IntervalSample> v;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-a, a);
  for (int s = 0; s < sources; ++s)
    for (int i = 0; i < per_source; ++i) {
      IntervalSample x;
      x.keys = {"mode=train", "all"};
      x.log_ratio = u(rng);
      x.source = "source" + std::to_string(s);
      v.push_back(x);
    }
  return v;
}

TEST(Intervals, QuantilesOfAKnownDistribution) {
  // For r uniform on [-0.5, 0.5], the 10% and 90% quantiles are -0.4 and +0.4: an 80% interval of exp(+-0.4), and
  // 80% of fresh draws (here the other sources, left out in turn) fall inside it.
  IntervalSetup setup;
  setup.level = 0.8;
  setup.min_rows = 25;
  setup.min_sources = 3;
  const IntervalFit fit = fit_intervals(uniform_samples(5, 400, 0.5), setup);
  ASSERT_TRUE(fit.regimes.count("mode=train"));
  const auto& r = fit.regimes.at("mode=train");
  EXPECT_NEAR(std::log(r.low), -0.4, 0.03);
  EXPECT_NEAR(std::log(r.high), 0.4, 0.03);
  EXPECT_NEAR(fit.in_sample_coverage, 0.8, 0.03);
  EXPECT_NEAR(fit.loso_coverage, 0.8, 0.05);
}

TEST(Intervals, ARegimeSeenByTooFewSourcesFallsBack) {
  // Two sources are not enough to trust a regime of their own (data/interval_setup.toml min_sources): "all" stays.
  IntervalSetup setup;
  setup.min_sources = 3;
  const IntervalFit fit = fit_intervals(uniform_samples(2, 400, 0.5), setup);
  EXPECT_FALSE(fit.regimes.count("mode=train"));
  EXPECT_TRUE(fit.regimes.count("all"));
}

TEST(Intervals, ShippedTableCoversTheCalibrationRowsAtAboutItsLevel) {
  // The target band for an 80% interval is 70-90% coverage. The table is generated from the calibration
  // files (perfcast fit-intervals --out data/intervals.toml); a stale table after a model change drifts out of the
  // band here and must be regenerated.
  const IntervalFit fit = fit_intervals(std::string(PERFCAST_SOURCE_DIR) + "/data/validation", interval_setup());
  EXPECT_GE(fit.in_sample_coverage, 0.70);
  EXPECT_LE(fit.in_sample_coverage, 0.90);
  EXPECT_GE(fit.loso_coverage, 0.65) << "leave-one-source-out coverage";
  int in = 0, n = 0;
  for (const auto& file : {"published.csv", "check_pytorch.csv", "check_recent.csv", "check_timm.csv"}) {
    const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/" + file);
    n += rep.overall.with_interval;
    in += static_cast<int>(std::lround(rep.overall.coverage * rep.overall.with_interval));
  }
  ASSERT_GT(n, 300);
  EXPECT_GE(static_cast<double>(in) / n, 0.65);
  EXPECT_LE(static_cast<double>(in) / n, 0.95);
}

class IntervalsCli : public test::ScratchDirTest {};

TEST_F(IntervalsCli, PredictJsonCarriesTheInterval) {
  // docs/json.md: throughput.low / throughput.high bound the headline throughput; null when it does not fit.
  const test::CliResult r = run("predict --gpu gtx-1080-ti --model resnet50 --batch 32 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double v = j["throughput"]["samples_per_s"], lo = j["throughput"]["low"], hi = j["throughput"]["high"];
  EXPECT_GT(lo, 0);
  EXPECT_LT(lo, hi);
  EXPECT_LT(lo, v * 1.5);
  EXPECT_GT(hi, v / 1.5);
  EXPECT_EQ(j["throughput"]["interval"]["level"], 0.8);
  const test::CliResult none = run("predict --gpu gtx-1080-ti --model resnet152 --batch 512 --json");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_TRUE(nlohmann::json::parse(none.out)["throughput"]["low"].is_null());
}

TEST_F(IntervalsCli, ConfigsCsvHasLowAndHighBesideThePrediction) {
  const auto file = dir_ / "configs.csv";
  test::write_text(file, "gpu,model,batch\ngtx-1080-ti,resnet50,32\n");
  const test::CliResult r = run("predict --configs " + file.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines[0].find("predicted_samples_per_s,predicted_tokens_per_s,predicted_low,predicted_high"),
            std::string::npos)
      << lines[0];
}

TEST_F(IntervalsCli, MeasuredStepAnchorsOnBatchOverStepTime) {
  // --measured-step: 32 samples per 200 ms step is 160 samples/s, whatever the model predicts.
  const test::CliResult r = run("predict --gpu gtx-1080-ti --model resnet50 --batch 32 --measured-step 200ms --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["anchor"]["measured"].get<double>(), 160.0, 1e-6);
  EXPECT_NEAR(j["anchor"]["measured_over_predicted"].get<double>(),
              160.0 / j["throughput"]["samples_per_s"].get<double>(), 1e-9);
}

TEST_F(IntervalsCli, AdviseScalesWhatIfsFromTheMeasurement) {
  // Each applicable strategy's anchored throughput is the measurement times its predicted speedup.
  const test::CliResult r = run("advise --gpu gtx-1080-ti --model resnet50 --batch 32 --measured 150/s --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int checked = 0;
  for (const auto& st : j["strategies"])
    if (st["applicable"].get<bool>()) {
      EXPECT_NEAR(st["anchored"].get<double>(), 150.0 * st["speedup"].get<double>(), 1e-6);
      ++checked;
    }
  EXPECT_GT(checked, 0);
}

TEST_F(IntervalsCli, BadMeasurementsAreOneLineErrors) {
  for (const std::string args : {"predict --measured 12x", "predict --measured-step 5parsecs",
                                 "predict --measured 100 --measured-step 10ms", "advise --measured -3"}) {
    const test::CliResult r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace perfcast
