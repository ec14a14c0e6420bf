// MXNet sums the two gradients at a residual fork without a kernel: DetectInplaceAddTo
// (apache/mxnet src/executor/inplace_addto_detect_pass.cc) gives the branch's first convolution's data gradient req
// kAddTo into the sum's storage and skips the _grad_add (data/runtimes/mxnet.toml [sources]). The expectations are
// the sources' defaults and the paper's block count, not the model's own output.
#include <gtest/gtest.h>

#include <string>

#include "analysis/predict.h"
#include "cost/op_cost.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// MXNet's executors run the pass by default; PaddlePaddle's BuildStrategy leaves it off (build_strategy.h
// enable_addto_{false}); PyTorch's autograd and TensorFlow's gradient aggregation (AddN) sum a fork's gradients
// with a kernel of their own.
TEST(ResidualGradAddto, OnlyMxnetSumsForkGradientsInPlaceByDefault) {
  EXPECT_TRUE(find_runtime("mxnet").residual_grad_addto);
  for (const std::string id : {"pytorch", "tensorflow", "paddle", "jax"})
    EXPECT_FALSE(find_runtime(id).residual_grad_addto) << id;
}

// Backward entries of elementwise ops that run no kernel of their own (summed into a producer's call).
int folded_backward_adds(const std::string& runtime) {
  PredictRequest r;
  r.model = "resnet50";
  r.gpu = "v100-sxm2-16gb";
  r.runtime = runtime;
  r.mode = Mode::kTrain;
  r.precision = "fp32";
  r.batch = 64;
  int n = 0;
  for (const auto& e : predict(r).step.entries)
    if (e.phase == Phase::kBackward && e.kind == OpKind::kElementwise && e.fusion == Fusion::kIntoPrevious &&
        e.cost.launches == 0)
      ++n;
  return n;
}

// ResNet-50 has 16 bottleneck blocks (He et al. 2015, "Deep Residual Learning", Table 1: 3 + 4 + 6 + 3), each
// joining its shortcut with one add: MXNet runs no kernel for any of their gradient sums, PyTorch one for each.
TEST(ResidualGradAddto, ResNet50SkipsOneGradientSumPerBottleneckBlock) {
  EXPECT_EQ(folded_backward_adds("mxnet"), 16);
  EXPECT_EQ(folded_backward_adds("pytorch"), 0);
}

}  // namespace
}  // namespace perfcast
