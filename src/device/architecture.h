// Per compute capability facts (data/architectures.toml): which pipe runs each precision's GEMM math and the
// achievable fractions of datasheet peaks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/device_spec.h"
#include "device/power_curve.h"

namespace perfcast {

struct ArchitectureProfile {
  int sm_version = 0;
  std::string name;
  std::map<std::string, std::string> math;  // precision -> pipe name ("" = unsupported)
  double gemm_efficiency_cuda = 0.8;
  double gemm_efficiency_tensor = 0.7;
  double dram_efficiency = 0.8;
  double kernel_floor_us = 3.0;
  double sm_power_w = 4.0;            // board watts per SM under full compute load at sm_power_clock_mhz
  double sm_power_clock_mhz = 1500;
  // Sustainable FP16-input, FP32-accumulate tensor math per SM per clock in real kernels (0 = the datasheet
  // rate). Caps boards whose datasheet rate the SM cannot feed (see data/architectures.toml).
  double tensor_fp32acc_flops_per_clk_sm = 0;
  // The same for INT8-input, INT32-accumulate tensor math (0 = the datasheet rate).
  double tensor_int8_ops_per_clk_sm = 0;
  // Thread instructions the SM issues per clock (warp schedulers x 32 lanes): the ceiling of a kernel whose
  // time is set by how many instructions it executes per element rather than by bytes or FLOPs.
  double issue_slots_per_clk_sm = 128;
  // Resident thread blocks and warps an SM holds (CUDA C++ Programming Guide; 0 = not stated).
  double max_blocks_per_sm = 0;
  double max_warps_per_sm = 0;
  // Loaded DRAM latency in ns, from a published occupancy scan by Little's law (0 = no measurement: no
  // bytes-in-flight cap on this architecture).
  double dram_latency_ns = 0;
  // L2 read bandwidth per SM per clock with every SM reading L2-resident data (0 = no measurement: a tensor the
  // previous kernel wrote is read from DRAM). A line re-read after fewer than l2_reuse_full_fraction x l2_bytes
  // of other traffic still hits, after more than l2_reuse_zero_fraction x l2_bytes it does not, linearly between
  // (schedule/l2_reuse.cpp).
  double l2_read_bytes_per_clk_sm = 0;
  double l2_reuse_full_fraction = 0;
  double l2_reuse_zero_fraction = 0;
  // CUDA-core GEMM threadblock tiles (m, n) the library runs here, for plain and for batched GEMMs (empty = any
  // tile of cost_model.toml): read off measured kernel names by the kernel fit (data/kernel_fit.toml).
  std::vector<std::pair<int, int>> sgemm_tiles, sgemm_tiles_batched;
  // The share of cost_model.toml's CUDA-core tile loss (1 - [gemm] tiles_cuda efficiency) this architecture's
  // cuBLAS SGEMM tiles pay: a tile runs at 1 - share x (1 - efficiency) of the best tile's rate (1 = shared values).
  // A fit-only experiment, held at 1 by data/kernel_fit_setup.toml's bounds [1, 1]: no shipped prediction moves.
  double sgemm_tile_loss_share = 1;
  // cuBLAS's plain CUDA-core SGEMMs here split K until the grid fills this many waves of the SMs (0: cost_model.toml's
  // shared [gemm] split_k_waves_cublas_cuda), read off the measured kernels' grids (tools/fit_sgemm_split_waves.py).
  double cublas_sgemm_split_k_waves = 0;
  // cuBLAS's tensor-core GEMMs on this architecture, fitted to published HGEMM timings (perfcast fit-tensor-gemm,
  // data/published_kernels/): CTAs an SM must hold to reach its full tensor rate (a grid under one wave of them
  // leaves SMs part-idle; 0 = cost_model.toml's ctas_per_sm), and whether cuBLAS splits K to fill the SMs.
  double cublas_tensor_ctas_per_sm = 0;
  bool cublas_tensor_split_k = true;
  // Split a GEMM's K (other than a cuBLAS CUDA-core SGEMM's) until the grid fills the few-CTA rule's waves rather
  // than one wave. Tried with the sm_80 rule in session 39 and not kept (docs/calibration.md, h/splitk39): off
  // everywhere; the key keeps that experiment rerunnable from a copy of data/.
  bool cublas_tensor_split_to_rule_waves = false;
  // The main loop of a tensor-core GEMM or implicit-GEMM convolution here: bytes of K per operand row one step
  // loads (0 = no K-loop floor) and the shared-memory stages in flight (a step's loads are issued stages - 1 steps
  // ahead); with them a CTA alone on its SM waits a global round trip per (stages - 1) steps
  // (cost/kernel_cost.cpp KernelCostModel::gemm).
  double tensor_step_bytes = 0;
  double tensor_pipeline_stages = 0;
  // How board power follows the clock here (power_clock_exponent, tensor_power_fraction; device/power_curve.h).
  PowerCurve power;
  std::map<std::string, std::string> sources;

  // Pipe for a precision's GEMM math on this architecture; nullopt when it does not run here.
  std::optional<Pipe> math_pipe(const std::string& precision) const;
};

// Profile for a device's compute capability; the nearest older one when the exact one is absent.
const ArchitectureProfile& architecture_of(const DeviceSpec& device);

// The same as architectures.toml states it, before data/kernel_fit.toml's fitted values (the fit's start).
const ArchitectureProfile& architecture_prior(const DeviceSpec& device);
// Every architecture as architectures.toml states it.
const std::vector<ArchitectureProfile>& architecture_priors();

// The profile to cost `device` with: architecture_of's, with the efficiencies measured on the card itself (its
// file's [measured] table) in place of the architecture defaults. A measured tensor efficiency already includes
// whatever limits the card's tensor rate, so the per-SM FP32-accumulate cap is dropped with it.
ArchitectureProfile architecture_for(const DeviceSpec& device);

// `a` with data/tensor_gemm_fit.toml's cuBLAS tensor-core grid rule for its architecture (cublas_tensor_ctas_per_sm,
// cublas_tensor_split_k: the fit to CUDA 9.0's cuBLAS) in place of its own; `a` unchanged where the file has no
// table for that architecture. For runtimes whose releases linked that library (RuntimeProfile::cublas_cuda9_tensor_grid).
ArchitectureProfile with_cuda9_tensor_grid(ArchitectureProfile a);

// Parses a pipe name ("tc_fp16_fp32acc"); nullopt for "" or unknown.
std::optional<Pipe> parse_pipe(const std::string& name);

}  // namespace perfcast
