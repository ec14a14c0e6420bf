#include "cost/kernel_cost.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace perfcast {

namespace {

// choose_tile's answer depends on the GEMM's shape and on these, nothing else: a tile-choice context.
struct TileContext {
  std::uint64_t id = 0;
  int sm_count = 0;
  double ctas_per_sm = 0, k_half_cuda = 0, k_half_tensor = 0, split_k_overhead = 0, split_k_min_depth = 0,
         split_k_waves_cublas_cuda = 0;
  std::vector<GemmTile> tiles_cuda, tiles_tensor;
  std::vector<std::pair<int, int>> sgemm_tiles, sgemm_tiles_batched;
  double cublas_tensor_ctas_per_sm = 0;
  bool cublas_tensor_split_k = true;
  double implicit_gemm_tile_m = 0;
  double sgemm_tile_loss_share = 1;
  double split_k_partial_bytes = 0, cublas_sgemm_split_k_waves = 0, split_flops_per_byte = 0;
};

// FP32 flops a cuBLAS SGEMM runs on this board in the time its DRAM moves one byte: what turns a split-K's
// partial-sum bytes into a share of the GEMM's time (boost clock, or the board's fitted sustained clock).
double split_flops_per_byte(const DeviceSpec& d, const ArchitectureProfile& a) {
  const double clock = d.sustained_clock_factor > 0 ? d.sustained_clock_factor : 1.0;
  const double bw = d.mem_bw_gbps * 1e3 * a.dram_efficiency;  // bytes/us
  return bw > 0 ? d.peak(Pipe::kFp32) * 1e6 * a.gemm_efficiency_cuda * clock / bw : 0;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

bool same_tiles(const std::vector<GemmTile>& a, const std::vector<GemmTile>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const GemmTile& x, const GemmTile& y) {
    return same_bits(x.m, y.m) && same_bits(x.n, y.n) && same_bits(x.efficiency, y.efficiency);
  });
}

bool same_context(const TileContext& t, const DeviceSpec& d, const ArchitectureProfile& a, const CostConstants& c) {
  return t.sm_count == d.sm_count && same_bits(t.ctas_per_sm, c.ctas_per_sm) && same_bits(t.k_half_cuda, c.k_half_cuda) &&
         same_bits(t.k_half_tensor, c.k_half_tensor) && same_bits(t.split_k_overhead, c.split_k_overhead) &&
         same_bits(t.split_k_min_depth, c.split_k_min_depth) &&
         same_bits(t.split_k_waves_cublas_cuda, c.split_k_waves_cublas_cuda) && same_tiles(t.tiles_cuda, c.tiles_cuda) &&
         same_tiles(t.tiles_tensor, c.tiles_tensor) && t.sgemm_tiles == a.sgemm_tiles &&
         t.sgemm_tiles_batched == a.sgemm_tiles_batched &&
         same_bits(t.cublas_tensor_ctas_per_sm, a.cublas_tensor_ctas_per_sm) &&
         t.cublas_tensor_split_k == a.cublas_tensor_split_k && same_bits(t.implicit_gemm_tile_m, c.implicit_gemm_tile_m) &&
         same_bits(t.sgemm_tile_loss_share, a.sgemm_tile_loss_share) &&
         same_bits(t.split_k_partial_bytes, c.split_k_partial_bytes_cublas_cuda) &&
         same_bits(t.cublas_sgemm_split_k_waves, a.cublas_sgemm_split_k_waves) &&
         same_bits(t.split_flops_per_byte, split_flops_per_byte(d, a));
}

// The id of this model's tile-choice context: equal contexts (the same GPU and constants in every prediction of a
// sweep) get the same id. The most recent kContexts are kept; a context that comes back after being dropped gets a
// new id, so a cached answer is never read for another context (the kernel fit makes a new context per step).
std::uint64_t tile_context_id(const DeviceSpec& d, const ArchitectureProfile& a, const CostConstants& c) {
  constexpr std::size_t kContexts = 64;
  static std::mutex mutex;
  static std::vector<TileContext> contexts;
  static std::uint64_t next_id = 1;
  static std::size_t next_slot = 0;
  const std::lock_guard lock(mutex);
  for (const auto& t : contexts)
    if (same_context(t, d, a, c)) return t.id;
  TileContext t{next_id++,         d.sm_count,   c.ctas_per_sm,   c.k_half_cuda,   c.k_half_tensor,
                c.split_k_overhead, c.split_k_min_depth, c.split_k_waves_cublas_cuda, c.tiles_cuda, c.tiles_tensor, a.sgemm_tiles,
                a.sgemm_tiles_batched, a.cublas_tensor_ctas_per_sm, a.cublas_tensor_split_k, c.implicit_gemm_tile_m,
                a.sgemm_tile_loss_share, c.split_k_partial_bytes_cublas_cuda, a.cublas_sgemm_split_k_waves,
                split_flops_per_byte(d, a)};
  const std::uint64_t id = t.id;
  if (contexts.size() < kContexts) {
    contexts.push_back(std::move(t));
  } else {
    contexts[next_slot] = std::move(t);
    next_slot = (next_slot + 1) % kContexts;
  }
  return id;
}

