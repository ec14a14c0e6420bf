// Parameter counts and MACs of the torchvision classifiers of src/import/zoo/torchvision_more.cpp against
// torchvision's published figures.
//
// Source (verified against the stored text of torchvision/models/{resnet,vgg,densenet,squeezenet,mobilenetv3,
// efficientnet,shufflenetv2,vision_transformer}.py):
//  [tv] torchvision weights metadata, IMAGENET1K_V1 entry of each <Model>_Weights enum: "num_params" and "_ops"
//       (the GFLOPS column of the pytorch.org model tables, which counts multiply-adds of conv and linear layers
//       and, for ViT, of the attention matmuls).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "graph/op_arithmetic.h"
#include "import/zoo/zoo.h"
#include "zoo_test_helpers.h"

namespace perfcast {
namespace {

using zoo_test::build;
using zoo_test::macs_of;
using zoo_test::op_named;
using zoo_test::params_of;



const char* const kIds[] = {"resnext50_32x4d",    "resnext101_32x8d", "wide_resnet50_2",    "vgg11",
                            "vgg13",              "densenet169",      "densenet201",        "squeezenet1_1",
                            "mobilenet_v3_large", "efficientnet_b0",  "shufflenet_v2_x1_0", "vit_b_16",
                            "vit_b_32",           "vit_l_16"};

// ViT-B/16 attention matmuls per sample, which conv_linear_macs leaves out (it counts conv and matmul ops, not
// the attention core): QK^T and AV, each 197 x 197 x 768 multiply-adds, in each of the 12 layers.
constexpr double kVitAttentionMacs = 12.0 * 2 * 197 * 197 * 768;

TEST(ZooTorchvision, ParameterCountsMatchPublished) {
  // [tv] num_params.
  EXPECT_NEAR(params_of("resnext50_32x4d"), 25'028'904, 25'028'904 * 0.01);
  EXPECT_NEAR(params_of("resnext101_32x8d"), 88'791'336, 88'791'336 * 0.01);
  EXPECT_NEAR(params_of("wide_resnet50_2"), 68'883'240, 68'883'240 * 0.01);
  EXPECT_NEAR(params_of("vgg11"), 132'863'336, 132'863'336 * 0.01);
  EXPECT_NEAR(params_of("vgg13"), 133'047'848, 133'047'848 * 0.01);
  EXPECT_NEAR(params_of("densenet169"), 14'149'480, 14'149'480 * 0.01);
  EXPECT_NEAR(params_of("densenet201"), 20'013'928, 20'013'928 * 0.01);
  EXPECT_NEAR(params_of("squeezenet1_1"), 1'235'496, 1'235'496 * 0.01);
  EXPECT_NEAR(params_of("mobilenet_v3_large"), 5'483'032, 5'483'032 * 0.01);
  EXPECT_NEAR(params_of("efficientnet_b0"), 5'288'548, 5'288'548 * 0.01);
  EXPECT_NEAR(params_of("shufflenet_v2_x1_0"), 2'278'604, 2'278'604 * 0.01);
  EXPECT_NEAR(params_of("vit_b_16"), 86'567'656, 86'567'656 * 0.01);
}

TEST(ZooTorchvision, ParameterCountsAreExact) {
  // The shapes reproduce torchvision's totals to the parameter (BatchNorm counts weight and bias, as
  // num_params does; running statistics are buffers).
  EXPECT_EQ(build("resnext50_32x4d").params(), 25'028'904);
  EXPECT_EQ(build("resnext101_32x8d").params(), 88'791'336);
  EXPECT_EQ(build("wide_resnet50_2").params(), 68'883'240);
  EXPECT_EQ(build("vgg11").params(), 132'863'336);
  EXPECT_EQ(build("vgg13").params(), 133'047'848);
  EXPECT_EQ(build("densenet169").params(), 14'149'480);
  EXPECT_EQ(build("densenet201").params(), 20'013'928);
  EXPECT_EQ(build("squeezenet1_1").params(), 1'235'496);
  EXPECT_EQ(build("mobilenet_v3_large").params(), 5'483'032);
  EXPECT_EQ(build("efficientnet_b0").params(), 5'288'548);
  EXPECT_EQ(build("shufflenet_v2_x1_0").params(), 2'278'604);
  // Includes the class token (768) and the 197 x 768 position embedding.
  EXPECT_EQ(build("vit_b_16").params(), 86'567'656);
  // [tv] num_params of vit_b_32 (50 tokens, 32x32 patches) and vit_l_16 (24 layers, d=1024).
  EXPECT_EQ(build("vit_b_32").params(), 88'224'232);
  EXPECT_EQ(build("vit_l_16").params(), 304'326'632);
}

TEST(ZooTorchvision, MacsMatchPublished) {
  // [tv] _ops (GFLOPS field, multiply-adds) at 224x224.
  EXPECT_NEAR(macs_of("resnext50_32x4d"), 4.23e9, 4.23e9 * 0.01);
  EXPECT_NEAR(macs_of("resnext101_32x8d"), 16.414e9, 16.414e9 * 0.01);
  EXPECT_NEAR(macs_of("wide_resnet50_2"), 11.398e9, 11.398e9 * 0.01);
  EXPECT_NEAR(macs_of("vgg11"), 7.609e9, 7.609e9 * 0.01);
  EXPECT_NEAR(macs_of("vgg13"), 11.308e9, 11.308e9 * 0.01);
  EXPECT_NEAR(macs_of("densenet169"), 3.36e9, 3.36e9 * 0.01);
  EXPECT_NEAR(macs_of("densenet201"), 4.291e9, 4.291e9 * 0.01);
  EXPECT_NEAR(macs_of("squeezenet1_1"), 0.349e9, 0.349e9 * 0.01);
  EXPECT_NEAR(macs_of("mobilenet_v3_large"), 0.217e9, 0.217e9 * 0.01);
  EXPECT_NEAR(macs_of("efficientnet_b0"), 0.386e9, 0.386e9 * 0.01);
  EXPECT_NEAR(macs_of("shufflenet_v2_x1_0"), 0.145e9, 0.145e9 * 0.01);
  // [tv] 17.564 includes the attention matmuls; conv_linear_macs does not count them, so they are added here.
  EXPECT_NEAR(macs_of("vit_b_16") + kVitAttentionMacs, 17.564e9, 17.564e9 * 0.01);
  // [tv] vit_b_32 4.41 GFLOPS (50 tokens: 12 layers of 2 x 50 x 50 x 768 attention MACs) and vit_l_16 61.55 GFLOPS
  // (24 layers of 2 x 197 x 197 x 1024); torchvision's counter rounds its attention differently, hence 2%.
  EXPECT_NEAR(macs_of("vit_b_32") + 12.0 * 2 * 50 * 50 * 768, 4.41e9, 4.41e9 * 0.02);
  EXPECT_NEAR(macs_of("vit_l_16") + 24.0 * 2 * 197 * 197 * 1024, 61.55e9, 61.55e9 * 0.02);
}

TEST(ZooTorchvision, VitAttentionIsTheOnlyUncountedMatmul) {
  // The attention cores carry exactly the MACs added by hand above: 12 non-causal, dropout-free cores over
  // 197 tokens with 12 heads of 64.
  const Graph g = build("vit_b_16");
  double attention_macs = 0;
  int cores = 0;
  for (const auto& op : g.ops) {
    if (op.kind != OpKind::kAttention) continue;
    ++cores;
    const auto& a = op.attn;
    EXPECT_EQ(a.q_len, 197);
    EXPECT_EQ(a.kv_len, 197);
    EXPECT_EQ(a.heads, 12);
    EXPECT_EQ(a.head_dim, 64);
    EXPECT_FALSE(a.causal);
    EXPECT_FALSE(a.dropout);
    attention_macs += 2.0 * static_cast<double>(a.heads * a.q_len * a.kv_len * a.head_dim);
  }
  EXPECT_EQ(cores, 12);
  EXPECT_DOUBLE_EQ(attention_macs, kVitAttentionMacs);
  // Conv and linear part: patch embedding 196 x 768 x 768, per layer 197 x 768 x (3 x 768 + 768 + 2 x 3072),
  // head 768 x 1000.
  EXPECT_DOUBLE_EQ(conv_linear_macs(g), 196.0 * 768 * 768 + 12.0 * 197 * 768 * 9216 + 768.0 * 1000);
}

TEST(ZooTorchvision, KeyShapesFollowTorchvision) {
  EXPECT_EQ(op_named(build("resnext50_32x4d"), "layer4.2.conv3.bn").out_shape,
            (std::vector<std::int64_t>{1, 2048, 7, 7}));
  EXPECT_EQ(op_named(build("vgg11"), "features.block5.pool").out_shape, (std::vector<std::int64_t>{1, 512, 7, 7}));
  EXPECT_EQ(op_named(build("densenet169"), "features.norm5").out_shape,
            (std::vector<std::int64_t>{1, 1664, 7, 7}));
  EXPECT_EQ(op_named(build("densenet201"), "features.norm5").out_shape,
            (std::vector<std::int64_t>{1, 1920, 7, 7}));
  EXPECT_EQ(op_named(build("squeezenet1_1"), "features.12.cat").out_shape,
            (std::vector<std::int64_t>{1, 512, 13, 13}));
  EXPECT_EQ(op_named(build("mobilenet_v3_large"), "features.16.0").out_shape,
            (std::vector<std::int64_t>{1, 960, 7, 7}));
  EXPECT_EQ(op_named(build("efficientnet_b0"), "features.8.0").out_shape,
            (std::vector<std::int64_t>{1, 1280, 7, 7}));
  EXPECT_EQ(op_named(build("shufflenet_v2_x1_0"), "conv5.0").out_shape,
            (std::vector<std::int64_t>{1, 1024, 7, 7}));
  EXPECT_EQ(op_named(build("vit_b_16"), "encoder.ln").out_shape, (std::vector<std::int64_t>{1, 197, 768}));
  EXPECT_EQ(op_named(build("vit_b_32"), "encoder.ln").out_shape, (std::vector<std::int64_t>{1, 50, 768}));
  EXPECT_EQ(op_named(build("vit_l_16"), "encoder.ln").out_shape, (std::vector<std::int64_t>{1, 197, 1024}));

  // ResNeXt-50: the 16 3x3 convs are grouped 32 ways; Wide ResNet's are not grouped and twice as wide.
  int grouped = 0;
  for (const auto& op : build("resnext50_32x4d").ops)
    if (op.kind == OpKind::kConv && op.conv.groups > 1) {
      ++grouped;
      EXPECT_EQ(op.conv.groups, 32);
      EXPECT_EQ(op.conv.kernel[0], 3);
    }
  EXPECT_EQ(grouped, 16);
  EXPECT_EQ(op_named(build("wide_resnet50_2"), "layer1.0.conv2").conv.c_out, 128);
  EXPECT_EQ(op_named(build("wide_resnet50_2"), "layer1.0.conv2").conv.groups, 1);
  // v1.5: the stride is in the 3x3 conv.
  EXPECT_EQ(op_named(build("resnext101_32x8d"), "layer2.0.conv2").conv.stride[0], 2);
  EXPECT_EQ(op_named(build("resnext101_32x8d"), "layer2.0.conv1").conv.stride[0], 1);

  // MobileNetV3-Large: 8 SE blocks gated by hardsigmoid, 10 residual blocks; EfficientNet-B0: 16 MBConv
  // blocks, each with an SE block gated by sigmoid, 9 of them residual.
  auto count = [](const Graph& g, const std::string& suffix) {
    int n = 0;
    for (const auto& op : g.ops) n += op.name.ends_with(suffix) ? 1 : 0;
    return n;
  };
  const Graph mnv3 = build("mobilenet_v3_large");
  EXPECT_EQ(count(mnv3, ".scale_activation"), 8);
  EXPECT_EQ(count(mnv3, ".add"), 10);
  EXPECT_EQ(op_named(mnv3, "features.4.block.2.fc1").conv.c_out, 24);  // _make_divisible(72 // 4, 8)
  const Graph eff = build("efficientnet_b0");
  EXPECT_EQ(count(eff, ".scale_activation"), 16);
  EXPECT_EQ(count(eff, ".add"), 9);
  EXPECT_EQ(op_named(eff, "features.6.0.block.2.fc1").conv.c_out, 28);  // input_channels // 4 = 112 // 4

  // ShuffleNetV2: 16 channel shuffles, each one transpose copy between views.
  const Graph shuffle = build("shufflenet_v2_x1_0");
  int copies = 0;
  for (const auto& op : shuffle.ops)
    if (op.name.ends_with("shuffle.transpose")) {
      ++copies;
      EXPECT_EQ(op.kind, OpKind::kDataMovement);
      EXPECT_FALSE(op.is_view);
    }
  EXPECT_EQ(copies, 16);
  EXPECT_TRUE(op_named(shuffle, "stage3.1.shuffle.view").is_view);
}

TEST(ZooTorchvision, GraphsAreWellFormed) {
  for (const char* id : kIds) {
    SCOPED_TRACE(id);
    const ZooModel& m = find_zoo_model(id);
    EXPECT_EQ(m.family, std::string(id).rfind("vit_", 0) == 0 ? "vision_transformer" : "cnn");
    EXPECT_FALSE(m.description.empty());
    EXPECT_NE(m.citation.find("torchvision.models."), std::string::npos);
    EXPECT_FALSE(m.sequence);
    const Graph g = build(id, 2);
    ASSERT_FALSE(g.ops.empty());
    EXPECT_EQ(g.model_id, id);
    EXPECT_FALSE(g.is_sequence);
    EXPECT_EQ(g.ops.back().kind, OpKind::kLoss);
    const Op& logits = g.ops[g.ops.size() - 2];
    EXPECT_EQ(logits.out_shape, (std::vector<std::int64_t>{2, 1000}));
    // SqueezeNet's logits are the flattened average pool of its final conv.
    EXPECT_EQ(logits.kind, std::string(id) == "squeezenet1_1" ? OpKind::kDataMovement : OpKind::kMatmul);
    EXPECT_EQ(g.input_bytes_per_sample, 3 * 224 * 224);
    zoo_test::expect_well_formed(g, id);
  }
}

}  // namespace
}  // namespace perfcast
