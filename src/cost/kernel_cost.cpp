#include "cost/kernel_cost.h"

#include <algorithm>
#include <cmath>

namespace perfcast {

std::string_view bound_name(Bound b) {
  static constexpr std::string_view kNames[] = {"tensor_compute", "cuda_compute",  "dram_bandwidth",
                                                "latency",        "host_overhead", "input_pipeline",
                                                "host_to_device", "communication"};
  static_assert(std::size(kNames) == static_cast<int>(Bound::kCount), "every Bound needs a name");
  return kNames[static_cast<int>(b)];
}

KernelCostModel::KernelCostModel(const DeviceSpec& device, const ArchitectureProfile& arch)
    : device_(device), arch_(arch), c_(cost_constants()),
      bw_bytes_per_us_(device.mem_bw_gbps * 1e3 * arch.dram_efficiency) {
  const double ratio = device.boost_clock_mhz / arch.sm_power_clock_mhz;
  const double full_load_w = static_cast<double>(device.sm_count) * arch.sm_power_w * ratio * ratio * ratio;
  if (device.tdp_w > 0 && full_load_w > device.tdp_w) clock_factor_ = std::cbrt(device.tdp_w / full_load_w);
  // Efficiencies measured on the card already include the clock it sustained under its own limit; only a
  // lower --power-limit than that slows it further (P ~ f^3 from the measured point).
  if (device.measured && (device.measured->gemm_efficiency_cuda || device.measured->gemm_efficiency_tensor))
    clock_factor_ = device.measured->tdp_w > 0 ? std::min(1.0, std::cbrt(device.tdp_w / device.measured->tdp_w)) : 1.0;
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

double KernelCostModel::shape_efficiency(const MatmulGeometry& g, bool tensor) const {
  const auto& tiles = tensor ? c_.tiles_tensor : c_.tiles_cuda;
  const double slots = static_cast<double>(device_.sm_count) * c_.ctas_per_sm;
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
  const double k_half = tensor ? c_.k_half_tensor : c_.k_half_cuda;
  double best = 0;
  for (const auto& t : tiles) {
    const double tm = std::ceil(m / t.m), tn = std::ceil(n / t.n);
    double ctas = tm * tn * static_cast<double>(g.batch);
    const double pad = (m * n) / (tm * t.m * tn * t.n);
    // Split-K: a grid that cannot fill the SMs splits the K loop across CTAs (needs K deep enough).
    double split = 1;
    if (ctas < slots) split = std::max(1.0, std::min(std::floor(slots / ctas), std::floor(k / 256.0)));
    const double k_per_cta = k / split;
    ctas *= split;
    const double waves = std::ceil(ctas / slots);
    const double wave_eff = ctas / (waves * slots);
    const double depth_eff = k_per_cta / (k_per_cta + k_half);
    const double split_eff = split > 1 ? 1.0 - c_.split_k_overhead : 1.0;
    best = std::max(best, t.efficiency * pad * wave_eff * depth_eff * split_eff);
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
                                 double efficiency, double launches) const {
  KernelCost k;
  k.pipe = pipe;
  k.launches = launches;
  k.flops = flops / launches;
  k.bytes = bytes / launches;
  const bool tensor = is_tensor_pipe(pipe);
  k.shape_efficiency = shape_efficiency(g, tensor);
  const double base = tensor ? arch_.gemm_efficiency_tensor : arch_.gemm_efficiency_cuda;
  const double rate = pipe_peak(pipe) * 1e6 * base * k.shape_efficiency * efficiency * clock_factor_;  // flop/us
  k.compute_us = rate > 0 ? k.flops / rate : 1e30;
  k.memory_us = k.bytes / bw_bytes_per_us_ + c_.ramp_us;
  return finish(k, arch_.kernel_floor_us);
}

KernelCost KernelCostModel::streaming(double flops, double bytes, double launches, Pipe pipe,
                                      double compute_efficiency, double thread_instructions) const {
  KernelCost k;
  k.pipe = pipe;
  k.launches = std::max(launches, 1.0);
  k.flops = flops / k.launches;
  k.bytes = bytes / k.launches;
  const double eff = compute_efficiency > 0 ? compute_efficiency : c_.elementwise_compute_efficiency;
  const double rate = device_.peak(pipe) * 1e6 * eff;
  k.compute_us = k.flops > 0 ? k.flops / rate : 0;
  if (thread_instructions > 0) {
    // Every SM issues issue_slots_per_clk_sm thread instructions per clock at the sustained clock.
    const double issue_per_us = arch_.issue_slots_per_clk_sm * static_cast<double>(device_.sm_count) *
                                device_.boost_clock_mhz * clock_factor_;
    k.compute_us = std::max(k.compute_us, thread_instructions / k.launches / issue_per_us);
  }
  k.memory_us = k.bytes / bw_bytes_per_us_ + c_.ramp_us;
  if (launches <= 0) {  // fused into the neighbouring kernel: no launch, no ramp, no floor
    k.launches = 1;
    k.memory_us -= c_.ramp_us;
    KernelCost f = finish(k, 0);
    f.launches = 0;
    return f;
  }
  return finish(k, arch_.kernel_floor_us);
}

}  // namespace perfcast
