// Tensor-core GEMMs whose leading dimensions are not multiples of 16 bytes, as eager PyTorch hands them to cuBLAS.
// Measured on the H200 (data/device_sessions/2026-12-04-h200): Hugging Face BertForPreTraining's decoder onto the
// 30522-word vocabulary (8192 tokens, 768 -> 30522, FP16 under autocast) ran
// cutlass_80_tensorop_f16_s16816gemm_f16_128x256_64x3_{nn,tn,nt}_align2 at 1.49-1.61 ms a GEMM (kernels_main.txt,
// batch 16 x 512), where the encoder's aligned linears ran nvjet_sm90 kernels and `perfcast-calibrate` measured an
// aligned FP16 GEMM at 620 TFLOPS (h200-sxm-141gb-measured.toml): 384 GFLOP at that rate is 0.62 ms. The kernel
// sweep's odd-sized GEMMs ran cutlass_75_*_align1 kernels at 100-127 TFLOPS, its 2-mod-4 ones cutlass_80_*_align2 at
// up to ~170 TFLOPS (docs/kernel-model.md, "Out of sample: H200").
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cost/kernel_cost.h"
#include "cost/llm_kernels.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// Forward (or backward) cost of the first op of `kind` in `g` on `gpu` under `runtime_id` in FP16 (autocast).
KernelCost first_op(const Graph& g, OpKind kind, const std::string& gpu, const std::string& runtime_id, bool fallback,
                    Phase phase = Phase::kForward) {
  const DeviceSpec device = find_gpu(gpu);
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  RuntimeProfile runtime = find_runtime(runtime_id);
  runtime.gemm_alignment_fallback = fallback;
  const PrecisionPlan plan = resolve_precision("amp", device, arch, runtime, "", true);
  const CostContext ctx{kernels, runtime, plan, true};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == kind) return cost_op(g.ops, i, phase, ctx).cost;
  ADD_FAILURE() << "no such op in the graph";
  return {};
}

// The pre-training head's decoder: 16 x 512 tokens, 768 -> vocab, as Hugging Face BertLMPredictionHead runs it.
Graph decoder(std::int64_t vocab) {
  GraphBuilder b("decoder", 16);
  const Tensor x = b.input({512, 768});
  b.linear(x, vocab, true);
  return b.finish();
}

TEST(GemmAlignment, EagerPyTorchRunsBertsVocabularyOnTheUnderAlignedKernelOnHopper) {
  EXPECT_TRUE(find_runtime("pytorch").gemm_alignment_fallback);
  const double misaligned = first_op(decoder(30522), OpKind::kMatmul, "h200-sxm-141gb", "pytorch", true).time_us;
  const double aligned = first_op(decoder(30528), OpKind::kMatmul, "h200-sxm-141gb", "pytorch", true).time_us;
  // Measured 1.49-1.61 ms against ~0.62 ms at the board's aligned FP16 rate: well over twice the aligned layer's time.
  EXPECT_GT(misaligned, 2.0 * aligned);
  // Within a factor 1.6 of the measured GEMMs (the rate is fitted to the sweep's GEMMs, not to this one).
  EXPECT_GT(misaligned, 1490.0 / 1.6);
  EXPECT_LT(misaligned, 1610.0 * 1.6);
}

TEST(GemmAlignment, AlignedLayersOtherArchitecturesAndPaddingRuntimesKeepTheAlignedRate) {
  // 30528 = 8 x 3816: 16-byte rows, the switch changes nothing.
  EXPECT_DOUBLE_EQ(first_op(decoder(30528), OpKind::kMatmul, "h200-sxm-141gb", "pytorch", true).time_us,
                   first_op(decoder(30528), OpKind::kMatmul, "h200-sxm-141gb", "pytorch", false).time_us);
  // No measured under-aligned tensor GEMM on Ampere in the project: the A100 keeps the aligned rate.
  EXPECT_DOUBLE_EQ(first_op(decoder(30522), OpKind::kMatmul, "a100-sxm4-40gb", "pytorch", true).time_us,
                   first_op(decoder(30522), OpKind::kMatmul, "a100-sxm4-40gb", "pytorch", false).time_us);
  // XLA pads FP16/BF16 GEMMs to multiples of 8 before cuBLAS (xla/service/gpu CublasPadForGemms).
  EXPECT_FALSE(find_runtime("jax").gemm_alignment_fallback);
  EXPECT_FALSE(find_runtime("tensorflow-xla").gemm_alignment_fallback);
}

TEST(GemmAlignment, OddWidthsRunSlowerThanTwoElementAlignedOnes) {
  // The sweep's align1 kernels (odd sizes) ran slower than its align2 ones; both far under the aligned rate.
  const double odd = first_op(decoder(30523), OpKind::kMatmul, "h200-sxm-141gb", "pytorch", true).time_us;
  const double two = first_op(decoder(30522), OpKind::kMatmul, "h200-sxm-141gb", "pytorch", true).time_us;
  EXPECT_GT(odd, 1.3 * two);
}

