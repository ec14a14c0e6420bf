#include "cost/op_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "cost/activation_chains.h"
#include "cost/attention_kernels.h"
#include "cost/attention_passes.h"
#include "cost/embedding_cost.h"
#include "graph/op_arithmetic.h"
#include "graph/op_kinds.h"
#include "cost/row_kernels.h"

namespace perfcast {

CostContext::CostContext(const KernelCostModel& kernels, const RuntimeProfile& runtime, const PrecisionPlan& plan,
                         bool training)
    : kernels(kernels),
      runtime(runtime),
      plan(plan),
      training(training),
      tensor_library_efficiency(perfcast::tensor_library_efficiency(runtime, kernels.device().sm_version)),
      conv_autotune(runtime.conv_autotune) {}

double CostContext::library_efficiency(Pipe pipe) const {
  return library_efficiency_on(runtime, tensor_library_efficiency, pipe);
}

// The bytes of an embedding bag's pooled vectors, and of their gradient in backward. --embedding-precision says so
// outright. torch.autocast puts embedding and embedding_bag on none of its CUDA cast lists
// (pytorch/pytorch@cfed411fae0c18aa3d20351bc8dc8e1218db77ff:aten/src/ATen/autocast_mode.cpp), so a PyTorch
// nn.EmbeddingBag / nn.Embedding pools at its table's dtype (FP32 rows, FP32 vectors) while the MLPs' GEMMs run in
// half; the cast before the interaction's bmm is charged with autocast's other casts (schedule/step.cpp), and the
// memory estimate holds the vectors and their gradient at these bytes (schedule/memory.cpp). FBGEMM's
// table-batched kernel (TorchRec) is not an autocast op either: it writes its module's output_dtype, SparseType.FP32
// unless the code that builds it says otherwise (pytorch/FBGEMM fbgemm_gpu/docs: SplitTableBatchedEmbeddingBagsCodegen
// weights_precision=SparseType.FP32, output_dtype=SparseType.FP32), the same FP32 vectors for FP32 tables.
double pooled_elem_bytes(const Op& op, const PrecisionPlan& plan, const RuntimeProfile& runtime,
                         const PrecisionPlan* embedding_plan) {
  if (embedding_plan) return embedding_plan->bytes.act;
  if (plan.mixed && runtime.autocast_per_op_casts) return std::max(plan.bytes.act, op.bag.table_elem_bytes);
  return plan.bytes.act;
}

double library_efficiency_on(const RuntimeProfile& runtime, double tensor_library_efficiency, Pipe pipe) {
  return runtime.library_efficiency * (is_tensor_pipe(pipe) ? tensor_library_efficiency : 1.0);
}

OpCost kernel_entry(const std::string& name, OpKind kind, KernelCost cost, Phase phase) {
  OpCost c;
  c.name = name;
  c.kind = kind;
  c.phase = phase;
  c.cost = cost;
  return c;
}

void repeat(OpCost& entry, double times) {
  KernelCost& k = entry.cost;
  k.time_us *= times;
  k.flops *= times;
  k.bytes *= times;
  k.launches *= times;
  entry.host_us *= times;
}

// A tensor-core GEMM handed to cuBLAS with leading dimensions that are not multiples of 16 bytes (RuntimeProfile::
// gemm_alignment_fallback): cuBLAS's Hopper kernels load tiles with TMA, which needs 16-byte-aligned rows, and its
// Ampere-style kernels read 16-byte vectors; a smaller alignment runs a kernel built for it (cutlass_80_*_align2 /
// _align4, cutlass_75_*_align1 on the H200: data/device_sessions/2026-12-04-h200). The alignment is the largest
// power of two dividing both leading dimensions, in bytes of the pipe's operands, capped at 16.
MatmulGeometry data_grad_geometry(const MatmulGeometry& g, const CostConstants& c) {
  return {g.batch, g.m, g.k, g.n, !(g.weight_operand && c.cublas_nn_backward_both_sets), false};
}

MatmulGeometry weight_grad_geometry(const MatmulGeometry& g, const CostConstants& c) {
  return {g.batch, g.k, g.n, g.m, g.weight_operand && !c.cublas_nt_backward_both_sets, false};
}

double gemm_alignment_efficiency(std::int64_t n, std::int64_t k, Pipe pipe, const RuntimeProfile& runtime,
                                 const KernelCostModel& km) {
  if (!runtime.gemm_alignment_fallback || !is_tensor_pipe(pipe) || n <= 0 || k <= 0) return 1.0;
  double elem = 0;
  switch (pipe) {
    case Pipe::kTcFp16Fp32Acc:
    case Pipe::kTcFp16Fp16Acc:
    case Pipe::kTcBf16:
      elem = 2;
      break;
    case Pipe::kTcTf32:
      elem = 4;
      break;
    default:
      return 1.0;  // INT8 / FP8: no measured under-aligned kernel
  }
  const std::int64_t common = std::gcd(n, k);
  double bytes = elem;
  while (bytes < 16 && common % static_cast<std::int64_t>(2 * bytes / elem) == 0) bytes *= 2;
  if (bytes >= 16) return 1.0;
  const auto& c = km.constants();
  const auto& table = bytes <= 2 ? c.misaligned_tensor_efficiency_2b
                      : bytes <= 4 ? c.misaligned_tensor_efficiency_4b
                                   : c.misaligned_tensor_efficiency_8b;
  const auto it = table.find(km.device().sm_version);
  return it == table.end() ? 1.0 : it->second;
}

namespace {

// The ops that read ops[producer]'s output, each once in the list, in order; the scan stops once it has found
// `stop_after` of them. Only the kConsumerScan ops after the producer are read, so that a pattern check run on every
// op of a long imported graph stays linear: a reader further away than that (no layer of a real network skips that
// many ops) is not seen.
constexpr std::size_t kConsumerScan = 4096;
std::vector<std::size_t> readers_of(const std::vector<Op>& ops, std::size_t producer,
                                    std::size_t stop_after = kConsumerScan) {
  std::vector<std::size_t> out;
  const std::size_t end = std::min(ops.size(), producer + 1 + kConsumerScan);
  for (std::size_t j = producer + 1; j < end && out.size() < stop_after; ++j)
    for (int in : ops[j].inputs)
      if (in == static_cast<int>(producer)) {
        out.push_back(j);
        break;
      }
  return out;
}

// The op that reads ops[producer]'s output when exactly one op reads it once; nullopt when none does or when more
// do (an op reading it twice counts twice).
std::optional<std::size_t> sole_consumer(const std::vector<Op>& ops, std::size_t producer) {
  if (producer >= ops.size()) return std::nullopt;
  const std::vector<std::size_t> readers = readers_of(ops, producer, 2);
  if (readers.size() != 1) return std::nullopt;
  const auto& in = ops[readers[0]].inputs;
  if (std::count(in.begin(), in.end(), static_cast<int>(producer)) != 1) return std::nullopt;
  return readers[0];
}

// cuDNN's CUDNN_BATCHNORM_SPATIAL training kernels on NCHW tensors (bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new
// and their _singleread forms) give each channel one CTA: the grid is C CTAs, and a CTA streams its channel's N*H*W
// elements alone at the rate its own loads in flight allow: a fixed number of element loads per round trip, so a
// rate in elements (FP32 moves twice the bytes of FP16 per load). A layer of few channels therefore leaves most of the
// DRAM bandwidth unused, and more so the faster the memory (64 channels of FP16 at ~7 GB/s each are 0.45 TB/s: half of a
// V100's rate, a tenth of an H200's). Returns the share of the streaming rate the phase reaches: the DRAM time of
// its bytes over the time of ceil(C / resident CTAs) waves of one channel's CTA.
double cudnn_channel_bn_share(const Op& op, double bytes, double elem_bytes, const KernelCostModel& km) {
  if (op.out_shape.size() < 3 || op.out_shape[1] <= 0 || bytes <= 0) return 1.0;
  const CostConstants& c = km.constants();
  const double channels = static_cast<double>(op.out_shape[1]);
  const double per_sm = std::max(1.0, std::floor(row_kernel_constants().threads_per_sm(km.device().sm_version) /
                                                  c.cudnn_nchw_batch_norm_cta_threads));
  const double resident = per_sm * static_cast<double>(km.device().sm_count);
  const double waves = std::ceil(channels / std::max(resident, 1.0));
  const double channel_us =
      waves * (c.cudnn_nchw_batch_norm_cta_latency_us +
               bytes / channels / elem_bytes / (c.cudnn_nchw_batch_norm_cta_gelems * 1e3));
  const double dram_us = bytes / km.dram_bytes_per_us();
  return std::min(1.0, dram_us / channel_us);
}

// Share of DRAM bandwidth a channels-last training batch norm on cuDNN's NHWC persistent kernels reaches: each CTA
// spans [memory] cudnn_nhwc_batch_norm_cta_channels channels and the lanes past the tensor's channels load nothing.
double cudnn_nhwc_bn_channel_share(const Op& op, const KernelCostModel& km) {
  if (op.out_shape.size() < 3 || op.out_shape[1] <= 0) return 1.0;
  const double tile = km.constants().cudnn_nhwc_batch_norm_cta_channels;
  if (!(tile >= 1)) return 1.0;
  const double channels = static_cast<double>(op.out_shape[1]);
  return channels / (tile * std::ceil(channels / tile));
}

// pooled_elem_bytes (above) from a cost context.
double pooled_elem_bytes(const Op& op, const CostContext& ctx) {
  return pooled_elem_bytes(op, ctx.plan, ctx.runtime, ctx.embedding_plan);
}

bool is_pointwise(const Op& op) { return op.kind == OpKind::kElementwise && op.repeats == 1; }

// An add of two tensors that are both computed (not the graph input): a residual join, whose backward joins the
// gradients of a fork.
bool two_input_add(const Op& op) {
  return op.kind == OpKind::kElementwise && op.pointwise == PointwiseKind::kAdd && op.inputs.size() == 2 &&
         op.inputs[0] >= 0 && op.inputs[1] >= 0;
}

bool is_depthwise(const ConvGeometry& c) { return c.groups > 1 && c.groups == c.c_in && c.c_out / c.groups <= 4; }

// Whether PyTorch's dispatch (aten/src/ATen/native/Convolution.cpp use_cudnn_depthwise with
// check_cudnn_depthwise_workload_with_filter) sends this depthwise convolution to cuDNN rather than its own
// conv_depthwise2d kernel: channels-last tensors always; NCHW ones only in FP16 (autocast makes them FP16 too; BF16
// and FP32 stay native) on a new enough GPU, undilated, equal strides, enough channels, and a shape one of the
// runtime's rules covers.
bool cudnn_runs_depthwise(const ConvGeometry& c, const CostContext& ctx) {
  const RuntimeProfile& rt = ctx.runtime;
  if (!rt.native_depthwise_conv || ctx.channels_last) return true;
  if (!rt.cudnn_depthwise_half || !rt.cudnn_depthwise) return false;
  const DepthwiseCudnnDispatch& d = *rt.cudnn_depthwise;
  const bool half = ctx.plan.name == "fp16" || ctx.plan.name == "amp";
  if (!half || ctx.kernels.device().sm_version < d.min_sm || static_cast<double>(c.c_in) < d.min_channels) return false;
  if (c.transposed || c.spatial_dims > 2) return false;
  const int dims = c.spatial_dims;
  // PyTorch views a 1-D convolution as 2-D with height 1: its length is the width, its stride the second stride.
  const std::int64_t stride = dims == 1 ? c.stride[0] : c.stride[1];
  const std::int64_t width = dims == 1 ? c.in[0] : c.in[1];
  if (c.dilation[0] != 1 || (dims == 2 && c.dilation[1] != 1)) return false;
  if (dims == 2 && (c.stride[0] != c.stride[1] || c.kernel[0] != c.kernel[1])) return false;
  const auto within = [](double v, double lo, double hi) { return (lo <= 0 || v >= lo) && (hi <= 0 || v <= hi); };
  for (const auto& r : d.rules) {
    if (r.dims != dims || r.stride != stride) continue;
    if (!r.filters.empty() && std::find(r.filters.begin(), r.filters.end(), c.kernel[0]) == r.filters.end()) continue;
    if (within(static_cast<double>(c.n), r.min_batch, r.max_batch) && within(static_cast<double>(c.c_in), r.min_channels, 0) &&
        within(static_cast<double>(width), r.min_width, r.max_width))
      return true;
  }
  return false;
}

// Pipe for CUDA-core work in this precision (depthwise convs, elementwise math).
Pipe cuda_pipe_for(const PrecisionPlan& plan, const DeviceSpec& d) {
  if (plan.bytes.act <= 2 && !plan.mixed && d.peak(Pipe::kFp16) >= d.peak(Pipe::kFp32)) return Pipe::kFp16;
  return Pipe::kFp32;
}

// Output tile of the non-fused Winograd variant cuDNN offers for an r x r filter. cuDNN names these kernels by
// their input tile: winogradForwardData4x4 / Output4x4 for 3x3 filters, i.e. alpha = 4 and F(2x2,3x3) (its 5x5
// kernels are ..._9x9_5x5: alpha = 9). The 5x5 case stays at F(2x2,5x5): the alpha = 9 transforms carry arithmetic
// this model does not cost yet (docs/calibration.md, session 4).
std::int64_t winograd_tile(const ConvGeometry& c) {
  if (c.spatial_dims != 2 || c.transposed || c.groups != 1 || c.kernel[0] != c.kernel[1]) return 0;
  if (c.stride[0] != 1 || c.stride[1] != 1 || c.dilation[0] != 1 || c.dilation[1] != 1) return 0;
  if (c.kernel[0] == 3) return 2;
  if (c.kernel[0] == 5) return 2;
  return 0;
}

// Non-fused Winograd F(m x m, r x r): transform the input into alpha^2 = (m+r-1)^2 planes, run alpha^2
// batched GEMMs [tiles x c_a] x [c_a x c_b], transform back. Three kernels; the transformed planes go
// through DRAM (Lavin & Gray 2016; cuDNN CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED).
KernelCost winograd_cost(const ConvGeometry& c, std::int64_t m, std::int64_t c_a, std::int64_t c_b, double in_b,
                         double out_b, double w_b, double act_bytes, Pipe pipe, double efficiency,
                         const KernelCostModel& km, bool filter_transform = false) {
  const std::int64_t alpha = m + c.kernel[0] - 1;
  const std::int64_t tiles = c.n * ((c.out[0] + m - 1) / m) * ((c.out[1] + m - 1) / m);
  const double planes = static_cast<double>(alpha * alpha);
  const double t_in = planes * static_cast<double>(tiles * c_a) * act_bytes;
  const double t_out = planes * static_cast<double>(tiles * c_b) * act_bytes;
  const MatmulGeometry g{alpha * alpha, tiles, c_b, c_a, true, false};
  const double flops = matmul_flops(g);
  KernelCost k = km.streaming(0, in_b + t_in, 1);                                   // input transform
  // cuDNN transforms the filter on every forward call (winogradForwardFilter4x4 in each measured non-fused call):
  // the r x r taps read, alpha^2 planes written for the batched GEMM ([conv] winograd_nonfused_filter_transform).
  if (filter_transform) accumulate(k, km.streaming(0, w_b + w_b * planes / static_cast<double>(c.kernel[0] * c.kernel[1]), 1));
  accumulate(k, km.gemm(g, pipe, flops, t_in + t_out + w_b * planes / static_cast<double>(c.kernel[0] * c.kernel[1]), efficiency));  // batched GEMM
  accumulate(k, km.streaming(0, t_out + out_b, 1));                                 // output transform
  return k;
}

// Fused Winograd F(2x2,3x3) as cuDNN's kernel runs it ([conv] winograd_fused_*, read off the measured grids): CTAs
// of winograd_fused_cta_channels output channels x 32 Winograd tiles (the block of images x tile rows x tile
// columns with the fewest CTAs), each looping over the c_a input channels with alpha^2 = 16 products per tile,
// output channel and input channel per step.
KernelCost winograd_fused_cost(const ConvGeometry& c, std::int64_t c_a, std::int64_t c_b, Pipe pipe, double flops,
                               double bytes, double efficiency, const KernelCostModel& km) {
  const CostConstants& cc = km.constants();
  constexpr double kOut = 2;     // F(2x2,3x3): 2x2 outputs per tile
  constexpr double kAlpha2 = 16;  // (2 + 3 - 1)^2 products per tile and channel pair
  const double tile_rows = std::ceil(static_cast<double>(c.out[0]) / kOut);
  const double tile_cols = std::ceil(static_cast<double>(c.out[1]) / kOut);
  double blocks = std::numeric_limits<double>::infinity(), tiles_per_cta = 0;
  for (const auto& b : cc.winograd_fused_cta_tiles) {
    const double n = std::ceil(static_cast<double>(c.n) / b[0]) * std::ceil(tile_rows / b[1]) * std::ceil(tile_cols / b[2]);
    if (n < blocks) blocks = n, tiles_per_cta = b[0] * b[1] * b[2];
  }
  const double ch = cc.winograd_fused_cta_channels;
  const double ctas = blocks * std::ceil(static_cast<double>(c_b) / ch);
  const double step_flops = 2.0 * kAlpha2 * tiles_per_cta * ch;
  return km.tiled_loop(ctas, static_cast<double>(c_a), step_flops, cc.winograd_fused_resident_ctas,
                       cc.winograd_fused_step_latency_clk, pipe, flops, bytes, efficiency);
}

// Workspace of non-fused Winograd: the transformed input and output planes and the transformed filter live in
// device memory between its three kernels.
double winograd_workspace(const ConvGeometry& c, std::int64_t m, std::int64_t c_a, std::int64_t c_b, double act_bytes) {
  const std::int64_t alpha = m + c.kernel[0] - 1;
  const std::int64_t tiles = c.n * ((c.out[0] + m - 1) / m) * ((c.out[1] + m - 1) / m);
  const double planes = static_cast<double>(alpha * alpha);
  return planes * (static_cast<double>(tiles) * static_cast<double>(c_a + c_b) + static_cast<double>(c_a * c_b)) * act_bytes;
}

// FFT convolution (cuDNN CUDNN_CONVOLUTION_*_ALGO_FFT and FFT_TILING, FP32 complex): transform input and filter
// to the frequency domain, multiply-accumulate over channels per frequency bin as a batched complex GEMM
// [N*tiles x c_a] x [c_a x c_b], transform back. Maps larger than 32 run as 32x32 tiles (FFT_TILING). Worth it for
// larger filters (5x5 and up), where the per-bin GEMM replaces k*k multiplies per output (Vasilache et al.,
// "Fast Convolutional Nets With fbfft", ICLR 2015; cuDNN 4+ FFT algorithms). nullopt where cuDNN has no FFT.
std::optional<KernelCost> fft_cost(const ConvGeometry& c, std::int64_t c_a, std::int64_t c_b, double in_b, double out_b,
                                   double w_b, Pipe pipe, double efficiency, const KernelCostModel& km,
                                   double workspace_limit_bytes) {
  if (c.spatial_dims != 2 || c.transposed || c.groups != 1) return std::nullopt;
  if (c.stride[0] != 1 || c.stride[1] != 1 || c.dilation[0] != 1 || c.dilation[1] != 1) return std::nullopt;
  if (c.kernel[0] < 3 || c.kernel[1] < 3) return std::nullopt;
  constexpr std::int64_t kTile = 32;
  constexpr double kComplexBytes = 8;  // FP32 real + imaginary
  double planes_per_image = 1, bins = 1;
  for (int d = 0; d < 2; ++d) {
    const std::int64_t span = std::max(c.in[d], c.out[d]) + c.kernel[d] - 1;
    std::int64_t size = 1;
    while (size < span) size *= 2;
    std::int64_t tiles = 1;
    if (size > kTile) {
      size = kTile;
      tiles = (std::max(c.in[d], c.out[d]) + (kTile - c.kernel[d])) / (kTile - c.kernel[d] + 1);
    }
    planes_per_image *= static_cast<double>(tiles);
    bins *= d == 0 ? static_cast<double>(size) : static_cast<double>(size / 2 + 1);
  }
  const double rows = static_cast<double>(c.n) * planes_per_image;  // transformed images (x tiles)
  const double t_in = rows * static_cast<double>(c_a) * bins * kComplexBytes;
  const double t_w = static_cast<double>(c_a * c_b) * bins * kComplexBytes;
  const double t_out = rows * static_cast<double>(c_b) * bins * kComplexBytes;
  // The transformed tensors live in the cuDNN workspace: a runtime that caps it cannot pick FFT beyond the cap.
  if (t_in + t_w + t_out > workspace_limit_bytes) return std::nullopt;
  const MatmulGeometry g{static_cast<std::int64_t>(bins), static_cast<std::int64_t>(rows), c_b, c_a, true, false};
  const double flops = 8.0 * bins * rows * static_cast<double>(c_a) * static_cast<double>(c_b);  // complex MACs
  // A real-to-complex 2-D FFT of n points costs about 2.5 n log2 n flops (half the 5 n log2 n of a complex FFT);
  // the transforms run on CUDA cores at the elementwise compute efficiency.
  const double fft_points = bins * 2.0;
  const double fft_flops = 2.5 * fft_points * std::log2(fft_points);  // per transformed plane
  KernelCost k = km.streaming(fft_flops * rows * static_cast<double>(c_a), in_b + t_in, 1);             // input FFT
  accumulate(k, km.streaming(fft_flops * static_cast<double>(c_a * c_b), w_b + t_w, 1));               // filter FFT
  // The GEMM wants bin-major operands; the transforms write image-major ones: a transpose of each complex tensor
  // on the way in and out (the FFT -> transpose -> CGEMM -> transpose -> IFFT pipeline of Vasilache et al.).
  accumulate(k, km.streaming(0, 2.0 * (t_in + t_w), 2));
  accumulate(k, km.gemm(g, pipe, flops, t_in + t_w + t_out, efficiency));  // per-bin complex GEMM
  accumulate(k, km.streaming(0, 2.0 * t_out, 1));
  accumulate(k, km.streaming(fft_flops * rows * static_cast<double>(c_b), t_out + out_b, 1));       // inverse FFT
  return k;
}

// Output channels that are not a multiple of 8 are padded by the tensor-op kernel's tile, so the padded
// channels cost math too. Returns the factor by which padding inflates the GEMM's work.
double tensor_core_padding(const ConvGeometry& c, Pipe pipe) {
  if (!is_tensor_pipe(pipe)) return 1.0;
  // Input channels are already multiples of 8 here: other layers run on CUDA cores (see conv_cost).
  const std::int64_t co = c.c_out / c.groups;
  return static_cast<double>((co + 7) / 8 * 8) / static_cast<double>(co);
}

// Channels rounded up to the multiple of `step` a tensor-core kernel's tile pads them to.
std::int64_t padded_channels(std::int64_t channels, double step) {
  const double s = std::max(1.0, step);
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(channels) / s) * s);
}

