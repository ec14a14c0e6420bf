// NVIDIA DeepLearningExamples' MXNet ResNet-50 v1.5 benchmark (harness dle-mxnet-rn50). Expectations from outside
// the code, read in NVIDIA/DeepLearningExamples MxNet/Classification/RN50v1.5:
//   - runner@70c51ad7 adds --fuse-bn-relu 1 --fuse-bn-add-relu 1 and the NHWC layouts for --dtype float16 only, and
//     sets --image-shape 4,224,224 for float16 with a DALI backend (3 channels otherwise);
//   - models.py: with those flags every batch norm followed by a ReLU is one nn.BatchNorm(act_type='relu') and every
//     bottleneck's last batch norm, residual add and ReLU are one BatchNormAddRelu, so ResNet-50's forward pass has
//     no ReLU or add kernel of its own (1 stem + 16 x 2 inner batch norm + ReLU, 16 batch norm + add + ReLU);
//   - dali.py: CropMirrorNormalize(pad_output=True) writes the 4th channel, and NVIDIA's Deep Learning Performance
//     guide ('Convolutional Layers User's Guide') gives 4 input channels as enough for tensor cores in a stride-2 first
//     layer (PaddlePaddle/models#4911 reports the same DALI 4-channel padding speeding its ResNet-50 up by 6.4%).
#include <gtest/gtest.h>

#include <string>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "import/config_csv.h"
#include "runtime/harness_profile.h"

namespace perfcast {
namespace {

ConfigRow dle_mxnet_row(const std::string& mode, const std::string& precision, const std::string& harness) {
  ConfigRow row;
  row.gpu = "v100-sxm2-16gb";
  row.model = "resnet50_v1_5";
  row.runtime = "mxnet";
  row.runtime_version = "1.7";
  row.mode = mode;
  row.precision = precision;
  row.batch = "192";
  row.layout = precision == "amp" ? "nhwc" : "";
  row.harness = harness;
  return row;
}

// Forward launches of the zoo model's ReLU and residual-add ops (conv1.relu, layerX.Y.convZ.relu, layerX.Y.add,
// layerX.Y.relu).
double relu_and_add_launches(const Prediction& p) {
  double n = 0;
  for (const OpCost& e : p.step.entries) {
    const bool relu_or_add = e.name.find("relu") != std::string::npos || e.name.find(".add") != std::string::npos;
    if (e.kind == OpKind::kElementwise && e.phase == Phase::kForward && relu_or_add) n += e.cost.launches;
  }
  return n;
}

TEST(DleMxnetHarness, NamesTheScriptsHalfPrecisionModelOptionsWithSources) {
  const HarnessProfile& h = find_harness("dle-mxnet-rn50");
  EXPECT_TRUE(h.half_fuse_bn_activation);
  EXPECT_EQ(h.half_input_channel_pad, 4) << "--image-shape 4,224,224";
  for (const char* key : {"harness", "host_step_us", "syncs_per_step", "half_fuse_bn_activation", "half_input_channel_pad"})
    EXPECT_TRUE(h.sources.count(key)) << "no source for " << key;
}

TEST(DleMxnetHarness, HalfRunsHaveNoReluOrAddKernelOfTheirOwn) {
  for (const char* mode : {"train", "infer"}) {
    const Prediction own = predict(request_from_row(dle_mxnet_row(mode, "amp", "")));
    const Prediction dle = predict(request_from_row(dle_mxnet_row(mode, "amp", "dle-mxnet-rn50")));
    EXPECT_GE(relu_and_add_launches(own), 1 + 32 + 16 + 16) << mode;
    EXPECT_EQ(relu_and_add_launches(dle), 0) << mode;
    EXPECT_LT(dle.step.gpu_us, own.step.gpu_us) << mode;
  }
}

TEST(DleMxnetHarness, TheFourChannelStemRunsOnTensorCores) {
  const Prediction own = predict(request_from_row(dle_mxnet_row("train", "amp", "")));
  const Prediction dle = predict(request_from_row(dle_mxnet_row("train", "amp", "dle-mxnet-rn50")));
  double own_stem = 0, dle_stem = 0;
  for (const OpCost& e : own.step.entries)
    if (e.name == "conv1") own_stem += e.cost.time_us;
  for (const OpCost& e : dle.step.entries)
    if (e.name == "conv1") dle_stem += e.cost.time_us;
  ASSERT_GT(own_stem, 0);
  // FP32 CUDA-core math on 3 channels against half tensor cores on 4: several times faster, not a few percent.
  EXPECT_LT(dle_stem, 0.5 * own_stem);
}

TEST(DleMxnetHarness, Float32RunsKeepTheRuntimesKernels) {
  for (const char* mode : {"train", "infer"}) {
    const Prediction own = predict(request_from_row(dle_mxnet_row(mode, "fp32", "")));
    const Prediction dle = predict(request_from_row(dle_mxnet_row(mode, "fp32", "dle-mxnet-rn50")));
    EXPECT_DOUBLE_EQ(dle.step.gpu_us, own.step.gpu_us) << mode;
    EXPECT_DOUBLE_EQ(dle.step.launches, own.step.launches) << mode;
  }
}

}  // namespace
}  // namespace perfcast
