// Training batch norm on NCHW tensors runs cuDNN's per-channel CUDNN_BATCHNORM_SPATIAL kernels
// (bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new, *_singleread): the expectations are the kernel times the H200
// session profiled (data/device_sessions/2026-12-04-h200/kernels_main.txt, ResNet-50 v1.5 AMP training at batch 256,
// 3 steps; PyTorch 2.11, cuDNN 9.19), not the model's own output. They are in sample: the per-CTA rate and latency
// were fitted (tools/fit_cudnn_nchw_bn.py) to these same nine kernel instances, so the tests guard the fit against
// regressions; nothing here checks the rate on another GPU (only other GPUs' end-to-end rows do).
#include <gtest/gtest.h>

#include <string>

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

PredictRequest resnet50_amp_h200(bool channels_last) {
  PredictRequest r;
  r.model = "resnet50_v1_5";
  r.gpu = "h200-sxm-141gb";
  r.mode = Mode::kTrain;
  r.precision = "amp";
  r.batch = 256;
  r.channels_last = channels_last;
  return r;
}

// Batch-norm time per step (forward and backward), ms; `name` limits it to one layer.
double norm_ms(const Prediction& p, const std::string& name = "") {
  double us = 0;
  for (const auto& e : p.step.entries)
    if (e.kind == OpKind::kNorm && (name.empty() || e.name == name)) us += e.cost.time_us;
  return us / 1e3;
}

// kernels_main.txt, NCHW section: bn_fw_tr_1C11* 22.629 + 9.736 + 7.144 + 2.741 + 1.323 ms and bn_bw_1C11*
// 40.310 + 21.206 + 13.773 + 2.204 ms over 3 steps = 40.4 ms per step; the channels-last section's
// batchnorm_*_nhwc_semiPersist kernels 16.809 + 12.354 + 7.337 + 4.693 ms = 13.7 ms per step.
TEST(CudnnNchwBatchNorm, H200ResNet50StepMatchesTheProfiledKernels) {
  const Prediction nchw = predict(resnet50_amp_h200(false));
  const Prediction nhwc = predict(resnet50_amp_h200(true));
  EXPECT_NEAR(norm_ms(nchw), 40.4, 0.15 * 40.4);
  // The per-channel kernels are the slow ones: about 3x the channels-last kernels' time for the same layers.
  EXPECT_GT(norm_ms(nchw) / norm_ms(nhwc), 2.3);
  EXPECT_LT(norm_ms(nchw) / norm_ms(nhwc), 4.0);
}

// The stem's batch norm (64 channels of 112x112) is the only layer that runs the <..., 512, ...> instances:
// bn_fw_tr_1C11_kernel_NCHW 2.381 ms and bn_bw_1C11_kernel_new 4.591 ms per call. With one CTA per channel only 64
// of the 132 SMs stream, at 0.5 TB/s of the H200's 4.8 TB/s.
TEST(CudnnNchwBatchNorm, H200StemWithFewChannelsIsChannelBound) {
  const Prediction nchw = predict(resnet50_amp_h200(false));
  EXPECT_NEAR(norm_ms(nchw, "conv1.bn"), 2.381 + 4.591, 0.2 * (2.381 + 4.591));
}

// Channels-last training takes cuDNN's SPATIAL_PERSISTENT NHWC kernels (PyTorch's getCudnnBatchNormMode), and BF16
// stays off cuDNN batch norm (Normalization.cpp _batch_norm_impl_index): neither pays the per-channel rate.
TEST(CudnnNchwBatchNorm, OnlyNchwCudnnBatchNormIsPerChannel) {
  PredictRequest r = resnet50_amp_h200(false);
  r.precision = "amp-bf16";
  const Prediction bf16 = predict(r);
  const Prediction nhwc = predict(resnet50_amp_h200(true));
  EXPECT_LT(norm_ms(bf16), 0.5 * 40.4);
  EXPECT_LT(norm_ms(nhwc), 0.5 * 40.4);
}

// Channels-last half training batch norm runs cuDNN's batchnorm_fwtr_nhwc_semiPersist<__half, float, __half, 512,
// 16, 5, 4, ...> and batchnorm_bwtr_nhwc_semiPersist<..., 512, 16, 3, 4, ...> (the H200 session's channels-last
// ResNet-50 profile, kernels_main.txt), the template of NVIDIA's open NHWC kernels (apex groupbn batch_norm.h:
// THREADS_PER_CTA 512, THREADS_PER_PIXEL 16, ELEMENTS_PER_LDG 4, so C_ELEMENTS_PER_CTA 64): a CTA spans 64 channels
// and threads past the tensor's channels load nothing. So a 16-channel tensor streams at a quarter of the rate of a
// 64-channel one of the same size, 96 channels at 96/128 of it; BF16 (PyTorch's own kernels) and FP32 layers are
// not on these kernels.
double bn_forward_us(std::int64_t channels, std::int64_t side, const std::string& precision, bool channels_last) {
  GraphBuilder b("bn", 256);
  const Tensor x = b.input({channels, side, side});
  b.batch_norm(x, "bn");
  const Graph g = b.finish();
  const DeviceSpec device = find_gpu("rtx-3090");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const RuntimeProfile& runtime = find_runtime("pytorch");
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", true);
  CostContext ctx{kernels, runtime, plan, true};
  ctx.channels_last = channels_last;
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kNorm) return cost_op(g.ops, i, Phase::kForward, ctx).cost.time_us;
  ADD_FAILURE() << "no batch norm";
  return 0;
}

TEST(CudnnNhwcBatchNorm, ChannelsBelowTheKernelsTileStreamAtTheirShare) {
  // 16 x 112 x 112 = 64 x 56 x 56 = 96 x 64 x 64 * 49/48 (the same bytes up to 2%); 128 x 39.6^2 likewise.
  const double c64 = bn_forward_us(64, 56, "amp", true);
  EXPECT_NEAR(bn_forward_us(16, 112, "amp", true) / c64, 4.0, 0.3);
  EXPECT_NEAR(bn_forward_us(96, 46, "amp", true) / c64, (96.0 * 46 * 46) / (64.0 * 56 * 56) * 128.0 / 96.0, 0.15);
  EXPECT_NEAR(bn_forward_us(128, 40, "amp", true) / c64, (128.0 * 40 * 40) / (64.0 * 56 * 56), 0.1);
}

TEST(CudnnNhwcBatchNorm, OnlyHalfChannelsLastCudnnBatchNormUsesTheTile) {
  // BF16 runs PyTorch's own channels-last kernels and FP32 is outside the half NHWC kernels: neither gets the 4x of
  // a 16-channel tensor in a 64-channel tile.
  for (const std::string precision : {"amp-bf16", "fp32"}) {
    const double ratio = bn_forward_us(16, 112, precision, true) / bn_forward_us(64, 56, precision, true);
    EXPECT_LT(ratio, 1.5) << precision;
  }
}

}  // namespace
}  // namespace perfcast
