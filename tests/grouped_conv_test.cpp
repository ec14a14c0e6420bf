// Grouped (not depthwise) convolutions under FP16 tensor-core math, against documented cuDNN behaviour:
// - PyTorch calls cuDNN once per grouped convolution with the group count set and tensor-op math for half tensors
//   (aten/src/ATen/cudnn/Descriptors.h, ConvolutionDescriptor::set: cudnnSetConvolutionGroupCount,
//   CUDNN_TENSOR_OP_MATH);
// - with tensor-op math cuDNN pads the c and k dimensions to multiples of 8 "to allow a tensor core kernel to run"
//   (cuDNN 7.3.0 release notes), and on sm_80/sm_86 its grouped convolutions run tensor-core implicit-GEMM kernels
//   (sm86_xmma_fprop_implicit_gemm_..._g8_tensor16x8x16, sm80_xmma_dgrad/wgrad_..._g8_: the kernel names andravin/spio
//   scripts/plot_kernel_bench.py reads off PyTorch profiles on an RTX 3090), so ResNeXt-50 32x4d's first-stage 3x3
//   convolution (128 channels in 32 groups of 4) runs on tensor cores under AMP, not on the FP32 CUDA cores of an
//   RGB input layer;
// - depthwise convolutions (groups == channels) keep their own kernels (conv_depthwise2d or cuDNN's depthwise ones).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// A 3x3 stride-1 convolution of `channels` in `groups` groups on a [channels, width, width] input.
Graph grouped(std::int64_t batch, std::int64_t channels, std::int64_t width, std::int64_t groups) {
  GraphBuilder b("grouped", batch);
  const Tensor x = b.input({channels, width, width});
  b.conv(x, channels, {3}, {1}, {1}, {1}, groups);
  return b.finish();
}

KernelCost conv_cost(const Graph& g, const std::string& gpu, const std::string& precision, Phase phase) {
  const DeviceSpec device = find_gpu(gpu);
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const RuntimeProfile& runtime = find_runtime("pytorch");
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", false);
  const CostContext ctx{kernels, runtime, plan, true};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kConv) return cost_op(g.ops, i, phase, ctx).cost;
  ADD_FAILURE() << "no convolution in the graph";
  return {};
}

TEST(GroupedConv, FourChannelsPerGroupRunOnTensorCoresUnderAmpOnAmpere) {
  // ResNeXt-50 32x4d, layer1: 128 channels, 32 groups of 4, 56x56.
  const Graph g = grouped(64, 128, 56, 32);
  for (const char* gpu : {"rtx-3090", "a100-sxm4-40gb"}) {
    EXPECT_TRUE(is_tensor_pipe(conv_cost(g, gpu, "amp", Phase::kForward).pipe)) << gpu;
    EXPECT_TRUE(is_tensor_pipe(conv_cost(g, gpu, "amp", Phase::kBackward).pipe)) << gpu;
  }
  // FP32 stays FP32 (no tensor-op math without TF32).
  EXPECT_FALSE(is_tensor_pipe(conv_cost(g, "rtx-3090", "fp32", Phase::kForward).pipe));
}

TEST(GroupedConv, EightChannelsPerGroupStayOnTensorCores) {
  // ResNeXt-50 32x4d, layer2: 256 channels, 32 groups of 8 (already a multiple of 8: tensor cores before and after).
  const Graph g = grouped(64, 256, 28, 32);
  EXPECT_TRUE(is_tensor_pipe(conv_cost(g, "rtx-3090", "amp", Phase::kForward).pipe));
  EXPECT_TRUE(is_tensor_pipe(conv_cost(g, "t4", "amp", Phase::kForward).pipe));
}

TEST(GroupedConv, DepthwiseKeepsItsOwnKernels) {
  // MobileNetV2's 3x3 depthwise layer (144 channels, groups == channels): the depthwise path, not an implicit GEMM.
  const Graph g = grouped(32, 144, 56, 144);
  const KernelCost k = conv_cost(g, "rtx-3090", "amp", Phase::kForward);
  EXPECT_TRUE(k.algorithm == "depthwise" || k.algorithm == "depthwise_native") << k.algorithm;
  EXPECT_FALSE(is_tensor_pipe(k.pipe));
}

}  // namespace
}  // namespace perfcast
