// Time of one op on a CPU: a roofline over the precision's vector or matrix peak (cores x all-core clock x FMA
// units x lanes x 2, or AMX tiles) at the library's achievable fraction, and the bandwidth of DRAM or, for a working
// set that fits the caches, of the caches; the framework's per-op dispatch is the host's share (schedule/cpu_step).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/cpu_spec.h"
#include "graph/op.h"
#include "runtime/cpu_runtime.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

// data/cpu_cost.toml: constants of the CPU cost path that are not a part's or a library's.
struct CpuCostConstants {
  double cache_bytes_per_clk_per_core = 0;  // sustained L2/L3 bandwidth per core for a cache-resident working set
  double cache_resident_fraction = 0;       // share of L2 + L3 a working set may fill and still stay resident
  double gemm_block_m = 0;                  // output rows one core computes per block (the parallel grain)
  double gemm_block_n = 0;                  // output columns per block
  double gemm_k_half = 0;                   // reduction depth at which a GEMM reaches half its large-K rate
  double single_core_dram_gbps = 0;         // what one core's loads and stores stream from DRAM
  double two_socket_efficiency = 0;         // two sockets' rate over twice one socket's (NUMA, UPI/xGMI traffic)
  double gpu_over_cpu_claim = 0;            // the seed question's "thousands of times faster" as a number
  double parallel_grain_elements = 0;       // elementwise loops below this many elements run on one thread
  double omp_fork_join_us_per_thread = 0;   // one OpenMP parallel region per thread of the team
  double reference_host_ghz = 0;            // clock of the host the runtimes' per-op host costs are quoted for
  double head_gemm_peak_fraction = 0;       // share of one core's FP32 FMA peak one attention head's product reaches
  double fresh_page_gbps_per_socket = 0;    // bytes of fresh 4 KiB pages one socket faults in, zeroes and frees per second
  double fresh_page_free_share = 0;         // share of fresh_page_gbps_per_socket's per-page time spent freeing the page
  double munmap_gbps_one_thread = 0;        // bytes of mapped 4 KiB pages one thread's munmap zaps and frees per second
  double blas_pack_gbps_per_core = 0;       // weight bytes one core packs per second in a per-call BLAS pack; 0: off
  // [onednn_reorder]: oneDNN reorder primitives as timed on a measuring host (PyTorch eager's per-call reorders).
  struct OnednnReorder {
    double host_cores = 0;             // cores of the measuring host
    double host_ghz = 0;               // its clock
    double plain_to_blocked_gbps = 0;  // nchw -> nChw16c (and oihw -> OIhw16i16o), bytes read per second
    double blocked_to_plain_gbps = 0;  // nChw16c -> nchw
    double call_us = 0;                // one reorder call whose bytes do not count
    double cache_hit_us = 0;           // a primitive-cache hit: what a cached reorder's creation costs per call
  } onednn_reorder;
  std::string file;
  std::map<std::string, std::string> sources;
};
const CpuCostConstants& cpu_cost_constants();

class CpuCostModel {
 public:
  // `math_precision`: fp32, bf16 or int8 (the precision of the GEMM math; elementwise work runs in FP32 vectors).
  CpuCostModel(const CpuSpec& cpu, const CpuRuntimeProfile& runtime, const CpuCostConstants& constants,
               std::string math_precision);