// Per-thread, direct-mapped cache of choose_tile's answers, keyed by context and shape (a colliding key replaces the
// entry). Per thread, so the worker threads of predict --configs share nothing; about 0.5 MB each.
struct TileCacheEntry {
  std::uint64_t context = 0;  // 0: empty
  std::int64_t m = 0, n = 0, k = 0, batch = 0;
  bool tensor = false;
  bool weight_operand = true;  // picks the plain or the nn tile set of a single cuBLAS SGEMM (search_tile)
  GemmLibrary library = GemmLibrary::kAny;
  KernelCostModel::TileChoice choice;
};
constexpr std::size_t kTileCacheSlots = 8192;  // a power of two

std::size_t tile_cache_slot(std::uint64_t context, const MatmulGeometry& g, bool tensor, GemmLibrary library) {
  std::uint64_t h = context;
  const auto mix = [&h](std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  };
  mix(static_cast<std::uint64_t>(g.m));
  mix(static_cast<std::uint64_t>(g.n));
  mix(static_cast<std::uint64_t>(g.k));
  mix(static_cast<std::uint64_t>(g.batch));
  mix((tensor ? 2U : 0U) | static_cast<std::uint64_t>(library));
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 29;
  return static_cast<std::size_t>(h) & (kTileCacheSlots - 1);
}

// How a GEMM's grid fills the GPU: how many CTAs per slot an SM needs for its full rate (a grid of fewer than
// slots x fill_ctas CTAs leaves every SM part-idle), and whether the library may split K.
struct GridRule {
  double fill_ctas = 1;
  bool split_k = true;
};

// cuBLAS's tensor-core kernels follow the architecture's fitted rule where it has one (a CTA alone on its SM reaches
// 1/cublas_tensor_ctas_per_sm of the SM's tensor rate; CUDA 9's Volta HGEMMs never split K: DeepBench's small-N
// timings, docs/kernel-model.md "Tensor-core GEMMs with few CTAs"); every other GEMM fills an SM with one CTA.
GridRule grid_rule(const ArchitectureProfile& a, bool tensor, GemmLibrary library) {
  if (tensor && library == GemmLibrary::kCublas && a.cublas_tensor_ctas_per_sm > 0)
    return {a.cublas_tensor_ctas_per_sm, a.cublas_tensor_split_k};
  return {};
}

}  // namespace

std::string_view bound_name(Bound b) {
  static constexpr std::string_view kNames[] = {"tensor_compute", "cuda_compute",  "dram_bandwidth",
                                                "latency",        "host_overhead", "input_pipeline",
                                                "host_to_device", "communication", "cpu_vector_compute",
                                                "cpu_matrix_compute"};
  static_assert(std::size(kNames) == static_cast<int>(Bound::kCount), "every Bound needs a name");
  return kNames[static_cast<int>(b)];
}

KernelCostModel::KernelCostModel(const DeviceSpec& device, const ArchitectureProfile& arch)
    : KernelCostModel(device, arch, cost_constants()) {}

