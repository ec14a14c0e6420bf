// Three cost-model features checked against sources outside the code:
//   1. convolution algorithm choice under cuDNN autotuning (FFT / FFT_TILING and Winograd next to implicit GEMM):
//      cuDNN's algorithm list and its documented restrictions, convnet-benchmarks (soumith/convnet-benchmarks) and
//      Vasilache et al., 'Fast Convolutional Nets With fbfft' (ICLR 2015);
//   2. TensorFlow's inference batch-norm + ReLU fusion: grappler remapper FindFusedBatchNormEx
//      (tensorflow/core/grappler/optimizers/remapper.cc), which turns ReLU(BN(x)) and ReLU(BN(x) + side) into one
//      _FusedBatchNormEx kernel in inference;
//   3. TensorFlow's Conv2D + BiasAdd + Relu fusion on GPU (the same remapper: FindContractionWithBiasAndActivation,
//      IsGpuCompatible: spatial filters only, Relu only).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "cost/cost_constants.h"
#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"
#include "test_paths.h"

namespace perfcast {
namespace {

// ---------------------------------------------------------------- 1. convolution algorithms

// The profile with cuDNN autotuning switched off: every convolution runs as implicit GEMM.
RuntimeProfile without_autotune(const RuntimeProfile& runtime) {
  RuntimeProfile r = runtime;
  r.conv_autotune = false;
  return r;
}

// Cost of the (only) convolution of `g` on `gpu` in `precision` under `runtime`.
KernelCost conv_kernel_cost(const Graph& g, const std::string& gpu, const std::string& precision,
                            const RuntimeProfile& runtime, Phase phase = Phase::kForward, bool expect_tensor = false) {
  const DeviceSpec device = find_gpu(gpu);
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", true);
  EXPECT_EQ(is_tensor_pipe(plan.conv_pipe), expect_tensor) << gpu << " " << precision;
  const CostContext ctx{kernels, runtime, plan, true};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kConv) return cost_op(g.ops, i, phase, ctx).cost;
  ADD_FAILURE() << "no convolution in the graph";
  return {};
}

constexpr std::int64_t kAlexBatch = 128;

// AlexNet conv2 (Krizhevsky et al. 2012, single-tower form used by convnet-benchmarks): 64 -> 192 channels on
// 27x27, 5x5 filter, stride 1, pad 2 (output 27x27).
Graph alexnet_conv2() {
  GraphBuilder b("alexnet-conv2", kAlexBatch);
  const Tensor x = b.input({64, 27, 27});
  b.conv(x, 192, {5}, {1}, {2});
  return b.finish();
}

// The same 5x5 convolution with stride 2 on a 56x56 map (output 28x28).
Graph strided_5x5_conv() {
  GraphBuilder b("strided-5x5", kAlexBatch);
  const Tensor x = b.input({64, 56, 56});
  b.conv(x, 192, {5}, {2}, {2});
  return b.finish();
}

// Direct-convolution FLOPs, 2 * N * Co * Ho * Wo * Ci * k * k (one multiply and one add per MAC).
double direct_conv_flops(double n, double c_out, double h_out, double w_out, double c_in, double k) {
  return 2.0 * n * c_out * h_out * w_out * c_in * k * k;
}

TEST(ConvAlgorithms, AutotuneFindsAFasterAlgorithmFor5x5Conv) {
  // cuDNN's autotuner (cudnnFindConvolutionForwardAlgorithm, used by TensorFlow's autotune) chooses among implicit
  // GEMM, FFT, FFT_TILING and WINOGRAD(_NONFUSED). A 5x5 direct convolution does 25 MACs per output per channel
  // pair; FFT (Vasilache et al. 2015, fbfft; convnet-benchmarks: FFT beats direct convolution for 5x5 filters with
  // many channels) and Winograd F(2x2,5x5) (Lavin & Gray 2016: 36 multiplies per 4 outputs = 9 vs 25) need several
  // times fewer, so the autotuned layer must be at least 1.5x faster than implicit GEMM alone on a GTX 1080 Ti.
  const RuntimeProfile& tf = find_runtime("tensorflow");
  ASSERT_TRUE(tf.conv_autotune);
  const RuntimeProfile gemm_only = without_autotune(tf);
  const Graph g = alexnet_conv2();
  const KernelCost tuned = conv_kernel_cost(g, "gtx-1080-ti", "fp32", tf);
  const KernelCost gemm = conv_kernel_cost(g, "gtx-1080-ti", "fp32", gemm_only);
  ASSERT_GT(tuned.time_us, 0);
  EXPECT_GE(gemm.time_us, 1.5 * tuned.time_us) << "implicit GEMM " << gemm.time_us << " us, autotuned "
                                               << tuned.time_us << " us";
}

// VGG-16 conv3_2 (Simonyan & Zisserman 2015): 256 -> 256 channels on 56x56, 3x3, stride 1, pad 1.
Graph vgg_conv3_2(std::int64_t batch) {
  GraphBuilder b("vgg-conv3-2", batch);
  const Tensor x = b.input({256, 56, 56});
  b.conv(x, 256, {3}, {1}, {1});
  return b.finish();
}

// VGG-16 conv4_2: 512 -> 512 channels on 28x28, 3x3, stride 1, pad 1.
Graph vgg_conv4_2(std::int64_t batch) {
  GraphBuilder b("vgg-conv4-2", batch);
  const Tensor x = b.input({512, 28, 28});
  b.conv(x, 512, {3}, {1}, {1});
  return b.finish();
}

TEST(ConvAlgorithms, WorkspaceLimitTakesHugeWinogradLayersOffTheList) {
  // An autotuner only tries algorithms whose scratch fits the framework's workspace limit (TensorFlow:
  // TF_CUDNN_WORKSPACE_LIMIT_IN_MB, 4096 MB by default). Non-fused Winograd F(2x2,3x3) keeps 16/4 of the input and
  // output in device memory: VGG-16 conv4_2 at batch 32 needs ~0.4 GB, which TensorFlow's limit allows; under a
  // 256 MB limit the layer runs as another algorithm, slower.
  const RuntimeProfile tf = find_runtime("tensorflow");
  ASSERT_DOUBLE_EQ(tf.conv_workspace_limit_bytes, 4294967296.0);
  RuntimeProfile unlimited = tf;
  unlimited.conv_workspace_limit_bytes = 1e18;
  RuntimeProfile small = tf;
  small.conv_workspace_limit_bytes = 256.0 * 1024 * 1024;
  const double with_tf_limit = conv_kernel_cost(vgg_conv4_2(32), "gtx-1080-ti", "fp32", tf).time_us;
  const double free = conv_kernel_cost(vgg_conv4_2(32), "gtx-1080-ti", "fp32", unlimited).time_us;
  const double limited = conv_kernel_cost(vgg_conv4_2(32), "gtx-1080-ti", "fp32", small).time_us;
  EXPECT_DOUBLE_EQ(with_tf_limit, free);
  EXPECT_GT(limited, free);
}

TEST(ConvAlgorithms, EightMegabyteWorkspaceLeavesImplicitGemmOrFusedWinograd) {
  // BVLC Caffe (cudnn_conv_layer.cpp) and Chainer (CuPy's _max_workspace_size) let cuDNN pick within 8 MB. VGG-16
  // conv3_2 at batch 32 transforms 32 x 256 x 56 x 56 activations: FFT's complex spectra and non-fused Winograd's
  // tiles need hundreds of MB, so under the cap only workspace-free algorithms remain, and the layer cannot be
  // faster than with the workspace an autotuner without a cap may use.
  RuntimeProfile capped = find_runtime("tensorflow");
  capped.conv_workspace_limit_bytes = find_runtime("caffe").conv_workspace_limit_bytes;
  ASSERT_DOUBLE_EQ(capped.conv_workspace_limit_bytes, 8.0 * 1024 * 1024);
  RuntimeProfile unlimited = find_runtime("tensorflow");
  unlimited.conv_workspace_limit_bytes = 1e18;
  const double with_cap = conv_kernel_cost(vgg_conv3_2(32), "gtx-1080-ti", "fp32", capped).time_us;
  const double without = conv_kernel_cost(vgg_conv3_2(32), "gtx-1080-ti", "fp32", unlimited).time_us;
  const double gemm = conv_kernel_cost(vgg_conv3_2(32), "gtx-1080-ti", "fp32", without_autotune(capped)).time_us;
  EXPECT_GE(with_cap, without);
  EXPECT_LE(with_cap, gemm);
}

TEST(ConvAlgorithms, ReportedFlopsStayDirectConvolutionFlops) {
  // FLOPs are counted as the direct convolution's 2*N*Co*Ho*Wo*Ci*k*k whichever algorithm runs (the convention of
  // convnet-benchmarks and of cuDNN/Winograd papers reporting "effective" TFLOPS); only the time changes.
  const RuntimeProfile& tf = find_runtime("tensorflow");
  const RuntimeProfile gemm_only = without_autotune(tf);
  const double expected = direct_conv_flops(kAlexBatch, 192, 27, 27, 64, 5);
  const Graph g = alexnet_conv2();
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "gtx-1080-ti", "fp32", tf).flops, expected);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "gtx-1080-ti", "fp32", gemm_only).flops, expected);
  // The strided layer: output 28x28.
  const double strided = direct_conv_flops(kAlexBatch, 192, 28, 28, 64, 5);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(strided_5x5_conv(), "gtx-1080-ti", "fp32", tf).flops, strided);
}

