// What perfcast-calibrate measures on one CUDA device (gpu_measurements.cu), in the units it measures them in.
// Plain C++, so main.cpp compiles without the CUDA headers. Every function throws CalibrationError on failure.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace perfcast::calibrate {

// A failed CUDA/cuBLAS call or a device that cannot run a measurement; main prints it as one line, exit 2.
struct CalibrationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The device as CUDA reports it.
struct DeviceInfo {
  std::string name;  // e.g. "NVIDIA GeForce GTX 1080 Ti"
  int cc_major = 0;  // compute capability, e.g. 6 and 1
  int cc_minor = 0;
  int sm_count = 0;
  double memory_gib = 0;
  std::string driver;  // "CUDA 12.4" (cudaDriverGetVersion), with NVML's driver version when NVML is there
};

// The best of the square GEMM sizes tried.
struct GemmResult {
  double tflops = 0;                   // 2 M N K / median time
  int size = 0;                        // M = N = K that reached it
  std::optional<double> sm_clock_mhz;  // median NVML SM clock during the timed runs; absent without NVML
};

// Selects `device` (cudaSetDevice) and describes it; throws if there is no such device.
DeviceInfo query_device(int device);

// cuBLAS SGEMM (FP32 on CUDA cores, no TF32), M = N = K in {4096, 8192}, sampling the SM clock as it runs.
GemmResult measure_sgemm(int device);

// cublasGemmEx with FP16 A, B, C and FP32 accumulation (CUBLAS_COMPUTE_32F): the tensor-core rate AMP uses.
GemmResult measure_tensor_gemm(int device);

// A streaming copy between two 1 GiB arrays: (bytes read + bytes written) / median time, in GB/s (1e9).
double measure_copy_gbps();

// An empty kernel from launch to completion (launch, then synchronize, timed on the host): median of 1000, us.
double measure_launch_us();

// Empty kernels queued back to back without waiting, GPU time per kernel in us (printed, not written).
double measure_queued_launch_us();

}  // namespace perfcast::calibrate