// Whether cuDNN runs this grouped (not depthwise) convolution with its half-precision tensor-core kernels that hold
// several groups in one CTA ([conv] grouped_tensor_*: sm_80/sm_86 xmma kernels named _g8_ with a 64-channel tile).
bool grouped_tensor_conv(const ConvGeometry& c, Pipe pipe, const KernelCostModel& km) {
  const auto& cc = km.constants();
  const bool half = pipe == Pipe::kTcFp16Fp32Acc || pipe == Pipe::kTcFp16Fp16Acc || pipe == Pipe::kTcBf16;
  return c.groups > 1 && !is_depthwise(c) && half && cc.grouped_tensor_tile_channels > 0 &&
         km.device().sm_version >= cc.grouped_tensor_min_sm;
}

// Groups one such CTA holds: as many of the (padded) per-group output channels as fill the tile, at least one.
std::int64_t grouped_tensor_pack(const ConvGeometry& c, Pipe pipe, const KernelCostModel& km) {
  if (!grouped_tensor_conv(c, pipe, km)) return 1;
  const auto& cc = km.constants();
  const auto co = static_cast<double>(padded_channels(c.c_out / c.groups, cc.grouped_tensor_channel_pad));
  const auto fit = static_cast<std::int64_t>(std::floor(cc.grouped_tensor_tile_channels / co));
  return std::clamp<std::int64_t>(fit, 1, c.groups);
}

// The GEMM geometry whose tiles the packed kernel runs, the padded channels filling the tile (their math is
// tensor_core_padding's). Forward and data gradient: groups / pack products, each `pack` groups of output channels
// wide (n). Weight gradient: one grid over every group's output channels (m), so that it splits its deep N x P x Q
// reduction across CTAs as cuDNN's wgrad kernels do (their grids carry the split in z; a batched GEMM does not split).
MatmulGeometry packed_groups(MatmulGeometry g, std::int64_t pack, bool weight_gradient, double channel_pad) {
  if (pack <= 1) return g;
  std::int64_t& channels = weight_gradient ? g.m : g.n;
  channels = padded_channels(channels, channel_pad);
  if (weight_gradient) {
    channels *= g.batch;
    g.batch = 1;
  } else {
    channels *= pack;
    g.batch = (g.batch + pack - 1) / pack;
  }
  return g;
}

// The share of the pipe a tensor-core convolution with more than one filter tap reaches. conv_efficiency_tensor is
// the gathering penalty where the MMA runs at the SM's full half-precision rate: each tap's shifted input tile has
// to be fetched and staged while the MMAs run, and at full rate the fetch keeps them waiting. GeForce boards run
// FP32-accumulate (and BF16) MMAs at half the FP16-accumulate rate on the same SM, the same load path and the same
// kernels, so the MMAs take twice as long per staged tile and the fetch hides behind them: the kernel is bound by
// whichever is slower, the pipe at its own rate or the fetch at the rate that holds the full-rate pipe to
// conv_efficiency_tensor (a roofline on the operand feed; data/cost_model.toml [conv] says where it comes from).
double conv_gather_efficiency(const CostConstants& cc, const DeviceSpec& dev, Pipe pipe) {
  if (!cc.conv_gather_hidden_at_reduced_rate || (pipe != Pipe::kTcFp16Fp32Acc && pipe != Pipe::kTcBf16))
    return cc.conv_efficiency_tensor;
  const double own = dev.peak(pipe);
  const double full = dev.peak(Pipe::kTcFp16Fp16Acc);
  if (!(own > 0) || !(full > own)) return cc.conv_efficiency_tensor;
  return std::min(1.0, cc.conv_efficiency_tensor * full / own);
}

