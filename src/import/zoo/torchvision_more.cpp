// More torchvision.models classifiers, each with the layer shapes torchvision builds (ImageNet, 1000 classes,
// 224x224) and op names following its state_dict keys: SqueezeNet 1.1, MobileNetV3-Large, EfficientNet-B0,
// ShuffleNetV2 x1.0 and ViT-B/16 (ResNeXt and Wide ResNet live in resnets.cpp, VGG-11/13 in classic_cnns.cpp,
// DenseNet-169/201 in dense_mobile.cpp). The parameter and multiply-add totals are checked against torchvision's weights metadata in
// tests/zoo_torchvision_test.cpp.
//
// Modelling choices worth knowing:
//  - Dropout with p = 0 launches no kernel in PyTorch (at::dropout returns its input), so ViT's dropouts
//    (dropout = attention_dropout = 0) are left out; the CNN classifier dropouts (p = 0.2 / 0.5) are kept.
//  - EfficientNet's stochastic depth is left out. In training torchvision.ops.stochastic_depth draws a [N,1,1,1]
//    Bernoulli mask and multiplies the block output by it before the residual add (one elementwise kernel per
//    residual block after the first); the model has no op for it.
//  - ShuffleNetV2: x.chunk(2, dim=1) is a view. The half that feeds branch2 is not contiguous at batch > 1 and
//    cuDNN's convolution makes it so (input.contiguous()): one copy, modelled as a window-1 average pool that
//    picks one of the two channel halves viewed as rows. torch.cat((x1, branch2(x2))) reads x1 in place: the
//    builder's concat takes its off-axis extent from its first input, so branch2's output goes first and x is
//    passed whole as the second input, standing for its half (the ONNX export slices it, as for U-Net's crops;
//    the order does not change the cost). Both stand-ins count one extra half-tensor read. The channel
//    shuffle's view + transpose + .contiguous() is one transpose copy between two free views.
//  - ViT-B/16: the class token and the position embedding are learned tensors added to the activations; the
//    builder owns parameters only in ops, so each is an embedding lookup of constant indices (the class token
//    gathered once per sample, as expand + cat reads it; the 197 x 768 position table read once and broadcast
//    by the add). The permute after the patch flattening is a view that the cat reads in place. The
//    nn.MultiheadAttention in-projection (one 768 -> 2304 GEMM) is built as three 768 -> 768 projections with
//    its parameters and MACs, as the zoo's GPT-2 does. The head reads the class token x[:, 0] (a view) through a
//    1x1 window at stride 197, as the zoo's BERT pooler does.
#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

enum class Act { kNone, kRelu, kRelu6, kHardswish, kSilu };

Tensor activate(GraphBuilder& b, const Tensor& x, Act act, const std::string& name) {
  switch (act) {
    case Act::kNone: return x;
    case Act::kRelu: return b.relu(x, true, name);
    case Act::kRelu6: return b.relu6(x, name);
    case Act::kHardswish: return b.hardswish(x, name);
    case Act::kSilu: return b.silu(x, name);
  }
  return x;
}

// Conv2dNormActivation: conv without bias ("<name>.0"), BatchNorm ("<name>.1"), optional activation.
Tensor conv_norm_act(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, std::int64_t s,
                     std::int64_t groups, Act act, const std::string& name) {
  Tensor y = b.conv(x, c, {k}, {s}, {(k - 1) / 2}, {1}, groups, false, name + ".0");
  y = b.batch_norm(y, name + ".1");
  return activate(b, y, act, name + ".2");
}

