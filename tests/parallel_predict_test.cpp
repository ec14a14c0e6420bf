// Batches of predictions run on a worker pool (core/parallel.h): the results must come back in input order and
// be identical to one thread's, whatever the thread count.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/batch_predict.h"
#include "analysis/plan.h"
#include "core/parallel.h"
#include "import/config_csv.h"
#include "report/validation_report.h"
#include "test_paths.h"

namespace perfcast {
namespace {

const std::string kPublished = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/published.csv";

// Restores the default thread count when a test ends.
struct ThreadCount {
  explicit ThreadCount(unsigned n) { set_worker_threads(n); }
  ~ThreadCount() { set_worker_threads(0); }
};

std::string predictions_csv(unsigned threads) {
  ThreadCount t(threads);
  std::ostringstream out;
  write_predictions_csv(predict_rows(read_config_csv(kPublished, false)), out);
  return out.str();
}

std::string streamed_csv(unsigned threads) {
  ThreadCount t(threads);
  std::ostringstream out;
  write_predictions_csv_header(out);
  predict_config_file(kPublished, [&](RowResult&& r) { write_prediction_csv_row(r, out); });
  return out.str();
}

TEST(ParallelPredict, EveryIndexRunsOnceAndTheLowestIndexErrorIsRethrown) {
  ThreadCount t(4);
  std::vector<std::atomic<int>> seen(1000);
  parallel_for(seen.size(), [&](std::size_t i) { seen[i]++; });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  try {
    parallel_for(100, [](std::size_t i) {
      if (i == 17 || i == 60) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 17");  // as a loop on one thread would have thrown first
  }
}

TEST(ParallelPredict, ConfigurationRowsMatchOneThreadInInputOrder) {
  const std::string one = predictions_csv(1);
  EXPECT_EQ(predictions_csv(4), one);
  EXPECT_EQ(predictions_csv(3), one);
  // The streamed form (predict --configs) writes the same rows.
  EXPECT_EQ(streamed_csv(4), one);
  EXPECT_EQ(streamed_csv(1), one);
}

TEST(ParallelPredict, CompareMatchesOneThread) {
  PredictRequest base;
  base.model = "resnet50";
  base.gpus = 4;
  const std::vector<std::string> gpus{"v100-sxm2-16gb", "a100-sxm4-40gb", "rtx-3090", "gtx-1080-ti", "t4"};
  std::vector<GpuCount> entries;
  for (const auto& g : gpus) entries.push_back(GpuCount{g, 0});
  auto run = [&](unsigned threads) {
    ThreadCount t(threads);
    return compare(base, entries, RunSize{}, default_price_catalog(), DataParallelOptions{});
  };
  const auto a = run(1), b = run(4);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].gpu, gpus[i]);
    EXPECT_EQ(b[i].gpu, gpus[i]);
    EXPECT_EQ(a[i].status, b[i].status);
    ASSERT_EQ(a[i].prediction.has_value(), b[i].prediction.has_value());
    if (a[i].prediction) {
      EXPECT_EQ(a[i].prediction->samples_per_s, b[i].prediction->samples_per_s);
    }
    EXPECT_EQ(a[i].best_precision, b[i].best_precision);
    EXPECT_EQ(a[i].best_samples_per_s, b[i].best_samples_per_s);
  }
}

}  // namespace
}  // namespace perfcast