// One convolution pass (forward, data gradient or weight gradient) as implicit GEMM, or, when the runtime
// autotunes a floating-point convolution on CUDA cores, as the fastest of fused Winograd, FFT and non-fused
// Winograd, as cuDNN's autotuner picks.
KernelCost conv_pass(const ConvGeometry& c, const MatmulGeometry& g, std::int64_t c_a, std::int64_t c_b, double flops,
                     double bytes, double in_b, double out_b, double w_b, double efficiency, Pipe pipe,
                     const CostContext& ctx, bool fused_winograd = true, bool forward = false) {
  efficiency *= ctx.runtime.library_efficiency / tensor_core_padding(c, pipe);
  // cuDNN's CUDA-core forward kernels never split K (GemmLibrary::kCudnnNoSplit); backward ones are not measured.
  // The dp4a INT8 forward kernels are the same implicit-GEMM family (TensorRT on Pascal runs
  // trt_maxwell_int8x4_icudnn_int8x4_128x128 / _128x64 kernels, no split-K variant among them), and so are the
  // tensor-core forward kernels cuDNN and TensorRT run (sm80_xmma_fprop_implicit_gemm_*: tile and stages in the
  // name, no split-K; cuDNN's split-K kernels are its wgrad ones).
  const GemmLibrary library = forward ? GemmLibrary::kCudnnNoSplit : GemmLibrary::kAny;
  if (is_tensor_pipe(pipe)) {
    // Each filter tap gathers its own shifted input tile; a 1x1 convolution reads its operand as a plain GEMM.
    const bool pointwise = c.kernel[0] * c.kernel[1] * c.kernel[2] == 1;
    const auto& cc = ctx.kernels.constants();
    efficiency *= (pointwise ? cc.conv_efficiency_tensor_1x1 : conv_gather_efficiency(cc, ctx.kernels.device(), pipe)) *
                  ctx.tensor_library_efficiency;
  }
  const bool cuda_fp = !is_tensor_pipe(pipe) && pipe != Pipe::kDp4a;
  // Without autotuning cuDNN runs its heuristic's algorithm ([conv] heuristic_fwd, read off measured kernel
  // names) for FP32 CUDA-core forward 3x3 stride-1 convolutions; other shapes keep implicit GEMM.
  std::string heuristic;
  if (!ctx.conv_autotune && ctx.forced_conv_algorithm.empty() && forward && cuda_fp && c.spatial_dims == 2 &&
      c.kernel[0] == 3 && c.kernel[1] == 3 && c.stride[0] == 1 && c.stride[1] == 1 && c.groups == 1 && !c.transposed)
    heuristic = conv_heuristic_algorithm(ctx.kernels.constants(), ctx.kernels.device().sm_version,
                                         static_cast<double>(c.n), static_cast<double>(c_a), static_cast<double>(c.in[0]));
  const std::string_view forced = heuristic.empty() ? ctx.forced_conv_algorithm : std::string_view(heuristic);
  KernelCost best = ctx.kernels.gemm(g, pipe, flops, bytes,
                                     efficiency * (cuda_fp ? ctx.kernels.constants().conv_efficiency_cuda : 1.0), 1, library);
  // A forced algorithm (fit-kernels --fit-conv) replaces the implicit GEMM whatever its time.
  const KernelCost implicit_gemm = best;
  if (!forced.empty() && forced != "gemm") best.time_us = std::numeric_limits<double>::infinity();
  // Winograd and FFT are floating-point algorithms: cuDNN runs its INT8 configurations (INT8, INT8x4, INT8x32)
  // with the implicit-GEMM algorithms only, and TensorRT's dp4a convolutions on Pascal are implicit-GEMM kernels
  // too (trt_maxwell_int8x4_icudnn_int8x4_128x128_*). Tensor-core convolutions are implicit GEMM as well.
  const bool transforms = (ctx.conv_autotune || !forced.empty()) && cuda_fp;
  const std::int64_t m = c_a < ctx.kernels.constants().winograd_min_channels && forced.empty() ? 0 : winograd_tile(c);
  if (fused_winograd && m > 0 && c.kernel[0] == 3 && transforms) {
    // Fused Winograd F(2x2,3x3): transforms stay on chip, 2.25x fewer multiplies at a lower kernel efficiency
    // (cuDNN CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD).
    KernelCost w = winograd_fused_cost(c, c_a, c_b, pipe, flops / 2.25, bytes,
                                       efficiency * ctx.kernels.constants().winograd_fused_efficiency, ctx.kernels);
    w.algorithm = "winograd_fused";
    if (w.time_us < best.time_us && (forced.empty() || forced == w.algorithm)) {
      w.flops = flops;
      best = w;
    }
  }
  if (transforms && (forced.empty() || forced == "fft")) {
    if (auto f = fft_cost(c, c_a, c_b, in_b, out_b, w_b, pipe, efficiency, ctx.kernels,
                          ctx.runtime.conv_workspace_limit_bytes);
        f && f->time_us < best.time_us) {
      f->flops = flops;
      f->algorithm = "fft";
      best = *f;
    }
  }
  if (m > 0 && transforms &&
      winograd_workspace(c, m, c_a, c_b, ctx.plan.bytes.act) <= ctx.runtime.conv_workspace_limit_bytes) {
    KernelCost w = winograd_cost(c, m, c_a, c_b, in_b, out_b, w_b, ctx.plan.bytes.act, pipe,
                                 efficiency * ctx.kernels.constants().winograd_nonfused_efficiency, ctx.kernels,
                                 forward && ctx.kernels.constants().winograd_nonfused_filter_transform);
    w.algorithm = "winograd_nonfused";
    if (w.time_us < best.time_us && (forced.empty() || forced == w.algorithm)) {
      w.flops = flops;  // report the direct-convolution FLOPs; the time reflects the cheaper algorithm
      best = w;
    }
  }
  return std::isfinite(best.time_us) ? best : implicit_gemm;  // a forced algorithm that cannot run here
}

// One convolution on `pipe`, its channels as given (conv_cost decides the pipe and any channel padding).
KernelCost conv_cost_on(const Op& op, Phase phase, const CostContext& ctx, Pipe pipe) {
  const auto& c = op.conv;
  const auto& km = ctx.kernels;
  const auto& cc = ctx.kernels.constants();
  const ElemBytes eb = ctx.plan.bytes;
  const double in_b = static_cast<double>(op.in_elems) * eb.act, out_b = static_cast<double>(op.out_elems) * eb.act;
  const double w_b = static_cast<double>(op.weight_elems) * eb.weight;
  const MatmulGeometry fwd = conv_as_gemm(c);
  const double flops = matmul_flops(fwd);

  if (is_depthwise(c)) {
    const double passes = phase == Phase::kForward ? 1.0 : (op.needs_input_grad ? 2.0 : 1.0);
    const bool cudnn = cudnn_runs_depthwise(c, ctx);
    // cuDNN's depthwise kernels and the framework's own direct kernel (PyTorch's conv_depthwise2d: one thread
    // per output element reading its k x k window, the input re-read from cache) are both one pass over input,
    // output and filter per direction; the native one costs no library call on the host. The native weight
    // gradient is the exception: conv_depthwise2d_grad_weight_kernel runs one thread block per channel and filter
    // tap, each summing input x output-gradient over the whole batch, so the channel's input and gradient are read
    // once per tap (depthwise_native_wgrad_reads_per_tap x k x k passes; data/cost_model.toml). A tap reads the input
    // only at the output positions: a stride skips input rows (and, within a 32-byte sector, not columns), so each
    // tap's input read is the input over the outermost spatial stride.
    double bytes = (in_b + out_b + w_b) * passes;
    if (!cudnn && phase != Phase::kForward && cc.depthwise_native_wgrad_reads_per_tap > 0) {
      double taps = 1;
      for (int i = 0; i < c.spatial_dims; ++i) taps *= static_cast<double>(c.kernel[static_cast<std::size_t>(i)]);
      const double tap_in_b = in_b / static_cast<double>(std::max<std::int64_t>(1, c.stride[0]));
      bytes += (tap_in_b + out_b) * (cc.depthwise_native_wgrad_reads_per_tap * taps) - (in_b + out_b);
    }
    KernelCost d = km.streaming(flops * passes, bytes, passes, cuda_pipe_for(ctx.plan, km.device()),
                                cc.depthwise_compute_efficiency);
    d.algorithm = cudnn ? "depthwise" : "depthwise_native";
    d.framework_kernel = !cudnn;
    return d;
  }
  // Tensor-core convolutions on an NCHW framework pay a layout transpose of input and output; so does every
  // convolution on NHWC tensors in a runtime that computes them in NCHW (TensorFlow before grappler's layout pass).
  // A 1x1 stride-1 ungrouped convolution is a plain GEMM in either layout, so TensorFlow hands all three of its
  // passes to cuBLAS (conv_ops.cc, conv_grad_input_ops.cc, conv_grad_filter_ops.cc: "1x1 filter, so call cublas
  // directly"). On NCHW tensors an image is the [C_in x H*W] operand of W[C_out x C_in] x X, so cuDNN runs the
  // forward (and the data gradient, W^T x dY) as a GEMM per image with no transposes
  // (data/runtimes/pytorch.toml [sources] nchw_tensor_core_transposes); the weight gradient sums dY_n x X_n^T over
  // the images, a reduction that strides across them in NCHW, and still converts its two operands.
  const bool pointwise_gemm = c.spatial_dims == 2 && c.kernel[0] == 1 && c.kernel[1] == 1 && c.stride[0] == 1 &&
                              c.stride[1] == 1 && c.groups == 1;
  // A runtime whose layout pass leaves only FP32 graphs in NCHW (TensorFlow: data/runtimes/tensorflow.toml [sources]
  // nchw_tf32_tensor_core_transposes) pays them around its TF32 tensor-core convolutions only.
  const bool nchw_transposes =
      is_tensor_pipe(pipe) && (ctx.runtime.nchw_tensor_core_transposes ||
                               (pipe == Pipe::kTcTf32 && ctx.runtime.nchw_tf32_tensor_core_transposes));
  const bool transposes = !pointwise_gemm && (nchw_transposes || ctx.runtime.nhwc_conv_transposes);
  const bool wgrad_transposes = pointwise_gemm && nchw_transposes && phase != Phase::kForward;
  const double bytes = in_b + out_b + w_b;
  const std::int64_t ci = c.c_in / c.groups, co = c.c_out / c.groups;
  const std::int64_t pack = grouped_tensor_pack(c, pipe, km);
  const double group_pad = cc.grouped_tensor_channel_pad;
  KernelCost k;
  if (phase == Phase::kForward) {
    k = conv_pass(c, packed_groups(fwd, pack, false, group_pad), ci, co, flops, bytes, in_b, out_b, w_b, 1.0, pipe, ctx,
                  true, true);
  } else {
    // Weight gradient: [c_out/g] x [c_in/g * kernel] with depth N * out_pixels.
    const MatmulGeometry wg = packed_groups({fwd.batch, fwd.n, fwd.k, fwd.m, true, false}, pack, true, group_pad);
    // cuDNN has no fused Winograd weight-gradient kernel (CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED only).
    k = conv_pass(c, wg, ci, co, flops, bytes, in_b, out_b, w_b, cc.wgrad_efficiency, pipe, ctx, false);
    if (op.needs_input_grad) {
      // Data gradient: [N * pixels] x [c_in/g] with depth c_out/g * kernel (a transposed convolution).
      const std::int64_t kernel_volume = fwd.k / std::max<std::int64_t>(1, ci);
      const MatmulGeometry dg =
          packed_groups({fwd.batch, fwd.m, ci, co * kernel_volume, true, false}, pack, false, group_pad);
      accumulate(k, conv_pass(c, dg, co, ci, flops, bytes, out_b, in_b, w_b, cc.dgrad_efficiency, pipe, ctx));
    }
  }
  if (transposes) {
    const double passes = phase == Phase::kForward ? 1.0 : 2.0;
    accumulate(k, km.streaming(0, 2.0 * (in_b + out_b) * passes, 2.0 * passes));
  } else if (wgrad_transposes) {
    accumulate(k, km.streaming(0, 2.0 * (in_b + out_b), 2.0));  // the input and the output gradient, to NHWC
  }
  return k;
}

double gemm_alignment_efficiency(std::int64_t n, std::int64_t k, Pipe pipe, const CostContext& ctx) {
  return perfcast::gemm_alignment_efficiency(n, k, pipe, ctx.runtime, ctx.kernels);
}