// torchvision.ops.SqueezeExcitation: global average pool, fc1 (1x1 conv with bias), activation, fc2, the
// scale activation, and the product with the input.
Tensor squeeze_excitation(GraphBuilder& b, const Tensor& x, std::int64_t squeeze, Act act, bool hard_gate,
                          const std::string& name) {
  Tensor s = b.global_avg_pool(x, name + ".avgpool");
  s = b.conv(s, squeeze, {1}, {1}, {0}, {1}, 1, true, name + ".fc1");
  s = activate(b, s, act, name + ".activation");
  s = b.conv(s, x.shape[1], {1}, {1}, {0}, {1}, 1, true, name + ".fc2");
  s = hard_gate ? b.hardsigmoid(s, name + ".scale_activation") : b.sigmoid(s, name + ".scale_activation");
  return b.mul(s, x, name + ".scale");
}

// torchvision's _make_divisible(v, 8): round to the nearest multiple of 8, never down by more than 10%.
std::int64_t make_divisible(double v) {
  std::int64_t r = std::max<std::int64_t>(8, static_cast<std::int64_t>(v + 4) / 8 * 8);
  if (static_cast<double>(r) < 0.9 * v) r += 8;
  return r;
}

// ---------------------------------------------------------------- SqueezeNet 1.1 (torchvision.models.squeezenet)

// Fire module: squeeze 1x1 + ReLU, then expand 1x1 and expand 3x3 (each + ReLU) concatenated. Biased convs.
Tensor fire(GraphBuilder& b, const Tensor& x, std::int64_t squeeze, std::int64_t e1, std::int64_t e3) {
  Tensor s = b.relu(b.conv(x, squeeze, {1}, {1}, {0}, {1}, 1, true, "squeeze"), true, "squeeze_activation");
  Tensor a = b.relu(b.conv(s, e1, {1}, {1}, {0}, {1}, 1, true, "expand1x1"), true, "expand1x1_activation");
  Tensor c = b.relu(b.conv(s, e3, {3}, {1}, {1}, {1}, 1, true, "expand3x3"), true, "expand3x3_activation");
  return b.concat({a, c}, 1, "cat");
}

