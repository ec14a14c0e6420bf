// DenseNet (Huang et al. 2017) and MobileNetV2 (Sandler et al. 2018), layer shapes as torchvision.models.
//
// DenseNet is modelled as torchvision executes it (memory_efficient=False, drop_rate=0): every dense layer
// concatenates all earlier feature maps of its block (torch.cat in _DenseLayer.bn_function, even for the first
// layer's single input), runs BN-ReLU-conv1x1(4k)-BN-ReLU-conv3x3(k), and the block ends with one more concat of
// everything. MobileNetV2 is width 1.0 with ReLU6 and depthwise 3x3 convs as groups = channels.
#include <array>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

// ---------------------------------------------------------------- DenseNet

struct DenseNetSpec {
  std::int64_t growth;
  std::array<int, 4> blocks;
  std::int64_t init_features;
};

constexpr std::int64_t kBnSize = 4;  // bottleneck width = 4 * growth rate

Graph build_densenet(const std::string& id, const DenseNetSpec& spec, const ModelOptions& o) {
  GraphBuilder b(id, o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("features.");
  x = b.conv(x, spec.init_features, {7}, {2}, {3}, {1}, 1, false, "conv0");  // 112x112
  x = b.batch_norm(x, "norm0");
  x = b.relu(x, true, "relu0");
  x = b.max_pool(x, {3}, {2}, {1}, false, "pool0");  // 56x56
  std::int64_t channels = spec.init_features;
  for (int block = 0; block < 4; ++block) {
    const std::string bname = "denseblock" + std::to_string(block + 1) + ".";
    std::vector<Tensor> features{x};
    for (int i = 0; i < spec.blocks[block]; ++i) {
      b.set_scope("features." + bname + "denselayer" + std::to_string(i + 1) + ".");
      Tensor y = b.concat(features, 1, "cat");
      y = b.batch_norm(y, "norm1");
      y = b.relu(y, true, "relu1");
      y = b.conv(y, kBnSize * spec.growth, {1}, {1}, {0}, {1}, 1, false, "conv1");
      y = b.batch_norm(y, "norm2");
      y = b.relu(y, true, "relu2");
      y = b.conv(y, spec.growth, {3}, {1}, {1}, {1}, 1, false, "conv2");
      features.push_back(y);
    }
    b.set_scope("features." + bname);
    x = b.concat(features, 1, "cat");
    channels += spec.growth * spec.blocks[block];
    if (block < 3) {
      b.set_scope("features.transition" + std::to_string(block + 1) + ".");
      x = b.batch_norm(x, "norm");
      x = b.relu(x, true, "relu");
      channels /= 2;
      x = b.conv(x, channels, {1}, {1}, {0}, {1}, 1, false, "conv");
      x = b.avg_pool(x, {2}, {2}, {0}, false, "pool");
    }
  }
  b.set_scope("");
  x = b.batch_norm(x, "features.norm5");
  x = b.relu(x, true, "relu");
  x = b.global_avg_pool(x, "avgpool");
  x = b.flatten(x, "flatten");
  x = b.linear(x, 1000, true, "classifier");
  b.cross_entropy(x);
  return b.finish();
}

// ---------------------------------------------------------------- MobileNetV2

// Conv2dNormActivation: conv without bias, BN, optional ReLU6.
Tensor conv_bn(GraphBuilder& b, const Tensor& x, std::int64_t c, std::int64_t k, std::int64_t s, std::int64_t groups,
               bool relu6, const std::string& name) {
  Tensor y = b.conv(x, c, {k}, {s}, {(k - 1) / 2}, {1}, groups, false, name);
  y = b.batch_norm(y, name + ".bn");
  return relu6 ? b.relu6(y, name + ".relu6") : y;
}

Graph build_mobilenet_v2(const ModelOptions& o) {
  GraphBuilder b("mobilenet_v2", o.batch);
  Tensor x = b.input({3, 224, 224});
  b.set_scope("features.0.");
  x = conv_bn(b, x, 32, 3, 2, 1, true, "conv");  // 112x112
  struct Stage {
    std::int64_t t, c;
    int n;
    std::int64_t s;
  };
  const std::array<Stage, 7> stages{{{1, 16, 1, 1},
                                     {6, 24, 2, 2},
                                     {6, 32, 3, 2},
                                     {6, 64, 4, 2},
                                     {6, 96, 3, 1},
                                     {6, 160, 3, 2},
                                     {6, 320, 1, 1}}};
  std::int64_t in_c = 32;
  int index = 1;
  for (const auto& st : stages) {
    for (int i = 0; i < st.n; ++i, ++index) {
      const std::int64_t stride = i == 0 ? st.s : 1;
      const std::int64_t hidden = in_c * st.t;
      b.set_scope("features." + std::to_string(index) + ".");
      Tensor y = x;
      if (st.t != 1) y = conv_bn(b, y, hidden, 1, 1, 1, true, "expand");
      y = conv_bn(b, y, hidden, 3, stride, hidden, true, "dw");
      y = conv_bn(b, y, st.c, 1, 1, 1, false, "project");
      x = (stride == 1 && in_c == st.c) ? b.add(x, y, "add") : y;
      in_c = st.c;
    }
  }
  b.set_scope("features." + std::to_string(index) + ".");
  x = conv_bn(b, x, 1280, 1, 1, 1, true, "conv");  // 7x7
  b.set_scope("");
  x = b.global_avg_pool(x, "avgpool");
  x = b.flatten(x, "flatten");
  x = b.dropout(x, "classifier.dropout");  // p = 0.2
  x = b.linear(x, 1000, true, "classifier.fc");
  b.cross_entropy(x);
  return b.finish();
}

void add_densenet(std::vector<ZooModel>& out, const std::string& id, DenseNetSpec spec, const std::string& desc) {
  out.push_back(ZooModel{id, "cnn", desc,
                         "Huang et al. 2017, arXiv:1608.06993; shapes as torchvision.models.densenet", false, 0,
                         [id, spec](const ModelOptions& o) { return build_densenet(id, spec, o); }});
}

}  // namespace

void register_dense_mobile(std::vector<ZooModel>& out) {
  add_densenet(out, "densenet121", {32, {6, 12, 24, 16}, 64}, "DenseNet-121 (k=32), 224x224");
  add_densenet(out, "densenet161", {48, {6, 12, 36, 24}, 96}, "DenseNet-161 (k=48), 224x224");
  add_densenet(out, "densenet169", {32, {6, 12, 32, 32}, 64}, "DenseNet-169 (k=32), 224x224");
  add_densenet(out, "densenet201", {32, {6, 12, 48, 32}, 64}, "DenseNet-201 (k=32), 224x224");
  out.push_back(ZooModel{"mobilenet_v2", "cnn", "MobileNetV2 width 1.0, 224x224, ReLU6, depthwise 3x3",
                         "Sandler et al. 2018, arXiv:1801.04381; shapes as torchvision.models.mobilenet_v2", false, 0,
                         build_mobilenet_v2});
}

}  // namespace perfcast
