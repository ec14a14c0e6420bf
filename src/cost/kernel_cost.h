// Time of one GPU kernel from its work: GEMM-like kernels with tile and wave quantization, streaming kernels
// with a bandwidth ramp, both with the architecture's latency floor.
#pragma once

#include <cstdint>
#include <string_view>

#include "cost/cost_constants.h"
#include "device/architecture.h"
#include "device/board_power.h"
#include "device/device_spec.h"
#include "graph/op.h"

namespace perfcast {

// What limits a kernel.
enum class Bound : std::uint8_t {
  kTensorCompute,   // tensor-core math
  kCudaCompute,     // CUDA-core math
  kMemory,          // DRAM bandwidth
  kLatency,         // launch floors and gaps between kernels
  kHost,            // framework dispatch on the CPU slower than the GPU
  kInputPipeline,   // host data loading/decoding/augmentation slower than the GPU
  kHostToDevice,    // PCIe copies of the input not hidden behind compute
  kCommunication,   // gradient all-reduce not hidden behind backward
  kCpuVector,       // CPU vector units (AVX2/AVX-512 FMAs, AVX512_BF16, VNNI)
  kCpuMatrix,       // CPU matrix units (AMX tiles)
  kCount
};
std::string_view bound_name(Bound b);

// Whose GEMM kernels run: cuBLAS (matmul ops: its per-architecture tile sets, read off measured kernel names) or
// any other library (cuDNN's implicit-GEMM convolutions, llama.cpp's own kernels: any tile of cost_model.toml).
// kCudnnNoSplit: cuDNN's CUDA-core forward convolution kernels, any tile but never split-K (none of the 24,662
// measured cuDNN 8.9 FP32 convolutions ran a split-K kernel: implicit GEMM, fused Winograd and FFT alike).
enum class GemmLibrary : std::uint8_t { kAny, kCublas, kCudnnNoSplit };

struct KernelCost {
  double flops = 0;
  double bytes = 0;
  double compute_us = 0;  // at the achievable rate for this shape
  double memory_us = 0;   // at achievable DRAM bandwidth, including the ramp
  double time_us = 0;     // max of the two and the latency floor, per launch times launches
  double launches = 1;
  Pipe pipe = Pipe::kFp32;
  Bound bound = Bound::kMemory;
  double shape_efficiency = 1;  // tile x wave x K-depth efficiency of a GEMM (1 for streaming kernels)
  // Which kernel runs: "gemm" (implicit-GEMM convolutions too), "winograd_fused", "winograd_nonfused", "fft",
  // "depthwise" (cuDNN's), "depthwise_native" (the framework's direct kernel) or "streaming"; for GEMMs the threadblock tile and split-K factor the model chose.
  std::string_view algorithm = "streaming";
  int tile_m = 0, tile_n = 0;
  int split_k = 1;
  double clock_factor = 1;  // sustained clock over boost during this kernel
  int kernels = 1;          // distinct kernels summed into this cost (accumulate); launches counts their repeats
  // The framework's own kernel where its op kind is otherwise a cuDNN/cuBLAS call (PyTorch's native depthwise
  // convolution): the host pays no library setup for it (schedule/step.cpp).
  bool framework_kernel = false;
};

// Adds a second kernel's cost to a running total for one op (several kernels of one op: transforms and GEMM,
// lookup and table update): work, times and launches add; the total keeps its first kernel's pipe and tile, and
// its clock is the kernels' time-weighted mean (the power report charges each entry at its clock).
inline void accumulate(KernelCost& total, const KernelCost& k) {
  if (total.time_us + k.time_us > 0)
    total.clock_factor =
        (total.clock_factor * total.time_us + k.clock_factor * k.time_us) / (total.time_us + k.time_us);
  total.flops += k.flops;
  total.bytes += k.bytes;
  total.compute_us += k.compute_us;
  total.memory_us += k.memory_us;
  total.time_us += k.time_us;
  total.launches += k.launches;
  total.kernels += k.kernels;
}

class KernelCostModel {
 public:
  KernelCostModel(const DeviceSpec& device, const ArchitectureProfile& arch);
  // The same with explicit op-class constants (the kernel fit varies them; everything else uses the data file's).
  KernelCostModel(const DeviceSpec& device, const ArchitectureProfile& arch, const CostConstants& constants);

