// Two kernel classes of eager PyTorch attention, checked against the H200 device session's profile of Hugging Face
// BertForPreTraining BERT-base under torch.autocast (data/device_sessions/2026-12-04-h200/kernels_main.txt, PyTorch
// 2.11, 3 steps a table) and ATen's sources:
// - softmax's backward multiplies the gradient by the probabilities in a kernel of its own (aten/src/ATen/native/
//   cuda/SoftMax.cu softmax_backward_cuda_out: `tmp = grad * output`): vectorized_elementwise_kernel<4,
//   BinaryFunctor<float, float, float, ...>>, 42 launches in 3 steps (12 score-sized a step plus the loss scaler's
//   two one-element muls), 5.032 ms at b16 s512 and 0.649 ms (42 x 15.451 us) at b32 s128;
// - the head-layout copies read permuted views, so TensorIterator runs them unvectorized (CUDALoops.cuh
//   gpu_kernel_impl_nocast -> launch_legacy_kernel<128, 4>): elementwise_kernel<128, 4, gpu_kernel_impl_nocast<...>>,
//   288 launches in 3 steps (8 a layer), 24.897 us each at b16 s512 and 13.295 us at b32 s128, a quarter of the
//   streaming rate: about one element per SM per clock ([memory] strided_copy_elements_per_sm_clk, sm_90 only).
#include <gtest/gtest.h>

#include <string>

#include "cost/attention_passes.h"
#include "cost/cost_constants.h"
#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// BERT-base's attention core at this batch and sequence length (12 heads of 64).
Graph bert_attention(int batch, int seq) {
  GraphBuilder b("attn", batch);
  const Tensor q = b.input({seq, 768});
  const Tensor k = b.input({seq, 768});
  const Tensor v = b.input({seq, 768});
  b.attention(q, k, v, 12, 12, /*causal=*/false, /*fused=*/false, "core", /*dropout=*/true, /*head_copies=*/true);
  return b.finish();
}

// One phase of the attention core on `gpu` under `precision` with the pytorch profile as `edit` leaves it.
template <typename Edit>
KernelCost core(const std::string& gpu, const std::string& precision, int batch, int seq, Phase phase, Edit edit) {
  const DeviceSpec device = find_gpu(gpu);
  const ArchitectureProfile arch = architecture_for(device);  // with the card's measured efficiencies, as predict
  const KernelCostModel kernels(device, arch);
  RuntimeProfile runtime = find_runtime("pytorch");
  runtime.fused_attention = false;  // --attention eager
  edit(runtime);
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", true);
  const CostContext ctx{kernels, runtime, plan, true};
  const Graph g = bert_attention(batch, seq);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kAttention) return cost_op(g.ops, i, phase, ctx).cost;
  ADD_FAILURE() << "no attention op in the graph";
  return {};
}

const auto kAsShipped = [](RuntimeProfile&) {};

TEST(SoftmaxGradProduct, EagerPyTorchRunsOneMorePassInBackwardOnly) {
  EXPECT_TRUE(find_runtime("pytorch").softmax_grad_product_kernel);
  const auto off = [](RuntimeProfile& r) { r.softmax_grad_product_kernel = false; };
  for (const char* precision : {"amp", "fp32"}) {
    const KernelCost with = core("h200-sxm-141gb", precision, 16, 512, Phase::kBackward, kAsShipped);
    const KernelCost without = core("h200-sxm-141gb", precision, 16, 512, Phase::kBackward, off);
    EXPECT_DOUBLE_EQ(with.launches - without.launches, 1.0) << precision;
    // Gradient and probabilities in, their product out, all FP32 (autocast's softmax writes FP32 probabilities).
    EXPECT_DOUBLE_EQ(with.bytes - without.bytes, 16.0 * 12 * 512 * 512 * 12.0) << precision;
    EXPECT_DOUBLE_EQ(core("h200-sxm-141gb", precision, 16, 512, Phase::kForward, kAsShipped).time_us,
                     core("h200-sxm-141gb", precision, 16, 512, Phase::kForward, off).time_us);
  }
}