Graph build_squeezenet1_1(const ModelOptions& o) {
  GraphBuilder b("squeezenet1_1", o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("features.");
  x = b.relu(b.conv(x, 64, {3}, {2}, {0}, {1}, 1, true, "0"), true, "1");  // 111x111
  x = b.max_pool(x, {3}, {2}, {0}, true, "2");                             // 55x55 (ceil mode)
  struct FireSpec {
    int index;
    std::int64_t squeeze, e1, e3;
  };
  const std::array<FireSpec, 8> fires{{{3, 16, 64, 64},
                                       {4, 16, 64, 64},
                                       {6, 32, 128, 128},
                                       {7, 32, 128, 128},
                                       {9, 48, 192, 192},
                                       {10, 48, 192, 192},
                                       {11, 64, 256, 256},
                                       {12, 64, 256, 256}}};
  for (const auto& f : fires) {
    if (f.index == 6 || f.index == 9) {
      b.set_scope("features.");
      x = b.max_pool(x, {3}, {2}, {0}, true, std::to_string(f.index - 1));  // 27x27, then 13x13
    }
    b.set_scope("features." + std::to_string(f.index) + ".");
    x = fire(b, x, f.squeeze, f.e1, f.e3);
  }
  // Classifier: Dropout(0.5), final 1x1 conv to the classes, ReLU, AdaptiveAvgPool2d(1); logits are its flatten.
  b.set_scope("classifier.");
  x = b.dropout(x, "0");
  x = b.relu(b.conv(x, 1000, {1}, {1}, {0}, {1}, 1, true, "1"), true, "2");
  x = b.global_avg_pool(x, "3");
  b.set_scope("");
  x = b.flatten(x, "flatten");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- MobileNetV3-Large (torchvision.models.mobilenetv3)

Graph build_mobilenet_v3_large(const ModelOptions& o) {
  GraphBuilder b("mobilenet_v3_large", o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("features.");
  x = conv_norm_act(b, x, 16, 3, 2, 1, Act::kHardswish, "0");  // 112x112
  struct Bneck {
    std::int64_t in, kernel, expanded, out;
    bool se;
    Act act;
    std::int64_t stride;
  };
  const Act re = Act::kRelu, hs = Act::kHardswish;
  const std::array<Bneck, 15> setting{{{16, 3, 16, 16, false, re, 1},
                                       {16, 3, 64, 24, false, re, 2},
                                       {24, 3, 72, 24, false, re, 1},
                                       {24, 5, 72, 40, true, re, 2},
                                       {40, 5, 120, 40, true, re, 1},
                                       {40, 5, 120, 40, true, re, 1},
                                       {40, 3, 240, 80, false, hs, 2},
                                       {80, 3, 200, 80, false, hs, 1},
                                       {80, 3, 184, 80, false, hs, 1},
                                       {80, 3, 184, 80, false, hs, 1},
                                       {80, 3, 480, 112, true, hs, 1},
                                       {112, 3, 672, 112, true, hs, 1},
                                       {112, 5, 672, 160, true, hs, 2},
                                       {160, 5, 960, 160, true, hs, 1},
                                       {160, 5, 960, 160, true, hs, 1}}};
  int index = 1;
  for (const auto& c : setting) {
    b.set_scope("features." + std::to_string(index++) + ".");
    int layer = 0;
    auto next = [&layer] { return "block." + std::to_string(layer++); };
    Tensor y = x;
    if (c.expanded != c.in) y = conv_norm_act(b, y, c.expanded, 1, 1, 1, c.act, next());
    y = conv_norm_act(b, y, c.expanded, c.kernel, c.stride, c.expanded, c.act, next());
    if (c.se) {
      const std::int64_t squeeze = make_divisible(static_cast<double>(c.expanded / 4));
      y = squeeze_excitation(b, y, squeeze, Act::kRelu, /*hard_gate=*/true, next());
    }
    y = conv_norm_act(b, y, c.out, 1, 1, 1, Act::kNone, next());
    x = (c.stride == 1 && c.in == c.out) ? b.add(y, x, "add") : y;
  }
  b.set_scope("features.");
  x = conv_norm_act(b, x, 960, 1, 1, 1, Act::kHardswish, std::to_string(index));  // 7x7
  b.set_scope("");
  x = b.global_avg_pool(x, "avgpool");
  x = b.flatten(x, "flatten");
  b.set_scope("classifier.");
  x = b.linear(x, 1280, true, "0");
  x = b.hardswish(x, "1");
  x = b.dropout(x, "2");  // p = 0.2
  x = b.linear(x, 1000, true, "3");
  b.set_scope("");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- EfficientNet-B0 (torchvision.models.efficientnet)

Graph build_efficientnet_b0(const ModelOptions& o) {
  GraphBuilder b("efficientnet_b0", o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("features.");
  x = conv_norm_act(b, x, 32, 3, 2, 1, Act::kSilu, "0");  // 112x112
  struct Stage {
    std::int64_t expand, kernel, stride, in, out;
    int layers;
  };
  // MBConvConfig rows of efficientnet_b0 (width and depth multipliers 1.0).
  const std::array<Stage, 7> stages{{{1, 3, 1, 32, 16, 1},
                                     {6, 3, 2, 16, 24, 2},
                                     {6, 5, 2, 24, 40, 2},
                                     {6, 3, 2, 40, 80, 3},
                                     {6, 5, 1, 80, 112, 3},
                                     {6, 5, 2, 112, 192, 4},
                                     {6, 3, 1, 192, 320, 1}}};
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Stage& st = stages[s];
    for (int i = 0; i < st.layers; ++i) {
      const std::int64_t in = i == 0 ? st.in : st.out;
      const std::int64_t stride = i == 0 ? st.stride : 1;
      const std::int64_t expanded = make_divisible(static_cast<double>(in * st.expand));
      b.set_scope("features." + std::to_string(s + 1) + "." + std::to_string(i) + ".");
      int layer = 0;
      auto next = [&layer] { return "block." + std::to_string(layer++); };
      Tensor y = x;
      if (expanded != in) y = conv_norm_act(b, y, expanded, 1, 1, 1, Act::kSilu, next());
      y = conv_norm_act(b, y, expanded, st.kernel, stride, expanded, Act::kSilu, next());
      y = squeeze_excitation(b, y, std::max<std::int64_t>(1, in / 4), Act::kSilu, false, next());
      y = conv_norm_act(b, y, st.out, 1, 1, 1, Act::kNone, next());
      // Stochastic depth on the residual branch is left out (see the header).
      x = (stride == 1 && in == st.out) ? b.add(y, x, "add") : y;
    }
  }
  b.set_scope("features.");
  x = conv_norm_act(b, x, 1280, 1, 1, 1, Act::kSilu, "8");  // 7x7
  b.set_scope("");
  x = b.global_avg_pool(x, "avgpool");
  x = b.flatten(x, "flatten");
  x = b.dropout(x, "classifier.0");  // p = 0.2
  x = b.linear(x, 1000, true, "classifier.1");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- ShuffleNetV2 x1.0 (torchvision.models.shufflenetv2)

// channel_shuffle(x, 2) on a tensor of `c` channels at h x w: view, transpose(1, 2).contiguous() (one copy), view.
Tensor channel_shuffle(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t h, std::int64_t w) {
  Tensor y = b.reshape(x, {2, c / 2, h, w}, "shuffle.view");
  y = b.transpose(y, {c / 2, 2, h, w}, "shuffle.transpose");
  return b.reshape(y, {c, h, w}, "shuffle.flatten");
}

// Conv without bias + BN, named by the indices of torchvision's Sequential.
Tensor conv_bn(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, std::int64_t s, std::int64_t groups,
               const std::string& conv_name, const std::string& bn_name) {
  return b.batch_norm(b.conv(x, c, {k}, {s}, {(k - 1) / 2}, {1}, groups, false, conv_name), bn_name);
}

// branch2: 1x1 conv + BN + ReLU, depthwise 3x3 (stride) + BN, 1x1 conv + BN + ReLU; all convs without bias.
Tensor shuffle_branch2(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t stride) {
  Tensor y = b.relu(conv_bn(b, x, c, 1, 1, 1, "branch2.0", "branch2.1"), true, "branch2.2");
  y = conv_bn(b, y, c, 3, stride, c, "branch2.3", "branch2.4");
  return b.relu(conv_bn(b, y, c, 1, 1, 1, "branch2.5", "branch2.6"), true, "branch2.7");
}

Graph build_shufflenet_v2_x1_0(const ModelOptions& o) {
  GraphBuilder b("shufflenet_v2_x1_0", o.batch);
  Tensor x = b.input({3, 224, 224});
  x = b.relu(conv_bn(b, x, 24, 3, 2, 1, "conv1.0", "conv1.1"), true, "conv1.2");  // 112x112
  x = b.max_pool(x, {3}, {2}, {1}, false, "maxpool");                             // 56x56
  const std::array<int, 3> repeats{4, 8, 4};
  const std::array<std::int64_t, 3> widths{116, 232, 464};
  for (int stage = 0; stage < 3; ++stage) {
    const std::int64_t c = widths[stage], half = c / 2;
    for (int i = 0; i < repeats[stage]; ++i) {
      b.set_scope("stage" + std::to_string(stage + 2) + "." + std::to_string(i) + ".");
      Tensor out;
      std::int64_t h = x.shape[2], w = x.shape[3];
      if (i == 0) {
        // Downsampling unit: both branches read all of x; cat((branch1(x), branch2(x))).
        const std::int64_t in = x.shape[1];
        Tensor b1 = conv_bn(b, x, in, 3, 2, in, "branch1.0", "branch1.1");
        b1 = b.relu(conv_bn(b, b1, half, 1, 1, 1, "branch1.2", "branch1.3"), true, "branch1.4");
        Tensor b2 = shuffle_branch2(b, x, half, 2);
        out = b.concat({b1, b2}, 1, "cat");
        h = out.shape[2];
        w = out.shape[3];
      } else {
        // x1, x2 = x.chunk(2, dim=1); cat((x1, branch2(x2))). See the header for the two data movements.
        const std::int64_t m = half * h * w;
        Tensor rows = b.reshape(x, {1, 2, m}, "chunk.view");  // the two channel halves as rows
        Tensor x2 = b.avg_pool(rows, {1, 1}, {2, 1}, {0}, false, "chunk.contiguous");  // [N,1,1,M] copy
        x2 = b.reshape(x2, {half, h, w}, "chunk.x2");
        Tensor y = shuffle_branch2(b, x2, half, 1);
        Tensor yv = b.reshape(y, {1, m}, "cat.branch2_view");
        Tensor xv = b.reshape(x, {1, 2 * m}, "cat.x1_view");
        out = b.concat({yv, xv}, 1, "cat");  // [N,2,M]
      }
      x = channel_shuffle(b, out, c, h, w);
    }
  }
  b.set_scope("");
  x = b.relu(conv_bn(b, x, 1024, 1, 1, 1, "conv5.0", "conv5.1"), true, "conv5.2");  // 7x7
  x = b.global_avg_pool(x, "mean");  // x.mean([2, 3])
  x = b.flatten(x, "flatten");
  x = b.linear(x, 1000, true, "fc");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- ViT (torchvision.models.vision_transformer)

// nn.MultiheadAttention(d, heads) self-attention: q/k/v projections with bias (the packed in_proj), the
// non-causal attention core without dropout (attention_dropout = 0) and out_proj.
Tensor vit_self_attention(GraphBuilder& b, const Tensor& x, std::int64_t heads, const std::string& name) {
  const std::int64_t d = x.shape.back();
  Tensor q = b.linear(x, d, true, name + ".in_proj.q");
  Tensor k = b.linear(x, d, true, name + ".in_proj.k");
  Tensor v = b.linear(x, d, true, name + ".in_proj.v");
  Tensor a = b.attention(q, k, v, heads, heads, /*causal=*/false, /*fused=*/false, name + ".core", /*dropout=*/false);
  return b.linear(a, d, true, name + ".out_proj");
}

// torchvision's VisionTransformer at 224x224: patch size, layers, width, heads and MLP width per variant.
struct VitDims {
  std::int64_t patch, layers, hidden, heads, mlp;
};

Graph build_vit(const std::string& id, const VitDims& dims, const ModelOptions& o) {
  const std::int64_t kPatch = dims.patch, kHidden = dims.hidden, kHeads = dims.heads, kLayers = dims.layers,
                     kMlp = dims.mlp;
  const std::int64_t kGrid = 224 / kPatch, kTokens = kGrid * kGrid + 1;  // patches + class token
  GraphBuilder b(id, o.batch);
  Tensor x = b.input({3, 224, 224});
  x = b.conv(x, kHidden, {kPatch}, {kPatch}, {0}, {1}, 1, true, "conv_proj");  // [N,hidden,grid,grid]
  x = b.reshape(x, {kHidden, kGrid * kGrid}, "flatten_patches");
  x = b.reshape(x, {kGrid * kGrid, kHidden}, "permute");  // a view; the cat below reads it in place
  // Constant indices (not graph inputs): one class-token row per sample, the token positions once.
  const Tensor class_index{-1, {o.batch, 1}};
  const Tensor positions{-1, {1, kTokens}};
  Tensor cls = b.embedding(class_index, 1, kHidden, "class_token");  // [N,1,hidden]
  x = b.concat({cls, x}, 1, "cat_class_token");                      // [N,tokens,hidden]
  b.set_scope("encoder.");
  x = b.add(x, b.embedding(positions, kTokens, kHidden, "pos_embedding"), "add_pos_embedding");
  for (std::int64_t l = 0; l < kLayers; ++l) {
    b.set_scope("encoder.layers.encoder_layer_" + std::to_string(l) + ".");
    Tensor h = b.layer_norm(x, "ln_1");
    h = vit_self_attention(b, h, kHeads, "self_attention");
    x = b.add(h, x, "attention_residual");
    h = b.layer_norm(x, "ln_2");
    h = b.gelu(b.linear(h, kMlp, true, "mlp.0"), "mlp.1");
    h = b.linear(h, kHidden, true, "mlp.3");
    x = b.add(h, x, "mlp_residual");
  }
  b.set_scope("");
  x = b.layer_norm(x, "encoder.ln");
  // x[:, 0]: row 0 of the [tokens, hidden] plane, through a 1x1 window at stride tokens.
  Tensor cls_out = b.reshape(x, {1, kTokens, kHidden}, "plane_view");
  cls_out = b.avg_pool(cls_out, {1, 1}, {kTokens, 1}, {0}, false, "class_token_select");
  cls_out = b.reshape(cls_out, {kHidden}, "class_token_view");
  Tensor logits = b.linear(cls_out, 1000, true, "heads.head");
  b.cross_entropy(logits);
  return b.finish();
}

// ---------------------------------------------------------------- registration

void add(std::vector<ZooModel>& out, const std::string& id, const std::string& family, const std::string& desc,
         const std::string& cite, std::function<Graph(const ModelOptions&)> build) {
  out.push_back(ZooModel{id, family, desc, cite, false, 0, std::move(build)});
}

}  // namespace

void register_torchvision_more(std::vector<ZooModel>& out) {
  add(out, "squeezenet1_1", "cnn", "SqueezeNet 1.1, 224x224, Fire modules, conv classifier",
      "Iandola et al. 2016, arXiv:1602.07360; shapes as torchvision.models.squeezenet1_1", build_squeezenet1_1);
  add(out, "mobilenet_v3_large", "cnn", "MobileNetV3-Large width 1.0, 224x224, hardswish, SE with hardsigmoid",
      "Howard et al. 2019, arXiv:1905.02244; shapes as torchvision.models.mobilenet_v3_large",
      build_mobilenet_v3_large);
  add(out, "efficientnet_b0", "cnn", "EfficientNet-B0, 224x224, MBConv with SiLU and SE",
      "Tan & Le 2019, arXiv:1905.11946; shapes as torchvision.models.efficientnet_b0", build_efficientnet_b0);
  add(out, "shufflenet_v2_x1_0", "cnn", "ShuffleNetV2 x1.0, 224x224, channel split and shuffle",
      "Ma et al. 2018, arXiv:1807.11164; shapes as torchvision.models.shufflenet_v2_x1_0",
      build_shufflenet_v2_x1_0);
  const std::string dosovitskiy = "Dosovitskiy et al. 2021, arXiv:2010.11929; shapes as torchvision.models.";
  add(out, "vit_b_16", "vision_transformer", "ViT-B/16, 224x224, 12 layers, d=768, 12 heads, 197 tokens",
      dosovitskiy + "vit_b_16", [](const ModelOptions& o) { return build_vit("vit_b_16", {16, 12, 768, 12, 3072}, o); });
  add(out, "vit_b_32", "vision_transformer", "ViT-B/32, 224x224, 12 layers, d=768, 12 heads, 50 tokens",
      dosovitskiy + "vit_b_32", [](const ModelOptions& o) { return build_vit("vit_b_32", {32, 12, 768, 12, 3072}, o); });
  add(out, "vit_l_16", "vision_transformer", "ViT-L/16, 224x224, 24 layers, d=1024, 16 heads, 197 tokens",
      dosovitskiy + "vit_l_16",
      [](const ModelOptions& o) { return build_vit("vit_l_16", {16, 24, 1024, 16, 4096}, o); });
}

}  // namespace perfcast
