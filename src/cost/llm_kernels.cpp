#include "cost/llm_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "cost/cost_constants.h"
#include "graph/op_arithmetic.h"

namespace perfcast {

// ---- the model, read from its graph -----------------------------------------------------------------------

bool is_weight_matmul(const Op& op) { return op.kind == OpKind::kMatmul && op.mm.weight_operand && op.weight_elems > 0; }

namespace {

// The rate of the runtime's library GEMM (cuBLAS, CUTLASS) on `pipe` of this GPU: its library_efficiency and, on
// tensor pipes, its library_efficiency_by_sm entry, as every other op's library GEMM takes them (op_cost.h).
// llama.cpp's own kernels (mat-vec, int8 tiles) are not library calls and take neither.
double library_rate(const LlmKernelContext& c, Pipe pipe) {
  return library_efficiency_on(c.runtime, tensor_library_efficiency(c.runtime, c.device.sm_version), pipe);
}

// The op name without its block scope: "blk.3.attn_v" -> "attn_v", "h.3.attn.q" -> "attn.q"; layer 0 outside.
std::string local_name(const std::string& name, int* layer) {
  std::string local;
  *layer = std::max(llm_block_of(name, &local), 0);
  return local;
}

}  // namespace

int llm_block_of(const std::string& name, std::string* local) {
  for (const std::string prefix : {"blk.", "h."}) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::size_t dot = name.find('.', prefix.size());
    if (dot == std::string::npos) break;
    const std::string index = name.substr(prefix.size(), dot - prefix.size());
    if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos) break;
    if (local) *local = name.substr(dot + 1);
    return std::atoi(index.c_str());
  }
  if (local) *local = name;
  return -1;
}

TensorRole tensor_role(const std::string& name, int* layer) {
  const std::string n = local_name(name, layer);
  if (n.rfind("ffn_gate_inp", 0) == 0) return TensorRole::kRouter;
  if (n.rfind("ffn_gate", 0) == 0) return TensorRole::kFfnGate;
  if (n.rfind("ffn_up", 0) == 0 || n == "mlp.c_fc") return TensorRole::kFfnUp;
  if (n.rfind("ffn_down", 0) == 0 || n == "mlp.c_proj") return TensorRole::kFfnDown;
  if (n == "attn_q") return TensorRole::kAttnQ;
  if (n == "attn_k") return TensorRole::kAttnK;
  if (n == "attn_v") return TensorRole::kAttnV;
  if (n == "attn.q" || n == "attn.k" || n == "attn.v") return TensorRole::kAttnQkv;
  if (n == "attn_output" || n == "attn.out") return TensorRole::kAttnOutput;
  if (n == "output" || n == "lm_head") return TensorRole::kOutput;
  if (n == "token_embd" || n == "wte") return TensorRole::kTokenEmbedding;
  return TensorRole::kOther;
}

LlmShape llm_shape_of(const Graph& g) {
  LlmShape s;
  const double tokens = static_cast<double>(g.batch * std::max<std::int64_t>(1, g.seq));
  for (const auto& op : g.ops) {
    int layer = 0;
    if (op.kind == OpKind::kAttention) {
      if (s.layers == 0) {
        s.heads = op.attn.heads;
        s.kv_heads = op.attn.kv_heads;
        s.head_dim = op.attn.head_dim;
      }
      if (s.layers == 0) s.window = op.attn.causal ? op.attn.window : 0;
      ++s.layers;
    } else if (is_weight_matmul(op)) {
      const TensorRole role = tensor_role(op.name, &layer);
      if (role == TensorRole::kOutput) {
        s.vocab = op.mm.n;
        s.hidden = op.mm.k;
        s.tied = op.params < op.mm.n * op.mm.k;
      } else if (op.mm.batch > 1 && s.experts == 0) {
        s.experts = op.mm.batch;
        s.experts_per_tok = static_cast<double>(op.in_elems / op.mm.k) / tokens;
      }
    } else if (op.kind == OpKind::kEmbedding && local_name(op.name, &layer) == "wpe") {
      s.positions = op.params / op.out_shape.back();
    }
  }
  if (s.layers == 0 || s.vocab == 0)
    throw InputError("model '" + g.model_id + "' has no attention blocks or LM head: not a decoder language model");
  return s;
}

