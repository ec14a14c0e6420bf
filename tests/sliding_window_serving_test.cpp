// Sliding-window attention in LLM inference and serving: what each engine does with Mistral 7B v0.1's window
// (config.json "sliding_window": 4096) in its decode reads and its KV cache. Expectations from outside the code:
// the window from the config, Mistral 7B's KV bytes per token from its published shape (32 layers x 8 KV heads x 128
// dims x K and V x 2 bytes = 131072 B in FP16), a rolling cache that holds exactly the window's positions (Mistral's
// reference RotatingBufferCache; vLLM's block manager and Hugging Face's DynamicSlidingWindowLayer free or drop what
// leaves it), vLLM's block cap (block_manager.py: window // block_size + 2 blocks), and a decode step that reads at
// most the window's keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/llm_serving.h"
#include "analysis/predict.h"

namespace perfcast {
namespace {

constexpr double kMistralKvBytesPerToken = 32.0 * 8 * 128 * 2 * 2;  // layers x KV heads x head dim x (K, V) x fp16
constexpr std::int64_t kWindow = 4096;                               // config.json sliding_window

PredictRequest decode(const std::string& model, const std::string& runtime, std::int64_t context, std::int64_t seq,
                      std::int64_t batch) {
  PredictRequest r;
  r.gpu = "h100-sxm5-80gb";
  r.model = model;
  r.runtime = runtime;
  r.mode = parse_mode("decode");
  r.precision = runtime == "llama.cpp" ? "q4_0" : "fp16";
  r.batch = batch;
  r.seq = seq;
  r.context = context;
  return r;
}

// The bytes of block 0's attention core in one decode pass of a one-token prediction (the core's own kernel).
double first_attention_bytes(const Prediction& p) {
  for (const auto& e : p.step.entries)
    if (e.name == "blk.0.attn") return e.cost.bytes;
  ADD_FAILURE() << "no blk.0.attn entry";
  return 0;
}

ServeRequest serve(const std::string& engine, std::int64_t in, std::int64_t out) {
  ServeRequest r;
  r.base.gpu = "h100-sxm5-80gb";
  r.base.model = "mistral-7b";
  r.base.runtime = engine;
  r.base.precision = "fp16";
  r.input_len = in;
  r.output_len = out;
  r.num_requests = 100;
  return r;
}

TEST(SlidingWindowServing, MistralKvBytesPerTokenFollowTheConfig) {
  EXPECT_DOUBLE_EQ(predict_serving(serve("vllm", 512, 128)).kv_bytes_per_token_per_gpu, kMistralKvBytesPerToken);
  EXPECT_DOUBLE_EQ(kMistralKvBytesPerToken, 131072.0);
}

TEST(SlidingWindowServing, ARollingCacheHoldsExactlyTheWindow) {
  // 16000 cached + 128 generated = 16128 positions per sequence, batch 2.
  const double positions = 16128, batch = 2;
  // vLLM frees the blocks that leave the window; transformers' DynamicSlidingWindowLayer keeps the window: both
  // hold 4096 positions per sequence, what Mistral's reference rolling buffer holds.
  for (const std::string engine : {"vllm", "pytorch"}) {
    const Prediction p = predict(decode("mistral-7b", engine, 16000, 128, 2));
    ASSERT_TRUE(p.llm) << engine;
    EXPECT_DOUBLE_EQ(p.llm->kv_cache_bytes, kMistralKvBytesPerToken * kWindow * batch) << engine;
  }
  // TensorRT-LLM without max_attention_window_size, SGLang's Llama path and llama.cpp keep every position.
  for (const std::string engine : {"tensorrt-llm", "sglang", "llama.cpp"}) {
    const Prediction p = predict(decode("mistral-7b", engine, 16000, 128, 2));
    ASSERT_TRUE(p.llm) << engine;
    EXPECT_DOUBLE_EQ(p.llm->kv_cache_bytes, kMistralKvBytesPerToken * positions * batch) << engine;
  }
  // Below the window nothing is capped, and a model without a window (Llama 2 7B, 32 KV heads) never is.
  const Prediction short_ctx = predict(decode("mistral-7b", "vllm", 2000, 128, 1));
  EXPECT_DOUBLE_EQ(short_ctx.llm->kv_cache_bytes, kMistralKvBytesPerToken * 2128);
  const Prediction llama = predict(decode("llama-2-7b", "vllm", 3000, 128, 1));
  EXPECT_DOUBLE_EQ(llama.llm->kv_cache_bytes, 32.0 * 32 * 128 * 2 * 2 * 3128);
}

TEST(SlidingWindowServing, DecodeReadsAtMostTheWindowsKeys) {
  // One token at context 16000: K and V of at most 4096 positions x 8 KV heads x 128 dims x 2 bytes, plus the
  // query and output rows (32 heads x 128 x 2 bytes each).
  const double window_bound = 2.0 * kWindow * 8 * 128 * 2 + 2.0 * 32 * 128 * 2;
  const double full = 2.0 * 16001 * 8 * 128 * 2;
  EXPECT_LE(first_attention_bytes(predict(decode("mistral-7b", "vllm", 16000, 1, 1))), window_bound);
  EXPECT_GE(first_attention_bytes(predict(decode("mistral-7b", "tensorrt-llm", 16000, 1, 1))), full);
  // Past the window a decode step costs the same at any context.
  const Prediction at8k = predict(decode("mistral-7b", "vllm", 8000, 1, 1));
  const Prediction at16k = predict(decode("mistral-7b", "vllm", 16000, 1, 1));
  EXPECT_NEAR(at16k.llm->time_per_output_token_ms / at8k.llm->time_per_output_token_ms, 1.0, 1e-9);
}

TEST(SlidingWindowServing, VllmHoldsAWindowOfBlocksPerRequest) {
  // block_manager.py: a sequence holds at most sliding_window // block_size + 2 blocks (16-token blocks: 258).
  const ServePrediction p = predict_serving(serve("vllm", 12000, 1000));
  EXPECT_EQ(p.kv_max_concurrency, p.kv_blocks / (kWindow / 16 + 2));
  // TensorRT-LLM holds every position of every request.
  const ServePrediction t = predict_serving(serve("tensorrt-llm", 12000, 1000));
  EXPECT_EQ(t.kv_max_concurrency, t.kv_blocks / ((13000 + t.kv_block_tokens - 1) / t.kv_block_tokens));
  // Short requests are untouched by the cap.
  const ServePrediction s = predict_serving(serve("vllm", 2000, 500));
  EXPECT_EQ(s.kv_max_concurrency, s.kv_blocks / ((2500 + 15) / 16));
}

TEST(SlidingWindowServing, APrefixLongerThanTheWindowFreesNoBlocksInsideIt) {
  // block_manager.py keeps a sequence's last sliding_window // block_size + 2 blocks and frees the rest; the shared
  // prefix (0.8 of 12000 = 9600 positions, 600 16-token blocks) is the start of the sequence, so at its first output
  // token (12001 positions, 751 blocks) only 600 - (751 - 258) = 107 shared blocks are inside its window and it owns
  // at least 258 - 107 = 151 blocks. 200 such requests need more blocks than the pool has, so they cannot all run.
  ServeRequest r = serve("vllm", 12000, 1000);
  r.num_requests = 200;
  r.prefix_cache_hit = 0.8;
  const ServePrediction p = predict_serving(r);
  const std::int64_t window_blocks = kWindow / 16 + 2;
  const std::int64_t owned_at_first_token = window_blocks - (600 - (751 - window_blocks));
  ASSERT_GT(200 * owned_at_first_token, p.kv_blocks);
  EXPECT_LT(p.metrics.peak_running, 200);
}

}  // namespace
}  // namespace perfcast
