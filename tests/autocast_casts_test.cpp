// What torch.autocast casts each step, against torchvision's parameter lists and autocast's op lists
// (aten/src/ATen/autocast_mode.cpp): convolution and linear weights are cast, batch-norm scales are not.
#include <gtest/gtest.h>

#include "schedule/step.h"
#include "zoo_test_helpers.h"

namespace perfcast {
namespace {

using zoo_test::build;

TEST(AutocastCasts, ResNet50CastsItsConvolutionAndLinearWeightsOnly) {
  const Graph g = build("resnet50_v1_5", 64);
  // torchvision resnet50: len(list(model.parameters())) == 161: 53 convolution weights (no bias), 53 batch norms
  // with a weight and a bias each, the fc weight and bias.
  EXPECT_EQ(parameter_tensors(g), 161);
  const CastWork w = half_weight_casts(g);
  EXPECT_EQ(w.tensors, 55);
  // 25,557,032 parameters less the batch norms' 2 x 26,560 channels (64 + 3 x 384 + 256 + 4 x 768 + 512 +
  // 6 x 1536 + 1024 + 3 x 3072 + 2048).
  EXPECT_DOUBLE_EQ(w.elems, 25'557'032.0 - 53'120.0);
}

TEST(AutocastCasts, ResNet50CastsOnlyItsInputImageInInference) {
  // The FP32 image is cast once for conv1; cuDNN batch norm returns the half input's type, so nothing after it is
  // cast again.
  const Graph g = build("resnet50_v1_5", 64);
  const CastWork a = autocast_activation_casts(g, true, false);
  EXPECT_EQ(a.tensors, 1) << a.elems;
  EXPECT_DOUBLE_EQ(a.elems, 64.0 * 3 * 224 * 224);
  // Training adds the loss: cross_entropy is an FP32-list op, so the half logits (64 x 1000) are cast up.
  const CastWork t = autocast_activation_casts(g, true, true);
  EXPECT_EQ(t.tensors, 2);
  EXPECT_DOUBLE_EQ(t.elems, 64.0 * 3 * 224 * 224 + 64.0 * 1000);
}

}  // namespace
}  // namespace perfcast