// A convolution whose input channels are zero-padded to a multiple of `pad` on the conv pipe (tensor cores): the
// padded channels cost math and bytes; `pad_kernel` adds the kernel that writes the padded input (it reads the
// unpadded input and writes the padded one).
KernelCost channel_padded_conv_cost(const Op& op, Phase phase, const CostContext& ctx, double pad, bool pad_kernel) {
  const auto& c = op.conv;
  const auto step = static_cast<std::int64_t>(pad);
  const std::int64_t ci = (c.c_in + step - 1) / step * step;
  const double grow = static_cast<double>(ci) / static_cast<double>(c.c_in);
  Op wide = op;
  wide.conv.c_in = ci;
  wide.in_elems = static_cast<std::int64_t>(static_cast<double>(op.in_elems) * grow);
  wide.weight_elems = static_cast<std::int64_t>(static_cast<double>(op.weight_elems) * grow);
  KernelCost k = conv_cost_on(wide, phase, ctx, ctx.plan.conv_pipe);
  if (pad_kernel) {
    const double in_b = static_cast<double>(op.in_elems) * ctx.plan.bytes.act;
    accumulate(k, ctx.kernels.streaming(0, in_b * (1.0 + grow), 1));
  }
  return k;
}

KernelCost conv_cost_library(const Op& op, Phase phase, const CostContext& ctx);

// The convolution, plus the framework's own bias pass after it where the runtime adds the bias outside the library
// call (RuntimeProfile::conv_bias_separate_pass): an in-place broadcast add over the output, read and written once.
// PyTorch's own depthwise kernel (conv_depthwise2d) takes the bias itself.
KernelCost conv_cost(const Op& op, Phase phase, const CostContext& ctx) {
  KernelCost k = conv_cost_library(op, phase, ctx);
  const bool library_call = !is_depthwise(op.conv) || cudnn_runs_depthwise(op.conv, ctx);
  if (phase == Phase::kForward && op.conv.bias && library_call && ctx.runtime.conv_bias_separate_pass) {
    const double out = static_cast<double>(op.out_elems);
    const double bias_b = static_cast<double>(op.conv.c_out) * ctx.plan.bytes.act;
    accumulate(k, ctx.kernels.streaming(out, 2.0 * out * ctx.plan.bytes.act + bias_b, 1));
  }
  return k;
}

KernelCost conv_cost_library(const Op& op, Phase phase, const CostContext& ctx) {
  const auto& c = op.conv;
  // Tensor-core convolution kernels need input channels in multiples of 8; layers with fewer (the RGB input
  // layer) run on CUDA cores in FP32 math (cuDNN 7/8 tensor-op requirements), unless the runtime reformats the
  // input into a channel-padded vectorized layout itself (TensorRT's kCHW4 / kHWC8): then the layer stays on
  // tensor cores and its padded channels cost math and bytes.
  const bool tensor = is_tensor_pipe(ctx.plan.conv_pipe);
  const bool odd_channels = (c.c_in / c.groups) % 8 != 0;
  if (!tensor || !odd_channels) return conv_cost_on(op, phase, ctx, ctx.plan.conv_pipe);
  // A grouped convolution with channels per group off the multiple of 8 stays on cuDNN's grouped tensor-core
  // kernels, each group's input channels padded in the kernel's tile ([conv] grouped_tensor_channel_pad; the output
  // channels' padding is tensor_core_padding's): the padded channels cost math, not DRAM bytes.
  if (grouped_tensor_conv(c, ctx.plan.conv_pipe, ctx.kernels)) {
    const std::int64_t ci = padded_channels(c.c_in / c.groups, ctx.kernels.constants().grouped_tensor_channel_pad);
    Op wide = op;
    wide.conv.c_in = ci * c.groups;
    return conv_cost_on(wide, phase, ctx, ctx.plan.conv_pipe);
  }
  double pad = ctx.plan.bytes.act == 1.0   ? ctx.runtime.conv_input_channel_pad_int8
               : ctx.plan.bytes.act == 2.0 ? ctx.runtime.conv_input_channel_pad_half
                                           : 0.0;
  // cuDNN 9 on Hopper runs an FP16 image input layer (3 channels) on tensor cores itself, its channels padded to 4
  // (sm90_xmma_{fprop,wgrad}_image_first_layer_*_k64c4r7s7: [[conv.implicit_gemm_arch]] half_input_channel_pad).
  const double first_layer_pad = ctx.kernels.constants().half_input_channel_pad;
  const bool fp16_tensor =
      ctx.plan.conv_pipe == Pipe::kTcFp16Fp32Acc || ctx.plan.conv_pipe == Pipe::kTcFp16Fp16Acc;  // the kernels seen are f16
  // The runtime's own padding needs the input in the vectorized layout first: TensorRT runs a reformatting
  // kernel before the layer ('Reformatting CopyNode for Input Tensor 0 to <conv1>' in trtexec layer profiles),
  // reading the input and writing it padded. cuDNN's first-layer kernels read the 3-channel input themselves.
  const bool runtime_reformat = pad > 0;
  if (pad <= 0 && fp16_tensor && c.spatial_dims == 2 && first_layer_pad > 0 && c.c_in <= first_layer_pad)
    pad = first_layer_pad;
  if (pad <= 0 || c.groups != 1 || is_depthwise(c)) return conv_cost_on(op, phase, ctx, Pipe::kFp32);
  return channel_padded_conv_cost(op, phase, ctx, pad, runtime_reformat && phase == Phase::kForward);
}

KernelCost matmul_cost(const Op& op, Phase phase, const CostContext& ctx) {
  const auto& g = op.mm;
  const auto& km = ctx.kernels;
  const ElemBytes eb = ctx.plan.bytes;
  const Pipe pipe = ctx.plan.matmul_pipe;
  const double reps = static_cast<double>(op.repeats);
  const double a_b = static_cast<double>(op.in_elems) * eb.act, out_b = static_cast<double>(op.out_elems) * eb.act;
  const double w_b = static_cast<double>(op.weight_elems) * eb.weight;
  const double flops = matmul_flops(g);
  // Every phase's GEMM has the same leading dimensions (the output's n and the input's k; m, the rows, never is one).
  const double lib = ctx.library_efficiency(pipe) * gemm_alignment_efficiency(g.n, g.k, pipe, ctx);
  if (phase == Phase::kForward) {
    if (pipe != Pipe::kDp4a || !ctx.runtime.dp4a_fully_connected_as_convolution)
      return km.gemm(g, pipe, flops * reps, a_b + out_b + w_b * reps, lib, reps, GemmLibrary::kCublas);
    // TensorRT's sm_61 INT8 kernels are its int8x4 implicit-GEMM convolutions (RuntimeProfile::
    // dp4a_fully_connected_as_convolution): the layer is a 1x1 convolution whose output pixels are the rows, so the
    // 128-row tile computes a whole tile at batch 1 and the K loop takes its step floor. The builder keeps the
    // layer's FP32 GEMM instead where that is faster (FP32 weights and activations).
    KernelCost k = km.gemm(g, pipe, flops * reps, a_b + out_b + w_b * reps, lib, reps, GemmLibrary::kCudnnNoSplit);
    const double fp32_bytes = static_cast<double>(op.in_elems + op.out_elems) * 4.0 +
                              static_cast<double>(op.weight_elems) * 4.0 * reps;
    const double fp32_lib = ctx.library_efficiency(Pipe::kFp32) * gemm_alignment_efficiency(g.n, g.k, Pipe::kFp32, ctx);
    const KernelCost fp32 = km.gemm(g, Pipe::kFp32, flops * reps, fp32_bytes, fp32_lib, reps, GemmLibrary::kCublas);
    return fp32.time_us < k.time_us ? fp32 : k;
  }
  const MatmulGeometry wg = weight_grad_geometry(g, km.constants());
  KernelCost k = km.gemm(wg, pipe, flops * reps, a_b + out_b + w_b * reps, lib * km.constants().wgrad_efficiency, reps, GemmLibrary::kCublas);
  if (op.needs_input_grad) {
    const MatmulGeometry dg = data_grad_geometry(g, km.constants());
    accumulate(k, km.gemm(dg, pipe, flops * reps, a_b + out_b + w_b * reps, lib * km.constants().dgrad_efficiency, reps, GemmLibrary::kCublas));
  }
  if (g.bias && ctx.runtime.linear_bias_grad_kernel) {
    // The bias gradient (RuntimeProfile::linear_bias_grad_kernel): dY summed over its rows by a reduction kernel of
    // its own, reading dY once and writing one value per output feature, costed as the row reductions are.
    const double bias_b = static_cast<double>(g.n) * eb.weight * reps;
    accumulate(k, km.streaming(static_cast<double>(op.out_elems), out_b + bias_b, reps, Pipe::kFp32, -1, 0,
                               km.constants().reduction_bandwidth_efficiency));
  }
  return k;
}

}  // namespace

// DRAM traffic of the elementwise kernels between the two GEMMs of unfused attention, per score element.
// A framework that fuses elementwise chains runs one kernel per phase: forward reads the scores and writes the
// probabilities (2a bytes per element, a the activation width); training with dropout also keeps what backward
// reads, 3a+1 forward and 3a+1 backward (without dropout 2a forward, 3a backward, as XLA's fused attention
// backward reads the gradient and the probabilities and writes one gradient). An eager one runs each
// step of the textbook code (BERT/GPT-2 in Hugging Face and NVIDIA's examples) as its own kernel: scale by
// 1/sqrt(d), add the mask, softmax, dropout (training; it also writes a 1-byte mask); autocast runs softmax in
// FP32 (a cast in, FP32 probabilities and dropout, a cast back to FP16 for the PV GEMM). Backward mirrors it, and
// PyTorch's CUDA softmax backward first multiplies the gradient by the probabilities in a kernel of its own.
ScorePasses score_passes(const AttentionGeometry& attn, Phase phase, const RuntimeProfile& runtime,
                         const PrecisionPlan& plan, bool training) {
  const double a = plan.bytes.act;
  if (runtime.fused_scale_mask_softmax) {
    // One kernel reads the raw scores and writes the probabilities in the activation type (softmax in fp32
    // registers); dropout stays a kernel of its own. Backward: dropout's, then one softmax-and-scale kernel
    // (gradient and probabilities in, gradient out).
    ScorePasses sp{2.0 * a, 1.0};
    const bool dropout = attn.dropout && (phase == Phase::kBackward || training);
    if (phase == Phase::kBackward) sp.bytes_per_elem = 3.0 * a;
    if (dropout) {
      sp.bytes_per_elem += 2.0 * a + 1.0;
      sp.kernels += 1;
    }
    return sp;
  }
  if (runtime.fuse_elementwise_chains) {
    // One fusion per phase (scale, mask, softmax and dropout together). Training keeps what backward reads: the
    // probabilities, since softmax's gradient is P * (dP - sum(dP * P)) (TensorFlow's _SoftmaxGrad), and with
    // dropout the dropped probabilities the PV and dV GEMMs read plus the 1-byte keep mask dropout's gradient
    // multiplies by. Backward reads the probabilities' gradient, the mask and P and writes the scores' gradient.
    const bool dropout = training && attn.dropout;
    if (phase == Phase::kForward) return {dropout ? 3.0 * a + 1.0 : 2.0 * a, 1.0};
    return {dropout ? 3.0 * a + 1.0 : 3.0 * a, 1.0};
  }
  const bool fp32_softmax = runtime.autocast_softmax_fp32 && plan.mixed && a < 4.0;
  const double p = fp32_softmax ? 4.0 : a;  // probability bytes
  ScorePasses sp{0, 0};
  const auto kernel = [&](double bytes) {
    sp.bytes_per_elem += bytes;
    sp.kernels += 1;
  };
  const auto up_cast = [&](double bytes) {
    kernel(bytes);
    sp.up_cast_bytes_per_elem += bytes;
    sp.up_cast_kernels += 1;
  };
  // PyTorch's autocast (RuntimeProfile::autocast_per_op_casts) puts softmax under its fp32_set_opt_dtype policy
  // (aten/src/ATen/autocast_mode.cpp): softmax(x, dtype=float) reads the half scores and writes FP32, and its
  // backward writes the half gradient (softmax_warp_forward<Half, float, float> / softmax_warp_backward<float,
  // Half, float> in the H200 session's BERT AMP traces), so no cast kernel sits on the softmax's input side.
  const bool softmax_casts_itself = fp32_softmax && runtime.autocast_per_op_casts;
  if (phase == Phase::kForward) {
    kernel(2 * a);  // scale
    kernel(2 * a);  // + mask
    if (fp32_softmax && !softmax_casts_itself) up_cast(a + p);  // cast to FP32
    kernel(softmax_casts_itself ? a + p : 2 * p);  // softmax
    if (training && attn.dropout) kernel(2 * p + 1);  // dropout: output and its mask
    if (fp32_softmax) kernel(p + a);  // cast for the PV GEMM
  } else {
    if (fp32_softmax) up_cast(a + p);  // gradient of the cast back
    if (attn.dropout) kernel(2 * p + 1);  // dropout backward: gradient and mask in, gradient out
    // RuntimeProfile::softmax_grad_product_kernel: gradient x probabilities written as a tensor of the gradient's type.
    if (runtime.softmax_grad_product_kernel) kernel(3 * p);
    // softmax backward: that product (or the gradient) and the probabilities in, the gradient out
    kernel(softmax_casts_itself ? 2 * p + a : 3 * p);
    if (fp32_softmax && !softmax_casts_itself) kernel(p + a);  // gradient of the cast to FP32
    kernel(2 * a);  // scale backward (the mask add passes the gradient through)
  }
  return sp;
}