KernelCostModel::KernelCostModel(const DeviceSpec& device, const ArchitectureProfile& arch, const CostConstants& constants)
    : device_(device), arch_(arch), c_(constants_for_sm(constants, device.sm_version)),
      bw_bytes_per_us_(device.mem_bw_gbps * 1e3 * arch.dram_efficiency),
      tile_context_(tile_context_id(device, arch, c_)), board_(device, arch),
      whole_board_clock_(BoardPower::whole_board_clock()) {
  const double ratio = device.boost_clock_mhz / arch.sm_power_clock_mhz;
  full_load_w_ =
      static_cast<double>(device.sm_count) * arch.sm_power_w * arch.power.at_clock(ratio);
  // Efficiencies measured on the card already include the clock it sustained under its own limit; only a
  // lower --power-limit than that slows it further (P ~ f^power_clock_exponent from the measured point).
  if (device.measured && (device.measured->gemm_efficiency_cuda || device.measured->gemm_efficiency_tensor))
    measured_clock_ =
        device.measured->tdp_w > 0 ? arch.power.clock_at_power(device.tdp_w, device.measured->tdp_w)
                                   : 1.0;
  // The measured tensor efficiency is a cuBLAS FP16-input, FP32-accumulate GEMM (device_spec.h). Where that pipe
  // runs at half the FP16-accumulate rate (GeForce boards), the measured run kept the tensor cores half as busy
  // per clock as an FP16-accumulate GEMM does, and an efficiency above 1 is GPU Boost past the rated clock that
  // the lighter load left room for. At the full rate the board gets no more than its rated boost (the boost is
  // taken out of the efficiency before the busy share is capped at 1), lowered where the power model's load at
  // the full rate (the architecture's tensor_power_fraction) passes the limit. Unlike an unmeasured board's clock,
  // which follows each GEMM's busy share, this one is computed once at full activity: small FP16-accumulate GEMMs
  // that would draw less are charged the same clock (docs/calibration.md, session 29 h/llm29).
  if (device.measured && device.measured->gemm_efficiency_tensor &&
      device.peak(Pipe::kTcFp16Fp16Acc) > device.peak(Pipe::kTcFp16Fp32Acc) && device.peak(Pipe::kTcFp16Fp32Acc) > 0) {
    const double measured = *device.measured->gemm_efficiency_tensor;
    const double limit = device.measured->tdp_w > 0 ? device.measured->tdp_w : device.tdp_w;
    const double load_w = full_load_w_ * arch.power.charged_activity(Pipe::kTcFp16Fp16Acc, std::min(1.0, measured));
    full_rate_tensor_clock_ = arch.power.clock_at_power(limit, load_w);
    full_rate_tensor_boost_ = std::max(1.0, measured);
  }
}

double KernelCostModel::clock_factor(double activity, bool tensor) const {
  if (whole_board_clock_)
    return clock_under_limit(
        [&](double limit) {
          // No DRAM term: idle + dynamic x curve(f) x activity = limit.
          return arch_.power.clock_at_power(limit - board_.idle_w(), board_.dynamic_full_w() * std::max(0.0, activity));
        },
        tensor);
  if (measured_clock_ > 0) return measured_clock_;
  // Charged activity may pass 1 where a busy tensor pipe draws more than a busy CUDA-core pipe
  // (tensor_power_fraction > 1); the caller has already capped the pipe's own busy share at 1.
  const double load_w = full_load_w_ * std::max(0.0, activity);
  // A board whose sustained clock was measured: that clock, lowered further only by a lower power limit. The fit
  // (perfcast fit-kernels) sees NeuSight's FP32 kernels with TF32 off, CUDA-core pipes only: a tensor-pipe kernel
  // draws its own power, and the board's limit holds it as it holds an unseen board's.
  if (device_.sustained_clock_factor > 0) {
    const double fitted = device_.sustained_clock_factor *
                          arch_.power.clock_at_power(device_.tdp_w, std::max(1.0, device_.sustained_clock_tdp_w));
    return tensor ? std::min(fitted, arch_.power.clock_at_power(device_.tdp_w, load_w)) : fitted;
  }
  return arch_.power.clock_at_power(device_.tdp_w, load_w);
}

template <class ClockAt>
double KernelCostModel::clock_under_limit(ClockAt clock_at, bool tensor) const {
  const double here = clock_at(device_.tdp_w);
  if (measured_clock_ > 0) {
    const double own = device_.measured->tdp_w > 0 ? clock_at(device_.measured->tdp_w) : here;
    return own > 0 ? std::min(1.0, here / own) : here;
  }
  if (device_.sustained_clock_factor > 0) {
    // The fit's kernels (NeuSight's FP32 GEMMs, CUDA-core pipes) are full compute load: the fitted clock over the
    // power model's full-load clock at the fit's limit corrects the model's clocks on this board.
    const double fit_limit = std::max(1.0, device_.sustained_clock_tdp_w);
    const double full_load = arch_.power.clock_at_power(fit_limit - board_.idle_w(), board_.dynamic_full_w());
    const double fitted = std::min(1.0, here * device_.sustained_clock_factor / full_load);
    return tensor ? std::min(fitted, here) : fitted;
  }
  return here;
}

double KernelCostModel::load_clock(const KernelLoad& load) const {
  return clock_under_limit([&](double limit) { return board_.clock_at_limit(load, limit); }, is_tensor_pipe(load.pipe));
}