// ---- kernels ------------------------------------------------------------------------------------------------

WeightFormat weight_format(const Op& op, const LlmKernelContext& c) {
  int layer = 0;
  const TensorRole role = tensor_role(op.name, &layer);
  const WeightPrecision& w = c.weights;
  if (role == TensorRole::kRouter) return {c.runtime.llm_gguf ? "f32" : "f16", c.runtime.llm_gguf ? 32.0 : 16.0};
  if (w.scheme == WeightScheme::kGguf) {
    TensorInfo t;
    t.role = role;
    t.layer = layer;
    t.n_layers = c.shape.layers;
    t.row_elems = op.kind == OpKind::kEmbedding ? op.out_shape.back() : op.mm.k;
    t.n_gqa = static_cast<int>(c.shape.heads / std::max<std::int64_t>(1, c.shape.kv_heads));
    t.n_expert = static_cast<int>(c.shape.experts);
    t.model_70b = c.shape.layers == 80;
    t.has_output = !c.shape.tied;
    const BlockType& b = gguf_tensor_type(w, t);
    return {b.name, b.bits_per_weight()};
  }
  if (w.scheme == WeightScheme::kFloat) return {w.name == "fp32" ? "f32" : w.name == "bf16" ? "bf16" : "f16", w.bits_per_weight};
  return {w.name, w.bits_per_weight};
}

