// PyTorch's depthwise-convolution dispatch against its source (aten/src/ATen/native/Convolution.cpp):
// - _convolution sends a CUDA convolution with groups == input channels to ConvBackend::CudaDepthwise2d, PyTorch's
//   own conv_depthwise2d kernel (aten/src/ATen/native/cuda/DepthwiseConv2d.cu), unless use_cudnn_depthwise ('Use
//   cudnn for FP16 depthwise convolutions') picks cuDNN: kHalf input and weight only, compute capability 7.0+
//   (supportsDepthwiseConvolutionWithCuDNN), no dilation, equal strides, 32+ channels, and a shape
//   check_cudnn_depthwise_workload_with_filter accepts (stride 1: square 1/3/5 filters on inputs 7+ wide; stride 2
//   with batch > 1: 3x3/5x5 with 512+ channels, or 256+ channels on inputs 28+ wide);
// - before PyTorch 1.3 (pytorch/pytorch#22302) every depthwise convolution ran the native kernel;
// - the native kernel is no cuDNN call, so the host pays no cuDNN descriptor / benchmark-cache setup for it;
// - MobileNetV2 (Sandler et al. 2018, Table 2) has 17 bottleneck blocks, each with one 3x3 depthwise convolution;
// - channels-last tensors take cuDNN whatever their type or shape (use_cudnn_depthwise: 'always use
//   cudnn_depthwise for channels_last format').
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// A depthwise convolution (groups == channels) on a [channels, width, width] input.
Graph depthwise(std::int64_t batch, std::int64_t channels, std::int64_t width, std::int64_t k, std::int64_t stride) {
  GraphBuilder b("depthwise", batch);
  const Tensor x = b.input({channels, width, width});
  b.conv(x, channels, {k}, {stride}, {k / 2}, {1}, channels);
  return b.finish();
}

KernelCost forward_cost(const Graph& g, const std::string& gpu, const std::string& precision,
                        const RuntimeProfile& runtime) {
  const DeviceSpec device = find_gpu(gpu);
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", false);
  const CostContext ctx{kernels, runtime, plan, false};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kConv) return cost_op(g.ops, i, Phase::kForward, ctx).cost;
  ADD_FAILURE() << "no convolution in the graph";
  return {};
}

bool runs_cudnn(const Graph& g, const std::string& gpu, const std::string& precision,
                const RuntimeProfile& runtime = find_runtime("pytorch")) {
  const KernelCost k = forward_cost(g, gpu, precision, runtime);
  EXPECT_EQ(k.framework_kernel, k.algorithm == "depthwise_native");
  return !k.framework_kernel;
}

TEST(DepthwiseDispatch, Fp32AndBf16DepthwiseRunPytorchsOwnKernel) {
  // MobileNetV2's 3x3 stride-1 depthwise layer on 56x56 with 144 channels: FP32 (and TF32 math) and BF16 tensors
  // are not kHalf, so use_cudnn_depthwise is false whatever the shape.
  const Graph g = depthwise(32, 144, 56, 3, 1);
  EXPECT_FALSE(runs_cudnn(g, "a100-sxm4-40gb", "fp32"));
  EXPECT_FALSE(runs_cudnn(g, "a100-sxm4-40gb", "amp-bf16"));
  EXPECT_FALSE(runs_cudnn(g, "a100-sxm4-40gb", "bf16"));
}

TEST(DepthwiseDispatch, Fp16DepthwiseMeetingTheConditionsRunsCudnn) {
  // The same layer in FP16 (autocast hands convolutions FP16 tensors): stride 1, 3x3, 144 >= 32 channels, 56 >= 7.
  const Graph g = depthwise(32, 144, 56, 3, 1);
  EXPECT_TRUE(runs_cudnn(g, "a100-sxm4-40gb", "fp16"));
  EXPECT_TRUE(runs_cudnn(g, "a100-sxm4-40gb", "amp"));
  EXPECT_TRUE(runs_cudnn(g, "v100-sxm2-16gb", "amp"));
  // 5x5 too (EfficientNet's kernels), but not 7x7: only 1/3/5 filters.
  EXPECT_TRUE(runs_cudnn(depthwise(32, 240, 28, 5, 1), "a100-sxm4-40gb", "amp"));
  EXPECT_FALSE(runs_cudnn(depthwise(32, 240, 28, 7, 1), "a100-sxm4-40gb", "amp"));
}

TEST(DepthwiseDispatch, Fp16OutsideTheConditionsStaysNative) {
  // Fewer than 32 channels.
  EXPECT_FALSE(runs_cudnn(depthwise(32, 16, 112, 3, 1), "a100-sxm4-40gb", "amp"));
  // Stride 2 with batch 32: 3x3 needs 512+ channels, or 256+ on inputs 28+ wide.
  EXPECT_FALSE(runs_cudnn(depthwise(32, 144, 112, 3, 2), "a100-sxm4-40gb", "amp"));
  EXPECT_FALSE(runs_cudnn(depthwise(32, 256, 14, 3, 2), "a100-sxm4-40gb", "amp"));
  EXPECT_TRUE(runs_cudnn(depthwise(32, 256, 28, 3, 2), "a100-sxm4-40gb", "amp"));
  EXPECT_TRUE(runs_cudnn(depthwise(32, 576, 14, 3, 2), "a100-sxm4-40gb", "amp"));
  // Batch 1, stride 2: 3x3 and 5x5 always.
  EXPECT_TRUE(runs_cudnn(depthwise(1, 144, 112, 3, 2), "a100-sxm4-40gb", "amp"));
  // Pascal (compute capability 6.x) has no fast cuDNN depthwise path in PyTorch's eyes.
  EXPECT_FALSE(runs_cudnn(depthwise(32, 144, 56, 3, 1), "p100-pcie-16gb", "fp16"));
}