double KernelCostModel::pipe_peak(Pipe p) const {
  const double peak = device_.peak(p);
  const double per_clk = p == Pipe::kTcFp16Fp32Acc ? arch_.tensor_fp32acc_flops_per_clk_sm
                         : p == Pipe::kTcInt8      ? arch_.tensor_int8_ops_per_clk_sm
                                                   : 0;
  if (per_clk <= 0) return peak;
  const double cap = per_clk * static_cast<double>(device_.sm_count) * device_.boost_clock_mhz * 1e-6;  // TFLOPS
  return std::min(peak, cap);
}

KernelCostModel::TileChoice KernelCostModel::choose_tile(const MatmulGeometry& g, bool tensor, GemmLibrary library) const {
  if (tile_context_ == 0) return search_tile(g, tensor, library);
  thread_local std::unique_ptr<TileCacheEntry[]> cache;
  if (!cache) cache = std::make_unique<TileCacheEntry[]>(kTileCacheSlots);
  TileCacheEntry& e = cache[tile_cache_slot(tile_context_, g, tensor, library)];
  if (e.context == tile_context_ && e.m == g.m && e.n == g.n && e.k == g.k && e.batch == g.batch &&
      e.tensor == tensor && e.weight_operand == g.weight_operand && e.library == library)
    return e.choice;
  const TileChoice choice = search_tile(g, tensor, library);
  e = TileCacheEntry{tile_context_, g.m, g.n, g.k, g.batch, tensor, g.weight_operand, library, choice};
  return choice;
}