  // One GEMM (or implicit-GEMM convolution) launch of geometry g, repeated `launches` times.
  // `flops` may differ from 2*m*n*k (Winograd); `efficiency` scales the achievable rate (dgrad/wgrad).
  KernelCost gemm(const MatmulGeometry& g, Pipe pipe, double flops, double bytes, double efficiency,
                  double launches = 1, GemmLibrary library = GemmLibrary::kAny) const;

  // A kernel of `ctas` CTAs, each looping `steps` times over `cta_step_flops` of math (cuDNN's fused Winograd: one
  // input channel per step), at `efficiency` of the architecture's CUDA-core GEMM rate. An SM holds up to
  // `resident_ctas` of them; a step of n resident CTAs takes max(n x one CTA's math, `step_latency_clk` cycles),
  // so a CTA alone on its SM (grids under one wave) runs at the latency of its loop, not at the SM's math rate.
  KernelCost tiled_loop(double ctas, double steps, double cta_step_flops, double resident_ctas, double step_latency_clk,
                        Pipe pipe, double flops, double bytes, double efficiency) const;

  // A streaming (memory-bound) kernel: elementwise, norm, pool, softmax, copies, optimizer updates.
  // `thread_instructions` (total over all launches, 0 = not known) bounds it by the SMs' instruction issue rate:
  // kernels with heavy index math per element (integer division, per-channel loads) reach it before DRAM.
  // `bandwidth_efficiency` scales the achievable DRAM bandwidth (row reductions: softmax, layer norm).
  KernelCost streaming(double flops, double bytes, double launches = 1, Pipe pipe = Pipe::kFp32,
                       double compute_efficiency = -1, double thread_instructions = 0,
                       double bandwidth_efficiency = 1) const;

  // A streaming kernel bound by the SMs' per-element work rather than by DRAM: `elements` (total over all launches)
  // at `elements_per_sm_clk` per SM per clock (PyTorch's unvectorized copies of permuted views), or `bytes` at the
  // DRAM rate, whichever takes longer. The SMs run at the clock the board holds without compute load
  // (clock_factor(0): such a kernel keeps its SMs mostly waiting). elements_per_sm_clk <= 0: streaming alone.
  KernelCost per_element_streaming(double elements, double elements_per_sm_clk, double bytes, double launches) const;

  // A kernel whose per-launch compute time its caller has from the kernel's own instruction count (llama.cpp's
  // quantized mat-vec kernels, decode attention): DRAM time, launch floor and bound as for the others.
  // `flops` and `bytes` are per launch; `clock_factor` is the clock the caller's compute time assumes.
  // `in_flight_cap_bytes_per_us` > 0 caps the kernel's DRAM rate (in_flight_bytes_per_us).
  KernelCost timed(double compute_us, double flops, double bytes, Pipe pipe, double launches = 1,
                   double clock_factor = 1, double in_flight_cap_bytes_per_us = 0) const;

  // Little's law: the DRAM rate a kernel can draw with `bytes_per_warp` of loads in flight in each resident warp,
  // blocks of `warps_per_block` warps, `blocks_per_sm` of them resident per SM (0: as many as the architecture
  // holds, max_blocks_per_sm and max_warps_per_sm; registers and shared memory not counted):
  // SMs x resident warps x bytes / dram_latency_ns. 0 where the architecture has no latency measurement (no cap).
  double in_flight_bytes_per_us(double warps_per_block, double bytes_per_warp, double blocks_per_sm = 0) const;

  // The threadblock tile a library would pick for a GEMM of this shape, and the fraction of the large-GEMM rate
  // it reaches (tiles, waves over the SMs, K depth, split-K).
  struct TileChoice {
    double efficiency = 0;
    int tile_m = 0, tile_n = 0;
    int split_k = 1;
  };
  TileChoice choose_tile(const MatmulGeometry& g, bool tensor, GemmLibrary library = GemmLibrary::kAny) const;
  double shape_efficiency(const MatmulGeometry& g, bool tensor) const { return choose_tile(g, tensor).efficiency; }

