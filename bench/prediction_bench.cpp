// Microbenchmarks of the prediction pipeline: one prediction, graph building, the `--batch max` search,
// validation of the published measurements, and a sequence-model prediction. See bench/README.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "analysis/predict.h"
#include "analysis/validate.h"
#include "import/zoo/zoo.h"

namespace {

using perfcast::PredictRequest;

// One ResNet-50 fp32 training prediction (PyTorch, batch 64) on a GTX 1080 Ti: catalog lookups, graph
// building, per-op costing, step scheduling and the memory estimate.
void BM_PredictResNet50Train(benchmark::State& state) {
  PredictRequest request;
  request.gpu = "gtx-1080-ti";
  request.model = "resnet50";
  request.runtime = "pytorch";
  request.mode = perfcast::Mode::kTrain;
  request.precision = "fp32";
  request.batch = 64;
  for (auto _ : state) {
    perfcast::Prediction p = perfcast::predict(request);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());  // predictions
}
BENCHMARK(BM_PredictResNet50Train)->Unit(benchmark::kMicrosecond);

// Building the ResNet-50 forward graph (batch 64) from the zoo, with no costing.
void BM_BuildResNet50Graph(benchmark::State& state) {
  const perfcast::ZooModel& model = perfcast::find_zoo_model("resnet50");
  const perfcast::ModelOptions options{64, 0};
  for (auto _ : state) {
    perfcast::Graph g = model.build(options);
    benchmark::DoNotOptimize(g);
  }
  state.SetItemsProcessed(state.iterations());  // graphs
}
BENCHMARK(BM_BuildResNet50Graph)->Unit(benchmark::kMicrosecond);

// `--batch max`: the largest ResNet-50 fp32 training batch that fits a GTX 1080 Ti (doubling then
// bisection, one graph build and memory estimate per probe), then the prediction at that batch.
void BM_PredictResNet50BatchMax(benchmark::State& state) {
  PredictRequest request;
  request.gpu = "gtx-1080-ti";
  request.model = "resnet50";
  request.batch = 0;  // max
  std::int64_t found = 0;
  for (auto _ : state) {
    perfcast::Prediction p = perfcast::predict(request);
    found = p.request.batch;
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());  // searches
  state.counters["batch"] = static_cast<double>(found);
}
BENCHMARK(BM_PredictResNet50BatchMax)->Unit(benchmark::kMillisecond);

// Validating the whole data/validation/published.csv: parse, predict every row, error statistics.
// Items are CSV rows (predicted and unpredicted).
void BM_ValidatePublished(benchmark::State& state) {
  const std::string path = PERFCAST_SOURCE_DIR "/data/validation/published.csv";
  std::int64_t rows = 0;
  for (auto _ : state) {
    perfcast::ValidationReport report = perfcast::validate_file(path);
    rows = static_cast<std::int64_t>(report.rows.size() + report.unpredicted.size());
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(state.iterations() * rows);  // CSV rows
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_ValidatePublished)->Unit(benchmark::kMillisecond);

// One BERT-base pre-training prediction (fp32, PyTorch, batch 32, seq 128) on a GTX 1080 Ti.
void BM_PredictBertBaseTrainSeq128(benchmark::State& state) {
  PredictRequest request;
  request.gpu = "gtx-1080-ti";
  request.model = "bert_base";
  request.runtime = "pytorch";
  request.mode = perfcast::Mode::kTrain;
  request.precision = "fp32";
  request.batch = 32;
  request.seq = 128;
  for (auto _ : state) {
    perfcast::Prediction p = perfcast::predict(request);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());  // predictions
}
BENCHMARK(BM_PredictBertBaseTrainSeq128)->Unit(benchmark::kMicrosecond);

}  // namespace
