// Dense-prediction models: a single-shot detector, 2D and 3D U-Nets and a 3D nodule detector on CT crops.
// Every layer follows the cited paper or reference implementation; the parameter arithmetic behind each
// total is written out in tests/zoo_dense_seq_test.cpp.
#include <array>

#include "graph/builder.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

// ---- SSD300 --------------------------------------------------------------------------------------------------
// Liu et al., "SSD: Single Shot MultiBox Detector" (ECCV 2016), arXiv:1512.02325, with the layer shapes of the
// reference Caffe model as ported by ssd.pytorch: VGG-16 (conv1_1..conv5_3, pool3 with ceil mode, pool5 3x3/1),
// fc6 as a 3x3 conv with dilation 6 and fc7 as a 1x1 conv, four extra stages, L2Norm on conv4_3 and 3x3
// loc/conf heads on six sources with 4,6,6,6,4,4 default boxes per location (8732 boxes at 300x300).

constexpr std::int64_t kSsdClasses = 81;  // COCO: 80 classes + background

Tensor conv_relu(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, std::int64_t s, std::int64_t p,
                 std::int64_t dil, const std::string& name) {
  Tensor y = b.conv(x, c, {k}, {s}, {p}, {dil}, 1, true, name);
  return b.relu(y, true, name + ".relu");
}

Graph build_ssd300(const ModelOptions& o) {
  GraphBuilder b("ssd300", o.batch);
  Tensor x = b.input({3, 300, 300});

  // VGG-16 trunk (biases on every conv, as in the Caffe VGG weights SSD starts from).
  struct Stage {
    int convs;
    std::int64_t channels;
  };
  const std::array<Stage, 5> vgg{{{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}}};
  Tensor conv4_3;
  for (int s = 0; s < 5; ++s) {
    b.set_scope("vgg.");
    for (int i = 0; i < vgg[s].convs; ++i)
      x = conv_relu(b, x, vgg[s].channels, 3, 1, 1, 1, "conv" + std::to_string(s + 1) + "_" + std::to_string(i + 1));
    if (s == 3) conv4_3 = x;
    if (s < 4) {
      // pool3 uses ceil mode so that 75x75 becomes 38x38.
      x = b.max_pool(x, {2}, {2}, {0}, s == 2, "pool" + std::to_string(s + 1));
    } else {
      x = b.max_pool(x, {3}, {1}, {1}, false, "pool5");
    }
  }
  x = conv_relu(b, x, 1024, 3, 1, 6, 6, "fc6");  // atrous 3x3, dilation 6 (19x19)
  x = conv_relu(b, x, 1024, 1, 1, 0, 1, "fc7");
  const Tensor fc7 = x;

  // Extra feature layers: 19 -> 10 -> 5 -> 3 -> 1.
  b.set_scope("extras.");
  x = conv_relu(b, x, 256, 1, 1, 0, 1, "conv8_1");
  x = conv_relu(b, x, 512, 3, 2, 1, 1, "conv8_2");
  const Tensor conv8_2 = x;
  x = conv_relu(b, x, 128, 1, 1, 0, 1, "conv9_1");
  x = conv_relu(b, x, 256, 3, 2, 1, 1, "conv9_2");
  const Tensor conv9_2 = x;
  x = conv_relu(b, x, 128, 1, 1, 0, 1, "conv10_1");
  x = conv_relu(b, x, 256, 3, 1, 0, 1, "conv10_2");
  const Tensor conv10_2 = x;
  x = conv_relu(b, x, 128, 1, 1, 0, 1, "conv11_1");
  x = conv_relu(b, x, 256, 3, 1, 0, 1, "conv11_2");
  const Tensor conv11_2 = x;

  // L2Norm over the 512 channels of conv4_3 with a learned per-channel scale (512 parameters). The builder's
  // rms_norm normalises the last axis, so the views below only present the channel axis last; they move no
  // data, and the norm reads and writes conv4_3 once, as the real kernel does.
  b.set_scope("l2norm.");
  Tensor n = b.reshape(conv4_3, {38 * 38, 512}, "channels_last_view");
  n = b.rms_norm(n, "conv4_3_norm");
  n = b.reshape(n, {512, 38, 38}, "nchw_view");

  // Heads: per source a 3x3 loc conv (boxes x 4) and a 3x3 conf conv (boxes x classes), then the
  // permute(0,2,3,1).contiguous() copy and flatten of ssd.pytorch, concatenated over the six sources.
  const std::array<Tensor, 6> sources{n, fc7, conv8_2, conv9_2, conv10_2, conv11_2};
  const std::array<std::int64_t, 6> boxes{4, 6, 6, 6, 4, 4};
  std::vector<Tensor> locs, confs;
  std::int64_t priors = 0;
  for (int i = 0; i < 6; ++i) {
    b.set_scope("head" + std::to_string(i) + ".");
    const Tensor& s = sources[i];
    const std::int64_t h = s.shape[2], w = s.shape[3];
    priors += h * w * boxes[i];
    Tensor loc = b.conv(s, boxes[i] * 4, {3}, {1}, {1}, {1}, 1, true, "loc");
    loc = b.transpose(loc, {h, w, boxes[i] * 4}, "loc.permute");
    locs.push_back(b.flatten(loc, "loc.flatten"));
    Tensor conf = b.conv(s, boxes[i] * kSsdClasses, {3}, {1}, {1}, {1}, 1, true, "conf");
    conf = b.transpose(conf, {h, w, boxes[i] * kSsdClasses}, "conf.permute");
    confs.push_back(b.flatten(conf, "conf.flatten"));
  }
  b.set_scope("");
  Tensor loc = b.concat(locs, 1, "loc.concat");
  Tensor conf = b.concat(confs, 1, "conf.concat");
  loc = b.reshape(loc, {priors, 4}, "loc.view");
  conf = b.reshape(conf, {priors, kSsdClasses}, "conf.view");
  // MultiBox loss: smooth-L1 box regression (MSE stands in) and softmax cross-entropy over the classes.
  b.mse_loss(loc, "loss_loc");
  b.cross_entropy(conf, "loss");
  return b.finish();
}

