// The host input pipeline (issue 4 item 2) against Lambda's GTX 1080 Ti logs (host: i7-6850K, 6 cores, the
// desktop-6c profile), which measured the same models with synthetic, real and real-augmented ImageNet data:
//   alexnet  fp32 infer batch 512: synthetic 7764, real 3128, real-augmented 1883 img/s  -> host-bound
//   resnet152 fp32 infer batch 32: synthetic 323.6, real 313.7, real-augmented 317.9 img/s -> GPU-bound
//   resnet152 fp32 train batch 32: synthetic 83.26, real 83.91, real-augmented 82.21 img/s -> GPU-bound
// (data/validation/published.csv, lambdal/lambda-tensorflow-benchmark logs/i7-6850K-GeForce_GTX_1080_Ti.logs).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analysis/advisor.h"
#include "analysis/predict.h"
#include "core/error.h"
#include "report/advice_html.h"
#include "report/advice_report.h"

namespace perfcast {
namespace {

PredictRequest lambda_1080ti(const std::string& model, const std::string& mode, std::int64_t batch,
                             const std::string& data) {
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.model = model;
  r.runtime = "tensorflow";
  r.mode = parse_mode(mode);
  r.precision = "fp32";
  r.batch = batch;
  r.data = data;
  r.host = "desktop-6c";  // the i7-6850K of the Lambda logs
  return r;
}

PredictRequest alexnet(const std::string& data) { return lambda_1080ti("alexnet", "infer", 512, data); }

// ---------------------------------------------------------------- host-bound and GPU-bound

TEST(InputPipeline, SyntheticDataHasNoPipeline) {
  const Prediction p = predict(alexnet("synthetic"));
  EXPECT_FALSE(p.input.has_value());
  EXPECT_NE(p.primary, Bound::kInputPipeline);
}

TEST(InputPipeline, AlexnetRealAugmentedIsInputBound) {
  // Measured: 1883 img/s real-augmented against 7764 synthetic (0.24x): six cores cannot decode and distort
  // JPEGs as fast as a GP102 runs AlexNet inference.
  const Prediction synthetic = predict(alexnet("synthetic"));
  const Prediction augmented = predict(alexnet("real-augmented"));
  ASSERT_TRUE(augmented.input.has_value());
  EXPECT_EQ(augmented.primary, Bound::kInputPipeline) << "primary bound: " << bound_name(augmented.primary);
  EXPECT_TRUE(augmented.input->bound);
  EXPECT_EQ(augmented.input->dataset_kind, "jpeg");
  EXPECT_LT(augmented.samples_per_s, synthetic.samples_per_s);
  // The measured gap is 4x; require at least half of it.
  EXPECT_LT(augmented.samples_per_s, 0.5 * synthetic.samples_per_s)
      << augmented.samples_per_s << " vs " << synthetic.samples_per_s;
}

TEST(InputPipeline, AlexnetAugmentationCostsMoreThanPlainDecoding) {
  // Measured: real 3128 img/s, real-augmented 1883 img/s.
  const Prediction real = predict(alexnet("real"));
  const Prediction augmented = predict(alexnet("real-augmented"));
  EXPECT_LT(augmented.samples_per_s, real.samples_per_s);
  EXPECT_LT(real.samples_per_s, predict(alexnet("synthetic")).samples_per_s);
}

TEST(InputPipeline, Resnet152RealDataIsWithinFivePercentOfSynthetic) {
  // Measured: ResNet-152 runs within 3% of synthetic with real data (GPU-bound), inference and training.
  for (const char* mode : {"infer", "train"}) {
    const Prediction synthetic = predict(lambda_1080ti("resnet152", mode, 32, "synthetic"));
    for (const char* data : {"real", "real-augmented"}) {
      SCOPED_TRACE(std::string(mode) + " " + data);
      const Prediction p = predict(lambda_1080ti("resnet152", mode, 32, data));
      ASSERT_TRUE(p.input.has_value());
      EXPECT_NEAR(p.samples_per_s / synthetic.samples_per_s, 1.0, 0.05)
          << p.samples_per_s << " vs " << synthetic.samples_per_s;
      EXPECT_NE(p.primary, Bound::kInputPipeline);
      EXPECT_FALSE(p.input->bound);
    }
  }
}

// ---------------------------------------------------------------- what-ifs on the host side

TEST(InputPipeline, DoublingHostCoresRaisesInputBoundThroughput) {
  // More decode workers feed an input-bound step faster (the GPU has 4x headroom in the measurements above).
  PredictRequest six = alexnet("real-augmented");
  six.host_cores = 6;
  PredictRequest twelve = six;
  twelve.host_cores = 12;
  const Prediction a = predict(six);
  const Prediction b = predict(twelve);
  ASSERT_TRUE(a.input && b.input);
  EXPECT_EQ(a.input->cores, 6);
  EXPECT_EQ(b.input->cores, 12);
  EXPECT_GT(b.input->host_samples_per_s, a.input->host_samples_per_s);
  EXPECT_GT(b.samples_per_s, 1.2 * a.samples_per_s) << a.samples_per_s << " -> " << b.samples_per_s;
}

TEST(InputPipeline, MoreHostCoresDoNotSpeedUpAGpuBoundStep) {
  PredictRequest r = lambda_1080ti("resnet152", "train", 32, "real-augmented");
  r.host_cores = 6;
  const double base = predict(r).samples_per_s;
  r.host_cores = 12;
  EXPECT_NEAR(predict(r).samples_per_s / base, 1.0, 0.02);
}

TEST(InputPipeline, GpuDecodeRaisesInputBoundThroughput) {
  // DALI/nvJPEG move JPEG decode and augmentation to the GPU: an input-bound AlexNet gains.
  PredictRequest r = alexnet("real-augmented");
  const double base = predict(r).samples_per_s;
  r.gpu_decode = true;
  const Prediction p = predict(r);
  EXPECT_GT(p.samples_per_s, 1.1 * base) << base << " -> " << p.samples_per_s;
  // Still slower than synthetic data: decoding now costs GPU time.
  EXPECT_LE(p.samples_per_s, predict(alexnet("synthetic")).samples_per_s * (1 + 1e-9));
}

// ---------------------------------------------------------------- bad ids

TEST(InputPipeline, UnknownHostIsAnInputErrorWithASuggestion) {
  PredictRequest r = alexnet("real");
  r.host = "desktop-6";
  try {
    predict(r);
    FAIL() << "an unknown host id must be rejected";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("desktop-6"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'desktop-6c'"), std::string::npos) << m;
  }
}

TEST(InputPipeline, UnknownDatasetIsAnInputErrorWithASuggestion) {
  PredictRequest r = alexnet("real");
  r.dataset = "imagenett";
  try {
    predict(r);
    FAIL() << "an unknown dataset id must be rejected";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("imagenett"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'imagenet'"), std::string::npos) << m;
  }
}

// ---------------------------------------------------------------- 3D volumes

PredictRequest nodule3d_request() {
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.model = "nodule3d";
  r.runtime = "pytorch";
  r.mode = Mode::kTrain;
  r.precision = "fp32";
  r.batch = 4;
  r.data = "real-augmented";
  r.host = "cloud-8vcpu";
  return r;
}

TEST(InputPipeline, Nodule3dReadsCtCropVolumes) {
  const Prediction p = predict(nodule3d_request());
  ASSERT_TRUE(p.input.has_value());
  EXPECT_EQ(p.input->dataset_kind, "volume") << "a 3D CNN reads CT volumes, not ImageNet JPEGs";
  // Naming the dataset explicitly gives the same pipeline.
  PredictRequest named = nodule3d_request();
  named.dataset = "ct-crops";
  const Prediction q = predict(named);
  ASSERT_TRUE(q.input.has_value());
  EXPECT_EQ(q.input->dataset_kind, "volume");
  EXPECT_DOUBLE_EQ(q.input->host_samples_per_s, p.input->host_samples_per_s);
  EXPECT_DOUBLE_EQ(q.samples_per_s, p.samples_per_s);
}

TEST(InputPipeline, GpuDecodeIsNotApplicableToVolumes) {
  // GPU JPEG decoding (nvJPEG/DALI) has nothing to decode in raw float volumes.
  const Advice a = advise(nodule3d_request());
  const StrategyResult* decode = nullptr;
  for (const auto& s : a.strategies)
    if (s.id == "gpu-decode") decode = &s;
  ASSERT_NE(decode, nullptr) << "gpu-decode must be reported as not applicable, not left out";
  EXPECT_FALSE(decode->applicable);
  EXPECT_FALSE(decode->reason.empty());
  // And asking for it directly changes nothing.
  PredictRequest r = nodule3d_request();
  r.gpu_decode = true;
  EXPECT_DOUBLE_EQ(predict(r).samples_per_s, predict(nodule3d_request()).samples_per_s);
}

// ---------------------------------------------------------------- batches held in host memory (--data host)

// A simple inference loop (`x.cuda()` per batch, TF feed_dict, MXNet NDArrayIter) copies each batch from
// pageable host memory and waits for it: the copy adds to the step. ResNet-50 at batch 32 moves
// 32 x 3 x 224 x 224 x 4 B = 19.3 MB per step; bandwidthTest on PCIe 3.0 x16 gives ~6 GB/s pageable and ~12 GB/s
// pinned (NVIDIA blog 'How to Optimize Data Transfers in CUDA C/C++'), i.e. about 3 ms and 1.6 ms.
PredictRequest host_tensors(bool prefetch) {
  PredictRequest r = lambda_1080ti("resnet50", "infer", 32, "host");
  r.prefetch = prefetch;
  return r;
}

TEST(InputPipeline, HostTensorsAddABlockingCopyToEveryStep) {
  const Prediction synthetic = predict(lambda_1080ti("resnet50", "infer", 32, "synthetic"));
  const Prediction host = predict(host_tensors(false));
  ASSERT_TRUE(host.input.has_value());
  EXPECT_TRUE(host.input->serial_copy);
  const double bytes = 32.0 * 3 * 224 * 224 * 4;
  EXPECT_GT(host.input->h2d_ms, bytes / 8e9 * 1e3) << "pageable copies run well below the 15.8 GB/s link";
  EXPECT_LT(host.input->h2d_ms, bytes / 4e9 * 1e3);
  EXPECT_NEAR(host.step_us - synthetic.step_us, host.input->h2d_ms * 1e3, 1.0) << "the copy is not overlapped";
  EXPECT_GT(host.bound_us[static_cast<int>(Bound::kHostToDevice)], 0.0);
}

TEST(InputPipeline, PrefetchingHidesTheCopyBehindAGpuBoundStep) {
  const Prediction synthetic = predict(lambda_1080ti("resnet50", "infer", 32, "synthetic"));
  const Prediction prefetched = predict(host_tensors(true));
  ASSERT_TRUE(prefetched.input.has_value());
  EXPECT_FALSE(prefetched.input->serial_copy);
  EXPECT_LT(prefetched.input->h2d_ms, predict(host_tensors(false)).input->h2d_ms) << "pinned buffers copy faster";
  EXPECT_DOUBLE_EQ(prefetched.samples_per_s, synthetic.samples_per_s) << "a 1.6 ms copy hides behind a ~45 ms step";
}

TEST(InputPipeline, AnOverlappedCopyLongerThanTheStepIsATransferBound) {
  // AlexNet at batch 1024 on an A100: 0.6 GB of float32 input per step against a GPU step of a few ms.
  PredictRequest r = lambda_1080ti("alexnet", "infer", 1024, "host");
  r.gpu = "a100-sxm4-40gb";
  r.precision = "amp";
  r.prefetch = true;
  const Prediction p = predict(r);
  EXPECT_EQ(p.primary, Bound::kHostToDevice) << bound_name(p.primary);
}

TEST(InputPipeline, AdviseSuggestsPrefetchingForBlockingCopies) {
  const Advice a = advise(host_tensors(false));
  const StrategyResult* prefetch = nullptr;
  for (const auto& s : a.strategies)
    if (s.id == "prefetch") prefetch = &s;
  ASSERT_NE(prefetch, nullptr);
  EXPECT_TRUE(prefetch->applicable);
  EXPECT_GT(prefetch->speedup, 1.03);
}

TEST(InputPipeline, PrefetchWithoutHostDataIsAnInputError) {
  PredictRequest r = lambda_1080ti("resnet50", "infer", 32, "synthetic");
  r.prefetch = true;
  EXPECT_THROW(predict(r), InputError);
}

TEST(InputPipeline, ACopyBoundStepSaysSoInTheVerdictAndTheBreakdown) {
  // AlexNet inference on an A100 at batch 1024: 0.6 GB of float32 input per step over PCIe 4 (~10 GB/s pageable)
  // takes longer than the GPU's work on it.
  PredictRequest r = lambda_1080ti("alexnet", "infer", 1024, "host");
  r.gpu = "a100-sxm4-40gb";
  r.precision = "amp";
  const Advice a = advise(r);
  ASSERT_EQ(a.baseline.primary, Bound::kHostToDevice);
  const std::string verdict = advice_verdict(a, Lang::kEn);
  EXPECT_NE(verdict.find("host-to-device copy"), std::string::npos) << verdict;
  EXPECT_NE(advice_verdict(a, Lang::kZh).find("拷贝"), std::string::npos);
  EXPECT_NE(advice_text(a, Lang::kEn).find("(waiting)          host_to_device"), std::string::npos);
  EXPECT_NE(advice_html(a, Lang::kEn).find("host_to_device"), std::string::npos);
}

TEST(InputPipeline, HostDataDoesNotApplyToServingModes) {
  PredictRequest r;
  r.model = "llama-2-7b";
  r.gpu = "rtx-3090";
  r.runtime = "llama.cpp";
  r.mode = Mode::kDecode;
  r.precision = "q4_0";
  r.batch = 1;
  r.data = "host";
  EXPECT_THROW(predict(r), InputError);
}

}  // namespace
}  // namespace perfcast
