// How a measurement was timed is an explicit input (--harness, the harness column): the benchmark loop's own
// per-step host work and synchronisation replace the runtime's. Expectations from outside the code:
//   - NVIDIA DeepLearningExamples PaddlePaddle/Classification/RN50v1.5/inference.py@38934f9f times a Python loop
//     whose predict() ends in output_tensor.copy_to_cpu(); Paddle's Tensor::CopyToCpuImpl
//     (paddle/fluid/inference/api/details/zero_copy_tensor.cc) ends that copy in cudaStreamSynchronize, so each
//     batch waits for the GPU: the loop's host work cannot overlap the engine's kernels;
//   - the same README's Paddle-TRT tables (DGX A100 80GB, A10) measure batch 1 at 969 (TF32), 1306 (FP16) and
//     1430 (INT8) images/s on the A100, i.e. 0.70-1.03 ms per image, longer than the engine's kernels alone
//     (NVIDIA's own C++ MLPerf v1.0 harness runs one A10 INT8 ResNet-50 inference in 0.47 ms mean,
//     mlcommons/inference_results_v1.0 closed/NVIDIA/results/A10x1_TRT/resnet50/SingleStream);
//   - at batch 256 a per-batch cost of tens of microseconds is under 1% of a batch of several milliseconds.
// The 2019-2020 DeepLearningExamples BERT SQuAD loop (dle-pytorch-bert-squad-2020):
//   - run_squad.py trains with BertAdam without --fp16 and with apex FusedAdam under --fp16; that BertAdam calls
//     torch.nn.utils.clip_grad_norm_(p, 1.0) on each parameter before its update, and PyTorch 1.x's clip_grad_norm_
//     launches norm, stack, norm, add, div, lt and mul_ (7 kernels) and reads `clip_coef < 1` on the host;
//   - BERT-large for SQuAD has 24 layers of 16 parameter tensors (Q, K, V, output and the two FFN weights and
//     biases: 12; two LayerNorms' gamma and beta: 4), 5 embedding tensors (word, position, token-type tables and
//     the LayerNorm's two) and the QA head's weight and bias; run_squad.py leaves the unused pooler out of the
//     optimizer: 391 tensors, so 391 host reads per update beside the loss.item() every step;
//   - Lambda's log of that loop on an A100 PCIe 40GB (BERT-large, FP32 argument run as TF32 in NGC 20.10, batch 16,
//     lambdal/deeplearning-benchmark pytorch/results/A100_PCIe/PyTorch_bert_large_squad_FP32/31-10-2020_17-04-07.txt)
//     shows 2.43-2.44 iterations/s in steady state: 411 ms a step.
#include <gtest/gtest.h>

#include <string>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "analysis/request_resolution.h"
#include "core/error.h"
#include "import/config_csv.h"
#include "runtime/harness_profile.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

ConfigRow paddle_trt_row(const std::string& precision, const std::string& batch, const std::string& harness) {
  ConfigRow row;
  row.gpu = "a100-sxm4-80gb";
  row.model = "resnet50_v1_5";
  row.runtime = "tensorrt";
  row.mode = "infer";
  row.precision = precision;
  row.batch = batch;
  row.harness = harness;
  return row;
}

TEST(Harness, PaddleInferenceWaitsForTheGpuEveryBatchAndSaysWhy) {
  const HarnessProfile& h = find_harness("paddle-inference-dali");
  EXPECT_EQ(h.syncs_per_step, 1) << "copy_to_cpu() ends in cudaStreamSynchronize once per batch";
  EXPECT_GT(h.host_step_us, 0);
  for (const char* key : {"host_step_us", "syncs_per_step", "harness"})
    EXPECT_TRUE(h.sources.count(key)) << "no source for " << key;
  // The engine's own loop (MLPerf LoadGen, trtexec) keeps the host ahead: TensorRT's profile has no per-step sync.
  EXPECT_EQ(find_runtime("tensorrt").syncs_per_step, 0);
}