// cuDNN 8.9.2 (PyTorch 2.1, FP32) ran implicit GEMM on 97-100% of the measured 3x3 stride-1 convolutions with
// fewer than 16 input channels on V100 and T4 (shared/kernels/neusight_train/conv, kernel names
// cudnn_infer_volta_scudnn_128x64_relu_*), and never a split-K kernel.
TEST(ConvAlgorithms, FewInputChannelsRunImplicitGemmWithoutSplitK) {
  GraphBuilder b("rgb-3x3", 8);
  const Tensor x = b.input({3, 224, 224});
  b.conv(x, 64, {3}, {1}, {1});
  const Graph g = b.finish();
  const RuntimeProfile& pt = find_runtime("pytorch");
  for (const char* gpu : {"v100-pcie-32gb", "t4"}) {
    const KernelCost k = conv_kernel_cost(g, gpu, "fp32", pt);
    EXPECT_EQ(k.algorithm, "gemm") << gpu;
    EXPECT_EQ(k.split_k, 1) << gpu;
  }
}

// Every non-fused Winograd call in the measured cuDNN 8.9.2 convolutions (shared/kernels/neusight_train/conv, 9,848
// rows on five GPUs) launches winogradForwardFilter4x4 beside the data and output transforms and the batched SGEMM:
// the filter is transformed on every forward call. With [conv] winograd_nonfused_filter_transform on, a layer with a
// large filter on a small map (V100, N = 38, C = 893, K = 326, 5x5, measured 881 us) must cost at least the
// transform's own DRAM traffic more: the 3 x 3 taps read once and the 16 planes of F(2x2,3x3) written, over the
// V100's datasheet bandwidth (900 GB/s). Its backward passes are not measured and do not change.
TEST(ConvAlgorithms, NonFusedWinogradForwardPaysItsFilterTransform) {
  GraphBuilder b("small-map-3x3", 38);
  const Tensor x = b.input({893, 5, 5});
  b.conv(x, 326, {3}, {1}, {1});
  const Graph g = b.finish();
  const DeviceSpec device = find_gpu("v100-pcie-32gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const RuntimeProfile& pt = find_runtime("pytorch");
  const PrecisionPlan plan = resolve_precision("fp32", device, arch, pt, "", true);
  CostConstants off = cost_constants();
  off.winograd_nonfused_filter_transform = false;
  CostConstants on = off;
  on.winograd_nonfused_filter_transform = true;
  const KernelCostModel k_off(device, arch, off), k_on(device, arch, on);
  std::size_t conv = 0;
  while (conv < g.ops.size() && g.ops[conv].kind != OpKind::kConv) ++conv;
  ASSERT_LT(conv, g.ops.size());
  auto cost = [&](const KernelCostModel& km, Phase phase) {
    CostContext ctx{km, pt, plan, true};
    ctx.conv_autotune = false;
    ctx.forced_conv_algorithm = "winograd_nonfused";
    return cost_op(g.ops, conv, phase, ctx).cost;
  };
  const KernelCost fwd_off = cost(k_off, Phase::kForward), fwd_on = cost(k_on, Phase::kForward);
  ASSERT_EQ(fwd_on.algorithm, "winograd_nonfused");
  const double filter_bytes = 893.0 * 326.0 * 4.0 * (9.0 + 16.0);
  EXPECT_GE(fwd_on.time_us - fwd_off.time_us, filter_bytes / (900e9) * 1e6);
  EXPECT_DOUBLE_EQ(cost(k_on, Phase::kBackward).time_us, cost(k_off, Phase::kBackward).time_us);
}

TEST(ConvAlgorithms, StridedConvGetsNoFftOrWinograd) {
  // cuDNN documentation (cudnnConvolutionForward supported configurations): CUDNN_CONVOLUTION_FWD_ALGO_FFT,
  // FFT_TILING, WINOGRAD and WINOGRAD_NONFUSED require unit convolution stride, so a stride-2 5x5 layer runs as
  // implicit GEMM with or without autotuning: the cost must be the same.
  const RuntimeProfile& tf = find_runtime("tensorflow");
  const RuntimeProfile gemm_only = without_autotune(tf);
  const Graph g = strided_5x5_conv();
  const KernelCost tuned = conv_kernel_cost(g, "gtx-1080-ti", "fp32", tf);
  const KernelCost gemm = conv_kernel_cost(g, "gtx-1080-ti", "fp32", gemm_only);
  ASSERT_GT(tuned.time_us, 0);
  EXPECT_DOUBLE_EQ(tuned.time_us, gemm.time_us);
  EXPECT_DOUBLE_EQ(tuned.bytes, gemm.bytes);
}

TEST(ConvAlgorithms, TensorCoreConvIgnoresFftAndWinograd) {
  // cuDNN 7/8: tensor-op (CUDNN_TENSOR_OP_MATH) convolutions are implicit-GEMM kernels; FFT and Winograd run on CUDA
  // cores. Under AMP on a V100 (tensor cores) the 5x5 layer therefore costs the same with or without autotuning.
  const RuntimeProfile& tf = find_runtime("tensorflow");
  const RuntimeProfile gemm_only = without_autotune(tf);
  const Graph g = alexnet_conv2();
  const KernelCost tuned = conv_kernel_cost(g, "v100-sxm2-16gb", "amp", tf, Phase::kForward, true);
  const KernelCost gemm = conv_kernel_cost(g, "v100-sxm2-16gb", "amp", gemm_only, Phase::kForward, true);
  ASSERT_GT(tuned.time_us, 0);
  EXPECT_DOUBLE_EQ(tuned.time_us, gemm.time_us);
  EXPECT_DOUBLE_EQ(tuned.flops, direct_conv_flops(kAlexBatch, 192, 27, 27, 64, 5));
}

TEST(ConvAlgorithms, Int8Dp4aConvRunsImplicitGemmOnly) {
  // cuDNN runs its INT8 configurations (INT8_CONFIG, INT8x4_CONFIG, INT8x32_CONFIG) with the implicit-GEMM
  // algorithms only (Winograd and FFT are floating-point transforms), and TensorRT's Pascal INT8 convolutions are
  // implicit-GEMM kernels (nvprof on a P40: trt_maxwell_int8x4_icudnn_int8x4_128x128_relu_small_nn_v1). So an INT8
  // 3x3 and 5x5 layer on a Tesla P40 (dp4a) costs the same with or without autotuning.
  const RuntimeProfile& trt = find_runtime("tensorrt");
  const RuntimeProfile gemm_only = without_autotune(trt);
  const DeviceSpec device = find_gpu("tesla-p40");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  for (const Graph& g : {alexnet_conv2(), [] {
         GraphBuilder b("alexnet-conv3", kAlexBatch);
         b.conv(b.input({192, 13, 13}), 384, {3}, {1}, {1});
         return b.finish();
       }()}) {
    double cost[2] = {0, 0};
    for (int tuned = 0; tuned < 2; ++tuned) {
      const RuntimeProfile& runtime = tuned ? trt : gemm_only;
      const PrecisionPlan plan = resolve_precision("int8", device, arch, runtime, "", false);
      ASSERT_EQ(plan.conv_pipe, Pipe::kDp4a);
      const CostContext ctx{kernels, runtime, plan, false};
      for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (g.ops[i].kind == OpKind::kConv) cost[tuned] = cost_op(g.ops, i, Phase::kForward, ctx).cost.time_us;
    }
    ASSERT_GT(cost[0], 0) << g.model_id;
    EXPECT_DOUBLE_EQ(cost[1], cost[0]) << g.model_id;
  }
}

TEST(ConvAlgorithms, Int8Dp4aConvDoesNotSplitK) {
  // TensorRT's Pascal INT8 convolutions are the int8x4 implicit-GEMM kernels (nvprof on a P40:
  // trt_maxwell_int8x4_icudnn_int8x4_128x128_relu_small_nn_v1, ..._128x64_...), none a split-K variant. At batch 1
  // AlexNet's conv3 (13x13 output, 384 filters, K = 1728) gives a few tiles for the P40's 30 SMs: the kernel runs
  // them as they are, and cannot reach the rate a split K loop would.
  const RuntimeProfile& trt = find_runtime("tensorrt");
  const DeviceSpec device = find_gpu("tesla-p40");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  GraphBuilder b("alexnet-conv3-b1", 1);
  b.conv(b.input({192, 13, 13}), 384, {3}, {1}, {1});
  const Graph g = b.finish();
  const PrecisionPlan plan = resolve_precision("int8", device, arch, trt, "", false);
  ASSERT_EQ(plan.conv_pipe, Pipe::kDp4a);
  const CostContext ctx{kernels, trt, plan, false};
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].kind != OpKind::kConv) continue;
    const KernelCost k = cost_op(g.ops, i, Phase::kForward, ctx).cost;
    EXPECT_EQ(k.split_k, 1);
    // 2 x 169 x 384 x 1728 operations in far less than the board's 47 TOPS: a fraction of the SMs hold a tile.
    const double tops = 2.0 * 169 * 384 * 1728 / (k.time_us * 1e6);
    EXPECT_LT(tops, 0.5 * device.peak(Pipe::kDp4a));
  }
}