KernelCostModel::TileChoice KernelCostModel::search_tile(const MatmulGeometry& g, bool tensor, GemmLibrary library) const {
  const auto& tiles = tensor ? c_.tiles_tensor : c_.tiles_cuda;
  const double slots = static_cast<double>(device_.sm_count) * c_.ctas_per_sm;
  const GridRule grid = grid_rule(arch_, tensor, library);
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
  const double k_half = tensor ? c_.k_half_tensor : c_.k_half_cuda;
  // The library's own tile set on this architecture (cuBLAS picks among its kernels by heuristics, and its
  // batched kernels use fewer shapes); any tile where none is known.
  const bool batched = g.batch > 1;
  static const std::vector<std::pair<int, int>> kAnyTile;
  const bool cublas_sets = !tensor && library == GemmLibrary::kCublas;
  const auto& allowed = !cublas_sets ? kAnyTile : batched ? arch_.sgemm_tiles_batched : arch_.sgemm_tiles;
  // The plain set is read off the fit's linear rows (x W^T: cuBLAS "tn" kernels), the batched one off its bmm rows
  // (both operands activations: "nn" kernels). A single product of two activations is an "nn" call too, and the
  // measured single-matrix nn calls (bmm rows with B = 1) ran tiles of either set: Pascal's maxwell_sgemm_128x64_nn,
  // in the batched set only, on P100 and P4; Volta's and Ampere's 32x128_nn / 128x32_nn, in the plain set.
  const bool nn_single = cublas_sets && !batched && !g.weight_operand;
  const auto& also_allowed = nn_single ? arch_.sgemm_tiles_batched : kAnyTile;
  // cuDNN's CUDA-core implicit-GEMM forward kernels tile the output pixels (N x P x Q, the GEMM's m) by
  // implicit_gemm_tile_m whatever the shape ([conv] implicit_gemm_tile_m, read off their names and grids).
  const double cudnn_tile_m = !tensor && library == GemmLibrary::kCudnnNoSplit ? c_.implicit_gemm_tile_m : 0;
  const auto usable = [&](const GemmTile& t) {
    if (cudnn_tile_m > 0 && t.m != cudnn_tile_m) return false;
    const std::pair<int, int> mn{static_cast<int>(t.m), static_cast<int>(t.n)};
    return allowed.empty() || std::find(allowed.begin(), allowed.end(), mn) != allowed.end() ||
           std::find(also_allowed.begin(), also_allowed.end(), mn) != also_allowed.end();
  };
  // The best tile the library runs on this architecture (plain or batched) is the one its large GEMMs reach the
  // architecture's SGEMM efficiency with; the other tiles are relative to it (Pascal's cuBLAS runs no 128x128).
  // How much of the shared tile loss this architecture's cuBLAS SGEMM tiles pay (ArchitectureProfile
  // sgemm_tile_loss_share, a fit-only experiment held at 1): other libraries' tiles pay the shared values.
  const double loss_share = cublas_sets ? arch_.sgemm_tile_loss_share : 1.0;
  const auto tile_eff = [&](const GemmTile& t) { return std::clamp(1.0 - loss_share * (1.0 - t.efficiency), 0.05, 1.0); };
  double top = 0;
  const auto in_any = [&](const GemmTile& t) {
    const std::pair<int, int> mn{static_cast<int>(t.m), static_cast<int>(t.n)};
    const auto& a = arch_.sgemm_tiles;
    const auto& b = arch_.sgemm_tiles_batched;
    return !cublas_sets || (a.empty() && b.empty()) || std::find(a.begin(), a.end(), mn) != a.end() ||
           std::find(b.begin(), b.end(), mn) != b.end();
  };
  for (const auto& t : tiles)
    if (in_any(t)) top = std::max(top, tile_eff(t));
  if (top <= 0) top = 1;
  // cuBLAS is column-major and PyTorch row-major: a row-major C[m x n] = A B is called as C^T = B^T A^T, so the
  // kernel's tile m (the first number in its name, volta_sgemm_128x64_nn) runs along the output's columns (n) and
  // its tile n along the rows (m). Read off the measured bmm rows (docs/kernel-model.md, "cuBLAS tile orientation"):
  // on Pascal's 128x64-only batched kernel the rate falls with n below 128 and with m only below 64.
  const double rows = cublas_sets ? n : m, cols = cublas_sets ? m : n;
  const double flops_per_byte = split_flops_per_byte(device_, arch_);
  TileChoice best;
  for (const auto& t : tiles) {
    if (!usable(t)) continue;
    const double tm = std::ceil(rows / t.m), tn = std::ceil(cols / t.n);
    double ctas = tm * tn * static_cast<double>(g.batch);
    const double pad = (m * n) / (tm * t.m * tn * t.n);
    // Split-K: a grid that cannot fill the SMs splits the K loop across CTAs (needs K deep enough).
    double split = 1;
    // Batched GEMMs fill the SMs with their batch instead (no split-K kernel in any measured cuBLAS bmm).
    // cuBLAS's CUDA-core SGEMMs split grids of more than one wave too, up to split_k_waves_cublas_cuda waves.
    // The depth is the architecture's own where its measured grids gave one (cublas_sgemm_split_k_waves).
    // Other GEMMs split to one wave (to the few-CTA rule's waves under cublas_tensor_split_to_rule_waves, off).
    const double split_waves = !cublas_sets ? (arch_.cublas_tensor_split_to_rule_waves ? grid.fill_ctas : 1.0)
                               : arch_.cublas_sgemm_split_k_waves > 0 ? arch_.cublas_sgemm_split_k_waves
                                                                      : c_.split_k_waves_cublas_cuda;
    if (ctas < slots * split_waves && !batched && library != GemmLibrary::kCudnnNoSplit && grid.split_k)
      split = std::max(1.0, std::min(std::floor(slots * split_waves / ctas), std::floor(k / c_.split_k_min_depth)));
    const double k_per_cta = k / split;
    ctas *= split;
    const double waves = std::ceil(ctas / slots);
    // Under fill_ctas waves the SMs hold too few CTAs each to reach their full rate (fill_ctas = 1: plain waves).
    const double wave_eff = ctas / (std::max(waves, grid.fill_ctas) * slots);
    const double depth_eff = k_per_cta / (k_per_cta + k_half);
    double eff = tile_eff(t) / top * pad * wave_eff * depth_eff;
    if (split > 1 && cublas_sets && c_.split_k_partial_bytes_cublas_cuda > 0 && flops_per_byte > 0) {
      // A cuBLAS SGEMM's split pays its partial sums: split x m x n elements of partial_bytes each, at the DRAM
      // rate, on top of the main loop's 2 m n k flops at this efficiency (time in flop-equivalents).
      const double loop = 2.0 * m * n * k / eff;
      const double partials = c_.split_k_partial_bytes_cublas_cuda * split * m * n * flops_per_byte;
      eff *= loop / (loop + partials);
    } else if (split > 1) {
      eff *= 1.0 - c_.split_k_overhead;
    }
    if (eff > best.efficiency)
      best = {eff, static_cast<int>(t.m), static_cast<int>(t.n), static_cast<int>(split)};
  }
  return best;
}

KernelCost KernelCostModel::finish(KernelCost k, double per_launch_floor_us) const {
  const double per_launch = std::max({k.compute_us, k.memory_us, per_launch_floor_us});
  if (per_launch == k.compute_us && k.compute_us >= k.memory_us)
    k.bound = is_tensor_pipe(k.pipe) ? Bound::kTensorCompute : Bound::kCudaCompute;
  else if (per_launch == k.memory_us)
    k.bound = Bound::kMemory;
  else
    k.bound = Bound::kLatency;
  k.time_us = per_launch * k.launches;
  k.flops *= k.launches;
  k.bytes *= k.launches;
  return k;
}