// ---- 2D U-Net ------------------------------------------------------------------------------------------------
// Ronneberger et al., "U-Net: Convolutional Networks for Biomedical Image Segmentation" (MICCAI 2015),
// arXiv:1505.04597, Fig. 1: 572x572 single-channel tile, unpadded 3x3 convs with ReLU, 2x2 max pooling, 64..1024
// channels, 2x2 up-convolutions halving the channels, crop-and-concatenate skips, 1x1 conv to 2 classes on a
// 388x388 output. Drop-out at the end of the contracting path (Sec. 3.1), placed as in the reference Caffe
// model: after the 512- and 1024-channel blocks.

Graph build_unet2d(const ModelOptions& o) {
  GraphBuilder b("unet2d", o.batch);
  Tensor x = b.input({1, 572, 572});
  std::array<Tensor, 4> skips;
  for (int l = 0; l < 5; ++l) {
    const std::int64_t c = 64LL << l;
    b.set_scope("down" + std::to_string(l) + ".");
    if (l > 0) x = b.max_pool(x, {2}, {2}, {0}, false, "pool");
    x = conv_relu(b, x, c, 3, 1, 0, 1, "conv1");
    x = conv_relu(b, x, c, 3, 1, 0, 1, "conv2");
    if (l >= 3) x = b.dropout(x, "dropout");
    if (l < 4) skips[l] = x;
  }
  for (int l = 3; l >= 0; --l) {
    const std::int64_t c = 64LL << l;
    b.set_scope("up" + std::to_string(l) + ".");
    Tensor up = b.conv_transpose(x, c, {2}, {2}, {0}, true, "upconv");
    // Crop of the skip to the up-sampled size folded into the concat (its spatial size is the first input's).
    x = b.concat({up, skips[l]}, 1, "crop_concat");
    x = conv_relu(b, x, c, 3, 1, 0, 1, "conv1");
    x = conv_relu(b, x, c, 3, 1, 0, 1, "conv2");
  }
  b.set_scope("");
  x = b.conv(x, 2, {1}, {1}, {0}, {1}, 1, true, "final");
  b.cross_entropy(x);  // pixel-wise softmax cross-entropy over the 388x388 map
  return b.finish();
}