TEST(DepthwiseDispatch, PytorchBefore13AlwaysRanTheNativeKernel) {
  const RuntimeProfile old = at_version(find_runtime("pytorch"), "1.2");
  EXPECT_FALSE(runs_cudnn(depthwise(32, 144, 56, 3, 1), "v100-sxm2-16gb", "amp", old));
  const RuntimeProfile later = at_version(find_runtime("pytorch"), "1.3");
  EXPECT_TRUE(runs_cudnn(depthwise(32, 144, 56, 3, 1), "v100-sxm2-16gb", "amp", later));
}

// MobileNetV2 FP32 inference in PyTorch on an A100: the model whose 17 depthwise convolutions the tests count.
PredictRequest mobilenet_v2_fp32_inference(int batch) {
  PredictRequest r;
  r.gpu = "a100-sxm4-40gb";
  r.model = "mobilenet_v2";
  r.runtime = "pytorch";
  r.mode = parse_mode("infer");
  r.precision = "fp32";
  r.batch = batch;
  return r;
}

TEST(DepthwiseDispatch, NativeDepthwiseCostsNoCudnnSetupOnTheHost) {
  // MobileNetV2 FP32 inference in PyTorch: 17 depthwise convolutions run conv_depthwise2d; each costs the host a
  // plain op (host_op_us) and its launch, while every other convolution adds the cuDNN call's setup.
  PredictRequest r = mobilenet_v2_fp32_inference(1);
  const Prediction p = predict(r);
  const RuntimeProfile& rt = find_runtime("pytorch");
  // Every convolution entry's host time over what it owes (its op, its launches, a library call unless native)
  // is the same factor: the host's speed against the reference host.
  int native = 0;
  double scale = 0;
  for (const auto& e : p.step.entries) {
    if (e.kind != OpKind::kConv) continue;
    const bool is_native = e.cost.algorithm == "depthwise_native";
    native += is_native ? 1 : 0;
    const double owed = rt.host_op_us + e.cost.launches * rt.host_overhead_per_kernel_us +
                        (is_native ? 0.0 : rt.host_library_call_us);
    if (scale == 0) scale = e.host_us / owed;
    EXPECT_NEAR(e.host_us / owed, scale, 1e-9 * scale) << e.name << " " << e.cost.algorithm;
  }
  EXPECT_EQ(native, 17);
  EXPECT_GT(scale, 0.0);
}

TEST(DepthwiseDispatch, ChannelsLastDepthwiseAlwaysRunsCudnn) {
  // MobileNetV2 FP32 inference with channels-last tensors: none of its 17 depthwise convolutions runs the native
  // kernel, though in NCHW FP32 all 17 do (NativeDepthwiseCostsNoCudnnSetupOnTheHost).
  PredictRequest r = mobilenet_v2_fp32_inference(8);
  r.channels_last = true;
  const Prediction p = predict(r);
  int cudnn = 0;
  for (const auto& e : p.step.entries) {
    if (e.kind != OpKind::kConv) continue;
    EXPECT_NE(e.cost.algorithm, "depthwise_native") << e.name;
    cudnn += e.cost.algorithm == "depthwise" ? 1 : 0;
  }
  EXPECT_EQ(cudnn, 17);
}

TEST(DepthwiseDispatch, OtherRuntimesKeepTheirLibraryCall) {
  // TensorFlow's profile does not describe PyTorch's native kernel: its depthwise convolutions stay as before.
  EXPECT_TRUE(runs_cudnn(depthwise(32, 144, 56, 3, 1), "a100-sxm4-40gb", "fp32", find_runtime("tensorflow")));
}


// The backward against the forward of one 3x3 stride-1 depthwise layer, as pytorch/pytorch#18631 timed it
// (paulgavrikov, 2022-10-20; A100-SXM4-40GB, PyTorch 1.12.1, cuDNN 8.3.2): FP32, PyTorch's own kernels, 272 us
// forward and 4.8 ms forward + backward (backward 16.6x the forward: the weight-gradient kernel runs one block per
// channel and tap, each reading the channel's input and gradient); FP16, cuDNN, 201 us and 684 us (2.4x).
double backward_over_forward(const Graph& g, const std::string& precision) {
  const DeviceSpec device = find_gpu("a100-sxm4-40gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const RuntimeProfile& runtime = find_runtime("pytorch");
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", false);
  const CostContext ctx{kernels, runtime, plan, false};
  std::vector<Op> ops = g.ops;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == OpKind::kConv) {
      ops[i].needs_input_grad = true;  // a layer inside a network: data gradient too
      return cost_op(ops, i, Phase::kBackward, ctx).cost.time_us / cost_op(ops, i, Phase::kForward, ctx).cost.time_us;
    }
  ADD_FAILURE() << "no convolution in the graph";
  return 0;
}

TEST(DepthwiseDispatch, NativeWeightGradientRereadsTheChannelPerTap) {
  const Graph g = depthwise(64, 144, 56, 3, 1);
  // Native (FP32): many times the forward, not the two passes of a cuDNN backward, and not above the measurement.
  const double native = backward_over_forward(g, "fp32");
  EXPECT_GT(native, 8.0);
  EXPECT_LE(native, 16.6);
  // cuDNN (FP16, the same shape meets use_cudnn_depthwise): about two passes, as measured (2.4x).
  const double cudnn = backward_over_forward(g, "fp16");
  EXPECT_GT(cudnn, 1.5);
  EXPECT_LT(cudnn, 3.0);
}

}  // namespace
}  // namespace perfcast
