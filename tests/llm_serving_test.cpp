// --mode serve: tensor/pipeline-parallel serving with continuous batching. Expectations come from outside the
// code: KV-cache sizes from the models' published shapes, Little's law for an unsaturated queue, what preemption
// and prefix caching do by definition, and the published serving benchmarks in data/validation/llm_serving.csv.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/llm_serving.h"
#include "analysis/serving_validation.h"
#include "cli_runner.h"
#include "core/error.h"
#include "test_paths.h"

namespace perfcast {
namespace {

ServeRequest serve(const std::string& gpu, const std::string& model, int tp, std::int64_t in, std::int64_t out) {
  ServeRequest r;
  r.base.gpu = gpu;
  r.base.model = model;
  r.base.runtime = "vllm";
  r.base.precision = "fp16";
  r.tensor_parallel = tp;
  r.input_len = in;
  r.output_len = out;
  r.num_requests = 200;
  return r;
}

std::string input_error(const ServeRequest& r) {
  try {
    predict_serving(r);
  } catch (const UnsupportedError& e) {
    return std::string("unsupported: ") + e.what();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LlmServing, SchedulerHostTimeFollowsTheEngineRelease) {
  // SGLang's overlap scheduler is new in 0.4 (v0.4 release post): under the same load a 0.3 server's tokens come
  // further apart.
  ServeRequest r = serve("a100-sxm4-80gb", "llama-3-8b", 1, 256, 128);
  r.base.runtime = "sglang";
  r.request_rate = 4;
  r.base.runtime_version = "0.3.0";
  const double old_tpot = predict_serving(r).metrics.tpot_p50_ms;
  r.base.runtime_version = "0.4";
  EXPECT_GT(old_tpot, predict_serving(r).metrics.tpot_p50_ms);
}

TEST(LlmServing, KvCachePerTokenFollowsThePublishedShape) {
  // Llama 3 8B: 32 layers x 8 KV heads x 128 dims x (K and V) x 2 bytes = 128 KiB per token in fp16.
  const ServePrediction one = predict_serving(serve("h100-sxm5-80gb", "llama-3-8b", 1, 512, 128));
  EXPECT_DOUBLE_EQ(one.kv_bytes_per_token_per_gpu, 131072.0);
  const ServePrediction two = predict_serving(serve("h100-sxm5-80gb", "llama-3-8b", 2, 512, 128));
  EXPECT_DOUBLE_EQ(two.kv_bytes_per_token_per_gpu, 65536.0);
  // 16 GPUs over 8 KV heads: each GPU keeps one KV head (vLLM replicates them).
  ServeRequest r16 = serve("h100-sxm5-80gb", "llama-2-70b", 16, 512, 128);
  EXPECT_EQ(input_error(r16).find("neither divides"), std::string::npos);
  // Llama 3 70B at tp 4 holds a quarter of its 70.6 B parameters per GPU in fp16 (35.3 GB, +-3%).
  const ServePrediction p70 = predict_serving(serve("h100-sxm5-80gb", "llama-3-70b", 4, 512, 128));
  EXPECT_NEAR(p70.weights_bytes_per_gpu / 35.3e9, 1.0, 0.03);
  // vLLM gives the KV cache 90% of the GPU less weights and buffers.
  EXPECT_NEAR(p70.kv_cache_bytes_per_gpu,
              0.9 * p70.memory_bytes_per_gpu - p70.weights_bytes_per_gpu - p70.buffers_bytes_per_gpu, 1.0);
  EXPECT_EQ(p70.kv_capacity_tokens, p70.kv_blocks * 16);
  EXPECT_GT(p70.allreduce_us_per_step, 0);
}

TEST(LlmServing, BadLayoutsAndLengthsAreOneLineInputErrors) {
  // 32 heads: a degree of 3 does not divide them, 64 exceeds them.
  std::string e = input_error(serve("h100-sxm5-80gb", "llama-3-8b", 3, 128, 128));
  EXPECT_NE(e.find("does not divide the attention heads"), std::string::npos) << e;
  e = input_error(serve("h100-sxm5-80gb", "llama-3-8b", 64, 128, 128));
  EXPECT_NE(e.find("larger than the attention heads"), std::string::npos) << e;
  // Llama 3's config says 8192 positions.
  e = input_error(serve("h100-sxm5-80gb", "llama-3-8b", 1, 8000, 500));
  EXPECT_NE(e.find("beyond its context of 8192"), std::string::npos) << e;
  // 141 GB of fp16 weights on one 80 GB GPU.
  e = input_error(serve("h100-sxm5-80gb", "llama-3-70b", 1, 128, 128));
  EXPECT_NE(e.find("does not fit on h100-sxm5-80gb at --tp 1"), std::string::npos) << e;
  ServeRequest pp = serve("h100-sxm5-80gb", "llama-3-8b", 1, 128, 128);
  pp.pipeline_parallel = 3;  // 32 layers
  e = input_error(pp);
  EXPECT_NE(e.find("does not divide the 32 layers"), std::string::npos) << e;
  ServeRequest many = serve("h100-sxm5-80gb", "llama-3-8b", 1, 128, 128);
  many.num_requests = 100000000;
  EXPECT_NE(input_error(many).find("max_serving_requests"), std::string::npos);
  for (const auto& msg : {input_error(serve("h100-sxm5-80gb", "llama-3-8b", 3, 128, 128)), e})
    EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(LlmServing, UnsaturatedServerCompletesRequestsAtTheArrivalRate) {
  // Little's law: below saturation a server finishes requests as fast as they arrive.
  ServeRequest r = serve("h100-sxm5-80gb", "llama-3-8b", 1, 256, 128);
  r.request_rate = 2;
  r.num_requests = 400;
  const ServePrediction low = predict_serving(r);
  EXPECT_NEAR(low.metrics.requests_per_s / 2.0, 1.0, 0.15);
  r.request_rate = 0;  // everything at once: the most the server can do
  const ServePrediction offline = predict_serving(r);
  EXPECT_GT(offline.metrics.requests_per_s, 5 * low.metrics.requests_per_s);
  // Queueing: the first token waits longer when everything arrives at once.
  EXPECT_GT(offline.metrics.ttft_p50_ms, low.metrics.ttft_p50_ms);
  EXPECT_LE(low.metrics.ttft_p50_ms, low.metrics.ttft_p99_ms);
  EXPECT_LE(low.metrics.tpot_p50_ms, low.metrics.tpot_p99_ms);
}

TEST(LlmServing, SameSeedSameRunAnotherSeedAnotherStream) {
  ServeRequest r = serve("a100-sxm4-80gb", "llama-3-8b", 1, 300, 100);
  r.length_dist = "exponential";
  r.request_rate = 5;
  const ServePrediction a = predict_serving(r), b = predict_serving(r);
  EXPECT_EQ(a.metrics.ttft_p99_ms, b.metrics.ttft_p99_ms);
  EXPECT_EQ(a.metrics.steps, b.metrics.steps);
  r.seed = 7;
  EXPECT_NE(predict_serving(r).metrics.steps, a.metrics.steps);
}

TEST(LlmServing, FullKvCachePreemptsAndStillFinishesEveryRequest) {
  // Llama 2 13B fp16 on a 40 GB A100 leaves room for a few thousand tokens: 300 requests of 1,500 positions
  // cannot all be held, so the engine preempts and recomputes.
  ServeRequest r = serve("a100-sxm4-40gb", "llama-2-13b", 1, 500, 1000);
  r.num_requests = 300;
  const ServePrediction p = predict_serving(r);
  EXPECT_LT(p.kv_max_concurrency, 300);
  EXPECT_EQ(p.metrics.completed, 300);
  EXPECT_LE(p.metrics.peak_running, p.max_batch);
}

TEST(LlmServing, PrefixCacheHitsShortenTheFirstToken) {
  ServeRequest r = serve("h100-sxm5-80gb", "llama-3-8b", 1, 4000, 64);
  r.request_rate = 4;
  r.num_requests = 200;
  const double cold = predict_serving(r).metrics.ttft_p50_ms;
  r.prefix_cache_hit = 0.9;
  const double warm = predict_serving(r).metrics.ttft_p50_ms;
  EXPECT_LT(warm, 0.5 * cold);
}

TEST(LlmServing, TensorParallelServesMoreThanOneGpuAndPipelineStagesRunInParallel) {
  ServeRequest r = serve("h100-sxm5-80gb", "llama-3-70b", 2, 512, 256);
  r.num_requests = 500;
  const double tp2 = predict_serving(r).metrics.output_tokens_per_s;
  r.tensor_parallel = 4;
  const double tp4 = predict_serving(r).metrics.output_tokens_per_s;
  EXPECT_GT(tp4, tp2);
  r.tensor_parallel = 2;
  r.pipeline_parallel = 2;
  const double tp2pp2 = predict_serving(r).metrics.output_tokens_per_s;
  EXPECT_GT(tp2pp2, tp2);
}

TEST(LlmServing, LatencyTargetsGiveARateThatMeetsThem) {
  ServeRequest r = serve("h100-sxm5-80gb", "llama-3-8b", 1, 512, 128);
  r.num_requests = 300;
  r.request_rate = 4;  // the best batch limit is searched at the offered rate
  r.slo_tpot_ms = 30;
  r.slo_ttft_ms = 500;
  const ServePrediction p = predict_serving(r);
  ASSERT_TRUE(p.slo);
  ASSERT_TRUE(p.slo->at_max_rate);
  EXPECT_LE(p.slo->at_max_rate->tpot_p99_ms, 30);
  EXPECT_LE(p.slo->at_max_rate->ttft_p99_ms, 500);
  ASSERT_TRUE(p.slo->at_best_batch);
  EXPECT_LE(p.slo->at_best_batch->tpot_p99_ms, 30);
}

TEST(LlmServing, AnOfferedRateAboveWhatMeetsTheTargetsIsSplitOverCopies) {
  // A buyer asks for 20 requests/s within a p99 TTFT; one GPU meets it up to some lower rate. A Poisson stream sent at
  // random to one of k copies is k Poisson streams of rate / k (thinning), so k copies meet the targets once rate / k
  // is at most the rate one copy sustains within them: k = ceil(offered / that rate), and k - 1 copies would not do.
  ServeRequest r = serve("h100-sxm5-80gb", "llama-3-8b", 1, 1024, 256);
  r.num_requests = 300;
  r.request_rate = 60;
  r.slo_ttft_ms = 500;
  const ServePrediction p = predict_serving(r);
  ASSERT_TRUE(p.slo);
  ASSERT_TRUE(p.slo->at_max_rate);
  const std::int64_t k = p.slo->replicas_for_offered_rate;
  ASSERT_GE(k, 1);
  EXPECT_LE(r.request_rate / static_cast<double>(k), p.slo->at_max_rate->request_rate);
  if (k > 1) {
    EXPECT_GT(r.request_rate / static_cast<double>(k - 1), p.slo->at_max_rate->request_rate);
  }
  // A rate no cluster serves (a trillion requests/s: a million times what one GPU sustains, beyond the 4 million GPUs of
  // data/limits.toml's largest cluster) gets no copy count and a note, never "1 copy suffices".
  r.request_rate = 1e12;
  const ServePrediction huge = predict_serving(r);
  ASSERT_TRUE(huge.slo);
  ASSERT_TRUE(huge.slo->at_max_rate);
  EXPECT_EQ(huge.slo->replicas_for_offered_rate, 0);
  EXPECT_NE(huge.slo->note.find("more than"), std::string::npos) << huge.slo->note;
  // A rate above one copy but inside the limits: at least the exact quotient, however large.
  r.request_rate = 1e6;
  const ServePrediction many = predict_serving(r);
  ASSERT_TRUE(many.slo && many.slo->at_max_rate);
  EXPECT_GE(static_cast<double>(many.slo->replicas_for_offered_rate), 1e6 / many.slo->at_max_rate->request_rate);
  // At an offered rate that meets the targets one copy is enough.
  r.request_rate = 1;
  const ServePrediction one = predict_serving(r);
  ASSERT_TRUE(one.slo);
  EXPECT_EQ(one.slo->replicas_for_offered_rate, 1);
}

// The published serving benchmarks: output-throughput rows at most 15% off at the median (issue 16's target).
TEST(LlmServingValidation, PublishedServingThroughput) {
  const auto checks = check_serving_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/llm_serving.csv");
  std::vector<double> throughput, latency;
  for (const auto& c : checks) {
    ASSERT_TRUE(c.predicted) << "line " << c.row.line << ": " << c.error;
    (c.row.metric == "output_tokens_per_s" ? throughput : latency).push_back(c.relative_error());
    std::printf("%-14s %-16s %-36s tp%s %5s/%-5s %-19s measured %9.1f predicted %9.1f (%+.0f%%)\n", c.row.engine.c_str(),
                c.row.gpu.c_str(), c.row.model.c_str(), c.row.tp.c_str(), c.row.input_len.c_str(), c.row.output_len.c_str(),
                c.row.metric.c_str(), c.row.measured, *c.predicted, 100 * (*c.predicted / c.row.measured - 1));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  ASSERT_GE(throughput.size(), 60u);
  std::printf("median error: throughput %.1f%% (%zu rows), TPOT %.1f%% (%zu rows)\n", 100 * median(throughput),
              throughput.size(), 100 * median(latency), latency.size());
  EXPECT_LE(median(throughput), 0.15);
}

class LlmServingCli : public test::ScratchDirTest {};

TEST_F(LlmServingCli, ServeModeJsonAndOneLineErrors) {
  auto r = run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 256 --output-len 64 "
               "--num-requests 50 --request-rate 4 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* key : {"\"output_tokens_per_s\"", "\"requests_per_s\"", "\"ttft_p50\"", "\"ttft_p99\"", "\"tpot_p50\"",
                          "\"tpot_p99\"", "\"max_concurrency\"", "\"tp\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  for (const std::string bad :
       {"--tp 3", "--tp 64", "--request-rate nan", "--request-rate -1", "--prefix-cache-hit 2", "--engine nosuch",
        "--length-dist zipf", "--num-requests 0", "--pp 3"}) {
    const std::string args = "predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 128 --output-len 64 " + bad;
    r = run(args);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << bad << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << bad;
  }
  // Latency targets read like --deadline (one duration parser): a bare number is milliseconds (--help), "500ms",
  // "500 ms", "0.5s", "0.5 s" and "0.5sec" the same target; a unit it does not know is one line naming the flag.
  for (const char* slo : {"500", "500ms", "'500 ms'", "0.5s", "'0.5 s'", "0.5sec"}) {
    r = run(std::string("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 128 --output-len 32 "
                        "--num-requests 30 --request-rate 2 --json --slo-ttft ") + slo);
    ASSERT_EQ(r.code, 0) << slo << ": " << r.err;
    EXPECT_NE(r.out.find("\"ttft_p99_target_ms\": 500"), std::string::npos) << slo;
  }
  for (const char* slo : {"5parsecs", "ms", "-1ms", "0s", "1e400", "1e306w"}) {
    r = run(std::string("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 128 --output-len 32 "
                        "--slo-tpot ") + slo);
    EXPECT_EQ(r.code, 2) << slo;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--slo-tpot"), std::string::npos) << r.err;
  }
  // A target not given reads "none", not "- ms".
  r = run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 128 --output-len 32 --num-requests 30 "
          "--request-rate 2 --slo-ttft 500ms");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("TTFT 500 ms, TPOT none"), std::string::npos) << r.out;
  r = run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 8000 --output-len 500");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("context of 8192"), std::string::npos) << r.err;
  r = run("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-70b --input-len 128 --output-len 64");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("does not fit"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace perfcast
