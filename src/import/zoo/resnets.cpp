// ResNet family: He et al., "Deep Residual Learning for Image Recognition" (CVPR 2016), layer shapes as in
// torchvision.models.resnet (v1.5: stride 2 in the 3x3 conv of the bottleneck) and fb.resnet.torch (v1:
// stride in the first 1x1, as in the original paper and Caffe/TF-slim ResNet v1).
#include <array>

#include "graph/builder.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

struct ResNetSpec {
  bool bottleneck;
  std::array<int, 4> blocks;
  bool stride_in_3x3;  // v1.5 places the downsampling stride in the 3x3 conv
  // ResNeXt / Wide ResNet (torchvision): the bottleneck's 3x3 is grouped and its width is
  // planes * width_per_group / 64 * groups.
  std::int64_t groups = 1;
  std::int64_t width_per_group = 64;
};

Tensor conv_bn(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, std::int64_t s, std::int64_t p,
               bool relu, const std::string& name, std::int64_t groups = 1) {
  Tensor y = b.conv(x, c, {k}, {s}, {p}, {1}, groups, false, name);
  y = b.batch_norm(y, name + ".bn");
  return relu ? b.relu(y, true, name + ".relu") : y;
}

Graph build_resnet(const std::string& id, const ResNetSpec& spec, const ModelOptions& o) {
  GraphBuilder b(id, o.batch);
  Tensor x = b.input({3, 224, 224});
  x = conv_bn(b, x, 64, 7, 2, 3, true, "conv1");
  x = b.max_pool(x, {3}, {2}, {1}, false, "maxpool");
  std::int64_t in_c = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = 64LL << stage;
    const std::int64_t width = planes * spec.width_per_group / 64 * spec.groups;
    const std::int64_t out_c = spec.bottleneck ? planes * 4 : planes;
    for (int i = 0; i < spec.blocks[stage]; ++i) {
      const std::int64_t stride = (i == 0 && stage > 0) ? 2 : 1;
      b.set_scope("layer" + std::to_string(stage + 1) + "." + std::to_string(i) + ".");
      Tensor shortcut = x;
      if (i == 0 && (stride != 1 || in_c != out_c)) shortcut = conv_bn(b, x, out_c, 1, stride, 0, false, "downsample");
      Tensor y;
      if (spec.bottleneck) {
        const std::int64_t s1 = spec.stride_in_3x3 ? 1 : stride, s3 = spec.stride_in_3x3 ? stride : 1;
        y = conv_bn(b, x, width, 1, s1, 0, true, "conv1");
        y = conv_bn(b, y, width, 3, s3, 1, true, "conv2", spec.groups);
        y = conv_bn(b, y, out_c, 1, 1, 0, false, "conv3");
      } else {
        y = conv_bn(b, x, width, 3, stride, 1, true, "conv1");
        y = conv_bn(b, y, width, 3, 1, 1, false, "conv2");
      }
      x = b.add(y, shortcut, "add");
      x = b.relu(x, true, "relu");
      in_c = out_c;
    }
  }
  b.set_scope("");
  x = b.global_avg_pool(x, "avgpool");
  x = b.flatten(x, "flatten");
  x = b.linear(x, 1000, true, "fc");
  b.cross_entropy(x);
  return b.finish();
}

void add(std::vector<ZooModel>& out, const std::string& id, ResNetSpec spec, const std::string& desc,
         const std::string& cite) {
  out.push_back(ZooModel{id, "cnn", desc, cite, false, 0,
                         [id, spec](const ModelOptions& o) { return build_resnet(id, spec, o); }});
}

}  // namespace

void register_resnets(std::vector<ZooModel>& out) {
  const std::string he = "He et al. 2016, arXiv:1512.03385; shapes as torchvision.models.resnet";
  add(out, "resnet18", {false, {2, 2, 2, 2}, true}, "ResNet-18, 224x224, basic blocks", he);
  add(out, "resnet34", {false, {3, 4, 6, 3}, true}, "ResNet-34, 224x224, basic blocks", he);
  add(out, "resnet50", {true, {3, 4, 6, 3}, false}, "ResNet-50 v1, 224x224, stride in the first 1x1", he);
  add(out, "resnet50_v1_5", {true, {3, 4, 6, 3}, true},
      "ResNet-50 v1.5 (NVIDIA/torchvision), 224x224, stride in the 3x3", he + "; NVIDIA DeepLearningExamples v1.5");
  add(out, "resnet101", {true, {3, 4, 23, 3}, false}, "ResNet-101 v1, 224x224", he);
  add(out, "resnet152", {true, {3, 8, 36, 3}, false}, "ResNet-152 v1, 224x224", he);
  add(out, "resnet200", {true, {3, 24, 36, 3}, false}, "ResNet-200 v1, 224x224",
      "He et al. 2016, arXiv:1603.05027 (identity mappings); depth config as fb.resnet.torch");
  const std::string xie = "Xie et al. 2017, arXiv:1611.05431; shapes as torchvision.models.resnet";
  add(out, "resnext50_32x4d", {true, {3, 4, 6, 3}, true, 32, 4},
      "ResNeXt-50 32x4d, 224x224, v1.5 bottlenecks with grouped 3x3 (stride in the 3x3)", xie);
  add(out, "resnext101_32x8d", {true, {3, 4, 23, 3}, true, 32, 8},
      "ResNeXt-101 32x8d, 224x224, v1.5 bottlenecks with grouped 3x3", xie);
  add(out, "wide_resnet50_2", {true, {3, 4, 6, 3}, true, 1, 128}, "Wide ResNet-50-2, 224x224, v1.5 bottlenecks twice as wide",
      "Zagoruyko & Komodakis 2016, arXiv:1605.07146; shapes as torchvision.models.resnet");
}

}  // namespace perfcast