TEST(Harness, ASyncedLoopCannotHideItsHostWorkBehindTheKernels) {
  const Prediction engine = predict(request_from_row(paddle_trt_row("int8", "1", "")));
  const Prediction paddle = predict(request_from_row(paddle_trt_row("int8", "1", "paddle-inference-dali")));
  const HarnessProfile& h = find_harness("paddle-inference-dali");
  EXPECT_EQ(paddle.runtime.syncs_per_step, 1);
  EXPECT_DOUBLE_EQ(paddle.runtime.host_step_us, h.host_step_us);
  // The kernels are the same; the step now holds the loop's host work and the GPU's, one after the other.
  EXPECT_DOUBLE_EQ(paddle.step.gpu_us, engine.step.gpu_us);
  const double scale = host_time_scale(paddle.request);  // the loop's host work at this host's speed
  EXPECT_GE(paddle.step_us, engine.step.gpu_us + h.host_step_us * scale);
  EXPECT_LT(paddle.samples_per_s, engine.samples_per_s);
  // The measured step (README: 1430 INT8 images/s, 0.70 ms) is longer than the modelled one: the harness adds only
  // the parts with a published figure, never more than the measurement shows.
  EXPECT_LT(paddle.step_us, 1e6 / 1430.17);
}

// MLPerf SingleStream through NVIDIA's LWIS harness with start_from_device unset (closed/NVIDIA/configs/resnet50/
// SingleStream/config.json, v1.0): each query copies its 3 x 224 x 224 INT8 sample (150,528 bytes) to the GPU before
// the engine and its result back after it, one query in flight. At the pinned rate of a PCIe 4.0 x16 link (16 lanes x
// 1.97 GB/s x 0.80, data/input_pipeline.toml) the sample's bytes alone take 6 us, and each of the two copies carries
// a per-transfer latency on top: the query holds them in series with the kernels, never beside them.
TEST(Harness, MlperfSingleStreamQueryHoldsItsSampleCopyInSeriesWithTheEngine) {
  ConfigRow row = paddle_trt_row("int8", "1", "");
  row.gpu = "a10";
  const Prediction engine = predict(request_from_row(row));
  row.harness = "mlperf-singlestream";
  const Prediction query = predict(request_from_row(row));
  EXPECT_EQ(query.runtime.syncs_per_step, 1);
  EXPECT_DOUBLE_EQ(query.step.gpu_us, engine.step.gpu_us);
  const double sample_bytes_us = 3.0 * 224 * 224 / (16 * 1.97e9 * 0.80) * 1e6;
  EXPECT_GT(query.step_us, engine.step.gpu_us + sample_bytes_us);
  // NVIDIA's v1.0 A10 log: 469.5 us mean per query without LoadGen's own overhead; the harness adds only the parts
  // with a published figure, so the query is not modelled longer than that.
  EXPECT_LT(query.step_us, 469.538);
}

TEST(Harness, ALargeBatchBarelyNoticesThePerBatchCost) {
  const Prediction engine = predict(request_from_row(paddle_trt_row("fp16", "256", "")));
  const Prediction paddle = predict(request_from_row(paddle_trt_row("fp16", "256", "paddle-inference-dali")));
  EXPECT_LT(engine.samples_per_s / paddle.samples_per_s - 1.0, 0.02);
}

TEST(Harness, ATypoIsAnInputErrorNamingTheNearest) {
  try {
    request_from_row(paddle_trt_row("int8", "1", "paddle-inference-dal"));
    FAIL() << "a typo must be an input error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("did you mean 'paddle-inference-dali'"), std::string::npos) << what;
  }
}

PredictRequest dle_squad_request(const std::string& gpu, const std::string& precision, const std::string& batch,
                                 const std::string& harness) {
  ConfigRow row;
  row.gpu = gpu;
  row.model = "bert_large_squad";
  row.runtime = "pytorch";
  row.mode = "train";
  row.precision = precision;
  row.batch = batch;
  row.seq = "384";
  row.data = "real";
  row.harness = harness;
  if (precision == "amp") {
    row.amp_o2 = "yes";
    row.fused_optimizer = "yes";
  }
  return request_from_row(row);
}