// ---- 3D U-Net ------------------------------------------------------------------------------------------------
// Cicek et al., "3D U-Net: Learning Dense Volumetric Segmentation from Sparse Annotation" (MICCAI 2016),
// arXiv:1606.06650, Fig. 1 and Sec. 2: a 132x132x116 voxel tile with 3 channels, unpadded 3x3x3 convs each
// followed by batch norm and ReLU, 2x2x2 max pooling, analysis channels 32,64 | 64,128 | 128,256 | 256,512,
// 2x2x2 up-convolutions keeping the channel count, synthesis convs 256 | 128 | 64, 1x1x1 conv to 3 labels on a
// 44x44x28 output. The paper's 19,069,955 parameters count no up-convolution bias and no batch-norm affine
// parameters; the up-convolutions are built without bias and the batch norms keep their scale and shift.

Tensor conv_bn_relu(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, std::int64_t p,
                    const std::string& name) {
  Tensor y = b.conv(x, c, {k}, {1}, {p}, {1}, 1, true, name);
  y = b.batch_norm(y, name + ".bn");
  return b.relu(y, true, name + ".relu");
}

Graph build_unet3d(const ModelOptions& o) {
  GraphBuilder b("unet3d", o.batch);
  Tensor x = b.input({3, 132, 132, 116});
  std::array<Tensor, 3> skips;
  for (int l = 0; l < 4; ++l) {
    b.set_scope("analysis" + std::to_string(l) + ".");
    if (l > 0) x = b.max_pool(x, {2}, {2}, {0}, false, "pool");
    x = conv_bn_relu(b, x, 32LL << l, 3, 0, "conv1");
    x = conv_bn_relu(b, x, 64LL << l, 3, 0, "conv2");
    if (l < 3) skips[l] = x;
  }
  for (int l = 2; l >= 0; --l) {
    b.set_scope("synthesis" + std::to_string(l) + ".");
    Tensor up = b.conv_transpose(x, x.shape[1], {2}, {2}, {0}, false, "upconv");
    x = b.concat({up, skips[l]}, 1, "crop_concat");
    x = conv_bn_relu(b, x, 64LL << l, 3, 0, "conv1");
    x = conv_bn_relu(b, x, 64LL << l, 3, 0, "conv2");
  }
  b.set_scope("");
  x = b.conv(x, 3, {1}, {1}, {0}, {1}, 1, true, "final");
  b.cross_entropy(x);  // weighted voxel-wise softmax loss
  return b.finish();
}

// ---- nodule3d: the grt123 3D nodule detector -----------------------------------------------------------------
// Liao et al., "Evaluate the Malignancy of Pulmonary Nodules Using the 3-D Deep Leaky Noisy-OR Network",
// IEEE TNNLS 30(11), 2019, arXiv:1711.08324 (Kaggle Data Science Bowl 2017 winner, team grt123), detector of
// Sec. III-B / Fig. 3 with the shapes of its reference code (github.com/lfz/DSB2017, training/detector/res18.py
// and layers.py PostRes): a 3D U-Net-like residual RPN on 1x128x128x128 CT crops, a 3x32x32x32 coordinate
// map concatenated at stride 4, and 3 anchors (10, 30, 60 mm) x (objectness + z,y,x,d) per output voxel.

Tensor conv3_bn(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, const std::string& name) {
  Tensor y = b.conv(x, c, {k}, {1}, {k / 2}, {1}, 1, true, name);
  return b.batch_norm(y, name + ".bn");
}

// PostRes: conv3-BN-ReLU-conv3-BN plus a 1x1 conv-BN shortcut when the width changes, add, ReLU.
Tensor post_res(GraphBuilder& b, const Tensor& x, std::int64_t c, const std::string& name) {
  Tensor shortcut = x;
  if (x.shape[1] != c) shortcut = conv3_bn(b, x, c, 1, name + ".shortcut");
  Tensor y = conv3_bn(b, x, c, 3, name + ".conv1");
  y = b.relu(y, true, name + ".relu1");
  y = conv3_bn(b, y, c, 3, name + ".conv2");
  y = b.add(y, shortcut, name + ".add");
  return b.relu(y, true, name + ".relu2");
}

Tensor res_group(GraphBuilder& b, Tensor x, std::int64_t c, int blocks, const std::string& name) {
  for (int j = 0; j < blocks; ++j) x = post_res(b, x, c, name + "." + std::to_string(j));
  return x;
}