// ---------------------------------------------------------------- 2. inference batch norm + ReLU fusion

// The TensorFlow profile with the remapper's batch-norm fusion switched as given.
RuntimeProfile tf_with_bn_fusion(bool on) {
  RuntimeProfile r = find_runtime("tensorflow");
  r.fuse_bn_activation_inference = on;
  return r;
}

struct GraphCost {
  std::vector<OpCost> ops;
  double bytes = 0;
  double launches = 0;
};

// Forward cost of every op of `g` on a GTX 1080 Ti in fp32.
GraphCost cost_graph(const Graph& g, const RuntimeProfile& runtime, bool training) {
  const DeviceSpec device = find_gpu("gtx-1080-ti");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const PrecisionPlan plan = resolve_precision("fp32", device, arch, runtime, "", training);
  const CostContext ctx{kernels, runtime, plan, training};
  GraphCost out;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    out.ops.push_back(cost_op(g.ops, i, Phase::kForward, ctx));
    out.bytes += out.ops.back().cost.bytes;
    out.launches += out.ops.back().cost.launches;
  }
  return out;
}

// Index of the first op whose name contains `stem`.
std::size_t index_of(const Graph& g, const std::string& stem) {
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].name.find(stem) != std::string::npos) return i;
  ADD_FAILURE() << "no op named like " << stem;
  return 0;
}