// Kernels of one weight matmul: `tokens` rows over `groups` weight matrices of [k x n] (experts touched).
std::vector<OpCost> weight_matmul_kernels(const Op& op, const WeightFormat& wf, double tokens, double groups,
                                  const LlmKernelContext& c) {
  std::vector<OpCost> out;
  const auto& km = c.km;
  const double n = static_cast<double>(op.mm.n), k = static_cast<double>(op.mm.k);
  const double weights = groups * n * k;
  const double wbytes = weights * wf.bits / 8.0;
  const double rows = tokens / groups;  // per weight matrix
  const double flops = gemm_flops(tokens, n, k);
  const double act = c.runtime.llm_activation_bytes;
  const double io = tokens * (k + n) * act;
  const MatmulGeometry geo{static_cast<std::int64_t>(std::llround(groups)),
                           std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(rows))), op.mm.n, op.mm.k,
                           true, op.mm.bias};
  const auto& q = quant_kernel_constants();
  const int sm = c.device.sm_version;
  const double slots_per_us = static_cast<double>(c.device.sm_count) * q.full_rate_lanes_per_sm_clk * c.device.boost_clock_mhz *
                              km.compute_clock_factor();
  const std::string& name = op.name;

  if (!c.runtime.llm_gguf) {
    // Serving engines: one GEMM (cuBLAS/CUTLASS) on the precision's pipe; weight-only kernels dequantize in
    // registers and read only the packed bytes.
    const Pipe pipe = c.float_pipe;
    double eff = library_rate(c, pipe);
    if (c.weights.scheme == WeightScheme::kWeightOnly)
      eff *= q.weight_only_dequant_efficiency;
    else  // a float GEMM handed to cuBLAS as it is (a 50257-word head): the alignment rule of the graph ops
      eff *= gemm_alignment_efficiency(op.mm.n, op.mm.k, pipe, c.runtime, km);
    if (rows < q.skinny_gemm_below_tokens) {
      // A few tokens: skinny-GEMM / GEMV kernels stream the weights once and keep every fetched row busy
      // (split-K over the SMs), so the token count is not padded up to a tile.
      const double base = is_tensor_pipe(pipe) ? c.arch.gemm_efficiency_tensor : c.arch.gemm_efficiency_cuda;
      const double rate = km.pipe_peak(pipe) * 1e6 * base * eff * km.compute_clock_factor();
      out.push_back(kernel_entry(name, OpKind::kMatmul, km.timed(flops / groups / rate, flops / groups, (wbytes + io) / groups, pipe, groups,
                                                                  km.compute_clock_factor())));
      return out;
    }
    out.push_back(kernel_entry(name, OpKind::kMatmul, km.gemm(geo, pipe, flops, wbytes + io, eff)));
    return out;
  }

  const BlockType& bt = block_type(wf.type);
  const double q8_act = tokens * k * (34.0 / 32.0);  // activations quantized to q8_1 blocks
  if (rows <= c.runtime.llm_matvec_max_batch) {
    // Mat-vec: mul_mat_vec_q on int8-quantized activations (dp4a, sm_61+), dequantize_mul_mat_vec otherwise.
    const bool mmvq = bt.quantized && sm >= 61;
    if (mmvq)
      out.push_back(kernel_entry(name + ".quantize_q8_1", OpKind::kElementwise,
                                 km.streaming(0, tokens * k * act + q8_act)));
    const double slots = q.mmvq_slots_per_weight(mmvq ? bt.name : (bt.quantized ? "q8_0" : bt.name), sm);
    const double compute_us = slots * weights * rows / (slots_per_us * q.issue_rates(sm).mmvq_efficiency);
    const double bytes = (wbytes + (mmvq ? q8_act : tokens * k * act) + tokens * n * act) / groups;
    // f16 weights: dequantize_mul_mat_vec streams them with few bytes in flight per warp; Little's law may cap
    // its DRAM rate below the board's ([dmmv_f16] in data/quantization.toml, applied where little_cap is on).
    const double cap = !mmvq && bt.name == "f16" && q.dmmv_f16_little_cap
                           ? km.in_flight_bytes_per_us(q.dmmv_f16_warps_per_block, q.dmmv_f16_bytes_in_flight_per_warp)
                           : 0.0;
    out.push_back(kernel_entry(name, OpKind::kMatmul,
                               km.timed(compute_us / groups, flops / groups, bytes,
                                           mmvq ? Pipe::kDp4a : Pipe::kFp32, groups, km.compute_clock_factor(), cap)));
    return out;
  }
  // Tensor-core GPUs take cuBLAS fp16 for float weights and for quantized ones beyond the int8 tile kernels.
  const bool tensor_path = c.half_pipe && (!bt.quantized || rows > c.runtime.llm_int8_tile_max_batch);
  if (bt.quantized && sm >= 61 && !tensor_path) {
    // int8 tile kernels (mul_mat_q): activations quantized to q8_1, weights unpacked into shared memory.
    out.push_back(kernel_entry(name + ".quantize_q8_1", OpKind::kElementwise,
                               km.streaming(0, tokens * k * act + q8_act)));
    const double eff = q.mmq_dp4a_efficiency * q.mmq_relative_rate(bt.name) / c.arch.gemm_efficiency_cuda;
    out.push_back(kernel_entry(name, OpKind::kMatmul, km.gemm(geo, Pipe::kDp4a, flops, wbytes + q8_act + tokens * n * act, eff)));
    return out;
  }
  if (tensor_path) {
    // Dequantize to fp16, convert the activations, cuBLAS fp16 GEMM, convert the result back to f32.
    if (bt.name != "f16")
      out.push_back(kernel_entry(name + ".to_fp16", OpKind::kElementwise,
                                 km.streaming(0, wbytes + 2.0 * weights)));
    out.push_back(kernel_entry(name + ".src1_to_fp16", OpKind::kElementwise,
                               km.streaming(0, tokens * k * (act + 2.0))));
    out.push_back(kernel_entry(name, OpKind::kMatmul,
                               km.gemm(geo, *c.half_pipe, flops, 2.0 * weights + 2.0 * tokens * (k + n), library_rate(c, *c.half_pipe))));
    out.push_back(kernel_entry(name + ".dst_to_fp32", OpKind::kElementwise,
                               km.streaming(0, tokens * n * (2.0 + act))));
    return out;
  }
  // No int8 or tensor-core path (f16/f32 weights on Pascal, any weights on sm_60): convert the weights to f32
  // and run SGEMM (llama.cpp ggml_cuda_op_mul_mat_cublas below Volta).
  if (bt.name != "f32")
    out.push_back(kernel_entry(name + ".to_fp32", OpKind::kElementwise, km.streaming(0, wbytes + 4.0 * weights)));
  out.push_back(kernel_entry(name, OpKind::kMatmul,
                             km.gemm(geo, Pipe::kFp32, flops, 4.0 * weights + io, library_rate(c, Pipe::kFp32))));
  return out;
}

