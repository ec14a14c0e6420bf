// TensorRT-LLM's generation-phase attention: the masked MHA kernel where XQA does not run (grouped-query models
// before 0.9 without TRTLLM_ENABLE_XQA=1, and models with one KV head per query head), XQA for grouped-query
// models otherwise. The expectations are the published 0.8.0 throughputs (docs/source/performance.md, 'All data
// was generated using version 0.8.0', Peak Throughput tables, FP8 weights and KV cache, TP 1) and the documented
// kernel choices, not this code's outputs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "analysis/predict.h"
#include "core/error.h"
#include "cost/kernel_cost.h"
#include "cost/llm_kernels.h"
#include "cost/precision.h"
#include "cost/quantization.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/op.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

PredictRequest generate(const std::string& gpu, const std::string& model, std::int64_t batch, std::int64_t in,
                        std::int64_t out, const std::string& attention = "") {
  PredictRequest r;
  r.gpu = gpu;
  r.model = model;
  r.runtime = "tensorrt-llm";
  r.runtime_version = "0.8.0";
  r.mode = parse_mode("generate");
  r.precision = "fp8";
  r.kv_precision = "fp8";
  r.batch = batch;
  r.context = in;
  r.seq = out;
  r.attention = attention;
  return r;
}

double tokens_per_s(const PredictRequest& r) { return *predict(r).tokens_per_s; }

// performance.md 0.8.0: 'GQA kernels ... are currently experimental and not enabled by default ... export
// TRTLLM_ENABLE_XQA=1'; later gpt-attention docs: XQA 'is default enabled' (--disable_xqa to turn it off).
TEST(TrtllmGenerationAttention, XqaOffByDefaultBefore09) {
  const RuntimeProfile& trt = find_runtime("tensorrt-llm");
  EXPECT_TRUE(trt.llm_decode_shared_kv);
  EXPECT_TRUE(trt.llm_masked_mha_decode);
  EXPECT_FALSE(at_version(trt, "0.8.0").llm_decode_shared_kv);
  EXPECT_TRUE(at_version(trt, "0.9.0").llm_decode_shared_kv);
  // Runtimes without a masked MHA kernel keep their own decode attention.
  EXPECT_FALSE(find_runtime("vllm").llm_masked_mha_decode);
}

// TensorRT-LLM 0.8.0's trtllm-build has no --use_fp8_context_fmha (github.com/NVIDIA/TensorRT-LLM/issues/1463,
// 'Code: TensorRT-LLM 0.8.0 release'): with FP8 GEMMs the context FMHA still runs in the plugin's float16, which
// does the same attention products at half the FP8 tensor rate, so a 2048-token FP8 prefill is slower at 0.8 than
// with the FP8 context attention the profile keeps for later releases.
TEST(TrtllmGenerationAttention, ContextFmhaStaysHalfPrecisionBefore09) {
  const RuntimeProfile& trt = find_runtime("tensorrt-llm");
  EXPECT_TRUE(trt.llm_fp8_context_attention);
  EXPECT_FALSE(at_version(trt, "0.8.0").llm_fp8_context_attention);
  PredictRequest r;
  r.gpu = "h100-sxm5-80gb";
  r.model = "llama-2-7b";
  r.runtime = "tensorrt-llm";
  r.mode = parse_mode("prefill");
  r.precision = "fp8";
  r.kv_precision = "fp8";
  r.batch = 1;
  r.seq = 2048;
  r.runtime_version = "0.8.0";
  const double v08 = tokens_per_s(r);
  r.runtime_version = "0.9.0";
  const double v09 = tokens_per_s(r);
  EXPECT_LT(v08, 0.99 * v09);
  EXPECT_GT(v08, 0.8 * v09);  // attention is a small share of a 7B model's 2048-token prefill
}

