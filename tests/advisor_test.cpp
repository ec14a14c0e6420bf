// The optimization advisor (issue 4) against what is known from outside the code: published mixed-precision
// speedups on Pascal and Volta, the hardware support matrix (BF16 needs sm_80, INT8 is for inference, dp4a on
// sm_61), and the shape of the report (ranked strategies, a reason for each, a verdict that names a bound and a
// share). Plus the measured amp/fp32 what-ifs of data/validation/published.csv under a ratchet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/advisor.h"
#include "analysis/validate.h"
#include "report/advice_report.h"
#include "test_paths.h"

namespace perfcast {
namespace {

// The "Done when" scenario: ResNet-50 fp32 training, PyTorch, batch 64, synthetic data.
PredictRequest resnet50_request(const std::string& gpu, const std::string& mode = "train") {
  PredictRequest r;
  r.gpu = gpu;
  r.model = "resnet50";
  r.runtime = "pytorch";
  r.mode = parse_mode(mode);
  r.precision = "fp32";
  r.batch = 64;
  r.data = "synthetic";
  return r;
}

// advise() predicts every catalog GPU as a what-if; each scenario is computed once per test run.
const Advice& advice_for(const std::string& gpu, const std::string& mode = "train") {
  static std::map<std::string, Advice> cache;
  const std::string key = gpu + "/" + mode;
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, advise(resnet50_request(gpu, mode))).first;
  return it->second;
}

const StrategyResult* find_strategy(const Advice& a, std::string_view id) {
  for (const auto& s : a.strategies)
    if (s.id == id) return &s;
  return nullptr;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string describe(const Advice& a) {
  std::string out;
  for (const auto& s : a.strategies)
    out += "  " + s.id + (s.applicable ? " applicable " : " n/a ") + std::to_string(s.speedup) + " " + s.reason + "\n";
  return out;
}

// ---------------------------------------------------------------- mixed precision

TEST(Advisor, AmpOnGp102GainsOnlyTheMemoryPart) {
  // Issue 4, "Done when": mixed precision gains about 1.1-1.3x on gtx-1080-ti. GP102 runs FP16 math at 1/64
  // rate, so AMP keeps FP32 math and only halves memory traffic; published TF amp-vs-fp32 measurements on
  // GP102 give 1.1-1.3x. Allowed: 1.10-1.35x.
  const Advice& a = advice_for("gtx-1080-ti");
  const StrategyResult* amp = find_strategy(a, "amp");
  ASSERT_NE(amp, nullptr) << describe(a);
  EXPECT_TRUE(amp->applicable) << amp->reason;
  EXPECT_GE(amp->speedup, 1.10) << amp->reason;
  EXPECT_LE(amp->speedup, 1.35) << amp->reason;
}

TEST(Advisor, AmpOnV100GainsTwoXOrMore) {
  // Issue 4, "Done when": about 2x or more on v100-sxm2-16gb (tensor cores: 125 vs 15.7 TFLOPS). NVIDIA's
  // published ResNet-50 PyTorch training numbers on V100 put AMP at 2.5-3x FP32 (with NHWC). The best AMP-based
  // strategy (AMP alone or AMP with channels-last) must reach 2x.
  const Advice& a = advice_for("v100-sxm2-16gb");
  double best = 0;
  for (const char* id : {"amp", "amp+channels-last"}) {
    const StrategyResult* s = find_strategy(a, id);
    if (s && s->applicable) best = std::max(best, s->speedup);
  }
  EXPECT_GE(best, 2.0) << describe(a);
  const StrategyResult* amp = find_strategy(a, "amp");
  ASSERT_NE(amp, nullptr) << describe(a);
  EXPECT_TRUE(amp->applicable) << amp->reason;
  EXPECT_GT(amp->speedup, 1.3) << "tensor cores must give Volta a clearly larger AMP gain than GP102";
}

TEST(Advisor, AmpGainIsLargerOnVoltaThanOnPascal) {
  const StrategyResult* pascal = find_strategy(advice_for("gtx-1080-ti"), "amp");
  const StrategyResult* volta = find_strategy(advice_for("v100-sxm2-16gb"), "amp");
  ASSERT_NE(pascal, nullptr);
  ASSERT_NE(volta, nullptr);
  EXPECT_GT(volta->speedup, pascal->speedup);
}

// ---------------------------------------------------------------- strategies that do not apply

TEST(Advisor, Bf16OnSm61IsNotApplicableWithReason) {
  // Issue 4 item 7: BF16 on sm_61 is reported as not applicable with the reason (BF16 needs sm_80 tensor cores).
  const Advice& a = advice_for("gtx-1080-ti");
  const StrategyResult* bf16 = find_strategy(a, "amp-bf16");
  ASSERT_NE(bf16, nullptr) << "BF16 must be reported, not left out:\n" << describe(a);
  EXPECT_FALSE(bf16->applicable);
  const std::string why = lower(bf16->reason);
  EXPECT_TRUE(contains(why, "bf16")) << bf16->reason;
  EXPECT_TRUE(contains(why, "sm_61")) << bf16->reason;
  EXPECT_FALSE(bf16->prediction.has_value());
}

TEST(Advisor, Int8TrainingIsNotApplicableWithReason) {
  // Issue 4 item 7: INT8 training is reported as not applicable with the reason (INT8 is for inference).
  const Advice& a = advice_for("gtx-1080-ti");
  const StrategyResult* int8 = find_strategy(a, "int8");
  ASSERT_NE(int8, nullptr) << "int8 must be listed for training, as not applicable";
  EXPECT_FALSE(int8->applicable);
  EXPECT_TRUE(contains(lower(int8->reason), "inference")) << int8->reason;
}

TEST(Advisor, Int8InferenceOnTeslaP40IsApplicableAndFasterInTensorRt) {
  // Tesla P40 (GP102, sm_61) has dp4a: NVIDIA's datasheet gives 47 INT8 TOPS against 12 FP32 TFLOPS, and its
  // published ResNet-50 inference numbers (TensorRT) show INT8 well ahead of FP32.
  PredictRequest r = resnet50_request("tesla-p40", "infer");
  r.runtime = "tensorrt";
  const Advice a = advise(r);
  const StrategyResult* int8 = find_strategy(a, "int8");
  ASSERT_NE(int8, nullptr) << describe(a);
  EXPECT_TRUE(int8->applicable) << int8->reason;
  EXPECT_GT(int8->speedup, 1.0) << int8->reason;
  ASSERT_TRUE(int8->prediction.has_value());
  EXPECT_GT(int8->prediction->samples_per_s, a.baseline.samples_per_s);
  EXPECT_EQ(int8->prediction->request.precision, "int8");
  EXPECT_EQ(mode_name(int8->prediction->request.mode), "infer");
}

TEST(Advisor, Int8InPyTorchEagerIsNotApplicableAndNamesEnginesThatRunIt) {
  // Issue 14: PyTorch's INT8 convolutions (torch.ao.quantization) are CPU backends; eager CUDA has none.
  const Advice& a = advice_for("tesla-p40", "infer");
  const StrategyResult* int8 = find_strategy(a, "int8");
  ASSERT_NE(int8, nullptr) << describe(a);
  EXPECT_FALSE(int8->applicable);
  EXPECT_EQ(int8->reason_code.id, "precision.no_int8_convolution");
  EXPECT_TRUE(contains(int8->reason, "tensorrt")) << int8->reason;
  EXPECT_FALSE(int8->prediction.has_value());
}

TEST(Advisor, ChannelsLastIsNotApplicableOnGp102) {
  // GP102 has no tensor cores, so there are no NCHW<->NHWC transposes around tensor-core convolutions to remove.
  const Advice& a = advice_for("gtx-1080-ti");
  int reported = 0;
  for (const auto& s : a.strategies) {
    if (!contains(s.id, "channels-last")) continue;
    ++reported;
    EXPECT_FALSE(s.applicable) << s.id << ": " << s.reason;
    EXPECT_FALSE(s.reason.empty()) << s.id;
  }
  EXPECT_GE(reported, 1) << "channels-last must be reported as not applicable, not left out:\n" << describe(a);
}

// ---------------------------------------------------------------- report shape

void expect_sorted(const Advice& a) {
  bool seen_not_applicable = false;
  double previous = INFINITY;
  for (const auto& s : a.strategies) {
    if (!s.applicable) {
      seen_not_applicable = true;
      continue;
    }
    EXPECT_FALSE(seen_not_applicable) << s.id << " is applicable but listed after a not-applicable strategy";
    EXPECT_LE(s.speedup, previous) << s.id << " is out of order:\n" << describe(a);
    previous = s.speedup;
  }
}

TEST(Advisor, FusionOnAHostBoundStepNamesTheDispatchItSaves) {
  // Batch-1 inference in PyTorch eager waits on the host (docs/host-model.md: the framework issues every kernel);
  // a compiler's gain there is fewer launches and less dispatch, so the reason must say so, not only the DRAM
  // traffic, which barely moves at batch 1.
  PredictRequest r = resnet50_request("gtx-1080-ti", "infer");
  r.batch = 1;
  const Advice a = advise(r);
  const StrategyResult* compile = find_strategy(a, "torch.compile");
  ASSERT_NE(compile, nullptr) << describe(a);
  ASSERT_TRUE(compile->applicable) << compile->reason;
  EXPECT_GT(compile->speedup, 1.0) << compile->reason;
  EXPECT_TRUE(contains(compile->reason, "kernel launches")) << compile->reason;
  EXPECT_TRUE(contains(compile->reason, "host dispatch")) << compile->reason;
}

TEST(Advisor, FusedOptimizerIsOfferedWhereTheFrameworkUpdatesInManyPasses) {
  // ResNet-50 in PyTorch: torch.optim's SGD makes 11 tensor passes per parameter, a fused kernel 5.
  const Advice& a = advice_for("gtx-1080-ti");
  const StrategyResult* f = find_strategy(a, "fused-optimizer");
  ASSERT_NE(f, nullptr) << describe(a);
  EXPECT_TRUE(f->applicable);
  EXPECT_GT(f->speedup, 1.0);
  EXPECT_LT(f->prediction->step.bytes, a.baseline.step.bytes);
  // TensorFlow's ApplyMomentum is one kernel already: nothing to offer.
  PredictRequest tf = resnet50_request("gtx-1080-ti");
  tf.runtime = "tensorflow";
  EXPECT_EQ(find_strategy(advise(tf), "fused-optimizer"), nullptr);
}

TEST(Advisor, BatchThatDoesNotFitIsSplitIntoAccumulatedMicroBatches) {
  // 512 ResNet-50 images do not fit a GP102 card: the advisor trains the largest batch that fits and accumulates
  // enough of them for the same update, and the prediction carries that accumulation.
  PredictRequest r = resnet50_request("gtx-1080-ti");
  r.batch = 512;
  const Advice a = advise(r);
  ASSERT_FALSE(a.baseline.memory.fits);
  const StrategyResult* s = find_strategy(a, "smaller-batch+grad-accumulation");
  ASSERT_NE(s, nullptr) << describe(a);
  ASSERT_TRUE(s->prediction.has_value());
  const PredictRequest& t = s->prediction->request;
  EXPECT_TRUE(s->prediction->memory.fits);
  EXPECT_GE(t.batch * t.grad_accum, 512);
  EXPECT_LT(t.batch * (t.grad_accum - 1), 512);
}

TEST(Advisor, StrategiesAreApplicableFirstThenBySpeedup) {
  expect_sorted(advice_for("gtx-1080-ti"));
  expect_sorted(advice_for("v100-sxm2-16gb"));
  expect_sorted(advice_for("tesla-p40", "infer"));
}

void expect_complete(const Advice& a) {
  ASSERT_FALSE(a.strategies.empty());
  std::vector<const StrategyResult*> all;
  for (const auto& s : a.strategies) all.push_back(&s);
  for (const auto& s : a.combinations) all.push_back(&s);
  for (const auto* s : all) {
    SCOPED_TRACE(s->id);
    EXPECT_FALSE(s->id.empty());
    EXPECT_FALSE(s->reason.empty()) << "every strategy says why it does or does not help";
    if (!s->applicable) continue;
    ASSERT_TRUE(s->prediction.has_value());
    EXPECT_TRUE(std::isfinite(s->speedup));
    EXPECT_GT(s->speedup, 0);
    EXPECT_GT(s->prediction->samples_per_s, 0);
    EXPECT_TRUE(s->prediction->memory.fits) << "an applicable strategy must fit in memory";
    EXPECT_NEAR(s->speedup, s->prediction->samples_per_s / a.baseline.samples_per_s, 1e-9 * s->speedup);
  }
}

TEST(Advisor, EveryApplicableStrategyHasAReasonAndAPrediction) {
  expect_complete(advice_for("gtx-1080-ti"));
  expect_complete(advice_for("v100-sxm2-16gb"));
  expect_complete(advice_for("tesla-p40", "infer"));
}

TEST(Advisor, VerdictNamesABoundAndAShare) {
  // Issue 4: "First the verdict in a sentence ("bound by DRAM bandwidth in BatchNorm and ReLU: 38% of the step")".
  const std::vector<std::string> bounds{"tensor-core", "cuda-core", "dram bandwidth", "launch",
                                        "input pipeline", "host-to-device", "communication"};
  for (const char* gpu : {"gtx-1080-ti", "v100-sxm2-16gb"}) {
    const std::string v = advice_verdict(advice_for(gpu), Lang::kEn);
    SCOPED_TRACE(std::string(gpu) + ": " + v);
    EXPECT_TRUE(std::any_of(bounds.begin(), bounds.end(), [&](const auto& b) { return contains(lower(v), b); }));
    EXPECT_TRUE(contains(v, "%"));
    EXPECT_EQ(std::count(v.begin(), v.end(), '\n'), 0) << "the verdict is one sentence";
  }
}

TEST(Advisor, BreakdownSharesCoverTheStep) {
  const Advice& a = advice_for("gtx-1080-ti");
  ASSERT_FALSE(a.breakdown.empty());
  double total = 0;
  for (const auto& c : a.breakdown) {
    EXPECT_FALSE(c.op_class.empty());
    EXPECT_GE(c.share, 0);
    EXPECT_GE(c.roofline_fraction, 0);
    EXPECT_LE(c.roofline_fraction, 1.0 + 1e-9) << c.op_class << " above its roofline";
    total += c.share;
  }
  // Synthetic data on one GPU: the kernels are the step (no input or communication waits), so the op-class
  // shares add up to at most the whole step.
  EXPECT_LE(total, 1.0 + 1e-6);
  EXPECT_GT(total, 0.5);
}

// ---------------------------------------------------------------- measured what-ifs

TEST(Advisor, MeasuredAmpWhatIfsStayUnderTheRatchet) {
  // Issue 4 item 6: the amp-vs-fp32 row pairs of published.csv are measured mixed-precision speedups; the
  // issue target is a median ratio error of at most 10% and the right direction on every GPU. Every pair of the
  // file joins the fp32 and amp runs of one setup, each at the batch its run chose (analysis/what_if_pairs.h).
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/published.csv");
  ASSERT_EQ(rep.precision_target.count("precision+batch"), 1u);
  const WhatIfPairStats& s = rep.precision_target.at("precision+batch");
  EXPECT_GE(s.pairs, 60) << "amp/fp32 pairs on Pascal, Turing, Volta and Ampere must all be found";
  EXPECT_EQ(static_cast<std::size_t>(s.pairs), rep.precision_pairs.size());
  // The issue target: median ratio error at most 10%. `perfcast validate` reported 10.9% in sessions 2-3 and
  // 8.2% in session 4 (non-fused Winograd F(2x2,3x3)); the target is the bound here.
  EXPECT_LE(s.median_error_pct, 10.0);
  // RATCHET, not the target (issue 13's: at most 1 pair in 20): 14 pairs lie on the wrong side of the gain threshold
  // of data/what_if_pairs.toml (one ratio reaches a 15% gain, the other not) in session 24, when the plain validate
  // took its pairs and this measure from `validate --pairs`. Its former measure, a direction with a 3% band, counted 3
  // (a broken A100 run at 0.19x, an AlexNet inference pair measured 14% slower at amp, an XLA AlexNet pair with no
  // measured gain). Of the 14, one is that A100 run and one that XLA AlexNet pair (1.02 measured, 1.45 predicted); the
  // other 12 are GTX 1080 Ti pairs whose measured and predicted gains (8% to 32%) lie on either side of 15%.
  EXPECT_LE(s.wrong_side, 14);
  for (const auto& r : rep.precision_pairs) {
    EXPECT_EQ(r.to, "amp") << r.gpu << " " << r.model;
    EXPECT_GT(r.measured, 0) << r.gpu << " " << r.model;
    EXPECT_GT(r.predicted, 0) << r.gpu << " " << r.model;
  }
}


// Data parallel over more of the same card is one of the strategies (the "how many GPUs"), each with its
// cost per sample: at least GPUs over speedup, since a server with more of the card is never cheaper per GPU-hour
// than the cheapest rental of one in the price catalog.
TEST(Advisor, OffersMoreOfTheSameGpuWithItsCost) {
  const Advice a = advise(resnet50_request("v100-sxm2-16gb"));
  ASSERT_TRUE(a.baseline_usd_per_million_samples.has_value());  // the price catalog rents V100s
  int found = 0;
  for (const auto& st : a.strategies) {
    if (st.category != "scale-out") continue;
    ++found;
    ASSERT_TRUE(st.applicable) << st.id << ": " << st.reason;
    const int gpus = std::stoi(st.id.substr(st.id.find(':') + 1));
    EXPECT_GT(st.speedup, 1.0) << st.id;
    EXPECT_LE(st.speedup, gpus + 1e-9) << st.id;  // no more than perfect scaling
    ASSERT_TRUE(st.cost_ratio.has_value()) << st.id;
    // Whole instances (issue 14): one V100 rents cheapest as gcp-n1-8-v100 ($2.86/h); 2, 4 or 8 of them as the whole
    // lambda-8x-v100 ($4.40/h), the cheapest instance holding that many (data/cloud/prices.toml list prices).
    EXPECT_NEAR(*st.cost_ratio, 4.40 / 2.86 / st.speedup, 1e-6) << st.id;
    EXPECT_NE(st.reason.find("scaling efficiency"), std::string::npos) << st.reason;
  }
  EXPECT_EQ(found, 3);  // 2, 4 and 8 GPUs
  // Inference has no data-parallel step to offer.
  for (const auto& st : advise(resnet50_request("v100-sxm2-16gb", "infer")).strategies) EXPECT_NE(st.category, "scale-out");
}


// A language model served token by token is not a TensorRT engine built from its graph: NVIDIA serves LLMs with
// TensorRT-LLM (its own runtime, `perfcast runtimes`: tensorrt-llm), whose KV cache and in-flight batching a
// TensorRT engine lacks (TensorRT-LLM documentation, "Overview"). The advice offers that runtime, and says why
// the TensorRT strategy does not apply; a vision model's inference still gets TensorRT.
TEST(Advisor, LlmServingOnVllmIsOfferedTensorRtLlmNotATensorRtEngine) {
  PredictRequest r;
  r.gpu = "a100-sxm4-80gb";
  r.model = "llama-2-7b";
  r.runtime = "vllm";
  r.mode = parse_mode("decode");
  r.batch = 1;
  const Advice a = advise(r);
  const StrategyResult* trt = find_strategy(a, "tensorrt");
  ASSERT_NE(trt, nullptr) << describe(a);
  EXPECT_FALSE(trt->applicable) << describe(a);
  EXPECT_EQ(trt->reason_code.id, "fusion.llm_serves_on_tensorrt_llm");
  EXPECT_TRUE(contains(trt->reason, "TensorRT-LLM")) << trt->reason;
  const StrategyResult* trt_llm = find_strategy(a, "tensorrt-llm");
  ASSERT_NE(trt_llm, nullptr) << describe(a);
  ASSERT_TRUE(trt_llm->prediction.has_value()) << trt_llm->reason;
  EXPECT_EQ(trt_llm->prediction->request.runtime, "tensorrt-llm");

  const Advice infer = advice_for("a100-sxm4-80gb", "infer");
  const StrategyResult* vision = find_strategy(infer, "tensorrt");
  ASSERT_NE(vision, nullptr) << describe(infer);
  EXPECT_TRUE(vision->applicable) << vision->reason;
  EXPECT_EQ(find_strategy(infer, "tensorrt-llm"), nullptr);
}


// DLRM under AMP on an H100 (MLPerf's DLRM config, batch 64): the MLP GEMMs run on FP16 tensor cores, the
// embedding lookups keep their FP32 tables (the DLRM references train them in FP32 under AMP), and autocast adds a
// cast per half-precision weight and GradScaler an unscale pass (PyTorch's autocast and GradScaler documentation).
// At this batch the step is host-bound, so those extra kernels make AMP slower than TF32: physics, which the
// advice spells out rather than promising tensor-core gains.
TEST(Advisor, DlrmAmpAppliesToTheMlpsNotTheTablesAndSaysWhatAteItsGain) {
  PredictRequest r;
  r.gpu = "h100-sxm5-80gb";
  r.model = "dlrm";
  r.runtime = "pytorch";
  r.mode = parse_mode("train");
  r.precision = "fp32";
  r.batch = 64;
  r.data = "synthetic";
  const Advice a = advise(r);
  const StrategyResult* amp = find_strategy(a, "amp");
  ASSERT_NE(amp, nullptr) << describe(a);
  ASSERT_TRUE(amp->prediction.has_value()) << amp->reason;
  int half_gemms = 0, casts = 0;
  for (const OpCost& e : amp->prediction->step.entries) {
    if (e.kind == OpKind::kMatmul && e.cost.pipe == Pipe::kTcFp16Fp32Acc) ++half_gemms;
    if (e.name.starts_with("amp.")) ++casts;
  }
  EXPECT_GT(half_gemms, 0) << "AMP's GEMMs run on FP16 tensor cores";
  EXPECT_GT(casts, 0);
  // The tables are read at 4 bytes an element under AMP too: the row gathers, most of the lookups' bytes, do not
  // halve (nor does the pooled output: autocast leaves embedding_bag at its FP32 table's dtype).
  const auto bag_bytes = [](const Prediction& p) {
    double b = 0;
    for (const OpCost& e : p.step.entries)
      if (e.kind == OpKind::kEmbeddingBag) b += e.cost.bytes;
    return b;
  };
  EXPECT_GT(bag_bytes(*amp->prediction), 0.75 * bag_bytes(a.baseline));
  EXPECT_TRUE(contains(amp->reason, "casts and loss scaling add")) << amp->reason;
  EXPECT_TRUE(contains(amp->reason, "keep their FP32 tables")) << amp->reason;
  EXPECT_FALSE(contains(amp->reason, "memory traffic also halves")) << amp->reason;
  // The Chinese line gives the same account, not the tensor-core promise.
  const std::string zh = advice_text(a, Lang::kZh);
  EXPECT_TRUE(contains(zh, "类型转换和损失缩放增加")) << zh;
  EXPECT_TRUE(contains(zh, "保留 FP32 表")) << zh;
  EXPECT_FALSE(contains(zh, "显存流量减半")) << zh;
}


// TF32 is a tensor-core math mode for FP32 tensors (NVIDIA's A100 whitepaper, "TF32": FP32 inputs and outputs,
// reduced-precision multiplies; cuBLAS CUBLAS_TF32_TENSOR_OP_MATH keeps FP32 storage): an FP32 BERT-base step whose
// GEMMs PyTorch runs in FP32 by default (torch.backends.cuda.matmul.allow_tf32 is False from PyTorch 1.12) gains
// from the math alone on an A100, so the advice must not say memory traffic halves, in English or in Chinese.
TEST(Advisor, Tf32AdviceKeepsFp32MemoryTraffic) {
  PredictRequest r;
  r.gpu = "a100-sxm4-80gb";
  r.model = "bert_base";
  r.runtime = "pytorch";
  r.mode = parse_mode("train");
  r.precision = "fp32";
  r.batch = 32;
  r.seq = 128;
  r.data = "synthetic";
  const Advice a = advise(r);
  const StrategyResult* tf32 = find_strategy(a, "tf32");
  ASSERT_NE(tf32, nullptr) << describe(a);
  ASSERT_TRUE(tf32->prediction.has_value()) << tf32->reason;
  ASSERT_GE(tf32->prediction->samples_per_s, 1.1 * a.baseline.samples_per_s) << "the gain the tensor-core text is for";
  EXPECT_FALSE(contains(tf32->reason, "halves")) << tf32->reason;
  EXPECT_TRUE(contains(tf32->reason, "memory traffic is unchanged")) << tf32->reason;
  const std::string zh = advice_text(a, Lang::kZh);
  EXPECT_TRUE(contains(zh, "张量仍以 FP32 存放，显存流量不变")) << zh;
}

// Memory traffic follows the bytes per element of the two precisions: against FP32 (4 bytes) a 16-bit precision
// halves it and an 8-bit one (INT8, FP8: 1 byte, TensorRT's engines store them so between layers) cuts it to a
// quarter. The same in Chinese.
TEST(Advisor, PrecisionTrafficFollowsTheBytesPerElement) {
  PredictRequest r;
  r.gpu = "h100-sxm5-80gb";
  r.model = "resnet50";
  r.runtime = "tensorrt";
  r.mode = parse_mode("infer");
  r.precision = "fp32";
  r.batch = 128;
  r.data = "synthetic";
  const Advice a = advise(r);
  const StrategyResult* amp = find_strategy(a, "amp");
  const StrategyResult* int8 = find_strategy(a, "int8");
  const StrategyResult* fp8 = find_strategy(a, "fp8");
  ASSERT_NE(amp, nullptr) << describe(a);
  ASSERT_NE(int8, nullptr) << describe(a);
  ASSERT_NE(fp8, nullptr) << describe(a);
  for (const StrategyResult* st : {amp, int8, fp8}) {
    ASSERT_TRUE(st->prediction.has_value()) << st->reason;
    ASSERT_GE(st->prediction->samples_per_s, 1.1 * a.baseline.samples_per_s) << st->id << ": the gain the text is for";
  }
  EXPECT_TRUE(contains(amp->reason, "2 bytes per element instead of 4, so memory traffic halves")) << amp->reason;
  for (const StrategyResult* st : {int8, fp8}) {
    EXPECT_TRUE(contains(st->reason, "1 byte per element instead of 4, so memory traffic falls to a quarter"))
        << st->reason;
    EXPECT_FALSE(contains(st->reason, "halves")) << st->reason;
  }
  const std::string zh = advice_text(a, Lang::kZh);
  EXPECT_TRUE(contains(zh, "张量每元素 2 字节（原为 4），显存流量减半")) << zh;
  EXPECT_TRUE(contains(zh, "张量每元素 1 字节（原为 4），显存流量降至四分之一")) << zh;
}

}  // namespace
}  // namespace perfcast