// conv -> batch norm -> relu (a ResNet stem / VGG-BN layer).
Graph conv_bn_relu() {
  GraphBuilder b("conv-bn-relu", 32);
  const Tensor x = b.input({64, 56, 56});
  const Tensor c = b.conv(x, 64, {3}, {1}, {1}, {1}, 1, false, "conv");
  const Tensor n = b.batch_norm(c, "bn");
  b.relu(n, true, "relu");
  return b.finish();
}

// A residual unit's tail: stem conv (the shortcut), conv -> bn, add(bn_out, shortcut) -> relu. With
// `second_consumer` the add's output also feeds another op, as when the sum is reused.
Graph conv_bn_add_relu(bool second_consumer) {
  GraphBuilder b("conv-bn-add-relu", 32);
  const Tensor x = b.input({64, 56, 56});
  const Tensor shortcut = b.conv(x, 64, {1}, {1}, {0}, {1}, 1, false, "stem");
  const Tensor c = b.conv(shortcut, 64, {3}, {1}, {1}, {1}, 1, false, "conv");
  const Tensor n = b.batch_norm(c, "bn");
  const Tensor sum = b.add(n, shortcut, "add");
  b.relu(sum, false, "relu");
  if (second_consumer) b.conv(sum, 64, {1}, {1}, {0}, {1}, 1, false, "reuse");
  return b.finish();
}

TEST(BatchNormReluFusion, InferenceReluFusesIntoBatchNorm) {
  // remapper.cc FindFusedBatchNormEx: in inference, Relu(FusedBatchNorm(x)) becomes one _FusedBatchNormEx kernel,
  // so the ReLU launches nothing of its own.
  const RuntimeProfile tf = tf_with_bn_fusion(true);
  const Graph g = conv_bn_relu();
  const std::size_t relu = index_of(g, "relu");
  EXPECT_EQ(fusion_of(g.ops, relu, tf, false), Fusion::kIntoPrevious);
  EXPECT_EQ(fusion_of(g.ops, index_of(g, "bn"), tf, false), Fusion::kNone);
  const GraphCost cost = cost_graph(g, tf, false);
  EXPECT_EQ(cost.ops[relu].cost.launches, 0);
}