  // Sustained clock relative to boost for a kernel that keeps its math pipes `activity` busy (1 = every SM at
  // the pipe's peak): dynamic power ~ f * V^2 with V ~ f, so P(f) = activity * P_full(f_ref) * (f / f_ref)^3,
  // and the clock settles where that meets the board's power limit (1 when boost fits under it). `tensor`: the
  // load is on a tensor pipe (activity already charged with tensor_power_fraction): a board whose sustained clock
  // was fitted to CUDA-core kernels runs it no faster than the power model allows.
  // With data/power.toml [kernel_clock] whole_board_draw on, the load is the board's whole draw instead (idle +
  // the SMs' dynamic power at `activity` + no DRAM traffic; device/board_power.h), as for the kernels below.
  double clock_factor(double activity, bool tensor = false) const;
  // The same under full compute load.
  double compute_clock_factor() const { return clock_factor(1.0); }

  // Sustainable peak of a pipe in TFLOPS at boost: the datasheet figure, capped where the architecture cannot
  // feed it (tensor_fp32acc_flops_per_clk_sm, tensor_int8_ops_per_clk_sm in data/architectures.toml).
  double pipe_peak(Pipe p) const;

  const DeviceSpec& device() const { return device_; }
  const ArchitectureProfile& arch() const { return arch_; }
  const CostConstants& constants() const { return c_; }
  double dram_bytes_per_us() const { return bw_bytes_per_us_; }

  // L2 read bandwidth with every SM reading resident lines (0 where the architecture has no measurement).
  double l2_bytes_per_us() const;
  // The kernel k (one kernel, launched k.launches times) with `l2_bytes` of each launch's DRAM reads served by
  // L2 instead: its DRAM time falls by their share, their L2 time is added, and time and bound are taken again.
  KernelCost read_from_l2(const KernelCost& k, double l2_bytes) const;

 private:
  KernelCost finish(KernelCost k, double per_launch_floor_us) const;
  // Shortest main loop of `ctas` CTAs of `steps` steps, `resident_ctas` per SM at once, a step taking at least
  // `step_latency_clk` cycles at the sustained clock (boost x clock_factor).
  double latency_floor_us(double ctas, double steps, double resident_ctas, double step_latency_clk, double clock_factor) const;
  TileChoice search_tile(const MatmulGeometry& g, bool tensor, GemmLibrary library) const;
  // [kernel_clock] whole_board_draw: the clock of a kernel whose board draw at a limit `clock_at(limit)` gives.
  // An unmeasured board: that clock at its limit. A board with a fitted sustained clock: that clock scaled by the
  // fitted clock over the model's full-load clock at the fit's limit (the fit's kernels are full load), at most
  // boost; a tensor-pipe kernel no faster than the model's own clock, as before. A card with measured
  // efficiencies: the clock at the limit asked over the clock at its own limit (its efficiencies carry that one).
  template <class ClockAt>
  double clock_under_limit(ClockAt clock_at, bool tensor) const;
  double load_clock(const KernelLoad& load) const;

  const DeviceSpec& device_;
  const ArchitectureProfile& arch_;
  // The constants as this device's architecture sees them (constants_for_sm).
  CostConstants c_;
  double bw_bytes_per_us_;
  // Which tile-choice context this model is: every input of choose_tile besides the GEMM's own shape (the SM
  // count, the tile sets and their constants), compared by value. Models with equal contexts share choose_tile's
  // answers through a per-thread cache (kernel_cost.cpp).
  std::uint64_t tile_context_ = 0;
  double full_load_w_ = 0;        // board power with every SM's pipes busy at boost
  BoardPower board_;              // the board's whole draw per kernel (idle, SMs, DRAM)
  bool whole_board_clock_ = false;  // data/power.toml [kernel_clock] whole_board_draw
  double measured_clock_ = 0;     // > 0: efficiencies measured on the card; clock relative to that point
  // FP16-accumulate tensor GEMMs on a board whose measured tensor efficiency was taken on a slower FP32-accumulate
  // pipe (GeForce: half rate): the power model's clock for the full-rate load, and the GPU Boost above the rated
  // clock that the measured efficiency carries (1 elsewhere).
  double full_rate_tensor_clock_ = 1;
  double full_rate_tensor_boost_ = 1;
};

}  // namespace perfcast
