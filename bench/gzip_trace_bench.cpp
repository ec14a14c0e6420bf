// Gzip-compressed PyTorch profiler traces: read_maybe_gzip (the two-pass reader: count the decompressed bytes through
// a 1 MiB buffer, then decompress into a string of that size) on synthetic Kineto-like .json.gz traces of 16, 128
// and 512 MiB of JSON text, and the whole import (read_kineto_trace) of the largest. The traces are written in the
// benchmark's setup into a temporary folder (zlib's default level, 6, through gzwrite) and the folder is removed
// when the binary exits. Peak resident memory of one read is measured in a forked child (ru_maxrss from wait4),
// once per size, outside the timed loop. See bench/README.md.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "import/gzip_file.h"
#include "import/kineto_trace.h"

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Operators per profiler step (about ResNet-50's forward graph).
constexpr int kOpsPerStep = 160;

struct GzTrace {
  std::string path;
  std::size_t text_bytes = 0;  // decompressed
  std::size_t gz_bytes = 0;    // on disk
};

// The temporary folder and the traces in it, removed when the binary exits.
class TraceDir {
 public:
  TraceDir() : dir_(fs::temp_directory_path() / ("perfcast-bench-gz-" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  TraceDir(const TraceDir&) = delete;
  TraceDir& operator=(const TraceDir&) = delete;
  ~TraceDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const GzTrace& get(std::size_t mib) {
    auto it = traces_.find(mib);
    if (it == traces_.end()) it = traces_.emplace(mib, write(mib)).first;
    return it->second;
  }

 private:
  // Kineto-like events as the PyTorch profiler writes them (pytorch/kineto libkineto/src/output_json.cpp): per
  // operator an aten::relu_ cpu_op with input shapes and a nested aten::clamp_min_, three cudaLaunchKernel calls and
  // their kernels (correlated); a ProfilerStep#N user annotation every kOpsPerStep operators. Written until the text
  // reaches `mib` MiB.
  GzTrace write(std::size_t mib) const {
    GzTrace t;
    t.path = (dir_ / ("trace-" + std::to_string(mib) + "mib.json.gz")).string();
    gzFile f = gzopen(t.path.c_str(), "wb6");
    if (f == nullptr) throw std::runtime_error("cannot write " + t.path);
    std::string buf;
    buf.reserve(2 * kMiB);
    const auto flush = [&] {
      if (!buf.empty() && gzwrite(f, buf.data(), static_cast<unsigned>(buf.size())) != static_cast<int>(buf.size()))
        throw std::runtime_error("gzwrite failed on " + t.path);
      t.text_bytes += buf.size();
      buf.clear();
    };
    buf +=
        "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-40GB\", \"numSms\": "
        "108, \"computeMajor\": 8, \"computeMinor\": 0, \"totalGlobalMem\": 42505273344}],\n\"traceEvents\": [\n";
    char line[1024];
    long long id = 1;
    long long ts = 0;
    // Durations and gaps drawn from a fixed-seed generator, kernel names from a few: a trace this regular otherwise
    // compresses about 30x, more than profiler traces do.
    unsigned rng = 12345;
    const auto draw = [&rng](unsigned n) {
      rng = rng * 1103515245u + 12345u;
      return static_cast<int>((rng >> 16) % n);
    };
    static const char* const kKernels[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar>(int)",
        "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>(cudnnTensorStruct)",
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1",
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
        "ampere_sgemm_128x64_nn", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"};
    const std::size_t target = mib * kMiB;
    bool first = true;
    for (int step = 0; t.text_bytes + buf.size() < target; ++step) {
      int n = std::snprintf(line, sizeof line,
                            "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %lld, \"dur\": %d}",
                            first ? "" : ",\n", step, ts, kOpsPerStep * 110);
      buf.append(line, static_cast<std::size_t>(n));
      first = false;
      for (int op = 0; op < kOpsPerStep; ++op) {
        const int c = 64 << (op % 4), h = 56 >> (op % 4);
        n = std::snprintf(line, sizeof line,
                          ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::relu_\", \"pid\": 1, \"tid\": 1, "
                          "\"ts\": %lld, \"dur\": %d, \"args\": {\"External id\": %lld, \"Input Dims\": [[64, %d, %d, "
                          "%d]], \"Input type\": [\"float\"]}}"
                          ",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::clamp_min_\", \"pid\": 1, \"tid\": "
                          "1, \"ts\": %lld, \"dur\": %d, \"args\": {\"External id\": %lld, \"Input Dims\": [[64, %d, %d, "
                          "%d]]}}",
                          ts, 10 + draw(40), id, c, h, h, ts + 2 + draw(3), 5 + draw(10), id + 1, c, h, h);
        buf.append(line, static_cast<std::size_t>(n));
        id += 2;
        for (int k = 0; k < 3; ++k) {
          n = std::snprintf(line, sizeof line,
                            ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
                            "\"tid\": 1, \"ts\": %lld, \"dur\": %d, \"args\": {\"correlation\": %lld}}"
                            ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, "
                            "\"tid\": 7, \"ts\": %lld, \"dur\": %d, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": %lld, \"grid\": "
                            "[%d, 1, 1], \"block\": [256, 1, 1]}}",
                            ts + 3 + 4 * k + draw(2), 3 + draw(6), id, kKernels[draw(6)], ts + 10 + 30 * k + draw(5),
                            5 + draw(200), id, 64 << draw(8));
          buf.append(line, static_cast<std::size_t>(n));
          ++id;
        }
        ts += 100 + draw(20);
        if (buf.size() >= kMiB) flush();
      }
    }
    buf += "\n]}\n";
    flush();
    if (gzclose(f) != Z_OK) throw std::runtime_error("gzclose failed on " + t.path);
    t.gz_bytes = fs::file_size(t.path);
    return t;
  }

  fs::path dir_;
  std::map<std::size_t, GzTrace> traces_;
};

TraceDir& traces() {
  static TraceDir d;
  return d;
}

double current_rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1e6;
}

// Peak resident memory (MB) of a forked child that runs `work` once. The child starts at the parent's resident set
// (returned in `base_mb`), so the peak includes it.
double child_peak_rss_mb(const std::function<void()>& work, double& base_mb) {
  base_mb = current_rss_mb();
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    try {
      work();
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  rusage u{};
  if (wait4(pid, &status, 0, &u) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e6;  // ru_maxrss is in KiB on Linux
}

// Memoised per benchmark and size, so repetitions fork once.
struct Peak {
  double peak_mb = 0, base_mb = 0;
};
Peak peak_once(const std::string& key, const std::function<void()>& work) {
  static std::map<std::string, Peak> done;
  auto it = done.find(key);
  if (it == done.end()) {
    Peak p;
    p.peak_mb = child_peak_rss_mb(work, p.base_mb);
    it = done.emplace(key, p).first;
  }
  return it->second;
}

// The reader alone: what read_kineto_trace calls, with its limit (data/limits.toml, 2 GiB).
void BM_ReadGzipTrace(benchmark::State& state) {
  const GzTrace& t = traces().get(static_cast<std::size_t>(state.range(0)));
  const auto limit = std::size_t{2048} * kMiB;
  for (auto _ : state) {
    std::string text = perfcast::read_maybe_gzip(t.path, limit, "trace");
    if (text.size() != t.text_bytes) state.SkipWithError("wrong length");
    benchmark::DoNotOptimize(text);
  }
  const Peak p = peak_once("read" + std::to_string(state.range(0)),
                           [&] { benchmark::DoNotOptimize(perfcast::read_maybe_gzip(t.path, limit, "trace")); });
  state.counters["text_MiB"] = static_cast<double>(t.text_bytes) / kMiB;
  state.counters["gz_MB"] = static_cast<double>(t.gz_bytes) / 1e6;
  state.counters["peak_rss_MB"] = p.peak_mb;
  state.counters["base_rss_MB"] = p.base_mb;
  state.SetBytesProcessed(static_cast<std::int64_t>(t.text_bytes) * state.iterations());
}
BENCHMARK(BM_ReadGzipTrace)->Arg(16)->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond);

// The whole import of the largest: read_kineto_trace (decompress, parse with simdjson, build the records).
void BM_ImportGzipTrace(benchmark::State& state) {
  const GzTrace& t = traces().get(static_cast<std::size_t>(state.range(0)));
  std::size_t events = 0;
  for (auto _ : state) {
    const perfcast::KinetoTrace k = perfcast::read_kineto_trace(t.path);
    events = k.kernels.size() + k.cpu_ops.size();
    benchmark::DoNotOptimize(events);
  }
  const Peak p = peak_once("import" + std::to_string(state.range(0)), [&] {
    const perfcast::KinetoTrace k = perfcast::read_kineto_trace(t.path);
    benchmark::DoNotOptimize(k.kernels.size());
  });
  state.counters["text_MiB"] = static_cast<double>(t.text_bytes) / kMiB;
  state.counters["events"] = static_cast<double>(events);
  state.counters["peak_rss_MB"] = p.peak_mb;
  state.counters["base_rss_MB"] = p.base_mb;
  state.SetBytesProcessed(static_cast<std::int64_t>(t.text_bytes) * state.iterations());
}
BENCHMARK(BM_ImportGzipTrace)->Arg(512)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
