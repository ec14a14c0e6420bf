// Eager LLM inference code (data/llm_code, docs/host-model.md 'Eager LLM code') against its sources and a
// published figure:
// - the Python-level torch calls, kernels and nn.Module calls of one Hugging Face Llama decoder layer at decode,
//   counted line by line from transformers' modeling_llama.py (LlamaDecoderLayer, LlamaAttention, LlamaRMSNorm,
//   apply_rotary_pos_emb/rotate_half, LlamaMLP), integrations/sdpa_attention.py and DynamicCache.update;
// - the same for gpt-fast's model.py (TransformerBlock, Attention, KVCache.update, RMSNorm, apply_rotary_emb);
// - the PyTorch blog 'Accelerating Generative AI with PyTorch II: GPT, Fast' (2023-11-30): its eager starting point
//   runs Llama-2-7B on an A100-80GB at 25.5 tok/s, 'heavily CPU overhead bound' (data/validation/check_llm.csv);
//   with torch.compile (mode reduce-overhead: CUDA graphs, static cache) the same model reaches 107.0 tok/s.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analysis/advisor.h"
#include "analysis/predict.h"
#include "core/error.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "device/host_profile.h"
#include "runtime/llm_model_code.h"
#include "runtime/runtime_profile.h"
#include "schedule/step.h"