KernelCost KernelCostModel::gemm(const MatmulGeometry& g, Pipe pipe, double flops, double bytes,
                                 double efficiency, double launches, GemmLibrary library) const {
  KernelCost k;
  k.pipe = pipe;
  k.launches = launches;
  k.flops = flops / launches;
  k.bytes = bytes / launches;
  const bool tensor = is_tensor_pipe(pipe);
  const TileChoice tile = choose_tile(g, tensor, library);
  k.shape_efficiency = tile.efficiency;
  k.algorithm = "gemm";
  k.tile_m = tile.tile_m, k.tile_n = tile.tile_n, k.split_k = tile.split_k;
  const double base = tensor ? arch_.gemm_efficiency_tensor : arch_.gemm_efficiency_cuda;
  // The pipes run busy for this share of the time at boost; the power it draws sets the clock.
  const bool full_rate_fp16_acc = pipe == Pipe::kTcFp16Fp16Acc;
  const double activity = std::min(
      1.0, base * k.shape_efficiency * efficiency / (full_rate_fp16_acc ? full_rate_tensor_boost_ : 1.0));
  const double rate_at_boost = pipe_peak(pipe) * 1e6 * activity;  // flop/us
  k.memory_us = k.bytes / bw_bytes_per_us_ + c_.ramp_us;
  k.clock_factor = whole_board_clock_
                       ? load_clock({pipe, rate_at_boost > 0 ? k.flops / rate_at_boost : 1e30, k.memory_us,
                                     arch_.kernel_floor_us, k.shape_efficiency})
                       : clock_factor(arch_.power.charged_activity(pipe, activity), is_tensor_pipe(pipe));
  if (full_rate_fp16_acc) k.clock_factor *= full_rate_tensor_clock_;
  const double rate = rate_at_boost * k.clock_factor;  // flop/us
  k.compute_us = rate > 0 ? k.flops / rate : 1e30;
  // cuDNN's CUDA-core implicit-GEMM convolutions step through K a few elements at a time, each step waiting on
  // dependent global loads: resident CTAs hide each other's wait, a CTA alone on its SM cannot, so the main loop
  // takes at least its step latency per step and round of resident CTAs ([conv] implicit_gemm_step_*).
  if (library == GemmLibrary::kCudnnNoSplit && !tensor && c_.implicit_gemm_step_latency_clk > 0 && tile.tile_m > 0) {
    const double ctas = std::ceil(static_cast<double>(g.m) / tile.tile_m) * std::ceil(static_cast<double>(g.n) / tile.tile_n) *
                        static_cast<double>(g.batch);
    // A dp4a step loads the same 32-bit words as an FP32 step, each holding four INT8 elements of K (INT8x4).
    const double k_per_step = c_.implicit_gemm_step_depth * (pipe == Pipe::kDp4a ? 4.0 : 1.0);
    const double steps = std::ceil(static_cast<double>(g.k) / k_per_step);
    // Smaller tiles hold fewer accumulators per CTA: more of them fit in an SM's register file at once.
    const double resident = std::max(1.0, std::floor(c_.implicit_gemm_resident_outputs / (tile.tile_m * tile.tile_n)));
    k.compute_us = std::max(k.compute_us,
                            latency_floor_us(ctas, steps, resident, c_.implicit_gemm_step_latency_clk, k.clock_factor));
  }
  // A tensor-core main loop issues each K step's loads (stages - 1) steps ahead (cp.async multistage / register
  // double buffer), so a CTA with no neighbour on its SM to overlap with waits one global round trip per
  // (stages - 1) steps however little math a step holds: the floor of a small grid's deep K loop (batch-1
  // inference layers). The round trip is the one measured of a lone fused-Winograd CTA's channel step ([conv]
  // winograd_fused_step_latency_clk); launch, prologue and epilogue are the architecture's kernel_floor_us.
  double loop_floor_us = 0;
  const double operand_bytes = pipe == Pipe::kTcTf32                           ? 4.0
                               : pipe == Pipe::kTcInt8 || pipe == Pipe::kTcFp8 ? 1.0
                               : tensor                                        ? 2.0
                                                                               : 0.0;
  const double step_bytes = arch_.tensor_step_bytes, stages = arch_.tensor_pipeline_stages;
  if (operand_bytes > 0 && tile.tile_m > 0 && step_bytes > 0 && stages >= 2 &&
      c_.winograd_fused_step_latency_clk > 0) {
    const double split = std::max(1, tile.split_k);
    const double ctas = std::ceil(static_cast<double>(g.m) / tile.tile_m) *
                        std::ceil(static_cast<double>(g.n) / tile.tile_n) * static_cast<double>(g.batch) * split;
    const double depth = std::max(1.0, step_bytes / operand_bytes);  // K elements per step
    const double steps = std::ceil(std::ceil(static_cast<double>(g.k) / split) / depth);
    loop_floor_us = latency_floor_us(ctas, steps, c_.ctas_per_sm,
                                     c_.winograd_fused_step_latency_clk / (stages - 1), k.clock_factor);
  }
  return finish(k, arch_.kernel_floor_us + loop_floor_us);
}

