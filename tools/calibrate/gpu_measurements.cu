// perfcast-calibrate's measurements. Each one warms up first (cuBLAS loads and picks its kernels, the clocks
// ramp to their loaded state), then times repeats with CUDA events and keeps the median, which one slow repeat
// (another process, a clock dip) does not move. Every CUDA and cuBLAS call is checked.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "gpu_measurements.h"
#ifdef PERFCAST_HAVE_NVML  // tools/calibrate/CMakeLists.txt: defined when the toolkit has NVML
#include <nvml.h>
#endif

namespace perfcast::calibrate {
namespace {

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw CalibrationError(std::string(call) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw CalibrationError(std::string(call) + ": " + cublasGetStatusString(s));
}
#define CHECK(call) check((call), #call)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Device memory released on every way out, errors included.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) { CHECK(cudaMalloc(&p_, bytes)); }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  void* p_ = nullptr;
};

class Events {
 public:
  Events() {
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

class Cublas {
 public:
  Cublas() { CHECK(cublasCreate(&h)); }
  ~Cublas() { cublasDestroy(h); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
  cublasHandle_t h = nullptr;
};

// The SM clock through NVML, found by PCI bus id (CUDA and NVML number devices differently, and
// CUDA_VISIBLE_DEVICES renumbers CUDA's). Without NVML, or where it cannot read the clock, sm_mhz() is empty.
class SmClock {
 public:
  explicit SmClock([[maybe_unused]] int device) {
#ifdef PERFCAST_HAVE_NVML
    char bus_id[32];
    CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    if (nvmlInit() != NVML_SUCCESS) return;
    initialized_ = true;
    have_device_ = nvmlDeviceGetHandleByPciBusId(bus_id, &device_) == NVML_SUCCESS;
#endif
  }
  ~SmClock() {
#ifdef PERFCAST_HAVE_NVML
    if (initialized_) nvmlShutdown();
#endif
  }
  SmClock(const SmClock&) = delete;
  SmClock& operator=(const SmClock&) = delete;
  std::optional<double> sm_mhz() const {
#ifdef PERFCAST_HAVE_NVML
    unsigned int mhz = 0;
    if (have_device_ && nvmlDeviceGetClockInfo(device_, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) return mhz;
#endif
    return std::nullopt;
  }

 private:
#ifdef PERFCAST_HAVE_NVML
  nvmlDevice_t device_{};
  bool initialized_ = false;
  bool have_device_ = false;
#endif
};

// Enqueues `work` until `warmup_s` seconds of it have run, then `reps` more times between two events and
// returns the median milliseconds. `during` runs while each timed repeat is still on the GPU (clock sampling).
double median_ms(const std::function<void()>& work, double warmup_s, int reps,
                 const std::function<void()>& during = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  do {
    work();
    CHECK(cudaDeviceSynchronize());
  } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < warmup_s);
  Events ev;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(ev.start));
    work();
    CHECK(cudaEventRecord(ev.stop));
    if (during) during();
    CHECK(cudaEventSynchronize(ev.stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, ev.start, ev.stop));
    ms.push_back(t);
  }
  return median(ms);
}

__device__ void store(float* p, float v) { *p = v; }
__device__ void store(__half* p, float v) { *p = __float2half(v); }

// Pseudo-random values in [-1, 1). Zeros would make the GEMMs draw less power than real ones do, and so run
// at a higher clock than real ones would.
template <class T>
__global__ void fill_kernel(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = (uint32_t(i) ^ seed) * 2654435761u;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    store(p + i, float(h) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

template <class T>
void fill(T* p, size_t n, uint32_t seed) {
  fill_kernel<<<1024, 256>>>(p, n, seed);
  CHECK(cudaGetLastError());
}

// Square GEMMs at the sizes frameworks reach in large layers, where cuBLAS is at its best: the efficiency
// perfcast applies to a well-shaped GEMM (its own tile and wave model handles the badly shaped ones).
template <class T>
GemmResult best_square_gemm(int device, const std::function<void(Cublas&, int, T*, T*, T*)>& gemm) {
  Cublas blas;
  SmClock clock(device);
  GemmResult best;
  std::vector<double> clocks;
  for (int n : {4096, 8192}) {
    const size_t elems = size_t(n) * n;
    DeviceBuffer a(elems * sizeof(T)), b(elems * sizeof(T)), c(elems * sizeof(T));
    fill(a.as<T>(), elems, 1);
    fill(b.as<T>(), elems, 2);
    fill(c.as<T>(), elems, 3);
    const double ms = median_ms([&] { gemm(blas, n, a.as<T>(), b.as<T>(), c.as<T>()); }, 1.0, 11,
                                [&] {
                                  if (auto mhz = clock.sm_mhz()) clocks.push_back(*mhz);
                                });
    const double tflops = 2.0 * n * n * double(n) / (ms * 1e-3) / 1e12;
    if (tflops > best.tflops) best = {tflops, n, std::nullopt};
  }
  if (!clocks.empty()) best.sm_clock_mhz = median(clocks);
  return best;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void empty_kernel() {}

}  // namespace

DeviceInfo query_device(int device) {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    throw CalibrationError("--device " + std::to_string(device) + ": this machine has " + std::to_string(count) +
                           " CUDA device(s)");
  CHECK(cudaSetDevice(device));
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, device));
  DeviceInfo d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.memory_gib = double(p.totalGlobalMem) / (1024.0 * 1024 * 1024);
  int v = 0;
  CHECK(cudaDriverGetVersion(&v));
  d.driver = "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
#ifdef PERFCAST_HAVE_NVML
  char version[96];
  if (nvmlInit() == NVML_SUCCESS) {
    if (nvmlSystemGetDriverVersion(version, sizeof version) == NVML_SUCCESS)
      d.driver += ", driver " + std::string(version);
    nvmlShutdown();
  }
#endif
  return d;
}

GemmResult measure_sgemm(int device) {
  return best_square_gemm<float>(device, [](Cublas& blas, int n, float* a, float* b, float* c) {
    const float alpha = 1, beta = 0;
    // CUBLAS_DEFAULT_MATH never trades FP32 for TF32 tensor cores: this is the CUDA-core rate.
    CHECK(cublasSetMathMode(blas.h, CUBLAS_DEFAULT_MATH));
    CHECK(cublasSgemm(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n));
  });
}

GemmResult measure_tensor_gemm(int device) {
  return best_square_gemm<__half>(device, [](Cublas& blas, int n, __half* a, __half* b, __half* c) {
    const float alpha = 1, beta = 0;  // CUBLAS_COMPUTE_32F takes float scalars
    CHECK(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16F, n, b, CUDA_R_16F, n, &beta, c,
                       CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
}

// 1 GiB per array is far beyond any L2 (50 MiB on H100/H200), so every byte goes to DRAM. A copy reads and
// writes the same amount, the mix of most of a training step's elementwise and normalization kernels.
double measure_copy_gbps() {
  const size_t bytes = size_t(1) << 30;
  const size_t n = bytes / sizeof(float4);
  DeviceBuffer in(bytes), out(bytes);
  fill(in.as<float>(), bytes / sizeof(float), 4);
  const double ms = median_ms(
      [&] {
        copy_kernel<<<unsigned((n + 255) / 256), 256>>>(in.as<float4>(), out.as<float4>(), n);  // a float4 a thread
        CHECK(cudaGetLastError());
      },
      0.5, 21);
  return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
}

// The floor under every kernel perfcast costs: host launch, GPU start-up and completion of a kernel that does
// nothing. Timed on the host, because cudaEvents sit on the GPU and would miss the launch itself.
double measure_launch_us() {
  std::vector<double> us;
  for (int i = 0; i < 1100; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    empty_kernel<<<1, 1>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(nullptr));
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 100) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());  // first 100: warm-up
  }
  return median(us);
}

// The same kernel 1000 times in a full queue: what each costs when the host runs ahead of the GPU.
double measure_queued_launch_us() {
  const double ms = median_ms(
      [] {
        for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1>>>();
        CHECK(cudaGetLastError());
      },
      0.2, 11);
  return ms * 1e3 / 1000;
}

}  // namespace perfcast::calibrate
