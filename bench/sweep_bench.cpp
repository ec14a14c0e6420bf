// A capacity-planning sweep: `perfcast predict --configs` over 100,000 generated configurations (GPUs x models x
// modes x precisions x batches x GPU counts), streamed through predict_config_file on every worker thread as the
// CLI does. Reports rows/s and the process's peak resident memory (run it alone: the peak is the whole process's,
// so other benchmarks before it raise it). See bench/README.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "analysis/batch_predict.h"
#include "core/parallel.h"

namespace {

namespace fs = std::filesystem;

// Writes `rows` configurations drawn with a fixed seed (the same file every run).
fs::path sweep_csv(std::size_t rows) {
  const fs::path path = fs::temp_directory_path() / ("perfcast-sweep-" + std::to_string(rows) + ".csv");
  if (fs::exists(path)) return path;
  const std::vector<std::string> gpus{"gtx-1080-ti", "rtx-2080-ti", "rtx-3090", "rtx-4090", "t4",      "l4",
                                      "v100-sxm2-16gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5-80gb",
                                      "a10", "l40s"};
  const std::vector<std::string> models{"resnet50", "resnet152", "vgg16", "alexnet", "inception_v3",
                                        "inception_v4", "resnet18", "googlenet"};
  const std::vector<std::string> modes{"train", "infer"};
  const std::vector<std::string> precisions{"fp32", "amp"};
  const std::vector<int> batches{16, 32, 64, 128};
  const std::vector<int> counts{1, 1, 2, 4, 8};
  std::mt19937 rng(42);
  auto pick = [&](const auto& v) { return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)]; };
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << "gpu,model,runtime,mode,precision,batch,seq,n_gpus,interconnect,data,optimizer_step\n";
    for (std::size_t i = 0; i < rows; ++i)
      out << pick(gpus) << ',' << pick(models) << ",pytorch," << pick(modes) << ',' << pick(precisions) << ','
          << pick(batches) << ",," << pick(counts) << ",,synthetic,\n";
  }
  fs::rename(tmp, path);
  return path;
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void BM_PredictConfigsSweep(benchmark::State& state) {
  const fs::path csv = sweep_csv(static_cast<std::size_t>(state.range(0)));
  std::size_t rows = 0, ok = 0;
  for (auto _ : state) {
    rows = ok = 0;
    perfcast::predict_config_file(csv, [&](const perfcast::RowResult& r) {
      ++rows;
      if (r.prediction) ++ok;
    });
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows));  // rows
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["predicted"] = static_cast<double>(ok);
  state.counters["threads"] = perfcast::worker_threads();
  state.counters["peak_rss_MB"] = peak_rss_mb();
}
BENCHMARK(BM_PredictConfigsSweep)->Arg(100000)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