double KernelCostModel::latency_floor_us(double ctas, double steps, double resident_ctas, double step_latency_clk,
                                         double clock_factor) const {
  const double sms = static_cast<double>(std::max(1, device_.sm_count));
  const double clock_mhz = device_.boost_clock_mhz * clock_factor;
  if (clock_mhz <= 0) return 0;
  const double per_sm = std::ceil(std::max(1.0, ctas) / sms);
  const double rounds = std::ceil(per_sm / std::max(1.0, std::floor(resident_ctas)));
  return rounds * steps * step_latency_clk / clock_mhz;
}

KernelCost KernelCostModel::tiled_loop(double ctas, double steps, double cta_step_flops, double resident_ctas,
                                       double step_latency_clk, Pipe pipe, double flops, double bytes,
                                       double efficiency) const {
  KernelCost k;
  k.pipe = pipe;
  k.flops = flops;
  k.bytes = bytes;
  k.algorithm = "gemm";
  const double activity = std::min(1.0, arch_.gemm_efficiency_cuda * efficiency);
  // [kernel_clock] whole_board_draw: timed at boost first (every term below goes as 1 / clock), then slowed to
  // the clock its draw allows.
  k.clock_factor =
      whole_board_clock_ ? 1.0 : clock_factor(arch_.power.charged_activity(pipe, activity), is_tensor_pipe(pipe));
  const double sms = static_cast<double>(std::max(1, device_.sm_count));
  const double sm_rate = pipe_peak(pipe) * 1e6 / sms * activity * k.clock_factor;  // flop/us per SM
  const double clock_mhz = device_.boost_clock_mhz * k.clock_factor;
  const double math_us = sm_rate > 0 ? cta_step_flops / sm_rate : 1e30;
  const double latency_us = clock_mhz > 0 ? step_latency_clk / clock_mhz : 0;
  // The busiest SM runs ceil(ctas / SMs) CTAs, up to resident_ctas of them at once; the last round holds the rest.
  const double per_sm = std::ceil(std::max(1.0, ctas) / sms);
  const double resident = std::clamp(std::floor(resident_ctas), 1.0, per_sm);
  const double full_rounds = std::floor(per_sm / resident);
  const double rest = per_sm - full_rounds * resident;
  const auto round_us = [&](double n) { return steps * std::max(n * math_us, latency_us); };
  k.compute_us = full_rounds * round_us(resident) + (rest > 0 ? round_us(rest) : 0.0);
  const double full_rate = pipe_peak(pipe) * 1e6 * activity * k.clock_factor;
  k.shape_efficiency = full_rate > 0 && k.compute_us > 0 ? std::min(1.0, flops / (full_rate * k.compute_us)) : 0;
  k.memory_us = bytes / bw_bytes_per_us_ + c_.ramp_us;
  if (whole_board_clock_) {
    k.clock_factor = load_clock({pipe, k.compute_us, k.memory_us, arch_.kernel_floor_us, k.shape_efficiency});
    k.compute_us /= k.clock_factor;
  }
  return finish(k, arch_.kernel_floor_us);
}

KernelCost KernelCostModel::timed(double compute_us, double flops, double bytes, Pipe pipe, double launches,
                                  double clock_factor, double in_flight_cap_bytes_per_us) const {
  KernelCost k;
  k.pipe = pipe;
  k.clock_factor = clock_factor;
  k.launches = launches;
  k.flops = flops;
  k.bytes = bytes;
  k.compute_us = compute_us;
  const double bw = in_flight_cap_bytes_per_us > 0 ? std::min(bw_bytes_per_us_, in_flight_cap_bytes_per_us) : bw_bytes_per_us_;
  k.memory_us = bytes / bw + c_.ramp_us;
  return finish(k, arch_.kernel_floor_us);
}