TEST(BatchNormReluFusion, InferenceResidualAddAndReluFuseIntoBatchNorm) {
  // remapper.cc FindFusedBatchNormEx with a side input: Relu(FusedBatchNorm(x) + side) is one _FusedBatchNormEx
  // kernel, so both the add and the ReLU are fused.
  const RuntimeProfile tf = tf_with_bn_fusion(true);
  const Graph g = conv_bn_add_relu(false);
  const std::size_t add = index_of(g, "add"), relu = index_of(g, "relu");
  EXPECT_EQ(fusion_of(g.ops, add, tf, false), Fusion::kIntoPrevious);
  EXPECT_EQ(fusion_of(g.ops, relu, tf, false), Fusion::kIntoPrevious);
  const GraphCost cost = cost_graph(g, tf, false);
  EXPECT_EQ(cost.ops[add].cost.launches, 0);
  EXPECT_EQ(cost.ops[relu].cost.launches, 0);
}

TEST(BatchNormReluFusion, NothingFusedInTrainingOrWithTheSwitchOff) {
  // The remapper fuses only inference batch norm by default (training needs TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT
  // and NHWC fp16, off by default); with the runtime's switch off nothing is fused either. The stock "tensorflow"
  // profile has no elementwise or epilogue fusion (tf_cnn_benchmarks graph mode without XLA).
  const RuntimeProfile on = tf_with_bn_fusion(true);
  const RuntimeProfile off = tf_with_bn_fusion(false);
  const Graph simple = conv_bn_relu();
  const Graph residual = conv_bn_add_relu(false);
  const std::size_t relu = index_of(simple, "relu");
  EXPECT_EQ(fusion_of(simple.ops, relu, on, true), Fusion::kNone);
  EXPECT_EQ(fusion_of(simple.ops, relu, off, false), Fusion::kNone);
  for (const char* stem : {"add", "relu"}) {
    const std::size_t i = index_of(residual, stem);
    EXPECT_EQ(fusion_of(residual.ops, i, on, true), Fusion::kNone) << stem;
    EXPECT_EQ(fusion_of(residual.ops, i, off, false), Fusion::kNone) << stem;
  }
  EXPECT_GT(cost_graph(simple, on, true).ops[relu].cost.launches, 0);
  EXPECT_GT(cost_graph(simple, off, false).ops[relu].cost.launches, 0);
}

TEST(BatchNormReluFusion, AddWithTwoConsumersIsNotFused) {
  // remapper.cc: the fused pattern's intermediate outputs must have no other consumers (the add's result would
  // otherwise have to be materialised anyway), so an add that also feeds another op stays its own kernel, and so
  // does the ReLU on it.
  const RuntimeProfile tf = tf_with_bn_fusion(true);
  const Graph g = conv_bn_add_relu(true);
  EXPECT_EQ(fusion_of(g.ops, index_of(g, "add"), tf, false), Fusion::kNone);
  EXPECT_EQ(fusion_of(g.ops, index_of(g, "relu"), tf, false), Fusion::kNone);
}

TEST(BatchNormReluFusion, FusedGraphMovesFewerDramBytes) {
  // One _FusedBatchNormEx kernel keeps the batch norm's (and the sum's) output on chip: the intermediate tensors are
  // no longer written and re-read, so the fused graph moves fewer DRAM bytes and launches fewer kernels.
  for (const bool residual : {false, true}) {
    const Graph g = residual ? conv_bn_add_relu(false) : conv_bn_relu();
    const GraphCost fused = cost_graph(g, tf_with_bn_fusion(true), false);
    const GraphCost unfused = cost_graph(g, tf_with_bn_fusion(false), false);
    EXPECT_LT(fused.bytes, unfused.bytes) << (residual ? "residual" : "simple");
    EXPECT_LT(fused.launches, unfused.launches) << (residual ? "residual" : "simple");
  }
}

// TensorFlow's elementwise kernels are Eigen expressions, which compute Eigen::half with the native half
// intrinsics on sm_53+ (Eigen Half.h, EIGEN_HAS_NATIVE_FP16); on GP102 those run on the FP16 units at 1/64 of the
// FP32 rate (CUDA programming guide throughput table, cc 6.1). PyTorch computes half tensors in float.
TEST(ConvAlgorithms, TensorflowHalfReluRunsOnTheSlowFp16PipeOfGp102) {
  GraphBuilder b("relu", 256);
  const Tensor x = b.input({256, 56, 56});
  b.relu(x);
  const Graph g = b.finish();
  const auto relu_cost = [&](const std::string& runtime_id, const std::string& gpu) {
    const DeviceSpec device = find_gpu(gpu);
    const ArchitectureProfile& arch = architecture_of(device);
    const KernelCostModel kernels(device, arch);
    const RuntimeProfile& runtime = find_runtime(runtime_id);
    const PrecisionPlan plan = resolve_precision("amp", device, arch, runtime, "", false);
    const CostContext ctx{kernels, runtime, plan, false};
    for (std::size_t i = 0; i < g.ops.size(); ++i)
      if (g.ops[i].kind == OpKind::kElementwise) return cost_op(g.ops, i, Phase::kForward, ctx).cost;
    ADD_FAILURE() << "no relu in the graph";
    return KernelCost{};
  };
  EXPECT_EQ(relu_cost("tensorflow", "gtx-1080-ti").pipe, Pipe::kFp16);
  EXPECT_EQ(relu_cost("pytorch", "gtx-1080-ti").pipe, Pipe::kFp32);
  EXPECT_EQ(relu_cost("tensorflow", "v100-sxm2-16gb").pipe, Pipe::kFp32) << "fast FP16 units: nothing changes";
  // 205M half maxima at 1 result per lane per clock-pair of the 0.18-TFLOPS pipe take about as long as moving
  // their 0.8 GB: the math is no longer hidden behind DRAM as it is on the FP32 pipe.
  EXPECT_GT(relu_cost("tensorflow", "gtx-1080-ti").compute_us, 0.8 * relu_cost("tensorflow", "gtx-1080-ti").memory_us);
  EXPECT_LT(relu_cost("pytorch", "gtx-1080-ti").compute_us, 0.1 * relu_cost("pytorch", "gtx-1080-ti").memory_us);
  EXPECT_GE(relu_cost("tensorflow", "gtx-1080-ti").time_us, relu_cost("pytorch", "gtx-1080-ti").time_us);
}



