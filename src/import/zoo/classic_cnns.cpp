// Classic ImageNet CNNs: AlexNet, VGG, GoogLeNet and the Inception family, with the layer shapes of the
// reference implementations named in each entry's citation.
//
// Choices worth knowing:
//  - bvlc_alexnet is the original two-tower AlexNet as Caffe's deploy.prototxt (LRN, grouped convolutions), the
//    model Caffe- and TensorRT-era benchmarks ran.
//  - alexnet is torchvision's single-tower "one weird trick" variant (Krizhevsky 2014), the one tf_cnn_benchmarks
//    also runs; its AdaptiveAvgPool2d((6,6)) is an identity at 224x224 and is left out.
//  - vgg16/vgg19 are torchvision's configurations D and E without batch norm; the AdaptiveAvgPool2d((7,7)) is an
//    identity at 224x224 and is left out.
//  - googlenet follows Szegedy et al. 2014 Table 1 (Caffe bvlc_googlenet): biased convs, LRN after pool1 and after
//    conv2, 5x5 convs in the 5x5 branch, ceil-mode max pooling, 40% dropout before the classifier. The two auxiliary
//    classifiers are left out (they are training-only side heads that the table's parameter total excludes too).
//  - inception_v3 is torchvision's Inception3 (BasicConv2d = conv without bias + BN + ReLU) without AuxLogits.
//  - inception_v4 is Cadene pretrainedmodels / timm InceptionV4 (TF-slim shapes), plus the paper's dropout
//    (keep 0.8) before the classifier.
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graph/builder.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

// Biased conv followed by an in-place ReLU (AlexNet, VGG, GoogLeNet).
Tensor conv_relu(GraphBuilder& b, const Tensor& x, std::int64_t c, Dims k, Dims s, Dims p, const std::string& name) {
  Tensor y = b.conv(x, c, std::move(k), std::move(s), std::move(p), {1}, 1, true, name);
  return b.relu(y, true, name + ".relu");
}

// BasicConv2d of the Inception-v3/v4 references: conv without bias, batch norm, in-place ReLU.
Tensor basic_conv(GraphBuilder& b, const Tensor& x, std::int64_t c, Dims k, Dims s, Dims p,
                  const std::string& name) {
  Tensor y = b.conv(x, c, std::move(k), std::move(s), std::move(p), {1}, 1, false, name);
  y = b.batch_norm(y, name + ".bn");
  return b.relu(y, true, name + ".relu");
}

// Classifier tail shared by the models below: flatten + optional dropout + fc + loss.
Graph finish_classifier(GraphBuilder& b, Tensor x, bool dropout, const std::string& fc_name) {
  x = b.flatten(x, "flatten");
  if (dropout) x = b.dropout(x, "dropout");
  x = b.linear(x, 1000, true, fc_name);
  b.cross_entropy(x);
  return b.finish();
}

// Caffe's and VGG's classifier: flatten, fc6 and fc7 (4096, each followed by ReLU and dropout), fc8 (1000 logits).
// torchvision's AlexNet puts its dropouts before the linears instead (build_alexnet).
Tensor fc_relu_dropout_head(GraphBuilder& b, Tensor x, const std::string& dropout_prefix) {
  x = b.flatten(x, "flatten");
  for (const char* layer : {"6", "7"}) {
    x = b.linear(x, 4096, true, std::string("fc") + layer);
    x = b.relu(x, true, std::string("fc") + layer + ".relu");
    x = b.dropout(x, dropout_prefix + layer);
  }
  return b.linear(x, 1000, true, "fc8");
}

// ---------------------------------------------------------------- AlexNet (torchvision.models.alexnet)

