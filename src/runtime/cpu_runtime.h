// How a framework runs a graph on the CPU itself: its per-op dispatch, the share of the vector and matrix units'
// peak its GEMM/convolution library (oneDNN, MLAS) reaches, what it fuses. Loaded from data/runtimes/cpu/<id>.toml;
// the ids match the GPU profiles of the same framework (`--runtime pytorch` on a CPU reads cpu/pytorch.toml).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/runtime_profile.h"

namespace perfcast {

struct CpuRuntimeProfile {
  std::string id;
  std::string name;
  std::string library;               // GEMM/convolution library ("oneDNN", "MLAS")
  double dispatch_us_per_op = 0;     // host time per op call (framework dispatch, primitive lookup, thread wake-up)
  double conv_efficiency = 0;        // large convolutions: fraction of the FMA peak (fp32) reached
  double matmul_efficiency = 0;      // large GEMMs (linear layers, batched matmuls): the same
  double backward_efficiency = 0;    // backward-data/backward-weights kernels relative to forward
  double depthwise_efficiency = 0;   // depthwise convolutions: fraction of the FMA peak
  double amx_efficiency = 0;         // GEMMs on AMX tiles: fraction of the AMX peak
  double low_precision_efficiency = 0;  // GEMMs on AVX512_BF16 / VNNI: fraction of that unit's peak
  double dram_efficiency = 0;        // streaming kernels: fraction of peak DRAM bandwidth
  // Convolutions as unfold + GEMM one image at a time (Torch7's SpatialConvolutionMM): the unfolded matrix is
  // written and read back, and each GEMM covers one image's pixels.
  bool conv_im2col_per_image = false;
  // Time each GEMM call of the per-image unfold path costs beyond its FLOPs and bytes (the BLAS call's packing and
  // thread start); 0 for libraries that run one primitive per op.
  double gemm_call_overhead_us = 0;
  // PyTorch eager on dense (NCHW) tensors: each oneDNN convolution call reorders the plain weights (and the source
  // and destination) to and from oneDNN's blocked layout, as primitives of their own (cost/cpu_cost.cpp).
  bool conv_reorders_per_call = false;
  // PyTorch's backend choice for FP32 convolutions (ConvParams::use_mkldnn): an ungrouped convolution of one image
  // whose kernel is at most 3 wide in either dimension and whose input holds at most this many elements runs ATen's
  // native unfold + BLAS GEMM path instead of oneDNN, so it pays no reorders. 0: every convolution takes the library.
  double native_conv_max_input_elements = 0;
  // Each GEMM call with a weight operand packs it into the library's panel layout before its kernels run (MKL's
  // cblas_sgemm); false where the weights are packed once ahead (ONNX Runtime's MLAS PrePack).
  bool gemm_packs_weights_per_call = false;
  // The release from which the library packs constant weights once per session (ONNX Runtime 1.5's MLAS PrePack);
  // a request for an older --runtime-version packs them every call. Empty: no version rule.
  std::string gemm_prepack_from_version;
  // The per-call reorders (conv_reorders_per_call) find their primitives in oneDNN's primitive cache: a call costs
  // the cache lookup and the reorder's parallel region, not MKL-DNN 0.x's measured call time
  // (cpu_cost.toml [onednn_reorder]). Set from reorder_primitive_cache_from_version: the profile as of its newest
  // release caches; a request for an older --runtime-version does not.
  bool reorder_primitives_cached = false;
  std::string reorder_primitive_cache_from_version;
  // ONNX Runtime's NchwcTransformer (ORT_ENABLE_ALL): eligible FP32 convolutions run MLAS's NCHWc direct kernels,
  // whose threads split output rows x sets of this many channel blocks (one block = one vector of FP32 lanes); the
  // weights are reordered once per session. 0: convolutions are not rewritten.
  double nchwc_filter_set_blocks = 0;
  // Depthwise convolutions on MLAS's NCHWc depthwise kernel: fraction of the FMA peak (depthwise_efficiency when 0).
  double nchwc_depthwise_efficiency = 0;
  // The framework allocates each op's output tensor with the C library's malloc and frees it after its last use,
  // with no cache of its own (PyTorch's CPU allocator): a tensor larger than this many bytes is above glibc's
  // largest mmap threshold, so every allocation maps fresh pages the kernel must fault in and zero, and every free
  // unmaps them (cost/cpu_cost.cpp fresh_pages_us). 0: the framework reuses its buffers (an arena, module outputs).
  double fresh_pages_above_bytes = 0;
  // Cores its elementwise, norm and pooling loops run on (0 = all): Torch7's TH_TENSOR_APPLY loops were serial.
  double streaming_cores = 0;
  bool fuse_elementwise_chains = false;
  bool fuse_epilogue = false;        // bias/activation (and residual add) fused into the convolution or GEMM
  bool fold_bn_inference = false;
  bool inference_only = false;
  bool optimizer_fused = false;      // one pass over weights, gradients and state (else one pass per operation)
  std::vector<std::string> precisions;  // precisions its CPU kernels run (fp32, bf16, amp-bf16, int8)
  double context_bytes = 0;          // the framework's own host memory
  std::map<std::string, std::string> sources;
  std::string file;

  // The profile in the GPU runtime's terms, for the fusion rules (cost/op_cost.h fusion_of), the memory estimate
  // and reports: dispatch as host overhead per kernel, no device gap, no workspace.
  RuntimeProfile as_runtime() const;
};

CpuRuntimeProfile load_cpu_runtime(const std::filesystem::path& path);
const std::vector<CpuRuntimeProfile>& cpu_runtime_catalog();
// The profile as it behaves at `version` ("1.2"): an older release than gemm_prepack_from_version packs its weights
// every call; one older than reorder_primitive_cache_from_version pays MKL-DNN 0.x's reorder call time. Sets
// `applied` when a rule changed the profile; InputError when the text is not a dotted version.
CpuRuntimeProfile cpu_runtime_at_version(CpuRuntimeProfile runtime, const std::string& version, bool& applied);
// InputError naming the runtimes that have CPU profiles when `id` has none.
const CpuRuntimeProfile& find_cpu_runtime(std::string_view id);

}  // namespace perfcast