// ---------------------------------------------------------------- 3. Conv2D + BiasAdd + Relu (_FusedConv2D)

// conv (with bias, as tf_cnn_benchmarks' convnet_builder.conv builds VGG and AlexNet layers) -> relu.
Graph conv_bias_relu(std::int64_t kernel, bool bias) {
  GraphBuilder b("conv-bias-relu", 32);
  const Tensor x = b.input({64, 56, 56});
  const Tensor c = b.conv(x, 64, {kernel}, {1}, {kernel / 2}, {1}, 1, bias, "conv");
  b.relu(c, true, "relu");
  return b.finish();
}

TEST(ConvBiasReluFusion, SpatialFloatConvWithBiasAndReluIsOneKernel) {
  // remapper.cc FindContractionWithBiasAndActivation + IsGpuCompatible: Relu(BiasAdd(Conv2D(x))) with a 3x3 filter
  // becomes one _FusedConv2D on GPU, in training as in inference.
  RuntimeProfile tf = find_runtime("tensorflow");
  tf.fuse_conv_bias_relu_fp32 = true;
  const Graph g = conv_bias_relu(3, true);
  const std::size_t relu = index_of(g, "relu");
  EXPECT_EQ(fusion_of(g.ops, relu, tf, false), Fusion::kIntoPrevious);
  EXPECT_EQ(fusion_of(g.ops, relu, tf, true), Fusion::kIntoPrevious);
  EXPECT_EQ(cost_graph(g, tf, false).ops[relu].cost.launches, 0);
  tf.fuse_conv_bias_relu_fp32 = false;
  EXPECT_EQ(fusion_of(g.ops, relu, tf, false), Fusion::kNone);
}

TEST(ConvBiasReluFusion, PointwiseConvAndConvWithoutBiasStaySeparate) {
  // IsGpuCompatible rejects 1x1 filters (is_spatial_conv), and the pattern needs a BiasAdd between the two.
  RuntimeProfile tf = find_runtime("tensorflow");
  tf.fuse_conv_bias_relu_fp32 = true;
  const Graph pointwise = conv_bias_relu(1, true);
  EXPECT_EQ(fusion_of(pointwise.ops, index_of(pointwise, "relu"), tf, false), Fusion::kNone);
  const Graph no_bias = conv_bias_relu(3, false);
  EXPECT_EQ(fusion_of(no_bias.ops, index_of(no_bias, "relu"), tf, false), Fusion::kNone);
  const Graph bn = conv_bn_relu();
  EXPECT_EQ(fusion_of(bn.ops, index_of(bn, "relu"), tf, true), Fusion::kNone);
}

// ---------------------------------------------------------------- 4. TensorFlow's layout pass and TF32 convolutions

// grappler's generic_layout_optimizer.cc moves a graph to NHWC only when at least half its GPU convolutions are
// DT_HALF (and half the GPUs are sm_70+); XLA's gpu_layout_assignment.cc gives NHWC to F16 convolutions only. An FP32
// graph run as TF32 on the A100 therefore hands cuDNN NCHW tensors, and cuDNN converts input and output around its
// NHWC tensor-core kernel: one read and one write of each (two kernels). Half graphs and 1x1 (cuBLAS) convolutions
// are not transposed.
TEST(TensorFlowTf32Layout, SpatialTf32ConvolutionsPayNchwTransposesHalfOnesDoNot) {
  const Graph g = conv_bias_relu(3, false);
  const double in_elems = 32.0 * 64 * 56 * 56, out_elems = in_elems;  // 64 -> 64 channels, same map
  for (const std::string name : {"tensorflow", "tensorflow-xla"}) {
    RuntimeProfile on = find_runtime(name);
    ASSERT_TRUE(on.nchw_tf32_tensor_core_transposes) << name;
    ASSERT_FALSE(on.nchw_tensor_core_transposes) << name;
    RuntimeProfile off = on;
    off.nchw_tf32_tensor_core_transposes = false;
    // "fp32" on the A100 under TF >= 2.4 / NVIDIA's TF 1.15 runs as TF32.
    const KernelCost tf32 = conv_kernel_cost(g, "a100-sxm4-40gb", "fp32", on, Phase::kForward, true);
    const KernelCost plain = conv_kernel_cost(g, "a100-sxm4-40gb", "fp32", off, Phase::kForward, true);
    EXPECT_NEAR(tf32.bytes - plain.bytes, 2.0 * (in_elems + out_elems) * 4.0, 1.0) << name;
    EXPECT_DOUBLE_EQ(tf32.launches - plain.launches, 2.0) << name;
    const KernelCost half = conv_kernel_cost(g, "a100-sxm4-40gb", "amp", on, Phase::kForward, true);
    const KernelCost half_off = conv_kernel_cost(g, "a100-sxm4-40gb", "amp", off, Phase::kForward, true);
    EXPECT_DOUBLE_EQ(half.bytes, half_off.bytes) << name;
    EXPECT_DOUBLE_EQ(half.time_us, half_off.time_us) << name;
    const Graph pointwise = conv_bias_relu(1, false);
    EXPECT_DOUBLE_EQ(conv_kernel_cost(pointwise, "a100-sxm4-40gb", "fp32", on, Phase::kForward, true).bytes,
                     conv_kernel_cost(pointwise, "a100-sxm4-40gb", "fp32", off, Phase::kForward, true).bytes)
        << name;
  }
}