// ViT's 197 tokens (196 patches and the class token) make every score GEMM of eager attention odd-sized: QK^T writes
// rows of 197 and PV reads them.
TEST(GemmAlignment, AttentionOverAnOddSequenceRunsItsScoreGemmsUnderAligned) {
  const auto attention = [](std::int64_t seq) {
    GraphBuilder b("attn", 64);
    const Tensor q = b.input({seq, 768});
    b.attention(q, q, q, 12, 12, false, false, "attn", false, false);
    return b.finish();
  };
  const double odd_on = first_op(attention(197), OpKind::kAttention, "h200-sxm-141gb", "pytorch", true).time_us;
  const double odd_off = first_op(attention(197), OpKind::kAttention, "h200-sxm-141gb", "pytorch", false).time_us;
  const double even_on = first_op(attention(200), OpKind::kAttention, "h200-sxm-141gb", "pytorch", true).time_us;
  const double even_off = first_op(attention(200), OpKind::kAttention, "h200-sxm-141gb", "pytorch", false).time_us;
  EXPECT_GT(odd_on, odd_off);
  EXPECT_DOUBLE_EQ(even_on, even_off);
}

// GPT-2's 50257-word LM head (768 -> 50257) is one cuBLAS call whichever path costs it: the graph's linear (training,
// inference) and the language-model path's weight GEMM (prefill, generate) hand eager PyTorch's cuBLAS the same
// unpadded leading dimensions, so both slow by the same factor on Hopper. nanoGPT pads GPT-2's vocabulary to 50304
// (a multiple of 64) "for efficiency" (karpathy/nanoGPT model.py GPTConfig: vocab_size 50304, 'GPT-2 vocab_size of
// 50257, padded up to nearest multiple of 64 for efficiency'): that head keeps the aligned rate on both paths.
TEST(GemmAlignment, Gpt2HeadSlowsAlikeInTheGraphAndTheLanguageModelPath) {
  const DeviceSpec device = find_gpu("h200-sxm-141gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel km(device, arch);
  RuntimeProfile on = find_runtime("pytorch");
  ASSERT_TRUE(on.gemm_alignment_fallback);
  RuntimeProfile off = on;
  off.gemm_alignment_fallback = false;
  const PrecisionPlan plan = resolve_precision("fp16", device, arch, on, "", false);
  ASSERT_TRUE(is_tensor_pipe(plan.matmul_pipe));
  const WeightPrecision weights = resolve_weight_precision("fp16");
  const LlmShape shape;
  const auto ratios = [&](std::int64_t vocab) {
    GraphBuilder g("head", 8192);
    g.linear(g.input({768}), vocab);
    const Graph graph = g.finish();
    std::size_t index = 0;
    while (graph.ops[index].kind != OpKind::kMatmul) ++index;
    const auto graph_us = [&](const RuntimeProfile& rt) {
      return cost_op(graph.ops, index, Phase::kForward, CostContext{km, rt, plan, false}).cost.time_us;
    };
    const auto llm_us = [&](const RuntimeProfile& rt) {
      const LlmKernelContext c{device, arch, km, rt, weights, shape, plan, 2, plan.matmul_pipe, std::nullopt};
      double us = 0;
      for (const OpCost& k : weight_matmul_kernels(graph.ops[index], WeightFormat{"f16", 16}, 8192, 1, c))
        us += k.cost.time_us;
      return us;
    };
    return std::pair{graph_us(on) / graph_us(off), llm_us(on) / llm_us(off)};
  };
  const auto [graph_odd, llm_odd] = ratios(50257);
  EXPECT_GT(graph_odd, 2.0) << "8192 tokens x 768 x 50257 is compute-bound: the align1 kernel's rate shows";
  EXPECT_NEAR(llm_odd / graph_odd, 1.0, 1e-6);
  const auto [graph_padded, llm_padded] = ratios(50304);
  EXPECT_DOUBLE_EQ(graph_padded, 1.0);
  EXPECT_DOUBLE_EQ(llm_padded, 1.0);
}

// The eager (unfused) attention of the language-model path runs QK^T and PV as cuBLAS batched GEMMs over the cached
// keys: a prefill over an odd key length takes the under-aligned kernels as the graph's unfused attention does.
TEST(GemmAlignment, EagerPrefillScoreGemmsOverAnOddKeyLengthRunUnderAligned) {
  const DeviceSpec device = find_gpu("h200-sxm-141gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel km(device, arch);
  RuntimeProfile on = find_runtime("pytorch");
  on.llm_fused_attention = false;
  RuntimeProfile off = on;
  off.gemm_alignment_fallback = false;
  const PrecisionPlan plan = resolve_precision("fp16", device, arch, on, "", false);
  const WeightPrecision weights = resolve_weight_precision("fp16");
  const LlmShape shape;
  const auto score_us = [&](const RuntimeProfile& rt, std::int64_t len) {
    Op op;
    op.kind = OpKind::kAttention;
    op.name = "h.0.attn";
    op.attn.batch = 8;
    op.attn.heads = 12;
    op.attn.kv_heads = 12;
    op.attn.q_len = len;
    op.attn.head_dim = 64;
    op.attn.causal = true;
    const LlmKernelContext c{device, arch, km, rt, weights, shape, plan, 2, plan.matmul_pipe, plan.matmul_pipe};
    double us = 0;
    for (const OpCost& k : kv_attention_kernels(op, len, c))
      if (k.kind == OpKind::kAttention) us += k.cost.time_us;
    return us;
  };
  EXPECT_GT(score_us(on, 1023), score_us(off, 1023));
  EXPECT_DOUBLE_EQ(score_us(on, 1024), score_us(off, 1024));
}

}  // namespace
}  // namespace perfcast
