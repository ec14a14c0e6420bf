// The flash_attn package on PyTorch 1.x (--attention flash for 2.x, flash1 for 1.x) against the package's README
// support matrix, and --max-positions (a model run past the context its config states) against the published
// context lengths: Llama 2 4096 tokens (Touvron et al. 2023, Table 1), GPT-2 1024 learned positions (Radford et
// al. 2019, n_ctx), Mistral 7B's 32768 max_position_embeddings (its published config).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/llm_parallel.h"
#include "analysis/llm_serving.h"
#include "analysis/predict.h"
#include "cli_runner.h"
#include "core/error.h"
#include "cost/attention_kernels.h"

namespace perfcast {
namespace {

AttentionGeometry heads_of(std::int64_t head_dim) {
  AttentionGeometry a;
  a.batch = 4;
  a.heads = 32;
  a.kv_heads = 32;
  a.q_len = a.kv_len = 2048;
  a.head_dim = head_dim;
  a.causal = true;
  return a;
}

AttentionTarget on(int sm, const std::string& dtype, bool training = false) { return {"gpu", sm, dtype, training}; }

bool flash1_runs(std::int64_t head_dim, int sm, const std::string& dtype, bool training = false) {
  return flash1_refusal(heads_of(head_dim), on(sm, dtype, training)).empty();
}

// ---- the 1.x README: "Turing, Ampere, Ada, or Hopper GPUs (e.g., H100, A100, RTX 3090, T4, RTX 2080); fp16 and
// bf16 (bf16 requires Ampere, Ada, or Hopper GPUs); head dimensions that are multiples of 8, up to 128. Head dim > 64
// backward requires A100 or H100."

TEST(FlashAttnPackage, Version1SupportMatrix) {
  for (const int sm : {75, 80, 86, 89, 90}) EXPECT_TRUE(flash1_runs(64, sm, "fp16")) << sm;
  EXPECT_FALSE(flash1_runs(64, 70, "fp16"));  // V100: on the roadmap, never shipped
  EXPECT_FALSE(flash1_runs(64, 61, "fp16"));
  EXPECT_FALSE(flash1_runs(64, 80, "fp32"));
  EXPECT_FALSE(flash1_runs(64, 75, "bf16"));  // bf16 from Ampere
  EXPECT_TRUE(flash1_runs(64, 86, "bf16"));
  EXPECT_TRUE(flash1_runs(128, 75, "fp16"));
  EXPECT_FALSE(flash1_runs(160, 80, "fp16"));  // up to 128
  EXPECT_FALSE(flash1_runs(60, 80, "fp16"));   // multiples of 8
  EXPECT_TRUE(flash1_runs(8, 80, "fp16"));
  // Backward above head_dim 64: A100 and H100 only.
  EXPECT_TRUE(flash1_runs(128, 80, "fp16", true));
  EXPECT_TRUE(flash1_runs(128, 90, "bf16", true));
  EXPECT_FALSE(flash1_runs(128, 86, "fp16", true));
  EXPECT_FALSE(flash1_runs(128, 75, "fp16", true));
  EXPECT_TRUE(flash1_runs(64, 75, "fp16", true));
  EXPECT_TRUE(flash1_runs(128, 86, "fp16", false));  // forward takes it
  EXPECT_EQ(select_attention_kernel(AttentionImpl::kFlash1, heads_of(64), on(75, "fp16")), AttentionKernel::kFlash);
  EXPECT_THROW(select_attention_kernel(AttentionImpl::kFlash1, heads_of(64), on(70, "fp16")), UnsupportedError);
}

// ---- 1.x and 2.x READMEs: "PyTorch 1.12 and above"; PyTorch's own scaled_dot_product_attention came with 2.0.

PredictRequest llama_train(const std::string& gpu, const std::string& precision, const std::string& attention,
                           const std::string& torch) {
  PredictRequest r;
  r.gpu = gpu;
  r.model = "llama-2-7b";
  r.mode = Mode::kPrefill;
  r.precision = precision;
  r.attention = attention;
  r.runtime_version = torch;
  r.batch = 1;
  r.seq = 2048;
  return r;
}

TEST(FlashAttnPackage, RunsOnPyTorch1WhereThePackageDoes) {
  EXPECT_NO_THROW(predict(llama_train("a100-sxm4-80gb", "bf16", "flash", "1.13")));
  EXPECT_NO_THROW(predict(llama_train("a100-sxm4-80gb", "fp16", "flash", "1.12")));
  EXPECT_THROW(predict(llama_train("a100-sxm4-80gb", "bf16", "flash", "1.11")), InputError);
  EXPECT_THROW(predict(llama_train("a100-sxm4-80gb", "bf16", "sdpa", "1.13")), InputError);  // PyTorch's own: 2.0
  EXPECT_NO_THROW(predict(llama_train("t4", "fp16", "flash1", "1.13")));
  EXPECT_NO_THROW(predict(llama_train("a10", "fp16", "flash1", "1.12")));
  // FlashAttention-2 needs Ampere or newer and a half type; 1.x does not run on Volta.
  EXPECT_THROW(predict(llama_train("v100-sxm2-32gb", "fp16", "flash", "1.13")), UnsupportedError);
  EXPECT_THROW(predict(llama_train("t4", "fp16", "flash", "1.13")), UnsupportedError);
  EXPECT_THROW(predict(llama_train("a100-sxm4-80gb", "fp32", "flash", "1.13")), UnsupportedError);
  EXPECT_THROW(predict(llama_train("v100-sxm2-32gb", "fp16", "flash1", "1.13")), UnsupportedError);
  // The fused kernel keeps the 2048 x 2048 scores on chip: faster than the eager kernels on the same setup.
  EXPECT_LT(predict(llama_train("t4", "fp16", "flash1", "1.13")).step_us,
            predict(llama_train("t4", "fp16", "eager", "1.13")).step_us);
}

// ---- --max-positions

PredictRequest llama_parallel(std::int64_t seq, std::int64_t max_positions) {
  PredictRequest r;
  r.gpu = "a100-sxm4-80gb";
  r.model = "llama-2-7b";
  r.precision = "bf16";
  r.attention = "flash";
  r.gpus = 8;
  r.tensor_parallel = 2;
  r.seq = seq;
  r.batch = 1;
  r.max_positions = max_positions;
  return r;
}

TEST(MaxPositions, LlamaTwoRunsPastItsFourThousandPositionsWhenAsked) {
  EXPECT_NO_THROW(predict_llm_training(llama_parallel(4096, 0)));
  EXPECT_THROW(predict_llm_training(llama_parallel(8192, 0)), InputError);  // past 4096
  const Prediction at8k = predict_llm_training(llama_parallel(8192, 8192));
  const Prediction at4k = predict_llm_training(llama_parallel(4096, 8192));
  // Twice the tokens per sequence: more activation memory and a longer step.
  EXPECT_GT(at8k.memory.activations, at4k.memory.activations);
  EXPECT_GT(at8k.step_us, at4k.step_us);
  EXPECT_THROW(predict_llm_training(llama_parallel(16384, 8192)), InputError);  // past the stated context too
}

TEST(MaxPositions, ServingTakesTheLongerContext) {
  ServeRequest r;
  r.base.gpu = "a100-sxm4-80gb";
  r.base.model = "llama-2-7b";
  r.base.runtime = "vllm";
  r.base.precision = "fp16";
  r.input_len = 6000;
  r.output_len = 500;
  r.num_requests = 50;
  EXPECT_THROW(predict_serving(r), InputError);
  r.base.max_positions = 16384;
  EXPECT_NO_THROW(predict_serving(r));
}

TEST(MaxPositions, RefusesWhatCannotRunPastItsContext) {
  PredictRequest gpt2;  // 1024 learned positions: no rows past them
  gpt2.gpu = "a100-sxm4-80gb";
  gpt2.model = "gpt2";
  gpt2.mode = Mode::kPrefill;
  gpt2.precision = "fp16";
  gpt2.batch = 1;
  gpt2.seq = 512;
  gpt2.max_positions = 2048;
  EXPECT_THROW(predict(gpt2), InputError);
  PredictRequest shorter = llama_parallel(2048, 2048);  // below Llama 2's 4096
  EXPECT_THROW(predict_llm_training(shorter), InputError);
  PredictRequest mistral = llama_parallel(4096, 16384);  // below Mistral 7B's 32768
  mistral.model = "mistral-7b";
  EXPECT_THROW(predict_llm_training(mistral), InputError);
}

class MaxPositionsCli : public test::ScratchDirTest {};

TEST_F(MaxPositionsCli, OneLineErrorsAndTheNote) {
  const auto zero = run("predict --gpu a100-sxm4-80gb --model llama-2-7b --mode prefill --max-positions 0");
  EXPECT_EQ(zero.code, 2);
  const auto bert = run("predict --gpu a100-sxm4-80gb --model bert_base --max-positions 1024");
  EXPECT_EQ(bert.code, 2);
  EXPECT_NE(bert.err.find("decoder language model"), std::string::npos) << bert.err;
  const auto ok = run(
      "predict --gpu a100-sxm4-80gb --model llama-2-7b --mode prefill --precision fp16 --seq 8192 "
      "--max-positions 8192");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("past the 4096 positions"), std::string::npos) << ok.out;
  const auto v100 = run(
      "predict --gpu v100-sxm2-32gb --model llama-2-7b --mode prefill --precision fp16 --attention flash "
      "--runtime-version 1.13");
  EXPECT_EQ(v100.code, 2);
  EXPECT_NE(v100.err.find("sm_80"), std::string::npos) << v100.err;
  EXPECT_EQ(std::count(v100.err.begin(), v100.err.end(), '\n'), 1) << v100.err;
}

}  // namespace
}  // namespace perfcast
