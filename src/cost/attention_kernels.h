// Which kernel runs an attention core under --attention (Hugging Face's attn_implementation): the model's
// eager code, PyTorch's scaled_dot_product_attention dispatch (FlashAttention-2, memory-efficient, math), or
// the flash_attn package (2.x: FlashAttention-2; 1.x: FlashAttention). The rules and the memory-efficient kernel's rate are in data/attention.toml.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/op.h"

namespace perfcast {

// The attention implementation a request asks for; kRuntime = the runtime profile's own behaviour.
// kFlash: the flash_attn 2.x package; kFlash1: the flash_attn 1.x package.
enum class AttentionImpl : std::uint8_t { kRuntime, kEager, kSdpa, kFlash, kFlash1 };

// "" -> kRuntime; eager, sdpa, flash (or Hugging Face's "flash_attention_2"), flash1; InputError naming the nearest.
AttentionImpl parse_attention_impl(std::string_view name);

// "runtime", "eager", "sdpa", "flash", "flash1".
std::string_view attention_impl_name(AttentionImpl impl);

// TensorRT-LLM's generation-phase kernel named by --attention: "xqa" (the XQA kernels, TRTLLM_ENABLE_XQA=1 before
// they became the default) -> true, "mmha" (the masked multi-head attention kernel) -> false; anything else ->
// nullopt (an --attention implementation for parse_attention_impl).
std::optional<bool> parse_generation_kernel(std::string_view name);

// The kernel an attention core runs as.
enum class AttentionKernel : std::uint8_t { kUnfused, kFlash, kMemoryEfficient };

// data/attention.toml, loaded once.
struct AttentionRules {
  std::string sdpa_min_version;  // PyTorch version that added scaled_dot_product_attention
  std::string flash_attn_min_version;  // oldest PyTorch the flash_attn package (1.x and 2.x) builds against
  int flash_min_sm = 80;
  std::vector<std::string> flash_precisions;  // element types FlashAttention-2 takes
  std::int64_t flash_max_head_dim = 256;
  std::vector<int> flash_training_gap_sm;                 // [lo, hi]: architectures with the backward head_dim gap
  std::vector<std::int64_t> flash_training_gap_head_dim;  // (lo, hi] refused there in training
  // The flash_attn 1.x package: [flash1].
  std::vector<int> flash1_sms;
  int flash1_bf16_min_sm = 80;
  std::vector<std::string> flash1_precisions;
  std::int64_t flash1_max_head_dim = 128;
  std::int64_t flash1_head_dim_multiple = 8;
  std::vector<int> flash1_training_wide_head_sms;  // where backward takes head_dim above the next field
  std::int64_t flash1_training_wide_head_dim = 64;
  int mem_efficient_min_sm = 50;
  std::vector<std::string> mem_efficient_precisions_below_sm80;
  std::vector<std::string> mem_efficient_precisions_sm80;
  int tensor_core_alignment_bits = 128;
  std::int64_t min_alignment_elems_sm80 = 4;
  double mem_efficient_relative_rate = 1;  // its speed relative to FlashAttention-2
  // ONNX Runtime's fused MHA (TensorRT fMHA v2) in its Attention op: [onnxruntime_fused_mha].
  std::vector<std::string> ort_fmha_precisions;
  std::vector<int> ort_fmha_sms;
  std::vector<int> ort_fmha_head_dims;
  int ort_fmha_head_dim_32_min_sm = 75;
  std::int64_t ort_fmha_max_seq = 0;
  // A sliding window beyond the sequence's reach of it: [sliding_window].
  bool window_flash_skips = true;     // the flash_attn 2.x kernel skips the key blocks outside the window
  bool window_flash1_skips = false;   // flash_attn 1.x takes no window: full causal
  bool window_sdpa_explicit_mask = true;  // sdpa gets the window as a mask: no FlashAttention-2, every block computed
};
const AttentionRules& attention_rules();
// A fused core's window as the chosen path runs it ([sliding_window]): kept where the kernel skips the blocks
// outside it, dropped where it runs full causal (flash_attn 1.x), the memory-efficient kernel over every block
// where it arrives as a mask (sdpa). Nothing changes while the keys fit in the window.
void apply_window_rules(AttentionGeometry& a, AttentionImpl impl);

// The element type attention runs in for a precision name: fp32 (fp32, tf32), bf16 (bf16, amp-bf16) or fp16
// (fp16, amp; and int8, fp8 and weight-only or GGUF types, whose activations are half precision).
std::string attention_dtype(std::string_view precision);

// Where an attention core runs.
struct AttentionTarget {
  std::string gpu;        // catalog id, for messages
  int sm_version = 0;     // 86 for sm_86
  std::string dtype;      // fp32 | fp16 | bf16 (attention_dtype)
  bool training = false;  // backward runs too
};

// Why FlashAttention-2 cannot run this core here ("" when it can).
std::string flash_refusal(const AttentionGeometry& a, const AttentionTarget& t);

// Why the flash_attn 1.x package (FlashAttention v1) cannot run this core here ("" when it can).
std::string flash1_refusal(const AttentionGeometry& a, const AttentionTarget& t);

// The oldest PyTorch version `impl` runs on: sdpa -> sdpa_min_version, flash and flash1 -> flash_attn_min_version
// (the package, not PyTorch's own kernel); "" for eager and the runtime's own.
std::string attention_min_torch_version(AttentionImpl impl);

// The kernel for one core under `impl` (not kRuntime): eager -> unfused; sdpa -> FlashAttention-2 where it
// can run, else the memory-efficient kernel where it can, else the math fallback (unfused); flash ->
// FlashAttention-2, flash1 -> FlashAttention (costed as the same fused kernel), or UnsupportedError saying why not.
AttentionKernel select_attention_kernel(AttentionImpl impl, const AttentionGeometry& a, const AttentionTarget& t);

// The fused-attention kernel's rate relative to FlashAttention-2 (the memory-efficient kernel's is below 1).
double fused_attention_rate(const AttentionGeometry& a);

// Whether ONNX Runtime's Attention op runs this core as TensorRT's fused MHA kernel (data/attention.toml
// [onnxruntime_fused_mha]: inference, the listed GPUs and precisions, self-attention of a listed head size up
// to max_seq, no causal mask). The caller checks the release (RuntimeProfile::fused_mha_half).
bool onnxruntime_fused_mha_runs(const AttentionGeometry& a, const AttentionTarget& t);

}  // namespace perfcast