Graph build_nodule3d(const ModelOptions& o) {
  GraphBuilder b("nodule3d", o.batch);
  // The grt123 loader hands over float32 crops and coordinate maps.
  Tensor x = b.input({1, 128, 128, 128}, 4);
  Tensor coord = b.input({3, 32, 32, 32}, 4);

  b.set_scope("preBlock.");
  x = b.relu(conv3_bn(b, x, 24, 3, "conv1"), true, "relu1");
  x = b.relu(conv3_bn(b, x, 24, 3, "conv2"), true, "relu2");
  b.set_scope("");
  x = b.max_pool(x, {2}, {2}, {0}, false, "maxpool1");                       // 64^3
  const Tensor out1 = res_group(b, x, 32, 2, "forw1");
  x = b.max_pool(out1, {2}, {2}, {0}, false, "maxpool2");                    // 32^3
  const Tensor out2 = res_group(b, x, 64, 2, "forw2");
  x = b.max_pool(out2, {2}, {2}, {0}, false, "maxpool3");                    // 16^3
  const Tensor out3 = res_group(b, x, 64, 3, "forw3");
  x = b.max_pool(out3, {2}, {2}, {0}, false, "maxpool4");                    // 8^3
  const Tensor out4 = res_group(b, x, 64, 3, "forw4");

  Tensor rev3 = b.conv_transpose(out4, 64, {2}, {2}, {0}, true, "path1.deconv");  // 16^3
  rev3 = b.relu(b.batch_norm(rev3, "path1.bn"), true, "path1.relu");
  Tensor comb3 = res_group(b, b.concat({rev3, out3}, 1, "cat3"), 64, 3, "back3");
  Tensor rev2 = b.conv_transpose(comb3, 64, {2}, {2}, {0}, true, "path2.deconv");  // 32^3
  rev2 = b.relu(b.batch_norm(rev2, "path2.bn"), true, "path2.relu");
  Tensor comb2 = res_group(b, b.concat({rev2, out2, coord}, 1, "cat2"), 128, 3, "back2");
  comb2 = b.dropout(comb2, "drop");  // Dropout3d(p=0.5)

  x = b.conv(comb2, 64, {1}, {1}, {0}, {1}, 1, true, "output.conv1");
  x = b.relu(x, false, "output.relu");
  x = b.conv(x, 15, {1}, {1}, {0}, {1}, 1, true, "output.conv2");  // 3 anchors x 5
  // out.view(N, 15, -1).transpose(1, 2).contiguous(): a real copy to [N, 32^3, 15].
  x = b.transpose(x, {32 * 32 * 32, 15}, "output.permute");
  // Binary cross-entropy on objectness and smooth-L1 on the box terms of sampled anchors; MSE stands in.
  b.mse_loss(x);
  return b.finish();
}

void add(std::vector<ZooModel>& out, const std::string& id, const std::string& family, const std::string& desc,
         const std::string& cite, Graph (*build)(const ModelOptions&)) {
  out.push_back(ZooModel{id, family, desc, cite, false, 0, build});
}

}  // namespace

void register_dense_prediction(std::vector<ZooModel>& out) {
  add(out, "ssd300", "detection", "SSD300, VGG-16 backbone (dilated fc6/fc7), 300x300, COCO 81 classes, 8732 boxes",
      "Liu et al. 2016, arXiv:1512.02325; layer shapes as the reference Caffe model / ssd.pytorch", build_ssd300);
  add(out, "unet2d", "segmentation", "U-Net, 1x572x572 tile, unpadded convs, 64..1024 channels, 2 classes on 388x388",
      "Ronneberger et al. 2015, arXiv:1505.04597, Fig. 1", build_unet2d);
  add(out, "unet3d", "segmentation",
      "3D U-Net, 3x132x132x116 tile, unpadded convs with BN, 32..512 channels, 3 labels on 44x44x28",
      "Cicek et al. 2016, arXiv:1606.06650, Fig. 1", build_unet3d);
  add(out, "nodule3d", "cnn3d",
      "grt123 3D residual nodule detector (DSB2017 winner), 1x128^3 CT crop + coord map, 3 anchors at stride 4",
      "Liao et al. 2019 (IEEE TNNLS), arXiv:1711.08324; shapes as github.com/lfz/DSB2017 training/detector/res18.py",
      build_nodule3d);
}

}  // namespace perfcast
