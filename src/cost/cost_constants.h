// Op-class constants of the cost model, loaded from data/cost_model.toml. Every value is read from the file (no
// defaults here: the data file is the one source, and a missing key is an error naming it).
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

namespace perfcast {

struct GemmTile {
  double m = 0, n = 0;
  double efficiency = 0;  // fraction of the large-GEMM rate this tile reaches
};

// One rule of cuDNN's heuristic forward-algorithm choice for FP32 CUDA-core 3x3 stride-1 convolutions (no
// autotuning): the first rule whose bounds hold names the algorithm. A bound of 0 (or an empty sm list) is open.
struct ConvHeuristicRule {
  std::vector<int> sm;  // compute capabilities (61 for 6.1) it applies to; empty: all
  double min_batch = 0, max_batch = 0, min_c_in = 0, max_c_in = 0, min_map = 0, max_map = 0;
  std::string algorithm;  // gemm (implicit GEMM), winograd_fused, winograd_nonfused, fft
};

// cuDNN's CUDA-core implicit-GEMM forward kernels on the architectures listed, where the library runs another
// kernel family than the one [conv]'s own values were read off (cuDNN 9's sm80_xmma_fprop_implicit_gemm FFMA
// kernels on sm_90 against cuDNN 8.9's scudnn_128x* on sm_60-sm_80): their values replace conv_efficiency_cuda,
// implicit_gemm_step_latency_clk and implicit_gemm_tile_m for a device of one of those compute capabilities
// ([[conv.implicit_gemm_arch]] in cost_model.toml).
struct ImplicitGemmArch {
  std::vector<int> sm;
  double conv_efficiency_cuda = 0;
  double implicit_gemm_step_latency_clk = 0;
  double implicit_gemm_tile_m = 0;
  // FP16 convolutions with at most this many input channels run on tensor cores with their channels padded to it
  // (cuDNN 9's sm90_xmma_*_image_first_layer_*_c4 kernels); 0: on CUDA cores in FP32, as cuDNN 7/8 ran them.
  double half_input_channel_pad = 0;
};

struct CostConstants {
  std::vector<GemmTile> tiles_cuda;
  std::vector<GemmTile> tiles_tensor;
  double ctas_per_sm = 0;
  double k_half_cuda = 0;
  double k_half_tensor = 0;
  double split_k_overhead = 0;
  double split_k_min_depth = 0;                // K elements each split-K slice needs at least
  // cuBLAS's CUDA-core SGEMMs split K until the grid fills up to this many waves of the SMs (1: only a grid under
  // one wave splits, as every other GEMM does).
  double split_k_waves_cublas_cuda = 1;
  // The partial-sum traffic of a cuBLAS CUDA-core SGEMM's split-K, in bytes per output element and slice (each
  // slice writes its FP32 partial tile, the reduction reads it back): charged at the DRAM rate in place of
  // split_k_overhead for those GEMMs (0: split_k_overhead for them too).
  double split_k_partial_bytes_cublas_cuda = 0;
  // Tensor-core GEMMs whose leading dimensions (a linear layer's in and out features; attention's key length and
  // head size) are aligned to only 2, 4 or 8 bytes, by compute capability: the fraction of the aligned kernel's
  // rate the library's under-aligned fallback kernel reaches ([gemm] misaligned_tensor_efficiency_*; an
  // architecture without an entry keeps the aligned rate).
  std::map<int, double> misaligned_tensor_efficiency_2b, misaligned_tensor_efficiency_4b, misaligned_tensor_efficiency_8b;
  // A linear layer's input gradient (a cuBLAS "nn" call) / weight gradient ("nt") may run a tile of either
  // name-derived SGEMM set, as a single product of two activations does ([gemm] cublas_nn_backward_both_sets,
  // cublas_nt_backward_both_sets; off: the plain "tn" set).
  bool cublas_nn_backward_both_sets = false;
  bool cublas_nt_backward_both_sets = false;
  double conv_efficiency_tensor = 0;        // convolutions with more than one filter tap
  double conv_efficiency_tensor_1x1 = 0;     // pointwise (1x1) convolutions: a plain GEMM
  bool conv_gather_hidden_at_reduced_rate = false;  // half-rate FP32-accumulate MMAs hide the tap gathering
  double winograd_fused_efficiency = 0;
  // cuDNN's fused Winograd kernel (scudnn_winograd_128x128_*): output channels per CTA, its variants' Winograd-tile
  // blocks per CTA as {images, tile rows, tile columns}, CTAs one SM holds, and the cycles one input-channel step
  // of its main loop takes at least (a dependent global-load round trip and barrier a lone CTA cannot hide).
  double winograd_fused_cta_channels = 0;
  std::vector<std::array<double, 3>> winograd_fused_cta_tiles;
  double winograd_fused_resident_ctas = 0;
  double winograd_fused_step_latency_clk = 0;
  // cuDNN's CUDA-core implicit-GEMM forward kernels: K elements per main-loop step, output elements (accumulators) one SM holds over its resident CTAs, and the
  // cycles a step takes at least (KernelCostModel::gemm with GemmLibrary::kCudnnNoSplit).
  double implicit_gemm_step_depth = 0;
  double implicit_gemm_resident_outputs = 0;
  double implicit_gemm_step_latency_clk = 0;
  // Output-pixel rows of every CTA tile cuDNN's CUDA-core implicit-GEMM forward kernels run (scudnn_128x128/128x64/
  // 128x32): only tiles_cuda entries of this m are searched for them (0: any tile).
  double implicit_gemm_tile_m = 0;
  double winograd_min_channels = 0;        // fewer input channels: cuDNN runs implicit GEMM, not Winograd
  double winograd_nonfused_efficiency = 0;  // its batched GEMM against a plain SGEMM
  bool winograd_nonfused_filter_transform = false;  // forward non-fused Winograd transforms its filter every call
  std::vector<ConvHeuristicRule> conv_heuristic;  // cuDNN's choice when the runtime does not autotune
  double conv_efficiency_cuda = 0;         // CUDA-core implicit-GEMM convolutions against a plain SGEMM
  std::vector<ImplicitGemmArch> implicit_gemm_arch;  // per-architecture replacements of conv_efficiency_cuda, implicit_gemm_step_latency_clk and implicit_gemm_tile_m
  double half_input_channel_pad = 0;  // set from implicit_gemm_arch only (0 on architectures it does not list)
  double dgrad_efficiency = 0;
  double wgrad_efficiency = 0;
  double depthwise_compute_efficiency = 0;
  // PyTorch's native depthwise weight gradient reads the channel's input and output gradient this many times per
  // filter tap (one thread block per channel and tap); 0 = one pass like the other directions.
  double depthwise_native_wgrad_reads_per_tap = 0;
  // Grouped tensor-core convolutions ([conv] grouped_tensor_*): output channels of the CTA tile several groups share,
  // the multiple each group's channels are padded to, and the first compute capability they apply to (0: off).
  double grouped_tensor_tile_channels = 0;
  double grouped_tensor_channel_pad = 0;
  double grouped_tensor_min_sm = 0;
  double ramp_us = 0;
  double elementwise_compute_efficiency = 0;
  double reduction_bandwidth_efficiency = 0;   // softmax / layer norm rows against a plain streaming kernel
  double native_half_elementwise_efficiency = 0;
  double dynamic_cast_copy_efficiency = 1;  // PyTorch's unrolled dynamic-cast copies (casts up to FP32)
  // PyTorch's copies of non-contiguous tensors (TensorIterator's legacy elementwise_kernel<128, 4>: scalar loads at
  // per-element offsets): elements copied per SM per clock, per compute capability; an architecture not listed
  // streams them at the DRAM rate alone
  std::map<int, double> strided_copy_elements_per_sm_clk;
  // cuDNN's CUDNN_BATCHNORM_SPATIAL training kernels on NCHW tensors (bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new):
  // one CTA per channel, streaming its channel at a per-CTA rate after a fixed per-CTA latency
  double cudnn_nchw_batch_norm_cta_gelems = 0;      // one CTA's streaming rate, 1e9 elements/s
  double cudnn_nchw_batch_norm_cta_latency_us = 0;  // one CTA's fixed time (reductions, passes' turnarounds), us
  double cudnn_nchw_batch_norm_cta_threads = 0;     // threads per CTA (with the SM's thread limit: CTAs per SM)
  double cudnn_nhwc_batch_norm_cta_channels = 0;    // channels one CTA of cuDNN's NHWC persistent batch norm spans
  double cuda_graph_host_us_per_kernel = 0;
  double cuda_graph_gap_us = 0;
  double host_reference_single_thread_score = 0;  // the host the runtime files' per-op CPU costs are quoted for
  double gpu_decode_us_per_mpixel = 0;
  double fused_attention_efficiency = 0;       // fused (flash) attention kernels: share of the GEMM rate
  double decode_attention_fp32_efficiency = 0; // paged/XQA decode attention: share of the FP32 peak
};

// The constants predictions use: cost_model.toml with data/kernel_fit.toml's fitted values.
const CostConstants& cost_constants();
// cost_model.toml alone (the kernel fit's start values).
const CostConstants& cost_constants_prior();

// The constants as a device of compute capability `sm` sees them: an [[conv.implicit_gemm_arch]] entry that
// lists `sm` replaces the implicit-GEMM values it names.
CostConstants constants_for_sm(const CostConstants& c, int sm);

// The algorithm cuDNN's heuristic runs for an FP32 CUDA-core forward 3x3 stride-1 convolution (first matching rule
// of [conv] heuristic_fwd); empty when no rule matches.
std::string conv_heuristic_algorithm(const CostConstants& c, int sm, double batch, double c_in, double map);

}  // namespace perfcast
