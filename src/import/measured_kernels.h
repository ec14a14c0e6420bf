// Kernel latencies measured on real GPUs (shared/kernels/, NeuSight's collection format): one record per
// measured operator call, with its shape, its device and the library kernels it launched.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace perfcast {

// The operator classes of the measurement files (folder names of shared/kernels/neusight_train/).
enum class MeasuredOp : std::uint8_t {
  kBmm,      // batched matmul [B,M,N] x [B,N,K] -> [B,M,K]
  kLinear,   // x [B,M,N] x W^T [N,K] -> [B,M,K] (nn.Linear with in_features N, out_features K, bias)
  kConv,     // 2D convolution, square kernel and input
  kBinary,   // elementwise of two (B,H) tensors: add, mul, div, pow
  kUnary,    // elementwise of one (B,H) tensor: add/mul/div/pow by a scalar, relu, gelu, tanh
  kSoftmax,  // softmax over H of a (B,H) tensor
  kLayerNorm,  // LayerNorm over H of a (B,H) tensor
  kCount
};
std::string_view measured_op_name(MeasuredOp op);

struct MeasuredKernel {
  MeasuredOp op = MeasuredOp::kBmm;
  std::string op_name;  // the file's OPName ("add", "gelu", "conv", ...)
  std::string device;   // the file's Device column ("Tesla T4")
  // The optional Precision column (this project's sweeps, tools/device_session/kernel_sweep.py: fp32 with TF32 off,
  // tf32, bf16, fp16); "fp32" where the file has none (the shared files are FP32 with TF32 off).
  std::string precision = "fp32";
  double latency_us = 0;
  std::string kernel;   // main kernel name (names the cuBLAS tile / cuDNN algorithm)
  std::string kernels;  // every kernel the call launched, ';'-separated (may be empty)
  // The main kernel's grid.z (0 where the file has no such column). cuBLAS's SGEMM kernels put the K slices of
  // a split-K GEMM on grid.z (every measured linear row has B = 1, so z is never a batch).
  std::int64_t grid_z = 0;
  // Shape: bmm/linear B,M,N,K; elementwise/softmax/LN B,H (in b,m); conv below.
  std::int64_t b = 0, m = 0, n = 0, k = 0;
  std::int64_t conv_c = 0, conv_k = 0, conv_r = 0, conv_hw = 0, conv_stride = 1, conv_pad = 0;
};

// Reads one measurement file (.csv or .csv.gz). The op class comes from the OPName column; rows of other ops
// are skipped. Throws InputError on a file that cannot be read or lacks the columns its op needs.
std::vector<MeasuredKernel> read_measured_kernels(const std::string& path);

// Every *.csv / *.csv.gz below `dir` (one folder per op, one file per GPU), in a stable order.
std::vector<MeasuredKernel> read_measured_kernel_dir(const std::string& dir);

}  // namespace perfcast
