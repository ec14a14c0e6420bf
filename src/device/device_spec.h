// A GPU as the cost model sees it: datasheet peaks per pipe, memory system, links. Loaded from data/gpus/.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "device/cpu_spec.h"

namespace perfcast {

// Execution pipes with a published peak rate.
enum class Pipe : std::uint8_t {
  kFp32,            // FP32 FMA on CUDA cores
  kFp64,            // FP64 on CUDA cores
  kFp16,            // native half (HFMA2) on CUDA cores
  kDp4a,            // INT8 dot-product-accumulate on CUDA cores (sm_61+)
  kTcFp16Fp16Acc,   // tensor cores, FP16 in, FP16 accumulate
  kTcFp16Fp32Acc,   // tensor cores, FP16 in, FP32 accumulate
  kTcBf16,          // tensor cores, BF16
  kTcTf32,          // tensor cores, TF32
  kTcFp8,           // tensor cores, FP8
  kTcInt8,          // tensor cores, INT8
  kCount
};
inline constexpr int kPipeCount = static_cast<int>(Pipe::kCount);

// Key of the pipe in data files and JSON ("fp32", "tc_fp16_fp32acc", ...).
std::string_view pipe_name(Pipe p);
// Data-file key of the pipe's peak ("fp32_tflops", "int8_dp4a_tops", ...).
std::string_view pipe_peak_key(Pipe p);
bool is_tensor_pipe(Pipe p);

// Efficiencies measured on the card itself (a GPU file's [measured] table, written by tools/calibrate), used in
// place of data/architectures.toml's defaults. Fractions of the file's datasheet figures at boost clock.
struct MeasuredEfficiency {
  std::optional<double> gemm_efficiency_cuda;    // cuBLAS SGEMM
  std::optional<double> gemm_efficiency_tensor;  // cuBLAS FP16-input, FP32-accumulate GEMM
  std::optional<double> dram_efficiency;         // streaming copy
  std::optional<double> kernel_floor_us;         // empty kernel, launch to completion
  std::optional<double> sustained_clock_mhz;     // SM clock during the SGEMM run
  double tdp_w = 0;                              // the board limit the card ran under while measured
  std::string source;                            // device name, driver, tool and date
};

struct DeviceSpec {
  DeviceKind kind = DeviceKind::kGpu;  // kCpu: the fields below are the CPU's (device_from_cpu), `cpu` holds the rest
  std::optional<CpuSpec> cpu;          // the CPU's own spec when kind is kCpu
  std::string id;            // catalog id, e.g. "gtx-1080-ti"
  std::string name;          // marketing name
  std::string architecture;  // pascal, volta, turing, ampere, ada, hopper
  std::string chip;
  std::string compute_capability;  // "6.1"
  int sm_version = 0;              // 61 for "6.1"
  int sm_count = 0;
  int cuda_cores = 0;
  double base_clock_mhz = 0;
  double boost_clock_mhz = 0;
  std::array<double, kPipeCount> peak_tflops{};  // dense peak per pipe at boost clock; 0 = absent
  double memory_gb = 0;
  std::string memory_type;
  int memory_bus_bits = 0;
  double mem_bw_gbps = 0;   // GB/s
  double l2_bytes = 0;
  double smem_per_sm_bytes = 0;
  double tdp_w = 0;              // the board's power limit: its rated TDP, or --power-limit where one is asked
  double rated_tdp_w = 0;        // the rated TDP from the board's file (0 = not loaded from one: tdp_w)
  double power_limit_min_w = 0;  // lowest board power limit the driver accepts (nvidia-smi -pl); 0 = not in the file
  double power_limit_max_w = 0;  // highest; 0 = not in the file (data/power.toml [power_limit] derives both from TDP)
  int pcie_gen = 3;
  int pcie_lanes = 16;
  double nvlink_gbps = 0;   // total, both directions
  std::string launch_date;
  double launch_price_usd = 0;
  std::map<std::string, std::string> sources;  // field -> where the value came from ("default" for the rest)
  std::optional<MeasuredEfficiency> measured;  // present when the file carries a [measured] table
  // Clock over boost this board sustained through large measured GEMMs at its stock limit sustained_clock_tdp_w
  // (data/kernel_fit.toml [gpu.<id>], fitted to measured kernels); 0 = not measured, the power model decides.
  double sustained_clock_factor = 0;
  double sustained_clock_tdp_w = 0;
  std::string file;                            // file it was loaded from

  // Board memory in bytes: NVIDIA quotes GPU memory in binary gigabytes (11 GB = 11 GiB).
  double memory_bytes() const { return memory_gb * 1073741824.0; }
  double peak(Pipe p) const { return peak_tflops[static_cast<int>(p)]; }
  // Source of a field (falls back to the file's default source).
  std::string source_of(const std::string& field) const;
};

}  // namespace perfcast
