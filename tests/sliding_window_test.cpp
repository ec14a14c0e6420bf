// Sliding-window attention: Mistral 7B v0.1's window from its config.json, the banded causal pair count a
// windowed flash kernel computes, and the kernels Hugging Face's attention paths run with a window
// (data/attention.toml [sliding_window]).
#include <gtest/gtest.h>

#include <string>

#include "cost/attention_kernels.h"
#include "graph/op_arithmetic.h"
#include "import/model_source.h"
#include "test_paths.h"

namespace perfcast {
namespace {

const std::string kHf = std::string(PERFCAST_SOURCE_DIR) + "/data/models/hf/";

// The first attention core of a model built at `seq` tokens.
Op attention_of(const std::string& model, std::int64_t seq) {
  const Graph g = resolve_model(model).build(ModelOptions{1, seq});
  for (const auto& op : g.ops)
    if (op.kind == OpKind::kAttention) return op;
  ADD_FAILURE() << model << " has no attention core";
  return Op{};
}

// Closed form of the banded causal mask: query i (1-based) of S sees min(i, W) keys, so the pairs are
// 1 + 2 + ... + W for the first W queries and W for each of the S - W others:
// W(W+1)/2 + (S - W)W = S*W - W(W-1)/2 (Beltagy et al. 2020, 'Longformer', arXiv:2004.05150, Sec. 3.1: sliding
// window attention costs O(n x w); Jiang et al. 2023, 'Mistral 7B', arXiv:2310.06825, Sec. 2: each token attends
// to at most W = 4096 positions).
double banded_pairs(double s, double w) { return s * w - w * (w - 1.0) / 2.0; }

TEST(SlidingWindow, MistralV01ConfigHasA4096Window) {
  // mistralai/Mistral-7B-v0.1 config.json: "sliding_window": 4096; Mixtral-8x7B-v0.1: null; Llama 2: no field.
  EXPECT_EQ(attention_of("mistral-7b", 128).attn.window, 4096);
  EXPECT_EQ(attention_of(kHf + "mistral-7b.json", 128).attn.window, 4096);
  EXPECT_EQ(attention_of("mixtral-8x7b", 128).attn.window, 0);
  EXPECT_EQ(attention_of("llama-2-7b", 128).attn.window, 0);
  // Qwen2's config carries sliding_window with use_sliding_window false: no window.
  EXPECT_EQ(attention_of("qwen2-7b", 128).attn.window, 0);
}

TEST(SlidingWindow, PairCountIsTheBandedClosedForm) {
  EXPECT_DOUBLE_EQ(windowed_causal_pairs(8192, 8192, 4096), banded_pairs(8192, 4096));
  EXPECT_DOUBLE_EQ(windowed_causal_pairs(8192, 8192, 4096), 25167872.0);  // 8192*4096 - 4096*4095/2 = 33554432 - 8386560
  // Within the window the band is the causal triangle S(S+1)/2.
  EXPECT_DOUBLE_EQ(windowed_causal_pairs(4096, 4096, 4096), 4096.0 * 4097.0 / 2.0);
  // One decoded token at position 10000 sees the window's 4096 keys.
  EXPECT_DOUBLE_EQ(windowed_causal_pairs(1, 10000, 4096), 4096.0);
}

TEST(SlidingWindow, FlashForwardFlopsAtSeq8192AreTheBandedCount) {
  Op op = attention_of("mistral-7b", 8192);
  op.attn.fused = true;  // FlashAttention-2 given window_size
  const double d = 128, heads = 32, s = 8192, w = 4096;
  // QK^T and PV: 2 x 2d FLOPs per scored pair, plus the softmax's 5 per pair (op_arithmetic.cpp).
  const double expected = heads * banded_pairs(s, w) * (4.0 * d + 5.0);
  EXPECT_NEAR(forward_work(op, ElemBytes{2, 2}, false).flops, expected, expected * 1e-12);
}

TEST(SlidingWindow, MaskedAndUnfusedKernelsComputeEveryScore) {
  Op op = attention_of("mistral-7b", 8192);
  const double full = 32.0 * 8192.0 * 8192.0 * (4.0 * 128 + 5.0);
  EXPECT_NEAR(forward_work(op, ElemBytes{2, 2}, false).flops, full, full * 1e-12);  // eager
  op.attn.fused = op.attn.memory_efficient = true;  // sdpa handed the window as a mask
  EXPECT_NEAR(forward_work(op, ElemBytes{2, 2}, false).flops, full, full * 1e-12);
}

TEST(SlidingWindow, NothingChangesUpToTheWindow) {
  for (const std::int64_t seq : {2048, 4096}) {
    Op op = attention_of("mistral-7b", seq);
    op.attn.fused = true;
    Op plain = op;
    plain.attn.window = 0;
    EXPECT_EQ(forward_work(op, ElemBytes{2, 2}, true).flops, forward_work(plain, ElemBytes{2, 2}, true).flops);
    EXPECT_EQ(backward_work(op, ElemBytes{2, 2}).flops, backward_work(plain, ElemBytes{2, 2}).flops);
  }
}

TEST(SlidingWindow, HuggingFacePathsAsTheirSourcesRunThem) {
  const AttentionTarget h100{"h100-sxm5-80gb", 90, "bf16", true};
  AttentionGeometry a = attention_of("mistral-7b", 8192).attn;
  // sdpa: the window arrives as a 4-D mask (AttentionMaskConverter._ignore_causal_mask_sdpa), which
  // FlashAttention-2 in PyTorch refuses (check_for_attn_mask): the memory-efficient kernel runs.
  EXPECT_EQ(select_attention_kernel(AttentionImpl::kSdpa, a, h100), AttentionKernel::kMemoryEfficient);
  // Within the window sdpa keeps FlashAttention-2 (is_causal, no mask).
  EXPECT_EQ(select_attention_kernel(AttentionImpl::kSdpa, attention_of("mistral-7b", 4096).attn, h100),
            AttentionKernel::kFlash);
  // flash_attention_2 passes window_size: the window stays and the kernel skips the blocks outside it.
  AttentionGeometry flash = a;
  flash.fused = true;
  apply_window_rules(flash, AttentionImpl::kFlash);
  EXPECT_EQ(flash.window, 4096);
  EXPECT_FALSE(flash.memory_efficient);
  // flash_attn 1.x has no window_size: full causal attention runs.
  AttentionGeometry v1 = a;
  v1.fused = true;
  apply_window_rules(v1, AttentionImpl::kFlash1);
  EXPECT_EQ(v1.window, 0);
}

}  // namespace
}  // namespace perfcast