namespace {

ScorePasses score_passes(const AttentionGeometry& attn, Phase phase, const CostContext& ctx) {
  return score_passes(attn, phase, ctx.runtime, ctx.plan, ctx.training);
}

// The kernels of Hugging Face's gelu_new as eager PyTorch runs it (RuntimeProfile::gelu_new_kernels): x-typed
// elements are the activation's, t-typed ones FP32 under autocast (pow is on autocast's FP32 list and the ops after it
// promote), so the chain moves several times the bytes of one GELU pass and launches a kernel per step.
KernelCost gelu_new_chain_cost(const Op& op, Phase phase, const CostContext& ctx, Pipe pipe, const KernelCostModel& km) {
  const double x = ctx.plan.bytes.act;
  const double t = ctx.plan.mixed && ctx.runtime.autocast_per_op_casts && x < 4.0 ? 4.0 : x;
  const ActivationChain& chain = gelu_new_chain();
  const auto& steps = phase == Phase::kForward ? chain.forward : chain.backward;
  const double elems = static_cast<double>(op.out_elems);
  KernelCost total;
  bool first = true;
  for (const ChainKernel& k : steps) {
    const double bytes = chain_kernel_bytes(k, x, t);
    if (bytes <= 0) continue;
    const KernelCost c = km.streaming(elems, elems * bytes, 1, pipe);
    if (first) {
      total = c;
      first = false;
    } else {
      accumulate(total, c);
    }
  }
  return total;
}

// A dropout's random bits drawn by a kernel of their own (RuntimeProfile::dropout_rng_bytes_per_value): the fusion
// that writes its operands and the generator (two launches), moving that many bytes per 32-bit value. Forward only:
// backward multiplies by the kept mask.
KernelCost dropout_rng_cost(double values, const CostContext& ctx) {
  return ctx.kernels.streaming(0, values * ctx.runtime.dropout_rng_bytes_per_value, 2);
}

KernelCost attention_cost(const Op& op, Phase phase, const CostContext& ctx) {
  const auto& a = op.attn;
  const auto& km = ctx.kernels;
  const Work w = phase == Phase::kForward ? forward_work(op, ctx.plan.bytes, ctx.training) : backward_work(op, ctx.plan.bytes);
  const MatmulGeometry scores{a.batch * a.heads, a.q_len, a.kv_len, a.head_dim, false, false};
  if (a.fused) return km.gemm(scores, ctx.plan.matmul_pipe, w.flops, w.bytes, cost_constants().fused_attention_efficiency * fused_attention_rate(a));
  // Unfused: QK^T and PV GEMMs plus elementwise kernels over the score matrix between them.
  // Two GEMMs per head (QK^T, then PV), each [q_len x kv_len x head_dim].
  const double score_gemm_flops = 2.0 * matmul_flops(scores) * (phase == Phase::kForward ? 1.0 : 2.0);
  const double score_elems = static_cast<double>(a.batch * a.heads * a.q_len * a.kv_len);
  const double score_bytes = score_elems * ctx.plan.bytes.act;
  // torch.matmul: cuBLAS bmm; the leading dimensions of QK^T, PV and their gradients are the key length and head size.
  KernelCost k = km.gemm(scores, ctx.plan.matmul_pipe, score_gemm_flops, w.bytes - 2.0 * score_bytes,
                         gemm_alignment_efficiency(a.kv_len, a.head_dim, ctx.plan.matmul_pipe, ctx),
                         phase == Phase::kForward ? 2.0 : 4.0, GemmLibrary::kCublas);
  const ScorePasses sp = score_passes(a, phase, ctx);
  // Under PyTorch's autocast the casts up run ATen's dynamic-cast copy, at its own share of the streaming rate.
  const bool dynamic_casts = ctx.runtime.autocast_per_op_casts && sp.up_cast_kernels > 0;
  const double up_bytes = dynamic_casts ? sp.up_cast_bytes_per_elem : 0.0;
  const double up_kernels = dynamic_casts ? sp.up_cast_kernels : 0.0;
  KernelCost s = km.streaming(w.flops - score_gemm_flops, score_elems * (sp.bytes_per_elem - up_bytes),
                              sp.kernels - up_kernels);
  accumulate(k, s);
  if (dynamic_casts)
    accumulate(k, km.streaming(0, score_elems * up_bytes, up_kernels, Pipe::kFp32, -1, 0,
                               km.constants().dynamic_cast_copy_efficiency));

  if (a.dropout && phase == Phase::kForward && ctx.training && ctx.runtime.dropout_rng_bytes_per_value > 0)
    accumulate(k, dropout_rng_cost(score_elems, ctx));
  if (a.head_copies && ctx.runtime.attention_head_copies && !ctx.runtime.fused_scale_mask_softmax &&
      !ctx.runtime.fuse_elementwise_chains) {
    // The textbook code's head layout (RuntimeProfile::attention_head_copies): Q and the context at the query
    // length, K and V at the key length, each read and written once per phase by a copy kernel of its own.
    const double q_elems = static_cast<double>(a.batch * a.heads * a.q_len * a.head_dim);
    const double kv_elems = static_cast<double>(a.batch * a.kv_heads * a.kv_len * a.head_dim);
    // The copies read a permuted view, which TensorIterator cannot vectorize: one element at a time per thread at
    // per-element offsets, a number of elements per SM per clock ([memory] strided_copy_elements_per_sm_clk) unless
    // DRAM takes longer.
    const auto& per_clk = km.constants().strided_copy_elements_per_sm_clk;
    const auto it = per_clk.find(km.device().sm_version);
    const double elems = 2.0 * q_elems + 2.0 * kv_elems;
    accumulate(k, km.per_element_streaming(elems, it == per_clk.end() ? 0.0 : it->second,
                                           2.0 * ctx.plan.bytes.act * elems, 4));
  }
  return k;
}

// TensorFlow's inference-mode _FusedBatchNormEx (grappler remapper): ReLU(BatchNorm(x)) and
// ReLU(BatchNorm(x) + side) run as one kernel. True for the ReLU and the add of such a pattern.
bool batch_norm_epilogue(const std::vector<Op>& ops, std::size_t index) {
  const Op& op = ops[index];
  const auto is_batch_norm = [&](int id) {
    return id >= 0 && ops[static_cast<std::size_t>(id)].kind == OpKind::kNorm &&
           ops[static_cast<std::size_t>(id)].norm == NormKind::kBatch;
  };
  const auto add_into_batch_norm = [&](std::size_t i) {
    const Op& a = ops[i];
    if (a.pointwise != PointwiseKind::kAdd || a.inputs.size() != 2 || !is_batch_norm(a.inputs[0])) return false;
    // The add must feed a ReLU (the pattern's root) and nothing else.
    const std::optional<std::size_t> user = sole_consumer(ops, i);
    return user && ops[*user].pointwise == PointwiseKind::kRelu;
  };
  if (op.pointwise == PointwiseKind::kRelu && !op.inputs.empty()) {
    const int in = op.inputs[0];
    return is_batch_norm(in) || (in >= 0 && add_into_batch_norm(static_cast<std::size_t>(in)));
  }
  return add_into_batch_norm(index);
}

// What the convolutions around a training batch norm take over from it (RuntimeProfile::norm_convolution_training;
// NVIDIA's MLPerf MXNet ResNet-50 symbol: NormConvolution's 'Stats-Apply Relu Convolution Stats-Gen', BNStatsFinalize,
// and ScaleBiasAddRelu for the block's last norm and its projection's).
struct NormConvolutionFusion {
  bool stats_in_conv = false;      // the producing convolution's epilogue wrote the statistics
  bool applied_elsewhere = false;  // the consuming convolutions (or the residual add's kernel) apply it
};

NormConvolutionFusion norm_convolution_fusion(const std::vector<Op>& ops, std::size_t index, const CostContext& ctx) {
  NormConvolutionFusion f;
  const Op& op = ops[index];
  const RuntimeProfile& runtime = ctx.runtime;
  // cuDNN's fused ops run FP16 NHWC tensors on tensor cores, on the GPUs runtime.norm_convolution_min_sm names:
  // elsewhere the recipe's symbol falls back to separate convolution and batch-norm kernels.
  const bool fused_ops_run = ctx.channels_last && ctx.plan.bytes.act == 2 &&
                             ctx.kernels.device().sm_version >= runtime.norm_convolution_min_sm;
  if (!ctx.training || !runtime.norm_convolution_training || !fused_ops_run || op.kind != OpKind::kNorm ||
      op.norm != NormKind::kBatch ||
      op.inputs.empty() || op.inputs[0] < 0 || ops[static_cast<std::size_t>(op.inputs[0])].kind != OpKind::kConv)
    return f;
  const auto is_conv_batch_norm = [&](int id) {
    if (id < 0) return false;
    const Op& n = ops[static_cast<std::size_t>(id)];
    return n.kind == OpKind::kNorm && n.norm == NormKind::kBatch && !n.inputs.empty() && n.inputs[0] >= 0 &&
           ops[static_cast<std::size_t>(n.inputs[0])].kind == OpKind::kConv;
  };
  // The normalized output as the next layer reads it: past a ReLU that runs inside the norm's kernel.
  std::size_t end = index;
  std::vector<std::size_t> readers = readers_of(ops, end);
  if (readers.size() == 1 && ops[readers[0]].pointwise == PointwiseKind::kRelu &&
      fusion_of(ops, readers[0], runtime, ctx.training) == Fusion::kIntoPrevious) {
    end = readers[0];
    readers = readers_of(ops, end);
  }
  if (readers.empty()) return f;
  bool all_conv = true;
  for (std::size_t r : readers) all_conv = all_conv && ops[r].kind == OpKind::kConv && !ops[r].is_view;
  if (all_conv) {
    f.stats_in_conv = f.applied_elsewhere = true;
    return f;
  }
  // The block's last norm and its projection's feed the residual add (ScaleBiasAddRelu): statistics from their
  // convolutions; the add's kernel, fused into the first norm, applies the second.
  if (readers.size() == 1 && two_input_add(ops[readers[0]]) && end == index) {
    const Op& add = ops[readers[0]];
    if (!is_conv_batch_norm(add.inputs[0]) || !is_conv_batch_norm(add.inputs[1])) {
      // An identity shortcut: only the block's own norm, applied in the add's kernel.
      f.stats_in_conv = add.inputs[0] == static_cast<int>(index);
      return f;
    }
    f.stats_in_conv = true;
    f.applied_elsewhere = add.inputs[1] == static_cast<int>(index) &&
                          fusion_of(ops, readers[0], runtime, ctx.training) == Fusion::kIntoPrevious;
  }
  return f;
}

}  // namespace

std::vector<std::size_t> parallel_gemm_siblings(const std::vector<Op>& ops, std::size_t index) {
  const Op& op = ops[index];
  const auto layer_of_input = [&](const Op& o) {
    if (o.is_view || o.inputs.empty() || o.inputs[0] < 0) return false;
    if (o.kind == OpKind::kMatmul) return o.mm.weight_operand;
    return o.kind == OpKind::kConv && o.conv.groups == 1 && !o.conv.transposed;
  };
  if (!layer_of_input(op)) return {index};
  constexpr std::size_t kWindow = 32;
  // The activation a layer's output goes through (looking past a batch norm folded into it): merged layers share
  // one epilogue. -1 when its first consumer is no elementwise op.
  const auto activation = [&](std::size_t j) {
    std::size_t at = j;
    for (std::size_t k = j + 1; k < ops.size() && k <= j + 2 * kWindow; ++k) {
      if (ops[k].inputs.empty() || ops[k].inputs[0] != static_cast<int>(at)) continue;
      if (ops[k].kind == OpKind::kNorm && ops[k].norm == NormKind::kBatch) {
        at = k;
        continue;
      }
      return ops[k].kind == OpKind::kElementwise ? static_cast<int>(ops[k].pointwise) : -1;
    }
    return -1;
  };
  const int own_activation = activation(index);
  // Mergeable: the same input, the same activation and everything but the output width (columns, output
  // channels) the same.
  const auto same = [&](std::size_t j) {
    const Op& o = ops[j];
    if (!layer_of_input(o) || o.kind != op.kind || o.inputs[0] != op.inputs[0] || o.repeats != op.repeats ||
        activation(j) != own_activation)
      return false;
    if (op.kind == OpKind::kMatmul) return o.mm.batch == op.mm.batch && o.mm.m == op.mm.m && o.mm.k == op.mm.k;
    const ConvGeometry &a = o.conv, &b = op.conv;
    return a.spatial_dims == b.spatial_dims && a.n == b.n && a.c_in == b.c_in && a.in == b.in && a.out == b.out &&
           a.kernel == b.kernel && a.stride == b.stride && a.pad == b.pad && a.dilation == b.dilation;
  };
  // Siblings sit next to each other in graph order right after the tensor they share (an importer emits a block's
  // projections or an Inception module's branches together); a bounded window keeps this linear on graphs of
  // 100,000 ops. The window is the producer's, not the op's, so every sibling sees the same group: the first costs
  // it once and the others are Fusion::kHorizontal; a consumer beyond the window (a decoder layer far down the graph
  // reading the encoder's output) is costed alone.
  const std::size_t lo = static_cast<std::size_t>(op.inputs[0]) + 1;
  const std::size_t hi = std::min(ops.size(), lo + 2 * kWindow + 1);
  if (index >= hi) return {index};
  std::vector<std::size_t> out;
  for (std::size_t j = lo; j < hi; ++j)
    if (j == index || same(j)) out.push_back(j);
  return out;
}