namespace perfcast {
namespace {

PredictRequest gpt_fast_eager() {
  // The blog's setup: generate.py defaults (5-token prompt, 200 new tokens), bf16, batch 1; host not named.
  PredictRequest r;
  r.gpu = "a100-sxm4-80gb";
  r.model = "llama-2-7b";
  r.runtime = "pytorch";
  r.runtime_version = "2.2";
  r.mode = parse_mode("generate");
  r.precision = "bf16";
  r.batch = 1;
  r.seq = 200;
  r.context = 5;
  // host: the row leaves it empty (the blog names none), so the default host, as validate predicts it
  r.llm_code = "gpt-fast";
  return r;
}

PredictRequest hf_decode() {
  PredictRequest r;
  r.gpu = "h100-sxm5-80gb";
  r.model = "llama-3-8b";
  r.runtime = "pytorch";
  r.mode = parse_mode("decode");
  r.precision = "bf16";
  r.batch = 1;
  return r;
}

TEST(LlmEagerCode, TransformersLayerCountsFromTheSource) {
  const LlmModelCode& hf = find_llm_model_code("transformers");
  // Torch calls per layer: two RMSNorms of 8 (to(float32), pow, mean, + eps, rsqrt, *, to(dtype), weight *);
  // q/k/v projections 3, their view and transpose 6; rotary 2 unsqueezes + 7 per q and k (q*cos, two slices, neg,
  // cat, *sin, +); torch.cat of K and V into the cache 2; SDPA 1 and its transpose/contiguous 2; reshape and
  // contiguous 2; o_proj 1; two residual adds; the MLP's gate, act, up, *, down.
  const double calls = 2 * 8 + 3 + 6 + (2 + 2 * 7) + 2 + (1 + 2) + 2 + 1 + 2 + 5;
  EXPECT_EQ(hf.python_ops_per_layer, calls);
  // Of those, the kernels: norms 16, four projections, rotary 2 x (two muls, neg, cat, add), the two cats, one
  // fused SDPA kernel, two adds, the MLP's five.
  EXPECT_EQ(hf.kernels_per_layer, 16 + 4 + 2 * 5 + 2 + 1 + 2 + 5);
  // Modules: the layer, two norms, self_attn and its four projections, mlp with gate/up/down and act_fn.
  EXPECT_EQ(hf.module_calls_per_layer, 1 + 2 + 1 + 4 + 1 + 3 + 1);
  // _sample's stopping check reads a CUDA tensor every token; DynamicCache copies the cache so far.
  EXPECT_EQ(hf.syncs_per_token, 1);
  EXPECT_EQ(hf.kv_cache_copies_per_layer, 1);
  EXPECT_FALSE(hf.kv_cache_static);
}

TEST(LlmEagerCode, GptFastLayerCountsFromTheSource) {
  const LlmModelCode& g = find_llm_model_code("gpt-fast");
  // apply_rotary_emb: float, reshape, freqs view, 8 selects, 4 muls, sub, add, stack, flatten, type_as = 20.
  const double rotary = 1 + 1 + 1 + 8 + 4 + 1 + 1 + 1 + 1 + 1;
  // Attention: wqkv, split, 3 views, rotary x2, 3 transposes, 2 index_put_, 2 repeat_interleave, SDPA,
  // transpose/contiguous/view, wo.
  const double attention = 1 + 1 + 3 + 2 * rotary + 3 + 2 + 2 + 1 + 3 + 1;
  EXPECT_EQ(g.python_ops_per_layer, 2 * 8 + attention + 2 + 5);
  // Math SDPA (forced in decode_n_tokens) launches 9 kernels inside its one call.
  EXPECT_EQ(g.kernels_per_layer, 16 + 1 + 2 * 9 + 2 + 2 + 9 + 1 + 2 + 5);
  EXPECT_EQ(g.module_calls_per_layer, 10);
  EXPECT_EQ(g.syncs_per_token, 0);  // multinomial_sample_one_no_sync
  EXPECT_TRUE(g.kv_cache_static);
}

TEST(LlmEagerCode, HostOpCostIsTheSumOfItsTwoMeasuredParts) {
  const RuntimeProfile& rt = find_runtime("pytorch");
  // tools/host_trace_costs.py: host_op_us = an op's own time (10 us) + the Python before the next op (16 us).
  EXPECT_DOUBLE_EQ(rt.host_inline_op_us + rt.host_module_call_us, rt.host_op_us);
  EXPECT_EQ(rt.llm_model_code, "transformers");
}

TEST(LlmEagerCode, GptFastEagerMatchesThePublishedStartingPoint) {
  const Prediction p = predict(gpt_fast_eager());
  ASSERT_TRUE(p.tokens_per_s.has_value());
  // 25.5 tok/s published (A100-80GB at 330 W); within 25%.
  EXPECT_NEAR(*p.tokens_per_s, 25.5, 0.25 * 25.5);
  // 'heavily CPU overhead bound': the host needs more than the GPU.
  EXPECT_TRUE(host_bound(p.step));
}

TEST(LlmEagerCode, HfDecodeIsHostBoundAndLaunchesWhatTheCodeLaunches) {
  const Prediction p = predict(hf_decode());
  ASSERT_TRUE(p.tokens_per_s.has_value());
  EXPECT_TRUE(host_bound(p.step));
  // Per token: 32 layers x 40 kernels, 21 outside the layers, 26 in the generate loop.
  const double per_token = p.step.launches / static_cast<double>(p.request.seq);
  EXPECT_NEAR(per_token, 32 * 40 + 21 + 26, 1.0);
  // The graph's ops alone (--llm-code none) issue fewer, larger kernels and predict several times faster.
  PredictRequest bare = hf_decode();
  bare.llm_code = "none";
  const Prediction q = predict(bare);
  EXPECT_GT(*q.tokens_per_s, 2.0 * *p.tokens_per_s);
  // CUDA graphs replay the forward without its Python.
  PredictRequest graphs = hf_decode();
  graphs.cuda_graphs = true;
  EXPECT_GT(*predict(graphs).tokens_per_s, 2.0 * *p.tokens_per_s);
}

TEST(LlmEagerCode, HostWorkScalesWithTheHostsSingleThreadMark) {
  // All of a pass's host work, the launches (host_overhead_per_kernel_us) as well as the Python, is CPU time at the
  // reference host's speed (docs/host-model.md): on another host it scales by the PassMark single-thread marks of
  // the two CPUs (data/hosts), for every LLM pass: decode, prefill and generate. The GPU's time does not change.
  const double slow = find_host("desktop-6c").single_thread_score, fast = find_host("cloud-genoa-16vcpu").single_thread_score;
  for (const char* mode : {"decode", "prefill", "generate"}) {
    SCOPED_TRACE(mode);
    PredictRequest r = hf_decode();
    r.mode = parse_mode(mode);
    r.seq = 16;
    r.context = 64;
    r.host = "desktop-6c";
    const Prediction a = predict(r);
    r.host = "cloud-genoa-16vcpu";
    const Prediction b = predict(r);
    EXPECT_NEAR(a.step.host_us / b.step.host_us, fast / slow, 1e-6);
    EXPECT_NEAR(a.step.gpu_us, b.step.gpu_us, 1e-6 * a.step.gpu_us);
  }
  // The graph's ops alone (no eager code): the launches alone, scaled the same way.
  PredictRequest r = hf_decode();
  r.llm_code = "none";
  r.host = "desktop-6c";
  const double a = predict(r).step.host_us;
  r.host = "cloud-genoa-16vcpu";
  EXPECT_NEAR(a / predict(r).step.host_us, fast / slow, 1e-6);
}

TEST(LlmEagerCode, AdviseRanksTheHostCures) {
  const Advice a = advise(hf_decode());
  double graphs = 0, compile = 0, precision = 0;
  for (const auto& s : a.strategies) {
    if (!s.applicable) continue;
    if (s.id == "cuda-graphs") graphs = s.speedup;
    if (s.id == "torch.compile") compile = s.speedup;
    if (s.id == "int8") precision = s.speedup;
  }
  // The blog: torch.compile with CUDA graphs takes its eager 25.5 tok/s to 107.0, about 4x.
  EXPECT_GT(graphs, 2.0);
  EXPECT_GT(compile, 2.0);
  // Halving the weights does not help a host-bound step.
  EXPECT_LT(precision, 1.1);
}

TEST(LlmEagerCode, TheKvCacheTakesTheModelsDtype) {
  // transformers' DynamicCache stores what k_proj / v_proj return, in the model's torch_dtype. Llama 3 8B's config:
  // 32 layers, 8 key-value heads of 128: K and V hold 2 x 32 x 8 x 128 = 65536 values per token, so 128 positions
  // at batch 1 are 16 MiB in bf16 and 32 MiB in fp32.
  PredictRequest r = hf_decode();
  r.seq = 128;
  const Prediction bf16 = predict(r);
  r.precision = "fp32";
  const Prediction fp32 = predict(r);
  ASSERT_TRUE(bf16.llm && fp32.llm);
  EXPECT_DOUBLE_EQ(bf16.llm->kv_cache_bytes, 65536.0 * 128 * 2);
  EXPECT_DOUBLE_EQ(fp32.llm->kv_cache_bytes, 65536.0 * 128 * 4);
  r.kv_precision = "fp16";  // an explicit --kv-precision still wins
  EXPECT_DOUBLE_EQ(predict(r).llm->kv_cache_bytes, 65536.0 * 128 * 2);
}

TEST(LlmEagerCode, OutsideAnLlmTokenLoopTheFlagIsAnInputError) {
  // A flag that changes nothing must say so: a CNN training step has no generate loop to count.
  PredictRequest r;
  r.gpu = "a100-sxm4-40gb";
  r.model = "resnet50";
  r.mode = Mode::kTrain;
  r.batch = 32;
  r.llm_code = "gpt-fast";
  EXPECT_THROW(predict(r), InputError);
}

TEST(LlmEagerCode, AdviseOffersTheRidgeBatchForDecode) {
  // A decode step reads all the weights for one token per sequence: 2 flop per weight per sequence against
  // bits/8 bytes per weight. It stops being bound by the weights' bandwidth where batch x 2 / (16/8) flop per
  // byte reaches the GPU's ridge, bf16 tensor peak over DRAM bandwidth (data/gpus/h100-sxm5-80gb.toml datasheet
  // figures, 989.4 TFLOP/s and 3350 GB/s, at the architecture's achievable share of the bandwidth).
  const DeviceSpec h100 = find_gpu("h100-sxm5-80gb");
  const double ridge = h100.peak(Pipe::kTcBf16) * 1e12 / (h100.mem_bw_gbps * 1e9 * architecture_of(h100).dram_efficiency);
  const auto at_ridge = static_cast<std::int64_t>(std::ceil(ridge));
  const Advice a = advise(hf_decode());
  const StrategyResult* batch = nullptr;
  for (const auto& s : a.strategies)
    if (s.id == "larger-batch") batch = &s;
  ASSERT_NE(batch, nullptr);
  ASSERT_TRUE(batch->applicable) << batch->reason;
  EXPECT_EQ(batch->request.batch, at_ridge);
  // The memory limit stays the upper bound, named in the reason with the per-token latency before and after.
  EXPECT_NE(batch->reason.find("memory allows up to batch"), std::string::npos) << batch->reason;
  EXPECT_NE(batch->reason.find("time per output token"), std::string::npos) << batch->reason;
  // The step was host-bound at batch 1: more sequences per step share the host's work.
  EXPECT_GT(batch->speedup, 10.0);
}

TEST(LlmEagerCode, UnknownCodeIsAnInputErrorWithASuggestion) {
  PredictRequest r = hf_decode();
  r.llm_code = "transformer";
  try {
    predict(r);
    FAIL() << "an unknown model code must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("transformers"), std::string::npos) << e.what();
  }
  r.llm_code = "gpt-fast";
  r.runtime = "vllm";
  EXPECT_THROW(predict(r), InputError);
}

}  // namespace
}  // namespace perfcast
