// PyTorch autocast's casts and softmax in the score chain of eager attention, checked against the H200 device
// session's profile of Hugging Face BertForPreTraining BERT-base AMP training (data/device_sessions/2026-12-04-h200/
// kernels_main.txt, PyTorch 2.11) and ATen's sources: softmax runs under autocast's fp32_set_opt_dtype policy
// (softmax_warp_forward<c10::Half, float, float> and softmax_warp_backward<float, c10::Half, float>, 12 of each a
// step), and casts up to FP32 run ATen's dynamic-cast copy (unrolled_elementwise_kernel<direct_copy_kernel_cuda ...,
// LoadWithCast<1>, StoreWithCast<1>>) while casts down run the vectorized float16_copy_kernel_cuda.
#include <gtest/gtest.h>

#include "cost/attention_passes.h"
#include "cost/cost_constants.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

AttentionGeometry bert_scores() {
  AttentionGeometry a;
  a.batch = 16;
  a.heads = 12;
  a.kv_heads = 12;
  a.q_len = 512;
  a.kv_len = 512;
  a.head_dim = 64;
  a.dropout = true;
  return a;
}

ScorePasses passes(const std::string& runtime_id, Phase phase) {
  const DeviceSpec device = find_gpu("h200-sxm-141gb");
  const RuntimeProfile runtime = find_runtime(runtime_id);
  const PrecisionPlan plan = resolve_precision("amp", device, architecture_of(device), runtime, "", true);
  return score_passes(bert_scores(), phase, runtime, plan, true);
}

// Forward: scale, mask, softmax (half in, FP32 out), dropout, the cast down for the PV GEMM: no cast up.
// Backward: the PV cast's gradient cast up, dropout's backward, softmax's backward (ATen's product of the FP32
// gradient and probabilities, BinaryFunctor<float, float, float> in the profile, then softmax_warp_backward: FP32 in,
// half out), the scale's.
TEST(AutocastCopies, PyTorchSoftmaxReadsTheHalfScoresItself) {
  const ScorePasses fwd = passes("pytorch", Phase::kForward);
  const ScorePasses bwd = passes("pytorch", Phase::kBackward);
  EXPECT_DOUBLE_EQ(fwd.kernels, 5.0);
  EXPECT_DOUBLE_EQ(fwd.up_cast_kernels, 0.0);
  EXPECT_DOUBLE_EQ(bwd.kernels, 5.0);
  EXPECT_DOUBLE_EQ(bwd.up_cast_kernels, 1.0);
  EXPECT_DOUBLE_EQ(bwd.up_cast_bytes_per_elem, 2.0 + 4.0);  // half gradient in, FP32 out
  // Softmax forward reads 2 and writes 4 bytes an element; backward reads 4 + 4 and writes 2.
  EXPECT_DOUBLE_EQ(fwd.bytes_per_elem, 4.0 + 4.0 + (2.0 + 4.0) + (2 * 4.0 + 1.0) + (4.0 + 2.0));
  EXPECT_DOUBLE_EQ(bwd.bytes_per_elem, (2.0 + 4.0) + (2 * 4.0 + 1.0) + 3 * 4.0 + (2 * 4.0 + 2.0) + 4.0);
}

// Paddle's AMP black list casts the scores to FP32 before its softmax (its own cast op), which stays counted.
TEST(AutocastCopies, AFrameworkThatCastsBeforeSoftmaxKeepsTheCasts) {
  const ScorePasses fwd = passes("paddle", Phase::kForward);
  EXPECT_DOUBLE_EQ(fwd.kernels, 6.0);
  EXPECT_DOUBLE_EQ(fwd.up_cast_kernels, 1.0);
}

// The profile's two cast classes move about the same bytes a step (each forward cast has a backward cast of the
// same tensor the other way), so their time ratio is their rate ratio: float16_copy 2.990 ms against the dynamic-
// cast copies' 4.858 ms at b32 s128, 6.957 against 12.347 ms at b16 s512 (3 steps each).
TEST(AutocastCopies, CastsUpRunAtTheProfilesDynamicCastRate) {
  const double measured = (2.990 / 4.858 + 6.957 / 12.347) / 2.0;
  EXPECT_NEAR(cost_constants().dynamic_cast_copy_efficiency, measured, 0.01);
}

}  // namespace
}  // namespace perfcast