bool has_fused_epilogue(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training) {
  for (std::size_t j = index + 1; j < ops.size(); ++j)
    if (!ops[j].inputs.empty() && ops[j].inputs[0] == static_cast<int>(index) &&
        fusion_of(ops, j, runtime, training) == Fusion::kIntoPrevious)
      return true;
  return false;
}

namespace {

// An inference concatenation the engine removes (RuntimeProfile::elide_concat): TensorRT's builder retargets each
// producer's output into its slice of the concatenation's buffer and drops the layer ("Eliminating concatenation X",
// "Retargeting Y to X", "After concat removal: N layers" in its verbose build log), but copies an input it cannot
// retarget ("Generating copy for Z to X"). An input written by a horizontally merged layer is such a one: the merged
// layer (an Inception module's 1x1 with its 3x3 and 5x5 reductions) writes one buffer for all its parts, so only a
// copy puts the 1x1's part in place ("Generating copy for inception_3a/1x1 + ... || inception_3a/3x3_reduce + ...
// to inception_3a/output"). Any other input that is not a kernel's own output read by the concatenation alone (a
// network input, a reshape, a tensor something else also reads) keeps the whole concatenation's copy kernel.
struct ConcatRetarget {
  bool removed = false;          // the concatenation layer is gone; its inputs are retargeted or copied
  std::int64_t copied_elems = 0;  // elements of the inputs copied into place
  int copies = 0;                 // one copy layer per such input
};

// Whether ops[id]'s output is written by a convolution or GEMM the engine merged with its siblings
// (parallel_gemm_siblings), looking back through the activation fused into it.
bool written_by_merged_layer(const std::vector<Op>& ops, int id, const RuntimeProfile& runtime) {
  if (!runtime.fuse_parallel_gemms) return false;
  auto p = static_cast<std::size_t>(id);
  // The chain is a few ops long (bias, activation); the bound keeps a malformed graph from walking far.
  for (int hop = 0; hop < 4; ++hop) {
    const Op& producer = ops[p];
    if (producer.kind == OpKind::kConv || producer.kind == OpKind::kMatmul)
      return parallel_gemm_siblings(ops, p).size() > 1;
    if (fusion_of(ops, p, runtime, false) != Fusion::kIntoPrevious || producer.inputs.empty() || producer.inputs[0] < 0)
      return false;
    p = static_cast<std::size_t>(producer.inputs[0]);
  }
  return false;
}

ConcatRetarget concat_retarget(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime,
                               bool training) {
  const Op& op = ops[index];
  if (training || !runtime.elide_concat || op.kind != OpKind::kDataMovement || op.is_view || op.inputs.size() < 2)
    return {};
  // A concatenation moves its inputs unchanged: they add up to its output (a gather or slice with index inputs does not).
  std::int64_t in_sum = 0;
  for (int id : op.inputs) {
    if (id < 0 || static_cast<std::size_t>(id) >= index) return {};
    in_sum += ops[static_cast<std::size_t>(id)].out_elems;
  }
  if (in_sum != op.out_elems || op.in_elems != op.out_elems) return {};
  // Each input must be written by a kernel of its own and read by this op alone (sole_consumer).
  ConcatRetarget out{true, 0, 0};
  for (int id : op.inputs) {
    const auto p = static_cast<std::size_t>(id);
    const Op& producer = ops[p];
    if (producer.is_view || producer.kind == OpKind::kDataMovement || producer.kind == OpKind::kLoss) return {};
    if (sole_consumer(ops, p) != index) return {};
    if (written_by_merged_layer(ops, id, runtime)) {
      out.copied_elems += producer.out_elems;
      ++out.copies;
    }
  }
  return out;
}

bool elided_concat(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training) {
  const ConcatRetarget r = concat_retarget(ops, index, runtime, training);
  return r.removed && r.copies == 0;
}

// fusion_of's first answers, which depend on the op alone: kSkipped, kFolded, or nullopt to look at its producer.
std::optional<Fusion> own_fusion(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime,
                                 bool training) {
  const Op& op = ops[index];
  if (op.is_view) return Fusion::kSkipped;
  if (elided_concat(ops, index, runtime, training)) return Fusion::kSkipped;
  if (!training && op.kind == OpKind::kLoss) return Fusion::kSkipped;
  if (!training && op.kind == OpKind::kElementwise && op.name.find("dropout") != std::string::npos)
    return Fusion::kSkipped;
  if (!training && op.kind == OpKind::kNorm && op.norm == NormKind::kBatch && runtime.fold_bn_inference &&
      !op.inputs.empty() && op.inputs[0] >= 0 && ops[op.inputs[0]].kind == OpKind::kConv)
    return Fusion::kFolded;
  return std::nullopt;
}

}  // namespace

Fusion fusion_of(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training) {
  const Op& op = ops[index];
  if (const auto own = own_fusion(ops, index, runtime, training)) return *own;
  if (index == 0 || op.inputs.empty() || op.inputs[0] < 0) return Fusion::kNone;
  // Find the producer, looking through ops removed in this mode. Whether an op is folded depends on the op alone
  // (own_fusion), so this walks iteratively: asking fusion_of here recursed down a whole chain of ops (a
  // 100,000-node ONNX chain overflowed the stack and took quadratic time).
  std::size_t prev = static_cast<std::size_t>(op.inputs[0]);
  while (prev > 0 && own_fusion(ops, prev, runtime, training) == Fusion::kFolded && !ops[prev].inputs.empty() &&
         ops[prev].inputs[0] >= 0)
    prev = static_cast<std::size_t>(ops[prev].inputs[0]);
  const Op& producer = ops[prev];
  if (!is_pointwise(op)) return Fusion::kNone;
  // TensorRT's builder fuses a convolution with its bias and activation, not with the cross-channel LRN after it
  // (RuntimeProfile::lrn_own_kernel).
  if (runtime.lrn_own_kernel && op.pointwise == PointwiseKind::kLrn) return Fusion::kNone;
  if (!training && runtime.fuse_bn_activation_inference && batch_norm_epilogue(ops, index)) return Fusion::kIntoPrevious;
  // TF's grappler remapper (FindContractionWithBiasAndActivation, IsGpuCompatible) rewrites Conv2D + BiasAdd + Relu
  // into one _FusedConv2D on GPU when the filter is not 1x1 (1x1 stays unfused: "significantly slower in large scale
  // benchmarks"); the precision check is in runtime_for.
  if (runtime.fuse_conv_bias_relu_fp32 && producer.kind == OpKind::kConv && op.pointwise == PointwiseKind::kRelu &&
      producer.conv.bias && producer.conv.spatial_dims == 2 && !producer.conv.transposed &&
      producer.conv.groups == 1 && !(producer.conv.kernel[0] == 1 && producer.conv.kernel[1] == 1))
    return Fusion::kIntoPrevious;
  if ((runtime.fuse_epilogue && producer.kind == OpKind::kConv) ||
      (runtime.fuse_matmul_epilogue && producer.kind == OpKind::kMatmul))
    return Fusion::kIntoPrevious;
  if (runtime.fuse_elementwise_chains &&
      (is_pointwise(producer) || producer.kind == OpKind::kNorm || (runtime.fuse_epilogue && producer.kind == OpKind::kConv)))
    return Fusion::kIntoPrevious;
  return Fusion::kNone;
}

namespace {

// Whether ops[index] is a LayerNorm, or an elementwise op whose output reaches one through elementwise ops only
// (BERT's residual add and the dropout before it): the ops TensorFlow's auto_mixed_precision leaves in FP32,
// because the norm's Mean is on the deny list and deny propagates through the infer-list ops downstream of it
// (grappler/optimizers/auto_mixed_precision_lists.h; the residual add is downstream of the previous norm).
bool in_fp32_residual_stream(const std::vector<Op>& ops, std::size_t index) {
  const auto is_layer_norm = [&](std::size_t i) {
    return ops[i].kind == OpKind::kNorm && ops[i].norm == NormKind::kLayer;
  };
  if (is_layer_norm(index)) return true;
  // A residual block's dropout and add sit within a few ops of the norm they feed.
  constexpr int kMaxHops = 3;
  std::size_t at = index;
  for (int hop = 0; hop < kMaxHops; ++hop) {
    if (ops[at].kind != OpKind::kElementwise) return false;
    std::size_t next = ops.size();
    for (std::size_t j = at + 1; j < ops.size() && next == ops.size(); ++j)
      for (int in : ops[j].inputs)
        if (in == static_cast<int>(at)) {
          next = j;
          break;
        }
    if (next == ops.size()) return false;
    if (is_layer_norm(next)) return true;
    at = next;
  }
  return false;
}

OpCost graph_op_cost(const std::vector<Op>& ops, std::size_t index, Phase phase, const CostContext& ctx);

// An embedding lookup, or an add whose inputs are all such sums: the part of a BERT embedding block that ONNX
// Runtime's EmbedLayerNormalization fusion takes (onnxruntime/python/tools/transformers, fusion of the word,
// position and token-type lookups, their sum and the LayerNorm into one node).
bool embedding_sum(const std::vector<Op>& ops, int id, int depth = 0) {
  if (id < 0 || depth > 8) return false;
  const Op& op = ops[static_cast<std::size_t>(id)];
  if (op.kind == OpKind::kEmbedding) return true;
  if (op.kind != OpKind::kElementwise || op.pointwise != PointwiseKind::kAdd || op.inputs.size() != 2) return false;
  return embedding_sum(ops, op.inputs[0], depth + 1) && embedding_sum(ops, op.inputs[1], depth + 1);
}

bool embed_layer_norm_root(const std::vector<Op>& ops, std::size_t index) {
  const Op& op = ops[index];
  return op.kind == OpKind::kNorm && op.norm == NormKind::kLayer && !op.inputs.empty() && op.inputs[0] >= 0 &&
         ops[static_cast<std::size_t>(op.inputs[0])].kind == OpKind::kElementwise && embedding_sum(ops, op.inputs[0]);
}

// True when ops[index] is a lookup or add inside such a block (its first consumer chain ends in the LayerNorm).
bool inside_embed_layer_norm(const std::vector<Op>& ops, std::size_t index) {
  if (!embedding_sum(ops, static_cast<int>(index))) return false;
  std::size_t at = index;
  for (std::size_t j = at + 1; j < ops.size(); ++j) {
    const auto& in = ops[j].inputs;
    if (std::find(in.begin(), in.end(), static_cast<int>(at)) == in.end()) continue;
    if (embed_layer_norm_root(ops, j)) return true;
    if (!embedding_sum(ops, static_cast<int>(j))) return false;
    at = j;
  }
  return false;
}

}  // namespace