// The profile's class, less the loss scaler's two one-element muls (taken at the ~4 us of a tiny kernel), per layer:
// (5.032 ms / 3 - 2 x 4 us) / 12 = 139 us at b16 s512, (0.649 ms / 3 - 8 us) / 12 = 17.4 us at b32 s128.
TEST(SoftmaxGradProduct, TheAddedPassTakesWhatTheH200ProfileMeasured) {
  const auto off = [](RuntimeProfile& r) { r.softmax_grad_product_kernel = false; };
  const double s512 = core("h200-sxm-141gb", "amp", 16, 512, Phase::kBackward, kAsShipped).time_us -
                      core("h200-sxm-141gb", "amp", 16, 512, Phase::kBackward, off).time_us;
  const double s128 = core("h200-sxm-141gb", "amp", 32, 128, Phase::kBackward, kAsShipped).time_us -
                      core("h200-sxm-141gb", "amp", 32, 128, Phase::kBackward, off).time_us;
  EXPECT_NEAR(s512 / ((5032.0 / 3 - 8.0) / 12), 1.0, 0.15);
  EXPECT_NEAR(s128 / ((649.0 / 3 - 8.0) / 12), 1.0, 0.25);
}

// The head copies' share of one phase of the core: with the pytorch profile as shipped less without its copies.
double copies_us(const std::string& gpu, const std::string& precision, int batch, int seq) {
  const auto no_copies = [](RuntimeProfile& r) { r.attention_head_copies = false; };
  return core(gpu, precision, batch, seq, Phase::kForward, kAsShipped).time_us -
         core(gpu, precision, batch, seq, Phase::kForward, no_copies).time_us;
}

// The H200 profile's per-copy times (4 copies a phase): 24.897 us at b16 s512, 13.295 us at b32 s128.
TEST(StridedCopy, TheH200CopiesTakeWhatItsProfileMeasured) {
  EXPECT_NEAR(copies_us("h200-sxm-141gb", "amp", 16, 512) / 4 / 24.897, 1.0, 0.10);
  EXPECT_NEAR(copies_us("h200-sxm-141gb", "amp", 32, 128) / 4 / 13.295, 1.0, 0.10);
}

// The copy's rate is per element: an FP32 copy of the same tensor takes as long as the half one (the legacy
// kernel copies each element alone whatever its size), while DRAM would take twice as long.
TEST(StridedCopy, FourByteCopiesRunAtTheSameElementRate) {
  EXPECT_NEAR(copies_us("h200-sxm-141gb", "fp32", 16, 512) / copies_us("h200-sxm-141gb", "amp", 16, 512), 1.0, 1e-9);
}

// The same architecture with less DRAM bandwidth: the H100 PCIe (114 SMs at 1755 MHz, 2.0 TB/s) copies at its SMs'
// rate, 132 x 1980 / (114 x 1755) = 1.31 times the H200's time, not at a share of its bandwidth (2.4 x the H200's).
TEST(StridedCopy, BoardsOfOneArchitectureCopyAtTheirSmsRate) {
  const double ratio = copies_us("h100-pcie-80gb", "amp", 16, 512) / copies_us("h200-sxm-141gb", "amp", 16, 512);
  EXPECT_NEAR(ratio, 132.0 * 1980 / (114.0 * 1755), 0.01);
}

// No other architecture has a measured strided copy: the A100's copies keep the streaming rate.
TEST(StridedCopy, ArchitecturesWithoutAMeasurementStreamTheCopies) {
  EXPECT_EQ(cost_constants().strided_copy_elements_per_sm_clk.count(80), 0u);
  const DeviceSpec a100 = find_gpu("a100-sxm4-40gb");
  const KernelCostModel kernels(a100, architecture_for(a100));
  const double streamed = kernels.streaming(0, 4 * 2.0 * 16 * 512 * 768 * 2, 4).time_us;
  EXPECT_NEAR(copies_us("a100-sxm4-40gb", "amp", 16, 512) / streamed, 1.0, 1e-9);
}

}  // namespace
}  // namespace perfcast