// Mistral 7B (32 query heads, 8 KV heads) without XQA converts and multiplies its cache once per query head, like
// LLaMA 7B (32 KV heads): the table gives them nearly the same generation throughput at batch 120, 128 in / 2048
// out (H200 8,968 vs 8,343 tok/s, ratio 1.07; H100 8,619 vs 6,922, ratio 1.25), where a kernel that shares the
// grouped reads would make Mistral about twice as fast.
TEST(TrtllmGenerationAttention, MistralWithoutXqaRunsLikeLlama7b) {
  for (const auto& [gpu, published] : {std::pair<std::string, double>{"h200-sxm-141gb", 8968.0 / 8343.0},
                                       std::pair<std::string, double>{"h100-sxm5-80gb", 8619.0 / 6922.0}}) {
    const double ratio = tokens_per_s(generate(gpu, "mistral-7b", 120, 128, 2048)) /
                         tokens_per_s(generate(gpu, "llama-2-7b", 120, 128, 2048));
    EXPECT_GT(ratio, published / 1.3) << gpu;
    EXPECT_LT(ratio, published * 1.3) << gpu;
  }
}

// The same Mistral rows barely move from H100 to H200 (8,619 -> 8,968 tok/s at batch 120, 3,733 -> 3,868 at
// batch 56 with 2048 in / 2048 out: +4%) although H200's HBM3e is 1.43x faster: the masked MHA kernel's issue
// work, the same on both (132 SMs), bounds the step, not DRAM.
TEST(TrtllmGenerationAttention, MistralMaskedMhaIsNotBandwidthBoundOnHopper) {
  for (const auto& [batch, in, published] :
       {std::tuple<std::int64_t, std::int64_t, double>{120, 128, 8968.0 / 8619.0},
        std::tuple<std::int64_t, std::int64_t, double>{56, 2048, 3868.0 / 3733.0}}) {
    const double ratio = tokens_per_s(generate("h200-sxm-141gb", "mistral-7b", batch, in, 2048)) /
                         tokens_per_s(generate("h100-sxm5-80gb", "mistral-7b", batch, in, 2048));
    EXPECT_GT(ratio, published / 1.15) << batch;
    EXPECT_LT(ratio, published * 1.15) << batch;
  }
}

// XQA 'reduces data loading and conversion' (docs/source/blogs/XQA-kernel.md): naming the kernel with
// --attention xqa (TRTLLM_ENABLE_XQA=1) makes a grouped-query model faster than with mmha; a model with one KV
// head per query head runs masked MHA either way.
TEST(TrtllmGenerationAttention, AttentionFlagNamesTheKernel) {
  const double xqa = tokens_per_s(generate("h200-sxm-141gb", "mistral-7b", 120, 128, 2048, "xqa"));
  const double mmha = tokens_per_s(generate("h200-sxm-141gb", "mistral-7b", 120, 128, 2048, "mmha"));
  const double fallback = tokens_per_s(generate("h200-sxm-141gb", "mistral-7b", 120, 128, 2048));
  EXPECT_GT(xqa, mmha);
  EXPECT_DOUBLE_EQ(fallback, mmha);
  EXPECT_DOUBLE_EQ(tokens_per_s(generate("h200-sxm-141gb", "llama-2-7b", 120, 128, 2048, "xqa")),
                   tokens_per_s(generate("h200-sxm-141gb", "llama-2-7b", 120, 128, 2048, "mmha")));
}

TEST(TrtllmGenerationAttention, KernelNamesBelongToTensorrtLlm) {
  PredictRequest r = generate("h200-sxm-141gb", "mistral-7b", 8, 128, 128, "xqa");
  r.runtime = "vllm";
  r.runtime_version.clear();
  EXPECT_THROW(predict(r), InputError);
  PredictRequest eager = generate("h200-sxm-141gb", "mistral-7b", 8, 128, 128, "eager");
  EXPECT_THROW(predict(eager), InputError);
  PredictRequest typo = generate("h200-sxm-141gb", "mistral-7b", 8, 128, 128, "xqaa");
  EXPECT_THROW(predict(typo), InputError);
}

