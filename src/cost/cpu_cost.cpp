#include "cost/cpu_cost.h"

#include <algorithm>
#include <cmath>

#include "core/data_files.h"
#include "cost/attention_passes.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "graph/op_arithmetic.h"
#include "graph/op_kinds.h"

namespace perfcast {

namespace {

CpuCostConstants load_constants() {
  const auto path = data_dir() / "cpu_cost.toml";
  const toml::table t = parse_toml_file(path);
  const TomlFields f(t, "'" + path.string() + "'");
  CpuCostConstants c;
  c.file = path.string();
  const auto positive = [&](std::string_view key) {
    const double v = f.number(key);
    if (!(v > 0) || !std::isfinite(v)) f.fail(key, "must be positive");
    return v;
  };
  c.cache_bytes_per_clk_per_core = positive("cache_bytes_per_clk_per_core");
  c.cache_resident_fraction = positive("cache_resident_fraction");
  c.gemm_block_m = positive("gemm_block_m");
  c.gemm_block_n = positive("gemm_block_n");
  c.gemm_k_half = positive("gemm_k_half");
  c.single_core_dram_gbps = positive("single_core_dram_gbps");
  c.two_socket_efficiency = positive("two_socket_efficiency");
  c.gpu_over_cpu_claim = positive("gpu_over_cpu_claim");
  c.parallel_grain_elements = positive("parallel_grain_elements");
  c.omp_fork_join_us_per_thread = positive("omp_fork_join_us_per_thread");
  c.reference_host_ghz = positive("reference_host_ghz");
  c.head_gemm_peak_fraction = positive("head_gemm_peak_fraction");
  c.fresh_page_gbps_per_socket = positive("fresh_page_gbps_per_socket");
  c.fresh_page_free_share = positive("fresh_page_free_share");
  c.munmap_gbps_one_thread = positive("munmap_gbps_one_thread");
  c.blas_pack_gbps_per_core = f.number("blas_pack_gbps_per_core");
  if (!(c.blas_pack_gbps_per_core >= 0) || !std::isfinite(c.blas_pack_gbps_per_core))
    f.fail("blas_pack_gbps_per_core", "must be 0 (off) or positive");
  {
    const auto& r = f.table("onednn_reorder");
    const TomlFields rf(r, "'" + path.string() + "' [onednn_reorder]");
    const auto pos = [&](std::string_view key) {
      const double v = rf.number(key);
      if (!(v > 0) || !std::isfinite(v)) rf.fail(key, "must be positive");
      return v;
    };
    c.onednn_reorder.host_cores = pos("host_cores");
    c.onednn_reorder.host_ghz = pos("host_ghz");
    c.onednn_reorder.plain_to_blocked_gbps = pos("plain_to_blocked_gbps");
    c.onednn_reorder.blocked_to_plain_gbps = pos("blocked_to_plain_gbps");
    c.onednn_reorder.call_us = pos("call_us");
    c.onednn_reorder.cache_hit_us = pos("cache_hit_us");
  }
  if (c.cache_resident_fraction > 1) f.fail("cache_resident_fraction", "must be at most 1");
  if (c.two_socket_efficiency > 1) f.fail("two_socket_efficiency", "must be at most 1");
  if (c.head_gemm_peak_fraction > 1) f.fail("head_gemm_peak_fraction", "must be at most 1");
  if (c.fresh_page_free_share >= 1) f.fail("fresh_page_free_share", "must be below 1");
  if (const auto* src = t["sources"].as_table())
    for (const auto& [k, v] : *src)
      if (auto s = v.value<std::string>()) c.sources[std::string(k.str())] = *s;
  return c;
}

bool is_depthwise(const ConvGeometry& c) { return c.groups > 1 && c.groups == c.c_in; }

}  // namespace

const CpuCostConstants& cpu_cost_constants() {
  static const CpuCostConstants c = load_constants();
  return c;
}

CpuCostModel::CpuCostModel(const CpuSpec& cpu, const CpuRuntimeProfile& runtime, const CpuCostConstants& constants,
                           std::string math_precision)
    : cpu_(cpu), runtime_(runtime), c_(constants), precision_(std::move(math_precision)),
      unit_(cpu.math_unit(precision_)), socket_factor_(cpu.sockets > 1 ? constants.two_socket_efficiency : 1.0) {}

double CpuCostModel::gemm_flops_per_us(double class_efficiency) const {
  // The library's fraction of the unit's peak: AMX and the BF16/VNNI dot products have their own; FP32 FMAs take
  // the op class's (convolution, GEMM).
  double eff = class_efficiency;
  if (unit_ == "amx") eff = runtime_.amx_efficiency;
  else if (unit_ == "avx512_bf16" || unit_ == "vnni") eff = runtime_.low_precision_efficiency;
  return cpu_.peak_tflops(precision_) * 1e6 * eff * socket_factor_;
}

double CpuCostModel::shape_efficiency(const MatmulGeometry& g) const {
  const double blocks = static_cast<double>(g.batch) * std::ceil(static_cast<double>(g.m) / c_.gemm_block_m) *
                        std::ceil(static_cast<double>(g.n) / c_.gemm_block_n);
  const double cores = cpu_.total_cores();
  const double rounds = std::ceil(blocks / cores);
  const double spread = rounds > 0 ? blocks / (rounds * cores) : 1.0;
  const double k = static_cast<double>(g.k);
  return std::max(1e-3, spread * k / (k + c_.gemm_k_half) * lane_fill(g));
}

double CpuCostModel::lane_fill(const MatmulGeometry& g) const {
  // The kernels vectorize over output channels (oneDNN's 8- or 16-channel blocks, one FP32 lane each): a group with
  // fewer channels than a vector leaves the other lanes masked off.
  const double lanes = cpu_.vector_bits / 32.0;
  const double n = static_cast<double>(g.n);
  if (!(lanes > 1) || !(n > 0)) return 1.0;
  return n / (std::ceil(n / lanes) * lanes);
}

double CpuCostModel::cold_weight_bytes_per_us(const MatmulGeometry& g) const {
  // Only the cores that hold output blocks stream the weights (few streams reach less than the channels' peak),
  // and the weights sit in one NUMA node's memory: the thread that loaded them touched them first (Linux's
  // default local allocation), so on two sockets they come from one socket's channels. Under automatic NUMA
  // balancing (pages_balanced) each page has moved to the node whose threads read it (a library splits the output
  // statically, so the same threads read the same weight columns every call): every socket streams its share from
  // its own channels.
  const double nodes = cpu_.pages_balanced ? 1.0 : std::max(1, cpu_.sockets);
  const double node = cpu_.mem_bw_gbps() / nodes * 1e3 * runtime_.dram_efficiency;
  return std::min(node, gemm_threads(g) * c_.single_core_dram_gbps * 1e3);
}

double CpuCostModel::weight_relayout_us(const MatmulGeometry& g, double weight_bytes, double cold_bytes,
                                        double passes, double written_set_bytes) const {
  if (!(weight_bytes > 0)) return 0.0;
  cold_bytes = std::clamp(cold_bytes, 0.0, weight_bytes);
  const double cold_rate = cold_weight_bytes_per_us(g);
  // The first read comes from where the weights are (warm ones from the caches); the further passes (the new
  // layout's write) run at the rate of the buffer written: the caches' for a panel, DRAM's for a whole copy that
  // overflows them.
  const double warm = weight_bytes - cold_bytes;
  return cold_bytes / cold_rate + warm / bandwidth_bytes_per_us(weight_bytes) +
         (passes - 1.0) * weight_bytes / bandwidth_bytes_per_us(written_set_bytes);
}

double CpuCostModel::blas_pack_floor_us(double weight_bytes) const {
  if (!(c_.blas_pack_gbps_per_core > 0) || !(weight_bytes > 0)) return 0.0;
  // Every thread of the team packs its share of the weight's columns (a small-M call is split over N), each at
  // the per-core rate; a floor under the roofline of the read and the panel write.
  return weight_bytes / (cpu_.total_cores() * c_.blas_pack_gbps_per_core * 1e3);
}

double CpuCostModel::onednn_reorder_us(double bytes, bool to_blocked, const MatmulGeometry& g,
                                       double cold_bytes) const {
  if (!(bytes > 0)) return 0.0;
  const auto& r = c_.onednn_reorder;
  const double clock = cpu_.vector_clock_ghz();
  // The reorder kernels are bound by each core's strided loads and stores and by first-touching the new buffer's
  // pages, not by the channels (the measured rates are a fraction of the host's DRAM rate): cores x clock scales them.
  const double scale = cpu_.total_cores() * clock / (r.host_cores * r.host_ghz);
  const double rate = (to_blocked ? r.plain_to_blocked_gbps : r.blocked_to_plain_gbps) * 1e3 * scale;
  cold_bytes = std::clamp(cold_bytes, 0.0, bytes);
  // The memory roofline: the read from where the data is (evicted weights from DRAM), the write to a new buffer.
  const double roofline = cold_bytes / cold_weight_bytes_per_us(g) + (bytes - cold_bytes) / bandwidth_bytes_per_us(bytes) +
                          bytes / bandwidth_bytes_per_us(bytes);
  // The call time, measured on the host, shrinks with the clock. It is not scaled by the team's size: the team's
  // fork and join is a fraction of it (omp_fork_join_us_per_thread x 40 = 12 of its 47 us), and on one 28-core
  // Xeon Platinum 8180 PyTorch 1.2's per-call reorders cost more per call than the 40-thread host's figure, not
  // less (docs/cpus.md, session 20).
  // A release whose oneDNN keeps its primitives in the primitive cache (runtime reorder_primitives_cached) pays per
  // call the cache lookup and the reorder's one parallel region over the team, not the 0.x call time.
  const double call =
      runtime_.reorder_primitives_cached ? r.cache_hit_us + fork_join_us() : r.call_us * r.host_ghz / clock;
  return call + std::max(bytes / rate, roofline);
}

double CpuCostModel::gemm_threads(const MatmulGeometry& g) const {
  const double blocks = static_cast<double>(g.batch) * std::ceil(static_cast<double>(g.m) / c_.gemm_block_m) *
                        std::ceil(static_cast<double>(g.n) / c_.gemm_block_n);
  return std::clamp(blocks, 1.0, static_cast<double>(cpu_.total_cores()));
}

double CpuCostModel::cross_socket_us(const MatmulGeometry& g, double a_bytes, double b_bytes) const {
  if (cpu_.sockets < 2 || !(cpu_.socket_link_gbps > 0)) return 0.0;
  // The threads split the products, then each product's output in a grid of nthr_m x nthr_n blocks; BLAS and
  // oneDNN's GEMM drivers grid the team into near-square output blocks (nthr_m / nthr_n = M / N). The team spans
  // the sockets evenly. B (the weights, on the node whose thread loaded them) is read in part by every socket:
  // the other sockets' share crosses the link. A's rows are split between the sockets when the grid has a block
  // row per socket (each reads rows its own socket wrote); with fewer block rows (small M: a batch-1 GEMM is split
  // by columns) every socket reads all of A, and the share the other socket wrote crosses. A line crosses once
  // per socket: a second thread on the same socket gets it from that socket's caches.
  const double sockets = cpu_.sockets;
  const double products = static_cast<double>(std::max<std::int64_t>(1, g.batch));
  const double team = std::max(1.0, gemm_threads(g) / products);
  const double nthr_m = std::clamp(std::sqrt(team * static_cast<double>(g.m) / std::max<double>(1.0, g.n)), 1.0, team);
  // Pages that follow their readers (pages_balanced) put each socket's share of B on its own node: none crosses.
  const double read = (cpu_.pages_balanced ? 0.0 : b_bytes) + (nthr_m < sockets ? a_bytes : 0.0);
  return products * read * (sockets - 1.0) / sockets / (cpu_.socket_link_gbps * 1e3);
}

double CpuCostModel::streaming_threads(double elements) const {
  const double cores = cpu_.total_cores();
  if (!(elements > 0)) return cores;
  return std::clamp(std::ceil(elements / c_.parallel_grain_elements), 1.0, cores);
}

double CpuCostModel::fresh_pages_us(double tensor_bytes, double calls) const {
  const double threshold = runtime_.fresh_pages_above_bytes;
  if (!(threshold > 0) || !(tensor_bytes > threshold) || !(calls > 0)) return 0.0;
  // Faulting in: the intra-op team's threads write the new tensor, each faulting in and zeroing its pages on its own
  // node, and the zone lock of each node's page allocator bounds the rate: a process spread over both sockets faults
  // on both nodes, one of several processes on a socket gets its share (memory_share) of that socket's. The measured
  // full-load rate covers a fault and a munmap per page in every task; the fault side is that rate without the free
  // path's share. Freeing: glibc returns the block with munmap on the thread that drops the tensor, the framework's
  // one thread in eager mode, while the team waits for the next op: one thread's rate, whatever the sockets.
  const double rate = c_.fresh_page_gbps_per_socket / (1.0 - c_.fresh_page_free_share) * 1e3 * cpu_.sockets *
                      cpu_.memory_share;
  const double unmap = c_.munmap_gbps_one_thread * 1e3;
  return calls * tensor_bytes / rate + calls * tensor_bytes / unmap;
}

double CpuCostModel::fork_join_us() const { return c_.omp_fork_join_us_per_thread * cpu_.total_cores(); }

double CpuCostModel::bandwidth_bytes_per_us(double working_set_bytes) const {
  const double cache = (cpu_.l2_total_bytes() + cpu_.l3_total_bytes()) * c_.cache_resident_fraction;
  if (working_set_bytes <= cache)
    return cpu_.total_cores() * cpu_.vector_clock_ghz() * 1e3 * c_.cache_bytes_per_clk_per_core * socket_factor_;
  // The channels' share, and at most what the process's cores can have in flight (Little's law: each core's
  // outstanding misses over the loaded latency, single_core_dram_gbps per core). Binds only for a process on a few
  // of a socket's cores (--cores): no catalogued part has single_core_dram_gbps per core after dram_efficiency.
  return std::min(cpu_.mem_bw_gbps() * 1e3 * runtime_.dram_efficiency * socket_factor_, cores_dram_gbps() * 1e3);
}

double CpuCostModel::cores_dram_gbps() const { return cpu_.total_cores() * c_.single_core_dram_gbps; }

KernelCost CpuCostModel::finish(KernelCost k, Bound compute_bound) const {
  k.time_us = std::max(k.compute_us, k.memory_us);
  k.bound = k.compute_us >= k.memory_us ? compute_bound : Bound::kMemory;
  return k;
}

KernelCost CpuCostModel::gemm(const MatmulGeometry& g, double flops, double bytes, double efficiency,
                              double cold_bytes) const {
  KernelCost k;
  k.flops = flops;
  k.bytes = bytes;
  k.algorithm = "gemm";
  k.shape_efficiency = shape_efficiency(g);
  k.compute_us = flops / (gemm_flops_per_us(efficiency) * k.shape_efficiency);
  cold_bytes = std::clamp(cold_bytes, 0.0, bytes);
  const double warm = bytes - cold_bytes;
  k.memory_us = warm > 0 ? warm / bandwidth_bytes_per_us(warm) : 0.0;
  if (cold_bytes > 0) k.memory_us += cold_bytes / cold_weight_bytes_per_us(g);
  return finish(k, unit_ == "amx" ? Bound::kCpuMatrix : Bound::kCpuVector);
}

double CpuCostModel::head_gemm_threads(double products) const {
  return std::clamp(products, 1.0, static_cast<double>(cpu_.total_cores()));
}

KernelCost CpuCostModel::head_parallel_gemm(double products, double flops, double bytes, double phase_efficiency) const {
  KernelCost k;
  k.flops = flops;
  k.bytes = bytes;
  k.algorithm = "gemm_per_head";
  // One product per thread: a core's FP32 FMA peak (its share of the part's) at the fraction one head's small
  // product reaches; the sockets' NUMA loss applies when the products spill onto the second socket.
  const double threads = head_gemm_threads(products);
  const double per_core = cpu_.peak_tflops("fp32") * 1e6 / cpu_.total_cores();
  const double spill = threads > cpu_.cores ? socket_factor_ : 1.0;
  k.shape_efficiency = threads / cpu_.total_cores() * c_.head_gemm_peak_fraction;
  k.compute_us = flops / (threads * per_core * c_.head_gemm_peak_fraction * phase_efficiency * spill);
  k.memory_us = bytes > 0 ? bytes / bandwidth_bytes_per_us(bytes) : 0.0;
  return finish(k, Bound::kCpuVector);
}

KernelCost CpuCostModel::depthwise(double flops, double bytes) const {
  KernelCost k;
  k.flops = flops;
  k.bytes = bytes;
  k.algorithm = "depthwise";
  k.compute_us = flops / (cpu_.peak_tflops("fp32") * 1e6 * runtime_.depthwise_efficiency * socket_factor_);
  k.memory_us = bytes / bandwidth_bytes_per_us(bytes);
  return finish(k, Bound::kCpuVector);
}

double CpuCostModel::nchwc_block_channels() const {
  // MlasNchwcGetBlockSize: the platform's NchwcBlockSize, set to one vector of floats by the kernel family chosen
  // from CPUID (AVX-512F kernels on any part with AVX-512, Zen 4's split datapath included).
  return (cpu_.isa == "avx512" ? 512.0 : 256.0) / 32.0;
}

bool CpuCostModel::runs_nchwc(const ConvGeometry& c) const {
  // onnxruntime/core/optimizer/nchwc_transformer.cc TransformConv: FP32 2-D convolutions with constant weights;
  // grouped ones need output channels in whole blocks and either one channel per group (depthwise) or whole blocks
  // per group; ungrouped ones need input channels in whole blocks, or fewer than one block (the first layer reads
  // the NCHW image directly); output channels are padded up to a block.
  if (!(runtime_.nchwc_filter_set_blocks > 0) || precision_ != "fp32" || c.transposed || c.spatial_dims != 2)
    return false;
  const auto block = static_cast<std::int64_t>(nchwc_block_channels());
  if (c.groups > 1) {
    if (c.c_out % block != 0) return false;
    const std::int64_t cin_g = c.c_in / c.groups;
    const std::int64_t cout_g = c.c_out / c.groups;
    if (cin_g == 1 && c.c_out == c.groups) return true;
    return cin_g % block == 0 && cout_g % block == 0;
  }
  return c.c_in < block || c.c_in % block == 0;
}

double CpuCostModel::item_spread(double items) const {
  const double cores = cpu_.total_cores();
  if (!(items > 0)) return 1.0;
  return items / (std::ceil(items / cores) * cores);
}

KernelCost CpuCostModel::nchwc_conv(const ConvGeometry& c, double flops, double bytes, double cold_bytes) const {
  const double block = nchwc_block_channels();
  const double images = static_cast<double>(c.n);
  const double rows = static_cast<double>(c.out[0]);
  const bool depthwise = c.groups > 1 && c.groups == c.c_in;
  KernelCost k;
  k.flops = flops;
  k.bytes = bytes;
  if (depthwise) {
    // MLAS_NCHWC_CONV_DEPTHWISE_ALGORITHM: one work item per output row of one channel block.
    const double items = images * std::ceil(static_cast<double>(c.c_out) / block) * rows;
    k.algorithm = "nchwc_depthwise";
    k.shape_efficiency = item_spread(items);
    k.compute_us = flops / (cpu_.peak_tflops("fp32") * 1e6 * runtime_.nchwc_depthwise_efficiency * socket_factor_ *
                            k.shape_efficiency);
  } else {
    // MLAS_NCHWC_GROUPED_CONV_ALGORITHM: one work item per output row of one set of channel blocks per group.
    const double groups = static_cast<double>(c.groups);
    const double cout_g = static_cast<double>(c.c_out) / groups;
    const double blocks = std::ceil(cout_g / block);
    const double items = images * groups * std::ceil(blocks / runtime_.nchwc_filter_set_blocks) * rows;
    const double depth = static_cast<double>(c.c_in) / groups * static_cast<double>(c.kernel[0] * c.kernel[1]);
    const double fill = cout_g / (blocks * block);  // the padded channels' lanes compute nothing
    k.algorithm = "nchwc_conv";
    k.shape_efficiency = std::max(1e-3, item_spread(items) * depth / (depth + c_.gemm_k_half) * fill);
    k.compute_us = flops / (gemm_flops_per_us(runtime_.conv_efficiency) * k.shape_efficiency);
  }
  cold_bytes = std::clamp(cold_bytes, 0.0, bytes);
  const double warm = bytes - cold_bytes;
  k.memory_us = warm > 0 ? warm / bandwidth_bytes_per_us(warm) : 0.0;
  if (cold_bytes > 0) {
    MatmulGeometry g = conv_as_gemm(c);
    k.memory_us += cold_bytes / cold_weight_bytes_per_us(g);
  }
  return finish(k, Bound::kCpuVector);
}

KernelCost CpuCostModel::streaming(double flops, double bytes, double launches, double elements) const {
  KernelCost k;
  k.flops = flops;
  k.bytes = bytes;
  k.launches = launches;
  k.algorithm = "streaming";
  // Elementwise arithmetic runs on the FP32 FMA units at their peak; it rarely bounds a streaming op.
  k.compute_us = flops / (cpu_.peak_tflops("fp32") * 1e6 * socket_factor_);
  double bw = bandwidth_bytes_per_us(bytes);
  const double cores = runtime_.streaming_cores;
  if (cores > 0 && cores < cpu_.total_cores()) {
    // A loop on `cores` cores: their share of the FMA peak, and at most what that many cores stream.
    k.compute_us *= cpu_.total_cores() / cores;
    bw = std::min(bw, cores * c_.single_core_dram_gbps * 1e3);
  }
  const double threads = streaming_threads(elements);
  if (threads < cpu_.total_cores()) {
    // Below the grain the loop runs on `threads` cores: their share of the FMA peak and of the bandwidth.
    const double cached = (launches > 0 ? bytes / launches : bytes) <= (cpu_.l2_total_bytes() + cpu_.l3_total_bytes()) * c_.cache_resident_fraction;
    const double per_core = cached ? cpu_.vector_clock_ghz() * 1e3 * c_.cache_bytes_per_clk_per_core
                                   : c_.single_core_dram_gbps * 1e3;
    k.compute_us = std::max(k.compute_us, flops / (cpu_.peak_tflops("fp32") * 1e6 * threads / cpu_.total_cores()));
    bw = std::min(bw, threads * per_core);
  }
  k.memory_us = bytes / bw;
  return finish(k, Bound::kCpuVector);
}

namespace {

// Time no FMA overlaps (packing, reorders, operand reads over the socket link) added to a kernel.
void add_serial(KernelCost& k, double us) {
  k.memory_us += us;
  k.time_us += us;
}

// PyTorch eager's three reorders around a oneDNN convolution on dense tensors, each a primitive of its own into a
// freshly allocated buffer: the source (plain to blocked), the weights (plain to blocked; `cold` of them evicted)
// and the destination (blocked to plain). Their call time stands for their parallel regions.
double dense_conv_reorders_us(const CpuCostModel& m, const MatmulGeometry& g, const Op& op, const PrecisionPlan& plan,
                              double cold) {
  const double weights = static_cast<double>(op.params) * plan.bytes.weight;
  return m.onednn_reorder_us(static_cast<double>(op.in_elems) * plan.bytes.act, true, g) +
         m.onednn_reorder_us(weights, true, g, cold) +
         m.onednn_reorder_us(static_cast<double>(op.out_elems) * plan.bytes.act, false, g);
}

// PyTorch's FP32 backend choice (aten/src/ATen/native/Convolution.cpp ConvParams::use_mkldnn): oneDNN when the
// convolution is grouped, or its kernel is wider than 3 in both dimensions, or the batch exceeds one, or the input
// exceeds the element threshold ('for some case, native is faster'); otherwise ATen's native convolution.
bool runs_native_conv(const CpuRuntimeProfile& rt, const Op& op, const PrecisionPlan& plan) {
  const ConvGeometry& c = op.conv;
  if (!(rt.native_conv_max_input_elements > 0) || plan.name != "fp32" || c.transposed || c.spatial_dims != 2)
    return false;
  const bool library = c.groups > 1 || (c.kernel[0] > 3 && c.kernel[1] > 3) || c.n > 1 ||
                       static_cast<double>(op.in_elems) > rt.native_conv_max_input_elements;
  return !library;
}

// The tensors an op's calls allocate (forward: its output unless it writes in place; backward: one gradient per
// activation input, except an add's, which hands its output's gradient to both inputs: PyTorch's derivatives.yaml
// gives add's self and other gradients as `grad` itself), each call's tensor on fresh pages when it is above the
// runtime's mmap threshold.
double fresh_tensors_us(const CpuCostModel& m, const Op& op, bool forward, double act_bytes) {
  const double reps = static_cast<double>(std::max<std::int64_t>(1, op.repeats));
  if (forward) {
    if (op.in_place) return 0.0;
    return m.fresh_pages_us(static_cast<double>(op.out_elems) * act_bytes / reps, reps);
  }
  if (!op.needs_input_grad) return 0.0;
  if (op.kind == OpKind::kElementwise && op.pointwise == PointwiseKind::kAdd) return 0.0;
  const double inputs = static_cast<double>(std::max<std::size_t>(1, op.inputs.size()));
  return m.fresh_pages_us(static_cast<double>(op.in_elems) * act_bytes / (inputs * reps), inputs * reps);
}

}  // namespace

OpCost cost_cpu_op(const std::vector<Op>& ops, std::size_t index, Phase phase, const CpuCostContext& ctx) {
  const Op& op = ops[index];
  OpCost out;
  out.name = op.name;
  out.kind = op.kind;
  out.phase = phase;
  out.fusion = fusion_of(ops, index, ctx.fusion, ctx.training);
  out.cost.launches = 0;
  if (op.is_view || out.fusion == Fusion::kSkipped || out.fusion == Fusion::kFolded) return out;
  const bool forward = phase == Phase::kForward;
  const Work w = forward ? forward_work(op, ctx.plan.bytes, ctx.training) : backward_work(op, ctx.plan.bytes);
  if (w.flops <= 0 && w.bytes <= 0) return out;
  if (out.fusion == Fusion::kIntoPrevious && forward) {
    // Runs inside its producer's primitive (oneDNN post-op): its arithmetic only, no pass over memory, no call.
    out.cost = ctx.model.streaming(w.flops, 0, 0);
    return out;
  }
  const auto& m = ctx.model;
  const auto& rt = m.runtime();
  const double phase_eff = forward ? 1.0 : rt.backward_efficiency;
  // A pass over a model whose weights overflow the caches evicts each op's weights before the next pass uses
  // them: at batch 1 they stream from DRAM every time.
  const auto& cc = cpu_cost_constants();
  const double cache = (m.cpu().l2_total_bytes() + m.cpu().l3_total_bytes()) * cc.cache_resident_fraction;
  const double cold = ctx.weight_bytes > cache ? static_cast<double>(op.params) * ctx.plan.bytes.weight : 0.0;
  bool parallel = true;  // the op's calls each open a parallel region over the intra-op team
  // Backward: one call for the input gradient and one for the weight gradient where each exists.
  const double calls = forward ? 1.0 : std::max(1.0, (op.needs_input_grad ? 1.0 : 0.0) + (op.params > 0 ? 1.0 : 0.0));
  const double weights_bytes = static_cast<double>(op.params) * ctx.plan.bytes.weight;
  // A convolution's implicit GEMM reads the input tensor (not an unfolded matrix) and the weights, per group.
  const auto conv_cross_socket_us = [&](const MatmulGeometry& g) {
    const double groups = static_cast<double>(std::max<std::int64_t>(1, g.batch));
    return m.cross_socket_us(g, static_cast<double>(op.in_elems) * ctx.plan.bytes.act / groups, weights_bytes / groups);
  };
  // An unfold + GEMM convolution's column matrix (rows = output pixels of `images` images, columns = c_in/groups x
  // kernel, per group) and the passes over it: written and read in forward; the backward's col2im and re-unfold too.
  const double unfold_passes = forward ? 2.0 : 4.0;
  const auto unfolded_bytes = [&](const MatmulGeometry& g, double images) {
    return static_cast<double>(g.batch) * static_cast<double>(g.m) * static_cast<double>(g.k) * images *
           ctx.plan.bytes.act;
  };
  switch (op_kind_info(op.kind).cost_rule) {
    case CostRule::kConv:
      if (runs_native_conv(rt, op, ctx.plan)) {
        // ATen's own path (slow_conv2d): unfold the image into columns unless the kernel is 1x1, unit-stride and
        // unpadded (ConvolutionMM2d.cpp requires_columns), then one BLAS GEMM that packs its weight operand per
        // call, as a linear layer's does; no oneDNN primitive, so no reorders.
        const MatmulGeometry g = conv_as_gemm(op.conv);
        const ConvGeometry& c = op.conv;
        const bool columns = c.kernel[0] != 1 || c.kernel[1] != 1 || c.stride[0] != 1 || c.stride[1] != 1 ||
                             c.pad[0] != 0 || c.pad[1] != 0;
        const double unfolded = columns ? unfolded_bytes(g, 1.0) : 0.0;
        out.cost = m.gemm(g, w.flops, w.bytes + unfold_passes * unfolded, rt.matmul_efficiency * phase_eff);
        out.cost.algorithm = "aten_native_gemm";
        if (rt.gemm_packs_weights_per_call)
          add_serial(out.cost, calls * std::max(m.weight_relayout_us(g, weights_bytes, cold, 2.0, 0.0),
                                                m.blas_pack_floor_us(weights_bytes)));
        add_serial(out.cost, calls * conv_cross_socket_us(g));
      } else if (rt.conv_reorders_per_call && !rt.conv_im2col_per_image) {
        // Dense tensors into a oneDNN convolution: every call reorders the plain weights to the blocked layout the
        // kernel wants (read from where they are, written to a scratch copy the kernel then reads) and the source
        // and destination to and from the blocked activation layout (a read and a write of each), each reorder a
        // parallel primitive of its own; forward and each backward call alike.
        const MatmulGeometry g = conv_as_gemm(op.conv);
        out.cost = is_depthwise(op.conv) ? m.depthwise(w.flops, w.bytes)
                                         : m.gemm(g, w.flops, w.bytes, rt.conv_efficiency * phase_eff);
        add_serial(out.cost, calls * dense_conv_reorders_us(m, g, op, ctx.plan, cold));
        if (!is_depthwise(op.conv)) add_serial(out.cost, calls * conv_cross_socket_us(g));
      } else if (m.runs_nchwc(op.conv)) {
        // ONNX Runtime at ORT_ENABLE_ALL: MLAS's NCHWc direct kernels on weights reordered once per session, the
        // activations kept blocked from one such node to the next.
        out.cost = m.nchwc_conv(op.conv, w.flops, w.bytes, cold);
        add_serial(out.cost, calls * conv_cross_socket_us(conv_as_gemm(op.conv)));
      } else if (is_depthwise(op.conv)) {
        out.cost = m.depthwise(w.flops, w.bytes);
      } else if (rt.conv_im2col_per_image && op.conv.n > 1) {
        // One unfold + GEMM per image, each GEMM over one image's column matrix.
        MatmulGeometry g = conv_as_gemm(op.conv);
        g.m /= op.conv.n;
        const double images = static_cast<double>(op.conv.n);
        const double unfolded = unfolded_bytes(g, images);
        out.cost = m.gemm(g, w.flops / images, (w.bytes + unfold_passes * unfolded) / images, rt.conv_efficiency * phase_eff);
        out.cost.flops *= images;
        out.cost.bytes *= images;
        out.cost.compute_us *= images;
        out.cost.memory_us *= images;
        out.cost.time_us *= images;
        // Calls per image: the forward GEMM; backward-data and backward-weights GEMMs.
        const double gemm_calls = images * (forward ? 1.0 : calls);
        out.cost.compute_us += gemm_calls * rt.gemm_call_overhead_us;
        out.cost.time_us += gemm_calls * rt.gemm_call_overhead_us;
        // Each per-image GEMM reads its unfolded matrix and the group's weights.
        const double groups = static_cast<double>(std::max<std::int64_t>(1, g.batch));
        add_serial(out.cost, gemm_calls * m.cross_socket_us(g, unfolded / images / groups, weights_bytes / groups));
      } else {
        // A library convolution as implicit GEMM. MLAS's own (a convolution the NCHWc rewrite leaves alone) unfolds
        // a cache-sized panel per thread into MlasSgemm (convolve.cpp, MLAS_CONV_WORKING_BUFFER_SIZE_PER_THREAD), so
        // it runs at the SGEMM's efficiency with no unfolded matrix in memory.
        const MatmulGeometry g = conv_as_gemm(op.conv);
        const double eff = rt.nchwc_filter_set_blocks > 0 ? rt.matmul_efficiency : rt.conv_efficiency;
        out.cost = m.gemm(g, w.flops, w.bytes, eff * phase_eff, cold);
        add_serial(out.cost, calls * conv_cross_socket_us(g));
      }
      break;
    case CostRule::kMatmul:
      if (rt.gemm_packs_weights_per_call && op.params > 0) {
        // The BLAS call packs its weight operand into panels (read from where the weights are, written to a
        // buffer the kernels read from cache) before any FMA runs: forward, and the backward's input-gradient GEMM.
        const double reps = static_cast<double>(std::max<std::int64_t>(1, op.repeats));
        const double weights = static_cast<double>(op.params) * ctx.plan.bytes.weight;
        // Packed a panel at a time (Goto's K_c x N_c blocks, sized for L2/L3): the packed copy stays in the caches.
        const double pack_us = reps * std::max(m.weight_relayout_us(op.mm, weights, cold, 2.0, 0.0),
                                               m.blas_pack_floor_us(weights));
        out.cost = m.gemm(op.mm, w.flops, w.bytes, rt.matmul_efficiency * phase_eff);
        add_serial(out.cost, pack_us);
      } else {
        out.cost = m.gemm(op.mm, w.flops, w.bytes, rt.matmul_efficiency * phase_eff, cold);
      }
      {
        const double reps = static_cast<double>(std::max<std::int64_t>(1, op.repeats));
        const MatmulGeometry& g = op.mm;
        const double b_elem = g.weight_operand ? ctx.plan.bytes.weight : ctx.plan.bytes.act;
        add_serial(out.cost, reps * calls *
                                 m.cross_socket_us(g, static_cast<double>(g.m * g.k) * ctx.plan.bytes.act,
                                                   static_cast<double>(g.k * g.n) * b_elem));
      }
      break;
    case CostRule::kAttention: {
      // The scores GEMM's shape: batch x heads products of [q_len, head_dim] x [head_dim, kv_len].
      MatmulGeometry g;
      g.batch = op.attn.batch * op.attn.heads;
      g.m = op.attn.q_len;
      g.n = op.attn.kv_len;
      g.k = op.attn.head_dim;
      // Both products' operands: Q [q, d] and K^T [d, kv], then the scores [q, kv] and V [kv, d]; the backward
      // runs each twice.
      MatmulGeometry pv = g;
      pv.n = op.attn.head_dim;
      pv.k = op.attn.kv_len;
      const double act = ctx.plan.bytes.act;
      const double reps = static_cast<double>(std::max<std::int64_t>(1, op.repeats));
      const double operand_us =
          reps * (forward ? 1.0 : 2.0) *
          (m.cross_socket_us(g, static_cast<double>(g.m * g.k) * act, static_cast<double>(g.k * g.n) * act) +
           m.cross_socket_us(pv, static_cast<double>(pv.m * pv.k) * act, static_cast<double>(pv.k * pv.n) * act));
      const double products = static_cast<double>(g.batch);
      if (op.attn.fused) {
        // ONNX Runtime's CPU Attention kernel runs one (batch, head) pair per thread-pool task, each product a
        // single-threaded MLAS GEMM (onnxruntime/contrib_ops/cpu/bert/attention_cpu_base.h).
        out.cost = m.head_parallel_gemm(products, w.flops, w.bytes, phase_eff);
        add_serial(out.cost, operand_us);
        break;
      }
      // Unfused (eager): the QK^T and PV batched GEMMs, then each elementwise pass over the scores between them
      // as its own call (scale, mask, softmax, dropout in training: the GPU path's chain, cost/attention_passes.h).
      const double gemms = forward ? 2.0 : 4.0;
      const double gemm_flops = 2.0 * matmul_flops(g) * (forward ? 1.0 : 2.0);
      const double score_elems = static_cast<double>(g.batch * g.m * g.n);
      const ScorePasses sp = score_passes(op.attn, phase, ctx.fusion, ctx.plan, ctx.training);
      // torch.matmul on the 4-D heads folds them into one bmm, which hands the batch x heads products to MKL's
      // batched GEMM (aten/src/ATen/native/LinearAlgebra.cpp bmm_out_or_baddbmm_): one product per thread.
      out.cost = m.head_parallel_gemm(products, gemm_flops,
                                      std::max(0.0, w.bytes - 2.0 * score_elems * ctx.plan.bytes.act), phase_eff);
      const KernelCost s = m.streaming(std::max(0.0, w.flops - gemm_flops), score_elems * sp.bytes_per_elem,
                                       sp.kernels, score_elems);
      out.cost.flops += s.flops;
      out.cost.bytes += s.bytes;
      out.cost.compute_us += s.compute_us;
      out.cost.memory_us += s.memory_us;
      out.cost.time_us += s.time_us;
      add_serial(out.cost, operand_us);
      // Each pass writes a new score-sized tensor (the QK^T product's, or in backward the PV product's gradient,
      // then one per elementwise pass), and the op its own output (its inputs' gradients in backward).
      add_serial(out.cost, reps * m.fresh_pages_us(score_elems * ctx.plan.bytes.act / reps, 1.0 + sp.kernels));
      add_serial(out.cost, fresh_tensors_us(m, op, forward, ctx.plan.bytes.act));
      out.cost.launches = (gemms + sp.kernels) * static_cast<double>(std::max<std::int64_t>(1, op.repeats));
      out.host_us = out.cost.launches * m.fork_join_us();
      return out;
    }
    case CostRule::kEmbeddingBag:  // no CPU rule of their own: their forward_work/backward_work bytes, streamed
    case CostRule::kInteraction:
    case CostRule::kStreaming: {
      // Elements per call: the op reads its input and writes its output.
      const double elements = w.bytes / (2.0 * ctx.plan.bytes.act * calls);
      out.cost = m.streaming(w.flops, w.bytes, calls, elements);
      parallel = m.streaming_threads(elements) > 1;
      break;
    }
  }
  add_serial(out.cost, fresh_tensors_us(m, op, forward, ctx.plan.bytes.act));
  out.cost.launches = calls * static_cast<double>(std::max<std::int64_t>(1, op.repeats));
  // The cores' side of each call: the OpenMP region's fork and join (the framework's own dispatch is added by
  // schedule/cpu_step.cpp).
  out.host_us = parallel ? out.cost.launches * m.fork_join_us() : 0.0;
  return out;
}

}  // namespace perfcast