double KernelCostModel::in_flight_bytes_per_us(double warps_per_block, double bytes_per_warp, double blocks_per_sm) const {
  const double blocks = blocks_per_sm > 0 ? blocks_per_sm : arch_.max_blocks_per_sm;
  if (arch_.dram_latency_ns <= 0 || blocks <= 0 || warps_per_block <= 0 || bytes_per_warp <= 0) return 0;
  double warps = blocks * warps_per_block;
  if (arch_.max_warps_per_sm > 0) warps = std::min(warps, arch_.max_warps_per_sm);
  // bytes per ns = GB/s; x 1e3 for bytes per us.
  return static_cast<double>(device_.sm_count) * warps * bytes_per_warp / arch_.dram_latency_ns * 1e3;
}

KernelCost KernelCostModel::streaming(double flops, double bytes, double launches, Pipe pipe,
                                      double compute_efficiency, double thread_instructions,
                                      double bandwidth_efficiency) const {
  KernelCost k;
  k.pipe = pipe;
  k.launches = std::max(launches, 1.0);
  k.flops = flops / k.launches;
  k.bytes = bytes / k.launches;
  const double eff = compute_efficiency > 0 ? compute_efficiency : c_.elementwise_compute_efficiency;
  const double rate = device_.peak(pipe) * 1e6 * eff;
  k.compute_us = k.flops > 0 ? k.flops / rate : 0;
  if (thread_instructions > 0) {
    // Every SM issues issue_slots_per_clk_sm thread instructions per clock at the sustained clock (at boost where
    // the clock is taken from the kernel's own draw below).
    const double issue_per_us = arch_.issue_slots_per_clk_sm * static_cast<double>(device_.sm_count) *
                                device_.boost_clock_mhz * (whole_board_clock_ ? 1.0 : clock_factor(1.0));
    k.compute_us = std::max(k.compute_us, thread_instructions / k.launches / issue_per_us);
  }
  k.memory_us = k.bytes / (bw_bytes_per_us_ * bandwidth_efficiency) + c_.ramp_us;
  if (whole_board_clock_) {
    // The SMs' math of a streaming kernel runs at the clock its draw allows (a DRAM-bound one keeps its time).
    k.clock_factor = load_clock({pipe, k.compute_us, k.memory_us, launches > 0 ? arch_.kernel_floor_us : 0.0, 1.0});
    k.compute_us /= k.clock_factor;
  }
  if (launches <= 0) {  // fused into the neighbouring kernel: no launch, no ramp, no floor
    k.launches = 1;
    k.memory_us -= c_.ramp_us;
    KernelCost f = finish(k, 0);
    f.launches = 0;
    return f;
  }
  return finish(k, arch_.kernel_floor_us);
}

KernelCost KernelCostModel::per_element_streaming(double elements, double elements_per_sm_clk, double bytes,
                                                  double launches) const {
  KernelCost k;
  k.pipe = Pipe::kFp32;
  k.launches = std::max(launches, 1.0);
  k.bytes = bytes / k.launches;
  k.memory_us = k.bytes / bw_bytes_per_us_ + c_.ramp_us;
  if (elements_per_sm_clk > 0 && elements > 0) {
    const double elements_per_us = elements_per_sm_clk * static_cast<double>(device_.sm_count) *
                                   device_.boost_clock_mhz * clock_factor(0.0);
    k.compute_us = elements / k.launches / elements_per_us;
  }
  return finish(k, arch_.kernel_floor_us);
}

double KernelCostModel::l2_bytes_per_us() const {
  return arch_.l2_read_bytes_per_clk_sm * static_cast<double>(device_.sm_count) * device_.boost_clock_mhz;
}

KernelCost KernelCostModel::read_from_l2(const KernelCost& k, double l2_bytes) const {
  const double l2_rate = l2_bytes_per_us();
  if (l2_bytes <= 0 || l2_rate <= 0 || k.launches <= 0 || k.kernels != 1) return k;
  KernelCost per = k;  // per launch, as finish() takes it
  per.flops = k.flops / k.launches;
  per.bytes = k.bytes / k.launches;
  if (per.bytes <= 0) return k;
  const double moved = std::min(l2_bytes, per.bytes);
  // The kernel's own DRAM time per byte (its bandwidth share included), without the ramp.
  const double dram_us_per_byte = std::max(0.0, k.memory_us - c_.ramp_us) / per.bytes;
  per.memory_us = k.memory_us - moved * dram_us_per_byte + moved / l2_rate;
  // A kernel held by a latency floor (a tensor-core K loop's) keeps it: reading from L2 shortens no round trip.
  return finish(per, k.bound == Bound::kLatency ? k.time_us / k.launches : arch_.kernel_floor_us);
}

}  // namespace perfcast