TEST(TensorFlowTf32Layout, CudaCoreFp32ConvolutionsAreNotTransposed) {
  // Before Ampere "fp32" stays on CUDA cores, which run NCHW themselves: nothing to convert.
  const Graph g = conv_bias_relu(3, false);
  RuntimeProfile on = find_runtime("tensorflow");
  RuntimeProfile off = on;
  off.nchw_tf32_tensor_core_transposes = false;
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "v100-sxm2-16gb", "fp32", on).bytes,
                   conv_kernel_cost(g, "v100-sxm2-16gb", "fp32", off).bytes);
}

// ---------------------------------------------------------------- 5. TF 2.3's XLA on the A100: fused half convolutions

// XLA's cudnn_fused_conv_rewriter turns F16 max(conv + bias, 0) into one cudnnConvolutionBiasActivationForward call.
// Upstream TF before 2.4 predates Ampere (TF 2.4.0 release notes: first release built for CUDA 11 / cuDNN 8; a TF 2.3
// XLA log on the A100: 'Unknown compute capability (8, 0) .Defaulting to telling LLVM that we're compiling for
// sm_75'), and Lambda's TF 2.3 XLA AMP AlexNet / VGG-16 inference on the A100 ran at its plain-TF FP32 rate (17,696 /
// 1,348 against 18,920 / 1,309 images/s) while plain TF 2.3 AMP ran 2.1-2.2x faster: the fused half convolutions ran
// on CUDA cores. Backward convolutions, convolutions with a batch norm before the ReLU, NVIDIA's TF 1.15 XLA builds,
// TF >= 2.4 and pre-Ampere GPUs keep their tensor cores.
TEST(XlaFusedHalfConv, Tf23XlaRunsFusedHalfConvReluOffTheA100TensorCores) {
  const RuntimeProfile xla = find_runtime("tensorflow-xla");
  const RuntimeProfile tf23 = at_version(xla, "2.3");
  const RuntimeProfile tf24 = at_version(xla, "2.4");
  EXPECT_DOUBLE_EQ(tf23.fused_conv_half_cuda_cores_from_sm, 80);
  EXPECT_DOUBLE_EQ(tf24.fused_conv_half_cuda_cores_from_sm, 0);
  EXPECT_DOUBLE_EQ(at_version(xla, "1.15.4").fused_conv_half_cuda_cores_from_sm, 0);
  EXPECT_DOUBLE_EQ(at_version(find_runtime("tensorflow"), "2.3").fused_conv_half_cuda_cores_from_sm, 0);
  const Graph g = conv_bias_relu(3, true);
  const KernelCost slow = conv_kernel_cost(g, "a100-sxm4-40gb", "amp", tf23, Phase::kForward, true);
  const KernelCost fast = conv_kernel_cost(g, "a100-sxm4-40gb", "amp", tf24, Phase::kForward, true);
  // 19.5 FP32 against 312 FP16 tensor TFLOPS on paper: at least twice as slow whatever the algorithm.
  EXPECT_GT(slow.time_us, 2.0 * fast.time_us);
  // The half tensors are still what it reads and writes.
  EXPECT_LE(slow.bytes, 1.5 * fast.bytes);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "a100-sxm4-40gb", "amp", tf23, Phase::kBackward, true).time_us,
                   conv_kernel_cost(g, "a100-sxm4-40gb", "amp", tf24, Phase::kBackward, true).time_us);
}

// The key is an SM version (TF 2.3's XLA on sm_80 and later) or 0: a [[version]] rule that sets it takes the top-level
// key's check, so a compute capability written as 8.0 or 7.5 is refused with the key named, not read as "every GPU".
TEST(XlaFusedHalfConv, AVersionRuleTakesTheTopLevelKeysSmCheck) {
  namespace fs = std::filesystem;
  const fs::path shipped = fs::path(PERFCAST_SOURCE_DIR) / "data" / "runtimes" / "tensorflow-xla.toml";
  std::ifstream in(shipped);
  std::stringstream text;
  text << in.rdbuf();
  const fs::path dir = fs::temp_directory_path() / "perfcast_sm_from_rule_test";
  fs::create_directories(dir);
  const auto load_error = [&](const std::string& name, const std::string& head, const std::string& tail) {
    const fs::path file = dir / name;
    std::ofstream(file) << head << text.str() << tail;
    try {
      load_runtime(file);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string rule = "\n[[version]]\nfrom = \"1.0\"\nfused_conv_half_cuda_cores_from_sm = ";
  for (const char* bad : {"7.5", "8", "1000"}) {
    const std::string top = load_error("top.toml", std::string("fused_conv_half_cuda_cores_from_sm = ") + bad + "\n", "");
    const std::string in_rule = load_error("rule.toml", "", rule + bad + "\n");
    EXPECT_NE(top.find("'fused_conv_half_cuda_cores_from_sm' must be 0 (never) or an SM version like 80"), std::string::npos) << top;
    EXPECT_NE(in_rule.find("'version.fused_conv_half_cuda_cores_from_sm' must be 0 (never) or an SM version like 80"),
              std::string::npos)
        << bad << ": " << in_rule;
    EXPECT_EQ(in_rule.find('\n'), std::string::npos) << in_rule;  // one line
  }
  EXPECT_EQ(load_error("ok.toml", "", rule + "86\n"), "");
  EXPECT_EQ(load_error("zero.toml", "", rule + "0\n"), "");
  fs::remove_all(dir);
}

TEST(XlaFusedHalfConv, BatchNormBeforeTheReluTuringAndOlderXlaKeepTensorCores) {
  const RuntimeProfile xla = find_runtime("tensorflow-xla");
  const RuntimeProfile tf23 = at_version(xla, "2.3");
  const RuntimeProfile tf24 = at_version(xla, "2.4");
  const Graph bn = conv_bn_relu();
  EXPECT_DOUBLE_EQ(conv_kernel_cost(bn, "a100-sxm4-40gb", "amp", tf23, Phase::kForward, true).time_us,
                   conv_kernel_cost(bn, "a100-sxm4-40gb", "amp", tf24, Phase::kForward, true).time_us);
  const Graph g = conv_bias_relu(3, true);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "rtx-2080-ti", "amp", tf23, Phase::kForward, true).time_us,
                   conv_kernel_cost(g, "rtx-2080-ti", "amp", tf24, Phase::kForward, true).time_us);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "a100-sxm4-40gb", "amp", at_version(xla, "1.15.4"), Phase::kForward, true).time_us,
                   conv_kernel_cost(g, "a100-sxm4-40gb", "amp", tf24, Phase::kForward, true).time_us);
}