namespace {

// PyTorch eager's own LayerNorm and softmax kernels (cost_model.toml [row_kernels]): they run where the framework
// is PyTorch and nothing fuses elementwise and norm chains (torch.compile, TorchScript's fusers, Megatron's apex
// LayerNorm run their own).
bool aten_row_kernels(const CostContext& ctx) {
  return row_kernel_constants().enabled && ctx.runtime.framework == "pytorch" && !ctx.runtime.fuse_elementwise_chains;
}

// PyTorch's LayerNorm forward (aten/src/ATen/native/cuda/layer_norm_kernel.cu, LayerNormKernelImplInternal): one
// CTA per row. Rows of a multiple of vec_size elements run vectorized_layer_norm_kernel (statistics pass, then a
// pass that re-reads the row and writes it; the re-read comes from L2 while the rows the SMs hold at once fit
// there). Other rows run RowwiseMomentsCUDAKernel (reads X) then LayerNormForwardCUDAKernel (reads X again, from
// L2 if the whole input fits, and writes Y). Each kernel takes at least its rows' loop steps (row_kernel_floor_us).
KernelCost aten_layer_norm_forward(const Op& op, const Work& w, double launches, Pipe pipe, const ElemBytes& eb,
                                   const KernelCostModel& km) {
  const double act_bytes = eb.act;
  const RowKernelConstants& rk = row_kernel_constants();
  const double cols = static_cast<double>(op.out_shape.back());
  const double rows = static_cast<double>(op.out_elems) / cols;
  const double in = static_cast<double>(op.in_elems) * act_bytes, out = static_cast<double>(op.out_elems) * act_bytes;
  const double weights = static_cast<double>(op.weight_elems) * eb.weight;
  const double eff = km.constants().reduction_bandwidth_efficiency;
  const double vec = rk.layer_norm_vector_elements;
  if (std::fmod(cols, vec) == 0 && cols <= 16777216.0) {  // N % vec_size == 0, N <= 2^24 (float count)
    const double threads = rk.layer_norm_vector_threads;
    const double per_sm = std::max(1.0, std::floor(rk.threads_per_sm(km.device().sm_version) / threads));
    const double resident = std::min(rows, static_cast<double>(std::max(1, km.device().sm_count)) * per_sm);
    const double reread = in * (1.0 - row_reread_l2_share(resident * cols * act_bytes, km));
    const double steps = 2.0 * std::ceil(cols / (threads * vec));
    return with_loop_floor(km.streaming(w.flops, in + reread + out + weights, launches, pipe, -1, 0, eff),
                           row_kernel_floor_us(km, rows, steps, threads, rk.vector_step_latency_clk), km);
  }
  KernelCost k = with_loop_floor(km.streaming(0, in, launches, pipe, -1, 0, eff),
                                 row_kernel_floor_us(km, rows, std::ceil(cols / rk.layer_norm_moments_threads),
                                                     rk.layer_norm_moments_threads, rk.scalar_step_latency_clk),
                                 km);
  const double reread = in * (1.0 - row_reread_l2_share(in, km));
  accumulate(k, with_loop_floor(km.streaming(w.flops, reread + out + weights, launches, pipe, -1, 0, eff),
                                row_kernel_floor_us(km, rows, std::ceil(cols / rk.layer_norm_apply_threads),
                                                    rk.layer_norm_apply_threads, rk.scalar_step_latency_clk),
                                km));
  return k;
}

// PyTorch's LayerNorm backward (LayerNormBackwardKernelImplInternal): the input gradient, one CTA per row
// (layer_norm_grad_input_kernel_vectorized), then the weight and bias gradient (LaunchGammaBetaBackwardCUDAKernel,
// cost_model.toml [row_kernels] gamma_beta_*), a column reduction of dY and X whose grid spans the N columns only:
// ceil(N / 32) CTAs, each looping over all M rows, a step loading rows_per_thread rows of both tensors per thread.
// With few CTAs per SM the step waits on the SM's own load rate, which is taken from the block softmax's fitted step
// (softmax_step_latency_clk for softmax_block_threads x 16 bytes, the same 1024-thread CTA, one per SM): a step
// moving more bytes takes proportionally longer, one moving fewer at least that step. The input-gradient kernel
// keeps the rest of the op's bytes as a plain streaming kernel. Past gamma_beta_partial_min_rows rows (with N / 32
// under half the SMs) the rows are split over many CTAs and both kernels stream.
KernelCost aten_layer_norm_backward(const Op& op, const Work& w, Pipe pipe, double plan_bytes, double act_bytes,
                                    const KernelCostModel& km) {
  const RowKernelConstants& rk = row_kernel_constants();
  const double cols = static_cast<double>(op.out_shape.back());
  const double rows = static_cast<double>(op.out_elems) / cols;
  const double eff = km.constants().reduction_bandwidth_efficiency;
  // The op's backward bytes (backward_work, at plan_bytes an element) less the gamma/beta kernel's pass over dY and
  // X stay with the input-gradient kernel; the gamma/beta kernel reads them at its own element width, act_bytes.
  const double in = static_cast<double>(op.in_elems);
  KernelCost k = km.streaming(w.flops, std::max(0.0, w.bytes - 2.0 * in * plan_bytes), 1, pipe, -1, 0, eff);
  const double gamma_beta_bytes = 2.0 * in * act_bytes;
  const double sms = static_cast<double>(std::max(1, km.device().sm_count));
  const double ctas = std::ceil(cols / rk.gamma_beta_block_x);
  KernelCost gb = km.streaming(0, gamma_beta_bytes, 1, pipe, -1, 0, eff);
  if (rows > rk.gamma_beta_partial_min_rows && ctas < sms / 2.0) {
    accumulate(k, gb);
    return k;
  }
  // The launcher's tile by rows: threads_y = 32 from 256 rows, 16 from 128, 8 from 64, else 1.
  const double per_thread = rk.gamma_beta_rows_per_thread;
  double threads_y = rk.gamma_beta_max_threads_y;
  while (threads_y > 1 && rows < threads_y * per_thread) threads_y = threads_y >= 16 ? threads_y / 2 : 1;
  const double tile_rows = threads_y * per_thread;
  const double threads = rk.gamma_beta_block_x * threads_y;
  const double steps = std::ceil(rows / tile_rows);
  const double step_bytes = tile_rows * rk.gamma_beta_block_x * 2.0 * act_bytes;
  const double softmax_step_bytes = rk.softmax_block_threads * 16.0;
  const double step_clk = rk.softmax_step_latency_clk * std::max(1.0, step_bytes / softmax_step_bytes);
  accumulate(k, with_loop_floor(gb, row_kernel_floor_us(km, ctas, steps, threads, step_clk), km));
  return k;
}

// The loop floor of PyTorch's block softmax (SoftMax.cu host_softmax, dim_size > 1024 or over 4 KiB a row): one
// CTA of up to softmax_block_threads per row, ILP = 16 bytes of elements a load; a row that fits the block's shared
// memory is read once (cunn_SoftMaxForwardSmem), others in three passes (cunn_SoftMaxForward: max, sum, write).
double aten_softmax_floor_us(const Op& op, double act_bytes, const KernelCostModel& km) {
  const RowKernelConstants& rk = row_kernel_constants();
  const double cols = static_cast<double>(op.out_shape.back());
  if (cols <= 1024 && cols * act_bytes <= 4096) return 0;  // the persistent warp softmax: one warp per row
  const double rows = static_cast<double>(op.out_elems) / cols;
  const double ilp = std::max(1.0, std::floor(16.0 / act_bytes));
  const bool cached = cols * act_bytes < rk.softmax_cached_row_bytes && std::fmod(cols, ilp) == 0;
  const double steps = (cached ? 2.0 : 3.0) * std::ceil(cols / (rk.softmax_block_threads * ilp));
  return row_kernel_floor_us(km, rows, steps, rk.softmax_block_threads, rk.softmax_step_latency_clk);
}

}  // namespace

// The runtime's fused contrib ops (ONNX Runtime's Attention and EmbedLayerNormalization on the CUDA EP) launch the
// kernels their sources launch, not those of the graph ops they replace (docs/host-model.md).
OpCost cost_op(const std::vector<Op>& ops, std::size_t index, Phase phase, const CostContext& ctx) {
  OpCost out = graph_op_cost(ops, index, phase, ctx);
  const RuntimeProfile& rt = ctx.runtime;
  if (phase != Phase::kForward || ctx.training || out.cost.launches <= 0) return out;
  const Op& op = ops[index];
  if (rt.attention_op_kernels > 0 && op.kind == OpKind::kAttention && !op.attn.fused) {
    // One Attention node: the graph's Q, K and V projections (one QKV GEMM there, after a GEMM that broadcasts
    // the bias into its output) and this core. The core carries the node's kernels beyond the projections, and
    // the work of its bias broadcast (written, then read back as the QKV GEMM's C) and its two transposes.
    const auto& a = op.attn;
    const double act = ctx.plan.bytes.act;
    const double qkv = static_cast<double>(a.batch * a.head_dim * (a.heads * a.q_len + 2 * a.kv_heads * a.kv_len));
    const double context = static_cast<double>(a.batch * a.heads * a.q_len * a.head_dim);
    double projections = 0;
    for (int in : op.inputs)
      if (in >= 0 && ops[static_cast<std::size_t>(in)].kind == OpKind::kMatmul) projections += 1;
    // The bias broadcast is a k = 1 GEMM: one multiply-add per QKV element.
    accumulate(out.cost, ctx.kernels.streaming(2.0 * qkv, act * (qkv * rt.attention_op_qkv_passes +
                                                                 context * rt.attention_op_context_passes)));
    out.cost.launches = std::max(0.0, rt.attention_op_kernels - projections);
  } else if (rt.embed_layer_norm_op_kernels > 0) {
    if (embed_layer_norm_root(ops, index))
      out.cost.launches = rt.embed_layer_norm_op_kernels;
    else if (inside_embed_layer_norm(ops, index))
      out.cost.launches = 0;
  }
  return out;
}