bool window_bounds_reads(std::int64_t window, const RuntimeProfile& runtime) {
  return window > 0 && (runtime.llm_window_attention || runtime.llm_window_kv_cache);
}

bool window_caps_cache(std::int64_t window, const RuntimeProfile& runtime) {
  return window > 0 && runtime.llm_window_kv_cache;
}

std::int64_t attended_keys(std::int64_t q, std::int64_t kv_len, std::int64_t window, const RuntimeProfile& runtime) {
  if (!window_bounds_reads(window, runtime)) return kv_len;
  // The last query sees the window (itself included); the q - 1 before it reach one key further back each.
  return std::min(kv_len, window - 1 + std::max<std::int64_t>(1, q));
}

std::int64_t cached_positions(std::int64_t positions, std::int64_t window, const RuntimeProfile& runtime) {
  return window_caps_cache(window, runtime) ? std::min(positions, window) : positions;
}

// Attention of `q` new tokens per sequence against `kv` cached positions (the new ones included). A sliding window
// the engine applies bounds the keys read (attended_keys) and, in a flash prefill, the query-key pairs computed.
std::vector<OpCost> kv_attention_kernels(const Op& op, std::int64_t kv_positions, const LlmKernelContext& c) {
  std::vector<OpCost> out;
  const auto& km = c.km;
  const auto& a = op.attn;
  const std::int64_t window = a.causal ? a.window : 0;
  const std::int64_t kv_len = attended_keys(a.q_len, kv_positions, window, c.runtime);
  const double B = static_cast<double>(a.batch), q = static_cast<double>(a.q_len), L = static_cast<double>(kv_len);
  const double H = static_cast<double>(a.heads), Hk = static_cast<double>(a.kv_heads), d = static_cast<double>(a.head_dim);
  const double act = c.runtime.llm_activation_bytes;
  const double cache = B * L * Hk * d * c.kv_bytes;  // K or V
  const double fresh = B * q * Hk * d;             // new K or V elements
  const double scores = B * H * q * L;
  const double qkv_flops = 2.0 * gemm_flops(B * H * q, L, d);  // QK^T and PV
  const double q_bytes = B * q * H * d * act;
  const std::string& name = op.name;
  if (c.runtime.llm_fused_attention) {
    out.push_back(kernel_entry(name + ".kv_store", OpKind::kDataMovement, km.streaming(0, 2.0 * fresh * (act + c.kv_bytes))));
    if (q <= 1) {
      // Paged / XQA decode kernel: one pass over the cache per sequence, grouped heads share the reads. Its float
      // math issues on the SMs, so it runs at the sustained clock under the board's power limit.
      const double clock = km.compute_clock_factor();
      const double fp32_rate = c.device.peak(Pipe::kFp32) * 1e6 * cost_constants().decode_attention_fp32_efficiency * clock;
      double compute_us = (qkv_flops + 5.0 * scores) / fp32_rate;
      if (c.runtime.llm_masked_mha_decode && !(c.runtime.llm_decode_shared_kv && Hk < H)) {
        // Masked MHA: one thread block per query head walks its KV head's cache, converting every K and V
        // element to float and multiply-adding on the CUDA cores (quantization.toml [masked_mha]), at the
        // documented issue rates. The blocks of a group run side by side, so the cache still comes from DRAM
        // once; the conversions are what the grouped-query kernel saves. The whole kernel (conversions, FMAs
        // and the softmax's float math) issues on the same SMs, so all of it runs at the sustained clock.
        const auto& qk = quant_kernel_constants();
        const double elems = 2.0 * B * H * q * L * d;
        const double slots_per_us = static_cast<double>(c.device.sm_count) * qk.full_rate_lanes_per_sm_clk *
                                    c.device.boost_clock_mhz * clock;
        compute_us = elems * qk.masked_mha_slots_per_element(c.kv_bytes, c.device.sm_version) / slots_per_us +
                     5.0 * scores / fp32_rate;
      }
      out.push_back(kernel_entry(name, OpKind::kAttention, km.timed(compute_us, qkv_flops, 2.0 * cache + 2.0 * q_bytes,
                                                                   Pipe::kFp32, 1, clock)));
    } else {
      // Flash attention: causal blocks above the diagonal are skipped, and with the engine's window the blocks
      // before it (windowed_causal_pairs over the queries' positions, as the training kernel's share).
      const bool windowed = c.runtime.llm_window_attention && window > 0 && kv_positions > window;
      const double causal = windowed ? windowed_causal_pairs(q, static_cast<double>(kv_positions), static_cast<double>(window)) / (q * L)
                            : a.causal ? (L - 0.5 * q) / L
                                       : 1.0;
      const MatmulGeometry g{a.batch * a.heads, a.q_len, kv_len, a.head_dim, false, false};
      // FP8 GEMMs with a half-precision context FMHA (llm_fp8_context_attention false): its products run on
      // the half tensor pipe.
      const Pipe attn_pipe =
          c.float_pipe == Pipe::kTcFp8 && !c.runtime.llm_fp8_context_attention && c.half_pipe ? *c.half_pipe : c.float_pipe;
      out.push_back(kernel_entry(name, OpKind::kAttention,
                                 km.gemm(g, attn_pipe, (qkv_flops + 5.0 * scores) * causal, 2.0 * cache + 2.0 * q_bytes,
                                         cost_constants().fused_attention_efficiency)));
    }
    return out;
  }
  // Unfused (llama.cpp without flash attention, eager frameworks): store K and V, KQ, masked softmax, KQV,
  // then the permute back to [tokens, heads x dim].
  out.push_back(kernel_entry(name + ".k_store", OpKind::kDataMovement, km.streaming(0, fresh * (act + c.kv_bytes))));
  out.push_back(kernel_entry(name + ".v_store", OpKind::kDataMovement, km.streaming(0, fresh * (act + c.kv_bytes))));
  const double score_bytes = scores * 4.0;  // f32 scores
  if (q <= 1) {
    const double fp_rate = c.device.peak(Pipe::kFp32) * 1e6 * cost_constants().elementwise_compute_efficiency * 2.0;
    out.push_back(kernel_entry(name + ".kq", OpKind::kAttention,
                               km.timed(0.5 * qkv_flops / fp_rate, 0.5 * qkv_flops, cache + q_bytes + score_bytes, Pipe::kFp32)));
    out.push_back(kernel_entry(name + ".softmax", OpKind::kSoftmax, km.timed(0, 5.0 * scores, 2.0 * score_bytes, Pipe::kFp32)));
    out.push_back(kernel_entry(name + ".kqv", OpKind::kAttention,
                               km.timed(0.5 * qkv_flops / fp_rate, 0.5 * qkv_flops, cache + score_bytes + q_bytes, Pipe::kFp32)));
  } else {
    const MatmulGeometry kq{a.batch * a.heads, a.q_len, kv_len, a.head_dim, false, false};
    const MatmulGeometry kqv{a.batch * a.heads, a.q_len, a.head_dim, kv_len, false, false};
    const bool half = c.half_pipe.has_value();
    const Pipe pipe = half ? *c.half_pipe : Pipe::kFp32;
    if (!half && c.kv_bytes < 4)  // K and V converted to f32 for SGEMM
      out.push_back(kernel_entry(name + ".kv_to_fp32", OpKind::kElementwise,
                                 km.streaming(0, 2.0 * (cache + cache / c.kv_bytes * 4.0))));
    const double operand = half ? 2.0 : 4.0;
    // Both GEMMs' leading dimensions are the key length and the head size, as the graph's unfused attention's
    // (op_cost.cpp): one alignment rule for the pair.
    const double lib = library_rate(c, pipe) * gemm_alignment_efficiency(kv_len, a.head_dim, pipe, c.runtime, km);
    out.push_back(kernel_entry(name + ".kq", OpKind::kAttention,
                               km.gemm(kq, pipe, 0.5 * qkv_flops, cache / c.kv_bytes * operand + q_bytes + score_bytes, lib)));
    out.push_back(kernel_entry(name + ".softmax", OpKind::kSoftmax, km.timed(0, 5.0 * scores, 2.0 * score_bytes, Pipe::kFp32)));
    out.push_back(kernel_entry(name + ".kqv", OpKind::kAttention,
                               km.gemm(kqv, pipe, 0.5 * qkv_flops, cache / c.kv_bytes * operand + score_bytes + q_bytes, lib)));
  }
  out.push_back(kernel_entry(name + ".permute", OpKind::kDataMovement, km.streaming(0, 2.0 * q_bytes)));
  return out;
}