TEST(TrtllmGenerationAttention, KernelNameWithoutGenerationIsAnError) {
  // XQA and masked MHA are TensorRT-LLM's generation-phase kernels: a prefill-only request runs neither.
  PredictRequest r = generate("h200-sxm-141gb", "mistral-7b", 8, 128, 128, "xqa");
  r.mode = Mode::kPrefill;
  EXPECT_THROW(predict(r), InputError);
}

// Decode attention (masked MHA or XQA) is issue work on the SMs from end to end (conversions, FMAs and the softmax's
// float math in the same thread blocks), so an issue-bound launch takes time inversely proportional to the SM clock:
// capping the board's power (nvidia-smi -pl) lowers the sustained clock, and every part of the kernel slows by the
// same factor. Its time on an H100 SXM at its rated power limit and at half of it, with the sustained clock of each.
struct ClockedAttention {
  double full_us = 0, capped_us = 0, full_clock = 0, capped_clock = 0;
};

ClockedAttention decode_attention_at_two_power_limits(const RuntimeProfile& rt) {
  const DeviceSpec full = find_gpu("h100-sxm5-80gb");
  DeviceSpec capped = full;
  capped.tdp_w = full.tdp_w / 2;
  const WeightPrecision weights = resolve_weight_precision("fp16");
  const LlmShape shape;
  Op op;
  op.kind = OpKind::kAttention;
  op.name = "blk.0.attn";
  op.attn.batch = 64;
  op.attn.heads = 32;
  op.attn.kv_heads = 8;  // Mistral 7B's grouped-query heads
  op.attn.q_len = 1;
  op.attn.head_dim = 128;
  op.attn.causal = true;
  const auto attention = [&](const DeviceSpec& device, double* clock) {
    const ArchitectureProfile& arch = architecture_of(device);
    const KernelCostModel km(device, arch);
    *clock = km.compute_clock_factor();
    const PrecisionPlan plan = resolve_precision("fp16", device, arch, rt, "", false);
    const LlmKernelContext c{device, arch, km, rt, weights, shape, plan, 1, plan.matmul_pipe, std::nullopt};
    for (const OpCost& k : kv_attention_kernels(op, 4096, c))
      if (k.kind == OpKind::kAttention) return k.cost.compute_us;
    return 0.0;
  };
  ClockedAttention r;
  r.full_us = attention(full, &r.full_clock);
  r.capped_us = attention(capped, &r.capped_clock);
  return r;
}

void expect_time_scales_inversely_with_clock(const RuntimeProfile& rt) {
  const ClockedAttention r = decode_attention_at_two_power_limits(rt);
  ASSERT_GT(r.full_us, 0);
  ASSERT_LT(r.capped_clock, 0.95 * r.full_clock) << "half the power limit must lower the sustained clock";
  const double ratio = r.full_clock / r.capped_clock;
  EXPECT_NEAR(r.capped_us / r.full_us, ratio, 1e-9 * ratio);
}

TEST(TrtllmGenerationAttention, MaskedMhaTimeScalesInverselyWithTheSustainedClock) {
  const RuntimeProfile rt = at_version(find_runtime("tensorrt-llm"), "0.8.0");
  ASSERT_TRUE(rt.llm_masked_mha_decode);
  ASSERT_FALSE(rt.llm_decode_shared_kv);  // Mistral 7B is grouped, but XQA is off in 0.8
  expect_time_scales_inversely_with_clock(rt);
}

TEST(TrtllmGenerationAttention, GroupedQueryDecodeTimeScalesInverselyWithTheSustainedClock) {
  const RuntimeProfile rt = at_version(find_runtime("tensorrt-llm"), "0.9.0");
  ASSERT_TRUE(rt.llm_decode_shared_kv);  // XQA on from 0.9: the grouped heads share the cache reads
  expect_time_scales_inversely_with_clock(rt);
}

}  // namespace
}  // namespace perfcast