namespace {

// A max pool reading a convolution's output, through the folded batch norm and the activation in its epilogue: the
// RuntimeProfile::fuse_conv_max_pool_int8 pattern (ResNet's stem: conv1 + ReLU + 3x3 max pool).
bool max_pool_after_conv(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training) {
  const Op& op = ops[index];
  if (op.kind != OpKind::kPool || op.pool != PoolKind::kMax || op.inputs.empty() || op.inputs[0] < 0) return false;
  auto p = static_cast<std::size_t>(op.inputs[0]);
  // The chain is a few ops long (batch norm, ReLU); the bound keeps a malformed graph from walking far.
  for (int hop = 0; hop < 4; ++hop) {
    const Op& producer = ops[p];
    if (producer.kind == OpKind::kConv) return true;
    const Fusion f = fusion_of(ops, p, runtime, training);
    if ((f != Fusion::kIntoPrevious && f != Fusion::kFolded) || producer.inputs.empty() || producer.inputs[0] < 0)
      return false;
    p = static_cast<std::size_t>(producer.inputs[0]);
  }
  return false;
}

// Whether ops[index], a convolution, has a ReLU as its only consumer that the runtime runs in the convolution's
// kernel: XLA's cudnn_fused_conv_rewriter matches max(conv (+ bias), 0) where the convolution has one user and
// makes it one cudnnConvolutionBiasActivationForward call; a batch norm between them (ResNet, Inception) is no match.
bool relu_fused_into_conv(const std::vector<Op>& ops, std::size_t index, const RuntimeProfile& runtime, bool training) {
  const std::optional<std::size_t> relu = sole_consumer(ops, index);
  return relu && ops[*relu].kind == OpKind::kElementwise && ops[*relu].pointwise == PointwiseKind::kRelu &&
         fusion_of(ops, *relu, runtime, training) == Fusion::kIntoPrevious;
}

OpCost graph_op_cost(const std::vector<Op>& ops, std::size_t index, Phase phase, const CostContext& ctx) {
  const Op& op = ops[index];
  OpCost out;
  out.name = op.name;
  out.kind = op.kind;
  out.phase = phase;
  out.fusion = fusion_of(ops, index, ctx.runtime, ctx.training);
  if (out.fusion == Fusion::kSkipped || out.fusion == Fusion::kFolded) {
    out.cost.launches = 0;
    out.cost.time_us = 0;
    return out;
  }
  // TensorRT's INT8 convolution + activation + pooling kernel (CaskConvActPool): the pool costs no launch and reads
  // nothing from DRAM. The convolution is still charged its whole output write (the fused kernel writes only the
  // pooled quarter), so this errs on the slow side at large batch. Only INT8: the FP16 engine of the same network
  // runs the pool as a kernel of its own; and only on INT8 tensor cores, the kernel seen being an sm_80 one (dp4a
  // engines on Pascal are not known to have it).
  if (ctx.runtime.fuse_conv_max_pool_int8 && !ctx.training && phase == Phase::kForward &&
      ctx.plan.conv_pipe == Pipe::kTcInt8 && max_pool_after_conv(ops, index, ctx.runtime, ctx.training))
    out.fusion = Fusion::kIntoPrevious;
  const auto& km = ctx.kernels;
  // A removed concatenation whose inputs from merged layers are copied into place: one copy kernel each, reading and
  // writing only those inputs.
  if (phase == Phase::kForward) {
    const ConcatRetarget r = concat_retarget(ops, index, ctx.runtime, ctx.training);
    if (r.removed && r.copies > 0) {
      out.cost = km.streaming(0, 2.0 * static_cast<double>(r.copied_elems) * ctx.plan.bytes.act, r.copies);
      return out;
    }
  }
  switch (op_kind_info(op.kind).cost_rule) {
    case CostRule::kConv:
    case CostRule::kMatmul: {
      const bool conv = op_kind_info(op.kind).cost_rule == CostRule::kConv;
      if (ctx.runtime.fuse_parallel_gemms && !ctx.training && phase == Phase::kForward) {
        const std::vector<std::size_t> group = parallel_gemm_siblings(ops, index);
        if (group.size() > 1) {
          if (group.front() != index) {
            out.fusion = Fusion::kHorizontal;
            out.cost.launches = 0;
            out.cost.time_us = 0;
            return out;
          }
          // One layer over the concatenated weights: the input read once, every output and weight.
          Op merged = op;
          merged.mm.n = 0;
          merged.conv.c_out = 0;
          merged.out_elems = 0;
          merged.weight_elems = 0;
          for (std::size_t j : group) {
            merged.mm.n += ops[j].mm.n;
            merged.conv.c_out += ops[j].conv.c_out;
            merged.out_elems += ops[j].out_elems;
            merged.weight_elems += ops[j].weight_elems;
          }
          out.cost = conv ? conv_cost(merged, phase, ctx) : matmul_cost(merged, phase, ctx);
          return out;
        }
      }
      // A fused half convolution + (bias +) ReLU in a runtime whose compiler predates the GPU's architecture runs
      // on CUDA cores in FP32 math over its half tensors (RuntimeProfile::fused_conv_half_cuda_cores_from_sm).
      if (conv && phase == Phase::kForward && ctx.runtime.fused_conv_half_cuda_cores_from_sm > 0 &&
          km.device().sm_version >= ctx.runtime.fused_conv_half_cuda_cores_from_sm &&
          (ctx.plan.conv_pipe == Pipe::kTcFp16Fp32Acc || ctx.plan.conv_pipe == Pipe::kTcFp16Fp16Acc) &&
          relu_fused_into_conv(ops, index, ctx.runtime, ctx.training)) {
        out.cost = conv_cost_on(op, phase, ctx, Pipe::kFp32);
        return out;
      }
      // XLA pads a half RGB input layer (3 channels in, 32 or 64 out) to 4 channels for the tensor cores, except a
      // forward convolution with its bias + ReLU fused in (RuntimeProfile::rgb_conv_pad_half). The pad kernel runs
      // once: before the forward convolution, or before the weight gradient when the forward one was not padded
      // (the two pads of the same input are one HLO after CSE).
      if (conv && ctx.runtime.rgb_conv_pad_half > 0 && op.conv.c_in == 3 && op.conv.groups == 1 &&
          (op.conv.c_out == 32 || op.conv.c_out == 64) && km.device().sm_version >= 70 &&
          (ctx.plan.conv_pipe == Pipe::kTcFp16Fp32Acc || ctx.plan.conv_pipe == Pipe::kTcFp16Fp16Acc)) {
        const bool fused_forward = relu_fused_into_conv(ops, index, ctx.runtime, ctx.training);
        if (phase != Phase::kForward || !fused_forward) {
          out.cost = channel_padded_conv_cost(op, phase, ctx, ctx.runtime.rgb_conv_pad_half,
                                              phase == Phase::kForward || fused_forward);
          return out;
        }
      }
      out.cost = conv ? conv_cost(op, phase, ctx) : matmul_cost(op, phase, ctx);
      return out;
    }
    case CostRule::kAttention:
      out.cost = attention_cost(op, phase, ctx);
      return out;
    case CostRule::kEmbeddingBag: {
      out.cost = embedding_bag_cost(op, phase == Phase::kBackward, pooled_elem_bytes(op, ctx), km);
      return out;
    }
    case CostRule::kInteraction: {
      // Its Gram products run on the matmul pipe (tensor cores where the precision has them: NVIDIA's
      // dot_based_interact kernels use WMMA, TorchRec's a batched GEMM).
      const PrecisionPlan& sparse = ctx.embedding_plan ? *ctx.embedding_plan : ctx.plan;
      out.cost = interaction_cost(op, phase == Phase::kBackward, sparse.bytes.act, sparse.matmul_pipe, km);
      return out;
    }
    case CostRule::kStreaming:
      break;  // below: the op's forward_work/backward_work bytes as one streaming kernel
  }
  // A mixed-precision graph rewrite that keeps layer normalization in FP32 stores the residual stream (the norm,
  // the residual add and dropout before it, and their gradients) in FP32; the norm also writes the half copy its
  // GEMMs read.
  const bool fp32_stream = ctx.plan.mixed && ctx.runtime.amp_fp32_layer_norm && ctx.plan.bytes.act < 4.0 &&
                           in_fp32_residual_stream(ops, index);
  ElemBytes bytes = ctx.plan.bytes;
  if (fp32_stream) bytes.act = 4.0;
  Work w = phase == Phase::kForward ? forward_work(op, bytes, ctx.training) : backward_work(op, bytes);
  if (fp32_stream && phase == Phase::kForward && op.kind == OpKind::kNorm)
    w.bytes += static_cast<double>(op.out_elems) * ctx.plan.bytes.act;
  double launches = static_cast<double>(op.repeats);
  if (out.fusion == Fusion::kIntoPrevious) {
    // The producer's output stays on chip: neither its write nor this op's read reaches DRAM.
    const double intermediate = static_cast<double>(ops[op.inputs[0]].out_elems) * bytes.act;
    w.bytes = std::max(0.0, w.bytes - 2.0 * intermediate);
    launches = 0;
  }
  // The backward of a two-input add stands for the sum of the two gradients at the fork that feeds it (dy in, a
  // gradient out for each input: PyTorch's fork accumulation). A runtime that sums them in place
  // (RuntimeProfile::residual_grad_addto) has the later gradient's producer add into the sum (cuDNN beta = 1): no
  // kernel of its own, one more read of the gradient inside that producer's call.
  if (phase == Phase::kBackward && launches > 0 && ctx.runtime.residual_grad_addto && two_input_add(op)) {
    w.flops = static_cast<double>(op.out_elems);
    w.bytes = static_cast<double>(op.out_elems) * bytes.act;
    launches = 0;
    out.fusion = Fusion::kIntoPrevious;
  }
  // A LayerNorm / RMSNorm whose input a pointwise op (the residual add) writes, in a runtime that fuses the
  // producer into the reduction (RuntimeProfile::fuse_pointwise_into_norm): the fused kernel computes the sum in
  // registers, writes it once for the residual stream (charged at the add) and normalizes it, so the norm's read of
  // its input never reaches DRAM.
  if (phase == Phase::kForward && ctx.runtime.fuse_pointwise_into_norm && op.kind == OpKind::kNorm &&
      (op.norm == NormKind::kLayer || op.norm == NormKind::kRms) && !op.inputs.empty() && op.inputs[0] >= 0 &&
      is_pointwise(ops[static_cast<std::size_t>(op.inputs[0])]) &&
      fusion_of(ops, static_cast<std::size_t>(op.inputs[0]), ctx.runtime, ctx.training) != Fusion::kSkipped) {
    const double input = static_cast<double>(ops[static_cast<std::size_t>(op.inputs[0])].out_elems) * ctx.plan.bytes.act;
    w.bytes = std::max(0.0, w.bytes - input);
  }
  // Batch norm in training computes statistics in a reduction kernel and applies them in a second one; under
  // cuDNN's fused ops the convolutions around it take one or both passes over (norm_convolution_fusion), and what
  // remains of the forward norm is the statistics' finalize kernel and any apply pass left.
  if (op.kind == OpKind::kNorm && ctx.training && launches > 0) {
    launches = 2;
    const NormConvolutionFusion nc = norm_convolution_fusion(ops, index, ctx);
    if (phase == Phase::kForward && nc.stats_in_conv) {
      const double in_b = static_cast<double>(op.in_elems) * bytes.act;
      const double out_b = static_cast<double>(op.out_elems) * bytes.act;
      w.bytes = std::max(0.0, w.bytes - in_b - (nc.applied_elsewhere ? in_b + out_b : 0.0));
      // BNStatsFinalize, and the apply kernel (ScaleBiasAddRelu) where no convolution applies the norm.
      launches = nc.applied_elsewhere ? 1 : 2;
    }
  }
  // An inference batch norm that took its ReLU (and residual add) runs the framework's own fused kernel, whose
  // per-element index math can outlast its bytes at half precision.
  double instructions = 0;
  if (!ctx.training && op.kind == OpKind::kNorm && op.norm == NormKind::kBatch &&
      ctx.runtime.bn_inference_instructions_per_element > 0 &&
      has_fused_epilogue(ops, index, ctx.runtime, ctx.training))
    instructions = static_cast<double>(op.out_elems) * ctx.runtime.bn_inference_instructions_per_element;
  Pipe pipe = cuda_pipe_for(ctx.plan, km.device());
  double efficiency = -1;  // the elementwise default
  if (op.kind == OpKind::kElementwise && ctx.runtime.native_half_elementwise && ctx.plan.bytes.act == 2.0 &&
      km.device().sm_version >= 53 && km.device().peak(Pipe::kFp16) > 0 &&
      km.device().peak(Pipe::kFp16) < km.device().peak(Pipe::kFp32)) {
    // Half arithmetic on a chip whose FP16 units are the slow ones (sm_61: 1/64 of FP32): each add, max or
    // multiply is one result of the half2 pipe, whose peak counts an FMA as two.
    pipe = Pipe::kFp16;
    efficiency = km.constants().native_half_elementwise_efficiency;
  }
  // Training batch norm of a half model in a framework that keeps it off cuDNN: one block per channel reduces the
  // statistics (a row reduction like layer norm's), and its forward may read the input once more than two passes.
  const bool native_half_bn = ctx.training && op.kind == OpKind::kNorm && op.norm == NormKind::kBatch &&
                              ctx.runtime.half_batch_norm_native && !ctx.plan.mixed && ctx.plan.bytes.weight == 2.0;
  if (native_half_bn && phase == Phase::kForward)
    w.bytes += (ctx.runtime.native_batch_norm_forward_reads - 2.0) * static_cast<double>(op.in_elems) * ctx.plan.bytes.act;
  const bool row_reduction = op.kind == OpKind::kSoftmax || native_half_bn ||
                             (op.kind == OpKind::kNorm && (op.norm == NormKind::kLayer || op.norm == NormKind::kRms));
  // Training batch norm that reaches cuDNN on NCHW tensors: CUDNN_BATCHNORM_SPATIAL's per-channel kernels
  // (channels-last training takes SPATIAL_PERSISTENT's NHWC kernels). PyTorch keeps BF16 off cuDNN batch norm
  // (Normalization.cpp _batch_norm_impl_index), so those run its own kernels.
  const bool bf16 = ctx.plan.name == "bf16" || ctx.plan.name == "amp-bf16";
  const bool cudnn_bn = ctx.training && op.kind == OpKind::kNorm && op.norm == NormKind::kBatch &&
                        ctx.runtime.cudnn_nchw_batch_norm && !native_half_bn && !bf16;
  const bool cudnn_spatial_bn = cudnn_bn && !ctx.channels_last;
  // Channels-last half training batch norm on cuDNN: SPATIAL_PERSISTENT's NHWC kernels span a fixed channel tile
  // per CTA, whose lanes past the tensor's channels idle (cudnn_nhwc_bn_channel_share).
  const bool cudnn_nhwc_bn = cudnn_bn && ctx.channels_last && ctx.plan.bytes.act == 2.0;
  const double bandwidth = cudnn_spatial_bn ? cudnn_channel_bn_share(op, w.bytes, ctx.plan.bytes.act, km)
                           : cudnn_nhwc_bn  ? cudnn_nhwc_bn_channel_share(op, km)
                           : row_reduction  ? km.constants().reduction_bandwidth_efficiency
                                            : 1.0;
  const bool row_kernel_shape = phase == Phase::kForward && launches > 0 && op.repeats == 1 && !op.out_shape.empty() &&
                                op.out_shape.back() > 0 && aten_row_kernels(ctx);
  if (row_kernel_shape && op.kind == OpKind::kNorm && op.norm == NormKind::kLayer) {
    out.cost = aten_layer_norm_forward(op, w, 1, pipe, ctx.plan.bytes, km);
    return out;
  }
  if (phase == Phase::kBackward && launches > 0 && op.repeats == 1 && op.kind == OpKind::kNorm &&
      op.norm == NormKind::kLayer && op.weight_elems > 0 && !op.out_shape.empty() && op.out_shape.back() > 0 &&
      aten_row_kernels(ctx)) {
    // Autocast runs layer_norm in FP32 (its input cast up: the FP32 list of aten/src/ATen/autocast_mode.cpp; the
    // H200 session's AMP traces name GammaBetaBackwardCUDAKernelTemplate<float, float, ...>).
    const double norm_bytes = ctx.plan.mixed && ctx.runtime.autocast_per_op_casts ? 4.0 : bytes.act;
    out.cost = aten_layer_norm_backward(op, w, pipe, bytes.act, norm_bytes, km);
    return out;
  }
  // Hugging Face's gelu_new in an eager runtime: the chain of kernels its torch calls and their autograd nodes run
  // (data/eager_activations.toml), each a streaming pass over the activation at its own element types.
  if (op.gelu_new_code && ctx.runtime.gelu_new_kernels && launches > 0 && op.repeats == 1 &&
      out.fusion == Fusion::kNone) {
    out.cost = gelu_new_chain_cost(op, phase, ctx, pipe, km);
    return out;
  }
  // Autocast runs softmax in FP32 (score_passes' rule), so its loads carry 4-byte elements there.
  const double softmax_elem_bytes =
      ctx.runtime.autocast_softmax_fp32 && ctx.plan.mixed && ctx.plan.bytes.act < 4.0 ? 4.0 : ctx.plan.bytes.act;
  const double loop_floor =
      row_kernel_shape && op.kind == OpKind::kSoftmax ? aten_softmax_floor_us(op, softmax_elem_bytes, km) : 0.0;
  out.cost = with_loop_floor(km.streaming(w.flops, w.bytes, launches, pipe, efficiency, instructions, bandwidth),
                             loop_floor, km);
  if (op.saves_mask && phase == Phase::kForward && ctx.training && ctx.runtime.dropout_rng_bytes_per_value > 0)
    accumulate(out.cost, dropout_rng_cost(static_cast<double>(op.out_elems), ctx));
  return out;
}

}  // namespace

}  // namespace perfcast