// ---------------------------------------------------------------- 6. XLA pads an RGB input layer for the tensor cores

// XLA's CudnnPadForConvolutions / CudnnConvPadForTensorCores (tensorflow/tensorflow@0c45f4f0 and @0b6b491d,
// TryResolvePaddedShapesForTensorCore): on Volta and later an F16 convolution with 3 input features and 32 or 64
// output features has its input and filter zero-padded to 4 features, forward and weight gradient alike, but a
// kForwardActivation convolution (bias + ReLU fused in by cudnn_fused_conv_rewriter) is skipped. The switch ships
// off (tensorflow-xla.toml); these tests turn it on.
Graph rgb_stem(bool bias_relu, std::int64_t out_channels) {
  GraphBuilder b("rgb-stem", 32);
  const Tensor x = b.input({3, 224, 224});
  if (bias_relu) {
    const Tensor c = b.conv(x, out_channels, {3}, {1}, {1}, {1}, 1, true, "conv");
    b.relu(c, true, "relu");
  } else {
    const Tensor c = b.conv(x, out_channels, {7}, {2}, {3}, {1}, 1, false, "conv");
    const Tensor n = b.batch_norm(c, "bn");
    b.relu(n, true, "relu");
  }
  return b.finish();
}

TEST(XlaRgbConvPad, StemBeforeABatchNormRunsPaddedOnTensorCoresBothWays) {
  RuntimeProfile off = find_runtime("tensorflow-xla");
  RuntimeProfile on = off;
  on.rgb_conv_pad_half = 4;
  const Graph g = rgb_stem(false, 64);
  const KernelCost fwd_off = conv_kernel_cost(g, "rtx-2080-ti", "amp", off, Phase::kForward, true);
  const KernelCost fwd_on = conv_kernel_cost(g, "rtx-2080-ti", "amp", on, Phase::kForward, true);
  // Off the layer runs on CUDA cores in FP32 math; on, on the tensor pipe over 4 channels, after one pad kernel.
  EXPECT_LT(fwd_on.time_us, fwd_off.time_us);
  EXPECT_DOUBLE_EQ(fwd_on.launches, fwd_off.launches + 1);
  const KernelCost bwd_off = conv_kernel_cost(g, "rtx-2080-ti", "amp", off, Phase::kBackward, true);
  const KernelCost bwd_on = conv_kernel_cost(g, "rtx-2080-ti", "amp", on, Phase::kBackward, true);
  EXPECT_LT(bwd_on.time_us, bwd_off.time_us);
  EXPECT_DOUBLE_EQ(bwd_on.launches, bwd_off.launches);  // the forward pad's output is reused
}

TEST(XlaRgbConvPad, FusedBiasReluStemKeepsItsForwardButPadsItsWeightGradient) {
  RuntimeProfile off = find_runtime("tensorflow-xla");
  RuntimeProfile on = off;
  on.rgb_conv_pad_half = 4;
  const Graph g = rgb_stem(true, 64);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "rtx-2080-ti", "amp", on, Phase::kForward, true).time_us,
                   conv_kernel_cost(g, "rtx-2080-ti", "amp", off, Phase::kForward, true).time_us);
  const KernelCost bwd_off = conv_kernel_cost(g, "rtx-2080-ti", "amp", off, Phase::kBackward, true);
  const KernelCost bwd_on = conv_kernel_cost(g, "rtx-2080-ti", "amp", on, Phase::kBackward, true);
  EXPECT_LT(bwd_on.time_us, bwd_off.time_us);
  EXPECT_DOUBLE_EQ(bwd_on.launches, bwd_off.launches + 1);  // the pad runs before the weight gradient
}

TEST(XlaRgbConvPad, OtherOutputWidthsAndFp32AreNotPadded) {
  RuntimeProfile off = find_runtime("tensorflow-xla");
  RuntimeProfile on = off;
  on.rgb_conv_pad_half = 4;
  // 3 -> 96 would need 8 channels, a 2.67x larger input: over XLA's 1.35x limit, so no padding.
  const Graph wide = rgb_stem(false, 96);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(wide, "rtx-2080-ti", "amp", on, Phase::kForward, true).time_us,
                   conv_kernel_cost(wide, "rtx-2080-ti", "amp", off, Phase::kForward, true).time_us);
  const Graph g = rgb_stem(false, 32);
  EXPECT_DOUBLE_EQ(conv_kernel_cost(g, "rtx-2080-ti", "fp32", on, Phase::kForward, false).time_us,
                   conv_kernel_cost(g, "rtx-2080-ti", "fp32", off, Phase::kForward, false).time_us);
  EXPECT_DOUBLE_EQ(find_runtime("tensorflow").rgb_conv_pad_half, 0);
}

}  // namespace
}  // namespace perfcast