Graph build_alexnet(const ModelOptions& o) {
  GraphBuilder b("alexnet", o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("features.");
  x = conv_relu(b, x, 64, {11}, {4}, {2}, "conv1");  // 55x55
  x = b.max_pool(x, {3}, {2}, {0}, false, "pool1");   // 27x27
  x = conv_relu(b, x, 192, {5}, {1}, {2}, "conv2");
  x = b.max_pool(x, {3}, {2}, {0}, false, "pool2");  // 13x13
  x = conv_relu(b, x, 384, {3}, {1}, {1}, "conv3");
  x = conv_relu(b, x, 256, {3}, {1}, {1}, "conv4");
  x = conv_relu(b, x, 256, {3}, {1}, {1}, "conv5");
  x = b.max_pool(x, {3}, {2}, {0}, false, "pool5");  // 6x6
  b.set_scope("classifier.");
  x = b.flatten(x, "flatten");
  x = b.dropout(x, "dropout6");
  x = b.linear(x, 4096, true, "fc6");
  x = b.relu(x, true, "fc6.relu");
  x = b.dropout(x, "dropout7");
  x = b.linear(x, 4096, true, "fc7");
  x = b.relu(x, true, "fc7.relu");
  x = b.linear(x, 1000, true, "fc8");
  b.set_scope("");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- AlexNet as Caffe's bvlc_alexnet

// The two-tower network of Krizhevsky et al. 2012 as BVLC's deploy.prototxt writes it (the model TensorRT's Caffe
// parser and Caffe benchmarks load): 227x227 input, 96 conv1 filters, local response normalisation after conv1 and
// conv2, conv2/conv4/conv5 in two groups (the original two-GPU split), Caffe's ceil-mode pooling (exact here).
Graph build_bvlc_alexnet(const ModelOptions& o) {
  GraphBuilder b("bvlc_alexnet", o.batch);
  Tensor x = b.input({3, 227, 227});
  auto conv = [&](const Tensor& in, std::int64_t c, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t groups,
                  const std::string& name) {
    return b.relu(b.conv(in, c, {k}, {s}, {p}, {1}, groups, true, name), true, name + ".relu");
  };
  x = conv(x, 96, 11, 4, 0, 1, "conv1");  // 55x55
  x = b.lrn(x, 5, "norm1");
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool1");  // 27x27
  x = conv(x, 256, 5, 1, 2, 2, "conv2");
  x = b.lrn(x, 5, "norm2");
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool2");  // 13x13
  x = conv(x, 384, 3, 1, 1, 1, "conv3");
  x = conv(x, 384, 3, 1, 1, 2, "conv4");
  x = conv(x, 256, 3, 1, 1, 2, "conv5");
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool5");  // 6x6
  x = fc_relu_dropout_head(b, x, "drop");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- VGG (torchvision.models.vgg, no BN)

Graph build_vgg(const std::string& id, const std::array<int, 5>& convs_per_stage, const ModelOptions& o) {
  GraphBuilder b(id, o.batch);
  Tensor x = b.input({3, 224, 224});
  const std::array<std::int64_t, 5> widths{64, 128, 256, 512, 512};
  for (int stage = 0; stage < 5; ++stage) {
    b.set_scope("features.block" + std::to_string(stage + 1) + ".");
    for (int i = 0; i < convs_per_stage[stage]; ++i)
      x = conv_relu(b, x, widths[stage], {3}, {1}, {1}, "conv" + std::to_string(i + 1));
    x = b.max_pool(x, {2}, {2}, {0}, false, "pool");
  }
  b.set_scope("classifier.");  // Linear, ReLU, Dropout, Linear, ReLU, Dropout, Linear
  x = fc_relu_dropout_head(b, x, "dropout");
  b.set_scope("");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- GoogLeNet (Szegedy et al. 2014, Table 1)

struct GoogLeNetInception {
  const char* name;
  std::int64_t c1x1, c3x3_reduce, c3x3, c5x5_reduce, c5x5, pool_proj;
};

Tensor googlenet_inception(GraphBuilder& b, const Tensor& x, const GoogLeNetInception& m) {
  b.set_scope(std::string(m.name) + ".");
  Tensor b1 = conv_relu(b, x, m.c1x1, {1}, {1}, {0}, "1x1");
  Tensor b2 = conv_relu(b, x, m.c3x3_reduce, {1}, {1}, {0}, "3x3_reduce");
  b2 = conv_relu(b, b2, m.c3x3, {3}, {1}, {1}, "3x3");
  Tensor b3 = conv_relu(b, x, m.c5x5_reduce, {1}, {1}, {0}, "5x5_reduce");
  b3 = conv_relu(b, b3, m.c5x5, {5}, {1}, {2}, "5x5");
  Tensor b4 = b.max_pool(x, {3}, {1}, {1}, true, "pool");
  b4 = conv_relu(b, b4, m.pool_proj, {1}, {1}, {0}, "pool_proj");
  return b.concat({b1, b2, b3, b4}, 1, "output");
}

Graph build_googlenet(const ModelOptions& o) {
  GraphBuilder b("googlenet", o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("");
  x = conv_relu(b, x, 64, {7}, {2}, {3}, "conv1.7x7_s2");        // 112x112
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool1.3x3_s2");        // 56x56
  x = b.lrn(x, 5, "pool1.norm1");
  x = conv_relu(b, x, 64, {1}, {1}, {0}, "conv2.3x3_reduce");
  x = conv_relu(b, x, 192, {3}, {1}, {1}, "conv2.3x3");
  x = b.lrn(x, 5, "conv2.norm2");
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool2.3x3_s2");        // 28x28
  x = googlenet_inception(b, x, {"inception_3a", 64, 96, 128, 16, 32, 32});     // 256
  x = googlenet_inception(b, x, {"inception_3b", 128, 128, 192, 32, 96, 64});   // 480
  b.set_scope("");
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool3.3x3_s2");        // 14x14
  x = googlenet_inception(b, x, {"inception_4a", 192, 96, 208, 16, 48, 64});    // 512
  x = googlenet_inception(b, x, {"inception_4b", 160, 112, 224, 24, 64, 64});   // 512
  x = googlenet_inception(b, x, {"inception_4c", 128, 128, 256, 24, 64, 64});   // 512
  x = googlenet_inception(b, x, {"inception_4d", 112, 144, 288, 32, 64, 64});   // 528
  x = googlenet_inception(b, x, {"inception_4e", 256, 160, 320, 32, 128, 128}); // 832
  b.set_scope("");
  x = b.max_pool(x, {3}, {2}, {0}, true, "pool4.3x3_s2");        // 7x7
  x = googlenet_inception(b, x, {"inception_5a", 256, 160, 320, 32, 128, 128}); // 832
  x = googlenet_inception(b, x, {"inception_5b", 384, 192, 384, 48, 128, 128}); // 1024
  b.set_scope("");
  x = b.global_avg_pool(x, "pool5.7x7_s1");
  return finish_classifier(b, x, true, "loss3.classifier");  // dropout 40%
}

// ---------------------------------------------------------------- Inception-v3 (torchvision Inception3)

Tensor v3_inception_a(GraphBuilder& b, const Tensor& x, std::int64_t pool_features) {
  Tensor b1 = basic_conv(b, x, 64, {1}, {1}, {0}, "branch1x1");
  Tensor b5 = basic_conv(b, x, 48, {1}, {1}, {0}, "branch5x5_1");
  b5 = basic_conv(b, b5, 64, {5}, {1}, {2}, "branch5x5_2");
  Tensor b3 = basic_conv(b, x, 64, {1}, {1}, {0}, "branch3x3dbl_1");
  b3 = basic_conv(b, b3, 96, {3}, {1}, {1}, "branch3x3dbl_2");
  b3 = basic_conv(b, b3, 96, {3}, {1}, {1}, "branch3x3dbl_3");
  Tensor bp = b.avg_pool(x, {3}, {1}, {1}, false, "branch_pool.avgpool");
  bp = basic_conv(b, bp, pool_features, {1}, {1}, {0}, "branch_pool");
  return b.concat({b1, b5, b3, bp}, 1, "concat");
}

Tensor v3_inception_b(GraphBuilder& b, const Tensor& x) {
  Tensor b3 = basic_conv(b, x, 384, {3}, {2}, {0}, "branch3x3");
  Tensor bd = basic_conv(b, x, 64, {1}, {1}, {0}, "branch3x3dbl_1");
  bd = basic_conv(b, bd, 96, {3}, {1}, {1}, "branch3x3dbl_2");
  bd = basic_conv(b, bd, 96, {3}, {2}, {0}, "branch3x3dbl_3");
  Tensor bp = b.max_pool(x, {3}, {2}, {0}, false, "branch_pool");
  return b.concat({b3, bd, bp}, 1, "concat");
}

Tensor v3_inception_c(GraphBuilder& b, const Tensor& x, std::int64_t c7) {
  Tensor b1 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch1x1");
  Tensor b7 = basic_conv(b, x, c7, {1}, {1}, {0}, "branch7x7_1");
  b7 = basic_conv(b, b7, c7, {1, 7}, {1}, {0, 3}, "branch7x7_2");
  b7 = basic_conv(b, b7, 192, {7, 1}, {1}, {3, 0}, "branch7x7_3");
  Tensor bd = basic_conv(b, x, c7, {1}, {1}, {0}, "branch7x7dbl_1");
  bd = basic_conv(b, bd, c7, {7, 1}, {1}, {3, 0}, "branch7x7dbl_2");
  bd = basic_conv(b, bd, c7, {1, 7}, {1}, {0, 3}, "branch7x7dbl_3");
  bd = basic_conv(b, bd, c7, {7, 1}, {1}, {3, 0}, "branch7x7dbl_4");
  bd = basic_conv(b, bd, 192, {1, 7}, {1}, {0, 3}, "branch7x7dbl_5");
  Tensor bp = b.avg_pool(x, {3}, {1}, {1}, false, "branch_pool.avgpool");
  bp = basic_conv(b, bp, 192, {1}, {1}, {0}, "branch_pool");
  return b.concat({b1, b7, bd, bp}, 1, "concat");
}

Tensor v3_inception_d(GraphBuilder& b, const Tensor& x) {
  Tensor b3 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch3x3_1");
  b3 = basic_conv(b, b3, 320, {3}, {2}, {0}, "branch3x3_2");
  Tensor b7 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch7x7x3_1");
  b7 = basic_conv(b, b7, 192, {1, 7}, {1}, {0, 3}, "branch7x7x3_2");
  b7 = basic_conv(b, b7, 192, {7, 1}, {1}, {3, 0}, "branch7x7x3_3");
  b7 = basic_conv(b, b7, 192, {3}, {2}, {0}, "branch7x7x3_4");
  Tensor bp = b.max_pool(x, {3}, {2}, {0}, false, "branch_pool");
  return b.concat({b3, b7, bp}, 1, "concat");
}

Tensor v3_inception_e(GraphBuilder& b, const Tensor& x) {
  Tensor b1 = basic_conv(b, x, 320, {1}, {1}, {0}, "branch1x1");
  Tensor b3 = basic_conv(b, x, 384, {1}, {1}, {0}, "branch3x3_1");
  Tensor b3a = basic_conv(b, b3, 384, {1, 3}, {1}, {0, 1}, "branch3x3_2a");
  Tensor b3b = basic_conv(b, b3, 384, {3, 1}, {1}, {1, 0}, "branch3x3_2b");
  b3 = b.concat({b3a, b3b}, 1, "branch3x3.concat");
  Tensor bd = basic_conv(b, x, 448, {1}, {1}, {0}, "branch3x3dbl_1");
  bd = basic_conv(b, bd, 384, {3}, {1}, {1}, "branch3x3dbl_2");
  Tensor bda = basic_conv(b, bd, 384, {1, 3}, {1}, {0, 1}, "branch3x3dbl_3a");
  Tensor bdb = basic_conv(b, bd, 384, {3, 1}, {1}, {1, 0}, "branch3x3dbl_3b");
  bd = b.concat({bda, bdb}, 1, "branch3x3dbl.concat");
  Tensor bp = b.avg_pool(x, {3}, {1}, {1}, false, "branch_pool.avgpool");
  bp = basic_conv(b, bp, 192, {1}, {1}, {0}, "branch_pool");
  return b.concat({b1, b3, bd, bp}, 1, "concat");
}

Graph build_inception_v3(const ModelOptions& o) {
  GraphBuilder b("inception_v3", o.batch);
  Tensor x = b.input({3, 299, 299});
  b.set_scope("");
  x = basic_conv(b, x, 32, {3}, {2}, {0}, "Conv2d_1a_3x3");  // 149
  x = basic_conv(b, x, 32, {3}, {1}, {0}, "Conv2d_2a_3x3");  // 147
  x = basic_conv(b, x, 64, {3}, {1}, {1}, "Conv2d_2b_3x3");  // 147
  x = b.max_pool(x, {3}, {2}, {0}, false, "maxpool1");        // 73
  x = basic_conv(b, x, 80, {1}, {1}, {0}, "Conv2d_3b_1x1");
  x = basic_conv(b, x, 192, {3}, {1}, {0}, "Conv2d_4a_3x3");  // 71
  x = b.max_pool(x, {3}, {2}, {0}, false, "maxpool2");         // 35
  b.set_scope("Mixed_5b.");
  x = v3_inception_a(b, x, 32);  // 256
  b.set_scope("Mixed_5c.");
  x = v3_inception_a(b, x, 64);  // 288
  b.set_scope("Mixed_5d.");
  x = v3_inception_a(b, x, 64);  // 288
  b.set_scope("Mixed_6a.");
  x = v3_inception_b(b, x);  // 768 x 17x17
  const std::array<std::int64_t, 4> c7{128, 160, 160, 192};
  const std::array<const char*, 4> c_names{"Mixed_6b.", "Mixed_6c.", "Mixed_6d.", "Mixed_6e."};
  for (std::size_t i = 0; i < c7.size(); ++i) {
    b.set_scope(c_names[i]);
    x = v3_inception_c(b, x, c7[i]);
  }
  b.set_scope("Mixed_7a.");
  x = v3_inception_d(b, x);  // 1280 x 8x8
  b.set_scope("Mixed_7b.");
  x = v3_inception_e(b, x);  // 2048
  b.set_scope("Mixed_7c.");
  x = v3_inception_e(b, x);  // 2048
  b.set_scope("");
  x = b.global_avg_pool(x, "avgpool");
  return finish_classifier(b, x, true, "fc");  // dropout 0.5
}

// ---------------------------------------------------------------- Inception-v4 (Szegedy et al. 2016)

Tensor v4_inception_a(GraphBuilder& b, const Tensor& x) {
  Tensor b0 = basic_conv(b, x, 96, {1}, {1}, {0}, "branch0");
  Tensor b1 = basic_conv(b, x, 64, {1}, {1}, {0}, "branch1.0");
  b1 = basic_conv(b, b1, 96, {3}, {1}, {1}, "branch1.1");
  Tensor b2 = basic_conv(b, x, 64, {1}, {1}, {0}, "branch2.0");
  b2 = basic_conv(b, b2, 96, {3}, {1}, {1}, "branch2.1");
  b2 = basic_conv(b, b2, 96, {3}, {1}, {1}, "branch2.2");
  Tensor b3 = b.avg_pool(x, {3}, {1}, {1}, false, "branch3.0");
  b3 = basic_conv(b, b3, 96, {1}, {1}, {0}, "branch3.1");
  return b.concat({b0, b1, b2, b3}, 1, "concat");  // 384
}

Tensor v4_reduction_a(GraphBuilder& b, const Tensor& x) {
  Tensor b0 = basic_conv(b, x, 384, {3}, {2}, {0}, "branch0");
  Tensor b1 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch1.0");
  b1 = basic_conv(b, b1, 224, {3}, {1}, {1}, "branch1.1");
  b1 = basic_conv(b, b1, 256, {3}, {2}, {0}, "branch1.2");
  Tensor b2 = b.max_pool(x, {3}, {2}, {0}, false, "branch2");
  return b.concat({b0, b1, b2}, 1, "concat");  // 1024
}

Tensor v4_inception_b(GraphBuilder& b, const Tensor& x) {
  Tensor b0 = basic_conv(b, x, 384, {1}, {1}, {0}, "branch0");
  Tensor b1 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch1.0");
  b1 = basic_conv(b, b1, 224, {1, 7}, {1}, {0, 3}, "branch1.1");
  b1 = basic_conv(b, b1, 256, {7, 1}, {1}, {3, 0}, "branch1.2");
  Tensor b2 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch2.0");
  b2 = basic_conv(b, b2, 192, {7, 1}, {1}, {3, 0}, "branch2.1");
  b2 = basic_conv(b, b2, 224, {1, 7}, {1}, {0, 3}, "branch2.2");
  b2 = basic_conv(b, b2, 224, {7, 1}, {1}, {3, 0}, "branch2.3");
  b2 = basic_conv(b, b2, 256, {1, 7}, {1}, {0, 3}, "branch2.4");
  Tensor b3 = b.avg_pool(x, {3}, {1}, {1}, false, "branch3.0");
  b3 = basic_conv(b, b3, 128, {1}, {1}, {0}, "branch3.1");
  return b.concat({b0, b1, b2, b3}, 1, "concat");  // 1024
}

Tensor v4_reduction_b(GraphBuilder& b, const Tensor& x) {
  Tensor b0 = basic_conv(b, x, 192, {1}, {1}, {0}, "branch0.0");
  b0 = basic_conv(b, b0, 192, {3}, {2}, {0}, "branch0.1");
  Tensor b1 = basic_conv(b, x, 256, {1}, {1}, {0}, "branch1.0");
  b1 = basic_conv(b, b1, 256, {1, 7}, {1}, {0, 3}, "branch1.1");
  b1 = basic_conv(b, b1, 320, {7, 1}, {1}, {3, 0}, "branch1.2");
  b1 = basic_conv(b, b1, 320, {3}, {2}, {0}, "branch1.3");
  Tensor b2 = b.max_pool(x, {3}, {2}, {0}, false, "branch2");
  return b.concat({b0, b1, b2}, 1, "concat");  // 1536
}

Tensor v4_inception_c(GraphBuilder& b, const Tensor& x) {
  Tensor b0 = basic_conv(b, x, 256, {1}, {1}, {0}, "branch0");
  Tensor b1 = basic_conv(b, x, 384, {1}, {1}, {0}, "branch1_0");
  Tensor b1a = basic_conv(b, b1, 256, {1, 3}, {1}, {0, 1}, "branch1_1a");
  Tensor b1b = basic_conv(b, b1, 256, {3, 1}, {1}, {1, 0}, "branch1_1b");
  b1 = b.concat({b1a, b1b}, 1, "branch1.concat");
  Tensor b2 = basic_conv(b, x, 384, {1}, {1}, {0}, "branch2_0");
  b2 = basic_conv(b, b2, 448, {3, 1}, {1}, {1, 0}, "branch2_1");
  b2 = basic_conv(b, b2, 512, {1, 3}, {1}, {0, 1}, "branch2_2");
  Tensor b2a = basic_conv(b, b2, 256, {1, 3}, {1}, {0, 1}, "branch2_3a");
  Tensor b2b = basic_conv(b, b2, 256, {3, 1}, {1}, {1, 0}, "branch2_3b");
  b2 = b.concat({b2a, b2b}, 1, "branch2.concat");
  Tensor b3 = b.avg_pool(x, {3}, {1}, {1}, false, "branch3.0");
  b3 = basic_conv(b, b3, 256, {1}, {1}, {0}, "branch3.1");
  return b.concat({b0, b1, b2, b3}, 1, "concat");  // 1536
}

Graph build_inception_v4(const ModelOptions& o) {
  GraphBuilder b("inception_v4", o.batch);
  Tensor x = b.input({3, 299, 299});
  b.set_scope("");
  x = basic_conv(b, x, 32, {3}, {2}, {0}, "Conv2d_1a_3x3");  // 149
  x = basic_conv(b, x, 32, {3}, {1}, {0}, "Conv2d_2a_3x3");  // 147
  x = basic_conv(b, x, 64, {3}, {1}, {1}, "Conv2d_2b_3x3");  // 147
  {
    b.set_scope("Mixed_3a.");
    Tensor p = b.max_pool(x, {3}, {2}, {0}, false, "maxpool");  // 73
    Tensor c = basic_conv(b, x, 96, {3}, {2}, {0}, "conv");
    x = b.concat({p, c}, 1, "concat");  // 160
  }
  {
    b.set_scope("Mixed_4a.");
    Tensor b0 = basic_conv(b, x, 64, {1}, {1}, {0}, "branch0.0");
    b0 = basic_conv(b, b0, 96, {3}, {1}, {0}, "branch0.1");  // 71
    Tensor b1 = basic_conv(b, x, 64, {1}, {1}, {0}, "branch1.0");
    b1 = basic_conv(b, b1, 64, {1, 7}, {1}, {0, 3}, "branch1.1");
    b1 = basic_conv(b, b1, 64, {7, 1}, {1}, {3, 0}, "branch1.2");
    b1 = basic_conv(b, b1, 96, {3}, {1}, {0}, "branch1.3");
    x = b.concat({b0, b1}, 1, "concat");  // 192
  }
  {
    b.set_scope("Mixed_5a.");
    Tensor c = basic_conv(b, x, 192, {3}, {2}, {0}, "conv");  // 35
    Tensor p = b.max_pool(x, {3}, {2}, {0}, false, "maxpool");
    x = b.concat({c, p}, 1, "concat");  // 384
  }
  for (const char* name : {"Mixed_5b.", "Mixed_5c.", "Mixed_5d.", "Mixed_5e."}) {
    b.set_scope(name);
    x = v4_inception_a(b, x);
  }
  b.set_scope("Mixed_6a.");
  x = v4_reduction_a(b, x);  // 17x17
  for (const char* name : {"Mixed_6b.", "Mixed_6c.", "Mixed_6d.", "Mixed_6e.", "Mixed_6f.", "Mixed_6g.", "Mixed_6h."}) {
    b.set_scope(name);
    x = v4_inception_b(b, x);
  }
  b.set_scope("Mixed_7a.");
  x = v4_reduction_b(b, x);  // 8x8
  for (const char* name : {"Mixed_7b.", "Mixed_7c.", "Mixed_7d."}) {
    b.set_scope(name);
    x = v4_inception_c(b, x);
  }
  b.set_scope("");
  x = b.global_avg_pool(x, "avgpool");
  return finish_classifier(b, x, true, "last_linear");  // paper: dropout (keep 0.8)
}

void add(std::vector<ZooModel>& out, const std::string& id, const std::string& desc, const std::string& cite,
         std::function<Graph(const ModelOptions&)> build) {
  out.push_back(ZooModel{id, "cnn", desc, cite, false, 0, std::move(build)});
}

}  // namespace

void register_classic_cnns(std::vector<ZooModel>& out) {
  add(out, "alexnet", "AlexNet single-tower (one weird trick), 224x224, no LRN",
      "Krizhevsky 2014, arXiv:1404.5997; shapes as torchvision.models.alexnet", build_alexnet);
  add(out, "bvlc_alexnet", "AlexNet two-tower as Caffe's bvlc_alexnet, 227x227, LRN, grouped conv2/4/5",
      "Krizhevsky et al. 2012 (NIPS); shapes as BVLC/caffe models/bvlc_alexnet/deploy.prototxt", build_bvlc_alexnet);
  const std::string simonyan = "Simonyan & Zisserman 2015, arXiv:1409.1556; shapes as torchvision.models.vgg";
  add(out, "vgg11", "VGG-11 (configuration A), 224x224, no batch norm", simonyan,
      [](const ModelOptions& o) { return build_vgg("vgg11", {1, 1, 2, 2, 2}, o); });
  add(out, "vgg13", "VGG-13 (configuration B), 224x224, no batch norm", simonyan,
      [](const ModelOptions& o) { return build_vgg("vgg13", {2, 2, 2, 2, 2}, o); });
  add(out, "vgg16", "VGG-16 (configuration D), 224x224, no batch norm", simonyan,
      [](const ModelOptions& o) { return build_vgg("vgg16", {2, 2, 3, 3, 3}, o); });
  add(out, "vgg19", "VGG-19 (configuration E), 224x224, no batch norm", simonyan,
      [](const ModelOptions& o) { return build_vgg("vgg19", {2, 2, 4, 4, 4}, o); });
  add(out, "googlenet", "GoogLeNet (Inception v1), 224x224, LRN, no auxiliary classifiers",
      "Szegedy et al. 2015, arXiv:1409.4842, Table 1; as Caffe bvlc_googlenet", build_googlenet);
  add(out, "inception_v3", "Inception-v3, 299x299, BN after every conv, no auxiliary classifier",
      "Szegedy et al. 2016, arXiv:1512.00567; shapes as torchvision.models.inception_v3", build_inception_v3);
  add(out, "inception_v4", "Inception-v4, 299x299, BN after every conv",
      "Szegedy et al. 2017, arXiv:1602.07261; shapes as Cadene pretrainedmodels / timm inception_v4",
      build_inception_v4);
}

}  // namespace perfcast