TEST(Harness, Dle2020BertAdamClipsEachGradientAndReadsItsCoefficientOnTheHost) {
  const HarnessProfile& h = find_harness("dle-pytorch-bert-squad-2020");
  EXPECT_EQ(h.per_tensor.clip_per_tensor_kernels, 8) << "norm, stack, norm, add, reciprocal and mul (float / tensor), lt, mul_";
  EXPECT_EQ(h.per_tensor.clip_per_tensor_host_ops, 9) << "the eight calls and the host read of clip_coef < 1";
  EXPECT_EQ(h.per_tensor.clip_per_tensor_grad_passes, 3) << "the norm reads the gradient, mul_ reads and writes it";
  EXPECT_EQ(h.syncs_per_step, 1) << "final_loss = loss.item() every step";
  for (const char* key : {"harness", "host_step_us", "syncs_per_step", "clip_per_tensor_kernels",
                          "clip_per_tensor_host_ops", "clip_per_tensor_grad_passes"})
    EXPECT_TRUE(h.sources.count(key)) << "no source for " << key;

  const Prediction plain = predict(dle_squad_request("a100-pcie-40gb", "tf32", "16", ""));
  const Prediction dle = predict(dle_squad_request("a100-pcie-40gb", "tf32", "16", "dle-pytorch-bert-squad-2020"));
  EXPECT_DOUBLE_EQ(dle.step.syncs, 1 + 391) << "the loss read and one read per clipped parameter tensor";
  bool clip = false;
  for (const auto& e : dle.step.entries) clip = clip || e.name == "optimizer.clip_grad_norm";
  EXPECT_TRUE(clip);
  // The per-tensor reads keep the host from running ahead through the update: the step grows, but never beyond the
  // 411 ms Lambda's log shows for the whole step.
  EXPECT_GT(dle.step_us, plain.step_us);
  EXPECT_LT(dle.step_us, 411e3);
}

TEST(Harness, Dle2020BertAdamUpdatesEachTensorWithItsOwnKernels) {
  // BertAdam.step (optimization.py of DeepLearningExamples 2019-2020) after the clip: m.mul_, add_, v.mul_,
  // addcmul_, sqrt, + eps, m / (...), lr * update, neg, p.add_ for every tensor, and `update += wd * p` (2 more) where
  // run_squad.py gives weight decay 0.01: every parameter not named bias / LayerNorm.
  const HarnessProfile& h = find_harness("dle-pytorch-bert-squad-2020");
  EXPECT_EQ(h.per_tensor.update_per_tensor_kernels, 10);
  EXPECT_EQ(h.per_tensor.update_per_tensor_host_ops, 10);
  EXPECT_EQ(h.per_tensor.update_per_tensor_passes, 24) << "2 + 3 + 2 + 3 + 2 + 2 + 3 + 2 + 2 + 3 FP32 accesses per element";
  EXPECT_EQ(h.per_tensor.update_decay_kernels, 2);
  EXPECT_EQ(h.per_tensor.update_decay_passes, 5);
  for (const char* key : {"update_per_tensor_kernels", "update_per_tensor_host_ops", "update_per_tensor_passes",
                          "update_decay_kernels", "update_decay_passes"})
    EXPECT_TRUE(h.sources.count(key)) << "no source for " << key;

  // BERT-large's 391 optimized parameter tensors (run_squad.py drops the pooler's from the optimizer); the decayed
  // ones are the GEMM weights (4 attention and 2 feed-forward a layer, 24 layers, and the QA head's) and the three
  // embedding tables: 148.
  const Prediction dle = predict(dle_squad_request("a100-pcie-40gb", "tf32", "16", "dle-pytorch-bert-squad-2020"));
  double update_launches = -1;
  for (const auto& e : dle.step.entries)
    if (e.name == "optimizer.update") update_launches = e.cost.launches;
  EXPECT_DOUBLE_EQ(update_launches, 10.0 * 391 + 2.0 * 148) << "a Python loop: no grouping of tensors per launch";
  EXPECT_LT(dle.step_us, 411e3) << "Lambda's log: 411 ms a step in the steady state";
}

TEST(Harness, Dle2020FusedAdamUnderFp16HasNoPerTensorClip) {
  const Prediction plain = predict(dle_squad_request("a100-sxm4-40gb", "amp", "32", ""));
  const Prediction dle = predict(dle_squad_request("a100-sxm4-40gb", "amp", "32", "dle-pytorch-bert-squad-2020"));
  EXPECT_DOUBLE_EQ(dle.step_us, plain.step_us);
  EXPECT_DOUBLE_EQ(dle.step.syncs, plain.step.syncs);
}

}  // namespace
}  // namespace perfcast