// One forward pass of `graph` (q tokens per sequence) against `kv_len` cached positions.
// dense_only: without the attention cores and the LM head (the serving step model costs those per request).
namespace {

// The eager code's work beside the graph's kernels (data/llm_code): its Python-level calls and module calls on the
// host, and the kernels it launches beyond those the graph's ops already count (tiny elementwise kernels: norms
// split into eight calls, the rotary embedding's slices and concatenations), with `bytes` of cache copies.
OpCost eager_code_entry(const std::string& name, double python_ops, double module_calls, double code_kernels,
                        double graph_launches, double bytes, const LlmKernelContext& c) {
  const double extra = std::max(0.0, code_kernels - graph_launches);
  KernelCost k = extra > 0 ? c.km.streaming(0, bytes, extra) : c.km.streaming(0, bytes, 1);
  if (extra <= 0) {
    k.launches = 0;  // the copies are kernels the graph's count already holds
    if (bytes <= 0) k.time_us = 0;
  }
  OpCost e = kernel_entry(name, OpKind::kDataMovement, k);
  e.host_us = (python_ops * c.runtime.host_inline_op_us + module_calls * c.runtime.host_module_call_us) * c.host_scale;
  return e;
}

}  // namespace

std::vector<OpCost> llm_forward_pass(const Graph& graph, std::int64_t kv_len, bool all_logits, const LlmKernelContext& c,
                                 bool dense_only) {
  std::vector<OpCost> out;
  const CostContext ctx{c.km, c.runtime, c.plan, false};
  const double tokens = static_cast<double>(graph.batch * graph.seq);
  const LlmModelCode* code = dense_only ? nullptr : c.code;
  // The graph's launches per block and outside the blocks, to count what the eager code launches beyond them.
  int block = -1;
  double block_launches = 0, outside_launches = 0;
  // A cache that keeps only a sliding window copies only the window's positions.
  const double cache_positions = static_cast<double>(code && code->kv_cache_static ? std::max(c.static_kv_len, kv_len)
                                                                                    : cached_positions(kv_len, c.shape.window, c.runtime));
  // Grouped-query attention: code that expands K and V to every query head copies heads / kv_heads times more.
  const double extra_groups =
      c.shape.kv_heads > 0 ? std::max(0.0, static_cast<double>(c.shape.heads) / static_cast<double>(c.shape.kv_heads) - 1.0) : 0.0;
  const double cache_copy_bytes =
      code ? (code->kv_cache_copies_per_layer + code->kv_cache_copies_per_extra_group * extra_groups) * 2.0 * 2.0 * static_cast<double>(graph.batch) * cache_positions *
                 static_cast<double>(c.shape.kv_heads * c.shape.head_dim) * c.kv_bytes
           : 0.0;
  auto close_block = [&]() {
    if (!code || block < 0) return;
    out.push_back(eager_code_entry("blk." + std::to_string(block) + ".python", code->python_ops_per_layer,
                                   code->module_calls_per_layer, code->kernels_per_layer, block_launches,
                                   cache_copy_bytes, c));
    block_launches = 0;
  };
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (code) {
      const int b = llm_block_of(op.name, nullptr);
      if (b != block && b >= 0) {
        close_block();
        block = b;
      }
    }
    std::vector<OpCost> kernels;
    if (is_weight_matmul(op)) {
      int layer = 0;
      double rows = static_cast<double>(op.in_elems / op.mm.k);
      double groups = 1;
      if (tensor_role(op.name, &layer) == TensorRole::kOutput) {
        if (dense_only) continue;
        if (!all_logits) rows = static_cast<double>(graph.batch);
      }
      if (op.mm.batch > 1) {
        // Routed experts: the distinct experts the batch's tokens reach (uniform routing).
        const double e = static_cast<double>(op.mm.batch), share = rows / tokens / e;
        groups = std::clamp(e * (1.0 - std::pow(1.0 - share, tokens)), 1.0, e);
      }
      kernels = weight_matmul_kernels(op, weight_format(op, c), rows, groups, c);
    } else if (op.kind == OpKind::kAttention) {
      if (dense_only) continue;
      kernels = kv_attention_kernels(op, kv_len, c);
    } else if (op.kind == OpKind::kLoss) {
      continue;
    } else {
      OpCost e = cost_op(graph.ops, i, Phase::kForward, ctx);
      if (e.fusion == Fusion::kSkipped || e.fusion == Fusion::kFolded || e.fusion == Fusion::kHorizontal) continue;
      kernels.push_back(e);
    }
    for (auto& k : kernels) {
      (llm_block_of(op.name, nullptr) >= 0 ? block_launches : outside_launches) += k.cost.launches;
      out.push_back(std::move(k));
    }
  }
  if (code) {
    close_block();
    out.push_back(eager_code_entry("forward.python", code->python_ops_per_forward, code->module_calls_per_forward,
                                   code->kernels_per_forward, outside_launches, 0, c));
    // The generate loop's own work for the token this pass produces (selection, stopping criteria, inputs).
    out.push_back(eager_code_entry("generate.loop", code->loop_python_ops_per_token, 0, code->loop_kernels_per_token, 0,
                                   0, c));
  }
  if (c.runtime.llm_step_host_us > 0) {
    // Per pass the host builds and schedules the graph and waits for the logits: the GPU idles meanwhile.
    KernelCost k;
    k.launches = 0;
    k.time_us = c.runtime.llm_step_host_us;
    k.bound = Bound::kHost;
    out.push_back(kernel_entry("host.graph_and_logits_sync", OpKind::kDataMovement, k));
  }
  return out;
}

double stored_weight_bytes(const Graph& g, const LlmKernelContext& c) {
  double bytes = 0;
  const double small = c.runtime.llm_gguf ? 4.0 : c.runtime.llm_activation_bytes;  // norms, biases, routers
  for (const auto& op : g.ops) {
    if (op.params <= 0) continue;
    if (is_weight_matmul(op)) {
      const double groups = static_cast<double>(op.mm.batch);
      const double matrix = groups * static_cast<double>(op.mm.n * op.mm.k);
      const double owned = std::min(static_cast<double>(op.params), matrix);  // 0 when tied (bias only)
      bytes += owned * weight_format(op, c).bits / 8.0 + (static_cast<double>(op.params) - owned) * small;
    } else if (op.kind == OpKind::kEmbedding) {
      int layer = 0;
      const bool token = tensor_role(op.name, &layer) == TensorRole::kTokenEmbedding;
      bytes += static_cast<double>(op.params) * (token ? weight_format(op, c).bits / 8.0 : small);
    } else {
      bytes += static_cast<double>(op.params) * small;
    }
  }
  return bytes;
}

}  // namespace perfcast
