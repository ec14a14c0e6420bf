// ONNX import: parsing, validating and building a graph of a few hundred nodes. The file is ResNet-152 (and
// DenseNet-121) exported from the zoo to a temporary file once, outside the timed loop. See bench/README.md.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "import/model_source.h"
#include "import/onnx_export.h"
#include "import/zoo/zoo.h"

namespace {

// The zoo model written as <tmp>/perfcast-bench-<id>.onnx (symbolic batch); "" without ONNX support.
std::string exported(const std::string& id) {
  if (!perfcast::onnx_supported()) return "";
  const auto path = std::filesystem::temp_directory_path() / ("perfcast-bench-" + id + ".onnx");
  const perfcast::Graph g = perfcast::find_zoo_model(id).build({1, 0});
  std::ofstream(path, std::ios::binary) << perfcast::graph_to_onnx(g).bytes;
  return path.string();
}

// model_from_onnx: parse, check, plan fusions and one validating build (shape inference included).
void BM_OnnxImport(benchmark::State& state, const std::string& id) {
  const std::string path = exported(id);
  if (path.empty()) {
    state.SkipWithError("perfcast was built without ONNX support");
    return;
  }
  std::size_t ops = 0;
  for (auto _ : state) {
    perfcast::ModelSource m = perfcast::model_from_onnx(path, {});
    benchmark::DoNotOptimize(m);
  }
  ops = perfcast::model_from_onnx(path, {}).build({1, 0}).ops.size();
  state.counters["ops"] = static_cast<double>(ops);
  state.SetItemsProcessed(state.iterations());  // imports
  std::filesystem::remove(path);
}
BENCHMARK_CAPTURE(BM_OnnxImport, resnet152, std::string("resnet152"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_OnnxImport, densenet121, std::string("densenet121"))->Unit(benchmark::kMillisecond);

// One more build of an imported model at batch 64 (what each probe of --batch max costs).
void BM_OnnxBuildResNet152(benchmark::State& state) {
  const std::string path = exported("resnet152");
  if (path.empty()) {
    state.SkipWithError("perfcast was built without ONNX support");
    return;
  }
  const perfcast::ModelSource m = perfcast::model_from_onnx(path, {});
  for (auto _ : state) {
    perfcast::Graph g = m.build({64, 0});
    benchmark::DoNotOptimize(g);
  }
  state.SetItemsProcessed(state.iterations());  // graphs
  std::filesystem::remove(path);
}
BENCHMARK(BM_OnnxBuildResNet152)->Unit(benchmark::kMillisecond);

}  // namespace
