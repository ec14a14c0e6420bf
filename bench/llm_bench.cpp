// Microbenchmarks of the language-model paths: importing a 70B Hugging Face config (JSON parsing and the
// 80-block graph) and one decode prediction (graph per decode step, per-tensor GGUF types, kernel paths,
// memory and the largest context/batch searches). See bench/README.md.
#include <benchmark/benchmark.h>

#include <string>

#include "analysis/predict.h"
#include "import/model_source.h"

namespace {

const std::string kLlama70bConfig = std::string(PERFCAST_SOURCE_DIR) + "/data/models/hf/llama-3-70b.json";

// Parse meta-llama/Meta-Llama-3-70B's config.json and build its forward graph for one 2048-token sample.
void BM_ImportLlama70bConfig(benchmark::State& state) {
  for (auto _ : state) {
    const perfcast::ModelSource m = perfcast::model_from_hf_config(kLlama70bConfig);
    perfcast::Graph g = m.build(perfcast::ModelOptions{1, 2048});
    benchmark::DoNotOptimize(g);
  }
  state.SetItemsProcessed(state.iterations());  // imports
}
BENCHMARK(BM_ImportLlama70bConfig)->Unit(benchmark::kMicrosecond);

// One decode prediction: Llama-3-8B Q4_K_M, 128 tokens after 1024 of context, on a Tesla P40 with llama.cpp.
void BM_PredictLlama3DecodeP40(benchmark::State& state) {
  perfcast::PredictRequest request;
  request.gpu = "tesla-p40";
  request.model = "llama-3-8b";
  request.runtime = "llama.cpp";
  request.mode = perfcast::Mode::kDecode;
  request.precision = "q4_k_m";
  request.batch = 1;
  request.seq = 128;
  request.context = 1024;
  for (auto _ : state) {
    perfcast::Prediction p = perfcast::predict(request);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());  // predictions
}
BENCHMARK(BM_PredictLlama3DecodeP40)->Unit(benchmark::kMillisecond);

}  // namespace
