// Weight formats of language-model inference: GGUF block types with their exact storage (ggml-common.h),
// the per-tensor type llama.cpp gives each weight under a GGUF file type (Q4_K_M and friends are mixtures),
// weight-only int8/int4 and fp8, and the kernel constants of dequantizing them (data/quantization.toml).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

// One GGUF block type: `block_elems` weights stored in `block_bytes` bytes (scales included).
struct BlockType {
  std::string name;         // lower-case ggml name: f32 f16 bf16 q4_0 ... q6_k
  int block_elems = 1;
  int block_bytes = 4;
  bool quantized = false;   // integer codes with block scales (dequantized or dotted in int8)
  bool k_quant = false;     // 256-weight super-blocks with 16/32-weight sub-block scales
  double bits_per_weight() const { return 8.0 * block_bytes / block_elems; }
};

// The block type with this name; InputError listing the valid names when unknown.
const BlockType& block_type(std::string_view name);
// Every GGUF block type perfcast knows, in ggml type-id order.
const std::vector<BlockType>& block_types();

enum class WeightScheme : std::uint8_t {
  kFloat,       // fp32 / fp16 / bf16 dense weights
  kGguf,        // a GGUF file type: llama.cpp picks a block type per tensor
  kWeightOnly,  // int8 / int4 weight-only (per-channel or group-128 scales), fp16 activations
  kFp8,         // fp8 e4m3 weights and activations (per-tensor scales)
};

// What --precision means for the weights of a language model.
struct WeightPrecision {
  std::string name;          // as requested
  WeightScheme scheme = WeightScheme::kFloat;
  std::string base;          // block type most tensors get ("q4_k" for q4_k_m; "f16" for f16; "" otherwise)
  double bits_per_weight = 16;  // kFloat/kWeightOnly/kFp8: storage bits per weight; kGguf: of the base type
  std::string description;
};

// --precision values of LLM inference, GGUF file types first.
const std::vector<std::string>& llm_precision_names();
// InputError listing the valid types when `name` is none of them.
WeightPrecision resolve_weight_precision(const std::string& name);

// What a weight tensor is, for llama.cpp's per-tensor type rules (llama-quant.cpp, llama_tensor_get_type).
enum class TensorRole : std::uint8_t {
  kTokenEmbedding, kOutput, kAttnQ, kAttnK, kAttnV, kAttnQkv, kAttnOutput, kFfnGate, kFfnUp, kFfnDown, kRouter,
  kOther
};

struct TensorInfo {
  TensorRole role = TensorRole::kOther;
  int layer = 0;              // block index (0 for tensors outside the blocks)
  int n_layers = 1;
  std::int64_t row_elems = 0; // ggml ne[0]: input features of a projection, the embedding width
  int n_gqa = 1;              // query heads per key/value head
  int n_expert = 0;           // experts of a mixture-of-experts model (0 = dense)
  bool model_70b = false;     // llama.cpp's LLM_TYPE_70B (80 blocks): attn_v gets more bits
  bool has_output = true;     // false when the LM head is tied to the token embeddings
};

// Block type of a 2-D weight under a GGUF file type (1-D tensors stay f32; the caller skips them).
const BlockType& gguf_tensor_type(const WeightPrecision& w, const TensorInfo& t);

// ---- kernel constants (data/quantization.toml) ----------------------------------------------------------

// Lane instructions per weight of a dequantizing dot product, by instruction class.
struct InstructionMix {
  double alu = 0;    // 32-bit integer add/sub/logic
  double shift = 0;  // 32-bit shifts
  double imul = 0;   // 32-bit integer multiply
  double cvt = 0;    // int <-> float and half <-> float conversions
  double fp = 0;     // fp32 multiply-add
  double dp4a = 0;   // int8 4-way dot product
  double video = 0;  // SIMD video instructions (__vsubss4)
};

// Native instruction throughput per SM per clock of one compute capability.
// Every value comes from data/quantization.toml [issue.sm_XX].
struct IssueRates {
  double alu = 0, shift = 0, imul = 0, cvt = 0, fp = 0, dp4a = 0;
  bool shared_int_fp = false;  // integer and fp32 instructions issue to the same lanes (Pascal)
  double video = 0;            // SIMD video instructions (__vsubss4)
  double mmvq_efficiency = 0;  // share of this issue rate llama.cpp's mat-vec kernels sustain
};

struct QuantKernelConstants {
  std::map<std::string, InstructionMix> mmvq;     // block type -> mat-vec (decode) work per weight
  // KV-cache element type (kv8, kv16, kv32) -> work per cached element per query head of TensorRT-LLM's masked
  // MHA generation kernel (convert to float, multiply-add)
  std::map<std::string, InstructionMix> masked_mha;
  std::map<std::string, double> mmq_rate;         // block type -> MMQ dp4a rate relative to q8_0
  std::map<int, IssueRates> issue;               // sm version -> instruction throughput
  double mmq_dp4a_efficiency = 0;                 // q8_0 MMQ rate as a share of the dp4a peak
  double weight_only_dequant_efficiency = 0;      // W8A16/W4A16 GEMM rate vs the fp16 GEMM at the same shape
  double full_rate_lanes_per_sm_clk = 0;          // the full issue rate the [issue] rates are relative to
  double skinny_gemm_below_tokens = 0;            // serving engines: fewer tokens per matrix run skinny-GEMM kernels
  // llama.cpp's dequantize_mul_mat_vec on f16 weights as a Little's-law stream ([dmmv_f16]): warps per block,
  // bytes of weights each warp keeps in flight, and whether the cap it gives applies.
  double dmmv_f16_warps_per_block = 0;
  double dmmv_f16_bytes_in_flight_per_warp = 0;
  bool dmmv_f16_little_cap = false;
  std::map<std::string, std::string> sources;

  // The issue rates of the nearest listed compute capability at or below `sm`.
  const IssueRates& issue_rates(int sm) const;
  // Lane-slot cost per weight of a mat-vec dot product of `type` on sm `sm` (full-rate slots; 1 = one
  // instruction at the full rate, full_rate_lanes_per_sm_clk lanes per SM per clock), before the mat-vec efficiency.
  double mmvq_slots_per_weight(const std::string& type, int sm) const;
  // The same for one KV-cache element of `kv_bytes` bytes read by the masked MHA kernel (full-rate slots).
  double masked_mha_slots_per_element(double kv_bytes, int sm) const;
  // Full-rate lane slots of one instruction mix on sm `sm`.
  double slots(const InstructionMix& m, int sm) const;
  double mmq_relative_rate(const std::string& type) const;
};

const QuantKernelConstants& quant_kernel_constants();

}  // namespace perfcast
