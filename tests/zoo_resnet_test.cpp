// Parameter counts and MACs of the ResNet family against published figures.
#include <gtest/gtest.h>

#include "graph/op_arithmetic.h"
#include "import/zoo/zoo.h"
#include "zoo_test_helpers.h"

namespace perfcast {
namespace {

using zoo_test::build;
using zoo_test::macs_of;
using zoo_test::op_named;
using zoo_test::params_of;


TEST(ZooResNet, ParameterCountsMatchTorchvision) {
  // torchvision model cards (IMAGENET1K_V1 weights): num_params.
  EXPECT_NEAR(params_of("resnet18"), 11'689'512, 11'689'512 * 0.01);
  EXPECT_NEAR(params_of("resnet34"), 21'797'672, 21'797'672 * 0.01);
  EXPECT_NEAR(params_of("resnet50"), 25'557'032, 25'557'032 * 0.01);
  EXPECT_NEAR(params_of("resnet50_v1_5"), 25'557'032, 25'557'032 * 0.01);
  EXPECT_NEAR(params_of("resnet101"), 44'549'160, 44'549'160 * 0.01);
  EXPECT_NEAR(params_of("resnet152"), 60'192'808, 60'192'808 * 0.01);
}

TEST(ZooResNet, MacsMatchPublished) {
  // torchvision model cards, GFLOPS field (multiply-adds) at 224x224; torchvision ResNet-50 is v1.5.
  EXPECT_NEAR(macs_of("resnet18"), 1.81e9, 1.81e9 * 0.01);
  EXPECT_NEAR(macs_of("resnet34"), 3.66e9, 3.66e9 * 0.01);
  EXPECT_NEAR(macs_of("resnet50_v1_5"), 4.09e9, 4.09e9 * 0.01);
  // He et al. 2016 Table 1: ResNet-50 v1 "3.8 x 10^9" (two significant digits, so +-2%), 101-layer 7.6e9,
  // 152-layer 11.3e9.
  EXPECT_NEAR(macs_of("resnet50"), 3.8e9, 3.8e9 * 0.02);
  EXPECT_NEAR(macs_of("resnet101"), 7.6e9, 7.6e9 * 0.02);
  EXPECT_NEAR(macs_of("resnet152"), 11.3e9, 11.3e9 * 0.02);
}

}  // namespace
}  // namespace perfcast
