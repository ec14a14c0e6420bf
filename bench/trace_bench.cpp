// PyTorch profiler traces: reading (simdjson over the decompressed text) and summarising a trace the size of a
// few dozen profiled training steps, and turning one into a model. The trace is written once, outside the timed
// loop: per step a ProfilerStep, ResNet-50's forward operators with input shapes (each with a nested aten op),
// and, as a training step has, three kernels and three launch calls per operator. See bench/README.md.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/trace_analysis.h"
#include "import/kineto_trace.h"
#include "import/model_source.h"
#include "import/zoo/zoo.h"

namespace {

using nlohmann::json;

std::string write_trace(int steps) {
  const auto path = std::filesystem::temp_directory_path() / ("perfcast-bench-trace-" + std::to_string(steps) + ".json");
  if (std::filesystem::exists(path)) return path.string();
  const perfcast::Graph g = perfcast::find_zoo_model("resnet50").build({64, 0});
  json ev = json::array();
  double ts = 0;
  for (int s = 0; s < steps; ++s) {
    const double step_start = ts;
    const std::size_t step_index = ev.size();
    ev.push_back(nullptr);
    for (const auto& op : g.ops) {
      json dims = json::array({op.out_shape});
      ev.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::relu_"}, {"pid", 1}, {"tid", 1}, {"ts", ts},
                    {"dur", 20}, {"args", {{"External id", ev.size()}, {"Input Dims", dims}, {"Input type", {"float"}}}}});
      ev.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::clamp_min_"}, {"pid", 1}, {"tid", 1},
                    {"ts", ts + 2}, {"dur", 10}, {"args", {{"External id", ev.size()}, {"Input Dims", dims}}}});
      for (int k = 0; k < 3; ++k) {
        ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1},
                      {"ts", ts + 3 + k}, {"dur", 4}, {"args", {{"correlation", ev.size()}}}});
        ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "void at::native::vectorized_elementwise_kernel<4>(int)"},
                      {"pid", 0}, {"tid", 7}, {"ts", ts + 10 + 30 * k}, {"dur", 25},
                      {"args", {{"device", 0}, {"stream", 7}, {"correlation", ev.size()}, {"grid", {1024, 1, 1}},
                                {"block", {256, 1, 1}}}}});
      }
      ts += 100;
    }
    ev[step_index] = {{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(s)},
                      {"pid", 1}, {"tid", 1}, {"ts", step_start}, {"dur", ts - step_start}};
  }
  json doc = {{"schemaVersion", 1},
              {"deviceProperties", {{{"id", 0}, {"name", "NVIDIA A100-SXM4-40GB"}, {"numSms", 108},
                                     {"computeMajor", 8}, {"computeMinor", 0}, {"totalGlobalMem", 42505273344LL}}}},
              {"traceEvents", ev}};
  std::ofstream(path) << doc.dump();
  return path.string();
}

// read_kineto_trace + summarize_trace: what `perfcast trace --no-predict` does.
void BM_TraceReadAndSummarize(benchmark::State& state) {
  const std::string path = write_trace(static_cast<int>(state.range(0)));
  const auto bytes = static_cast<double>(std::filesystem::file_size(path));
  std::size_t events = 0;
  for (auto _ : state) {
    const perfcast::KinetoTrace t = perfcast::read_kineto_trace(path);
    perfcast::TraceSummary s = perfcast::summarize_trace(t);
    benchmark::DoNotOptimize(s);
    events = t.kernels.size() + t.cpu_ops.size();
  }
  state.counters["MB"] = bytes / 1e6;
  state.counters["events"] = static_cast<double>(events);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_TraceReadAndSummarize)->Arg(10)->Arg(50)->Unit(benchmark::kMillisecond);

// model_from_trace: read, select the first step's forward operators, one validating build. It keeps the last trace
// read, so two copies alternate to time the reading every iteration.
void BM_TraceToModel(benchmark::State& state) {
  const std::string path = write_trace(50);
  const std::string copy = path + ".copy.json";
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  bool flip = false;
  for (auto _ : state) {
    perfcast::ModelSource m = perfcast::model_from_trace((flip = !flip) ? path : copy);
    benchmark::DoNotOptimize(m);
  }
  std::filesystem::remove(copy);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TraceToModel)->Unit(benchmark::kMillisecond);

}  // namespace