  // One GEMM-like op (convolution as implicit GEMM, linear, batched matmul, attention core) of geometry g:
  // `efficiency` is the library's fraction of peak for this op class (and phase).
  // `cold_bytes` of `bytes` (weights a batch-1 pass evicted since their last use) come from DRAM whatever the
  // working set, at what the GEMM's working cores stream.
  KernelCost gemm(const MatmulGeometry& g, double flops, double bytes, double efficiency, double cold_bytes = 0) const;
  // What a GEMM's working cores stream of weights evicted from the caches (one NUMA node's channels at most).
  double cold_weight_bytes_per_us(const MatmulGeometry& g) const;
  // A BLAS call's per-call pack of its weight operand, split over every thread of the team at
  // blas_pack_gbps_per_core each: a floor under weight_relayout_us's memory roofline (0 when the key is off).
  double blas_pack_floor_us(double weight_bytes) const;
  // Time the cores spend moving `weight_bytes` of a GEMM's weights into a layout of the library's (MKL's panel
  // packing, oneDNN's weight reorder) before its kernels run: the `cold` share streams from DRAM at what the
  // GEMM's working cores read, the rest from the caches; reading and writing, no FMA overlaps it.
  // `written_set_bytes`: the buffer the new layout is written to (a cache-sized panel, or a whole copy).
  double weight_relayout_us(const MatmulGeometry& g, double weight_bytes, double cold_bytes, double passes,
                            double written_set_bytes) const;
  // The attention products (QK^T and PV) of `products` = batch x heads independent small GEMMs, `flops` in all:
  // the library hands each product to one thread (one core), so at most `products` cores work, each at
  // head_gemm_peak_fraction of its FP32 peak (times `phase_efficiency`, the backward's); `bytes` move at the
  // caches' or DRAM's rate as for any GEMM.
  KernelCost head_parallel_gemm(double products, double flops, double bytes, double phase_efficiency = 1.0) const;
  // Cores the per-head attention products keep busy.
  double head_gemm_threads(double products) const;
  // One oneDNN reorder primitive over `bytes` (read) into a fresh buffer, plain to blocked layout or back: the
  // measured call time (scaled by the clock) and rate (by cores x clock) of [onednn_reorder] on this part, never
  // faster than the memory roofline of the read and the write (`cold_bytes` of it evicted weights, from DRAM at what
  // the working cores stream).
  double onednn_reorder_us(double bytes, bool to_blocked, const MatmulGeometry& g, double cold_bytes = 0) const;
  // A depthwise convolution: per-channel, FMA-bound at the library's depthwise efficiency or bandwidth-bound.
  KernelCost depthwise(double flops, double bytes) const;
  // Channels of one MLAS NCHWc block: one vector register of FP32 lanes (16 with AVX-512F, 8 with AVX2).
  double nchwc_block_channels() const;
  // Whether ONNX Runtime's NchwcTransformer rewrites this FP32 convolution to MLAS's NCHWc kernels (the runtime's
  // nchwc_filter_set_blocks > 0 and the channel counts fit its blocks).
  bool runs_nchwc(const ConvGeometry& c) const;
  // One MLAS NCHWc direct convolution (onnxruntime/core/mlas/lib/snchwc.cpp): the threads split batch x groups x
  // output rows x sets of nchwc_filter_set_blocks channel blocks (depthwise: batch x channel blocks x output rows),
  // so a small map keeps as many cores busy as it has such items; at the runtime's conv_efficiency (its
  // nchwc_depthwise_efficiency for depthwise), with the K ramp and the padded channels' idle lanes; no im2col, no
  // per-call reorders.
  KernelCost nchwc_conv(const ConvGeometry& c, double flops, double bytes, double cold_bytes = 0) const;
  // Share of the cores busy when `items` equal work items are dealt over them in rounds.
  double item_spread(double items) const;
  // A streaming op (elementwise, norm, pool, softmax, copies, optimizer updates), `launches` framework calls over
  // `elements` each (0 = large): below the grain a loop runs on fewer threads, at what those threads stream.
  KernelCost streaming(double flops, double bytes, double launches = 1, double elements = 0) const;
  // Threads an elementwise loop of `elements` runs on (all cores when 0).
  double streaming_threads(double elements) const;
  // Time the cores spend on a fresh tensor of `tensor_bytes` that `calls` calls allocate each: above the runtime's
  // fresh_pages_above_bytes every page is faulted in and zeroed by the intra-op team, at the node allocators' rate
  // without its free share (fresh_page_gbps_per_socket / (1 - fresh_page_free_share) per socket of the part, its
  // share of the socket for one of several processes), then unmapped by the framework's one thread when the tensor
  // dies, at munmap_gbps_one_thread, serial to the ops; 0 below it.
  double fresh_pages_us(double tensor_bytes, double calls = 1) const;
  // Time of one OpenMP parallel region over all the cores (the intra-op team).
  double fork_join_us() const;
  // Cores a GEMM's output blocks keep busy.
  double gemm_threads(const MatmulGeometry& g) const;
  // Time a GEMM's operands spend on the socket-to-socket links (0 on one socket): the other sockets' share of B,
  // and of A when the output is split between the sockets by columns (small M). `a_bytes`, `b_bytes`: one
  // product's (of g.batch) whole operands.
  double cross_socket_us(const MatmulGeometry& g, double a_bytes, double b_bytes) const;
  // Share of the FMA lanes a GEMM's vectorized dimension (its N: output channels per group) fills.
  double lane_fill(const MatmulGeometry& g) const;

  // DRAM GB/s the process's cores can have in flight (Little's law: single_core_dram_gbps per core), whatever
  // the channels give.
  double cores_dram_gbps() const;
  // Achievable bytes/us for an op that moves `working_set_bytes`: the caches' when it fits them, else DRAM's.
  double bandwidth_bytes_per_us(double working_set_bytes) const;
  // Achievable GEMM FLOP/us before shape effects (peak x the library's efficiency for the unit).
  double gemm_flops_per_us(double class_efficiency) const;
  // Fraction of the large-GEMM rate a GEMM of this shape reaches: blocks spread over the cores, and K depth.
  double shape_efficiency(const MatmulGeometry& g) const;
  bool matrix_unit() const { return unit_ == "amx"; }
  const CpuSpec& cpu() const { return cpu_; }
  const CpuRuntimeProfile& runtime() const { return runtime_; }

 private:
  KernelCost finish(KernelCost k, Bound compute_bound) const;

  const CpuSpec& cpu_;
  const CpuRuntimeProfile& runtime_;
  const CpuCostConstants& c_;
  std::string precision_;
  std::string unit_;         // avx2, avx512, avx512_bf16, vnni, amx
  double socket_factor_ = 1;  // two_socket_efficiency on two sockets
};

struct CpuCostContext {
  const CpuCostModel& model;
  const RuntimeProfile& fusion;  // the CPU runtime in GPU-runtime terms, for fusion_of
  const PrecisionPlan& plan;
  bool training = true;
  // The framework's per-op host costs (the GPU profile of the same framework, launch and GPU-library terms
  // zeroed: docs/host-model.md), or null to charge the CPU profile's dispatch_us_per_op per call.
  const RuntimeProfile* framework_host = nullptr;
  // The model's weight bytes: when they overflow the caches a pass reads each op's weights from DRAM.
  double weight_bytes = 0;
};

// Forward or backward cost of ops[index] on the CPU (fusion decided by fusion_of with the CPU runtime's switches).
OpCost cost_cpu_op(const std::vector<Op>& ops, std::size_t index, Phase phase, const CpuCostContext& ctx);

}  // namespace perfcast
