// LayerNorm's backward in eager PyTorch training, checked against the H200 device session's profile of Hugging Face
// BertForPreTraining BERT-base under torch.autocast (data/device_sessions/2026-12-04-h200/kernels_main.txt, PyTorch
// 2.11; 26 LayerNorms a step, 78 launches of each kernel in 3 steps): GammaBetaBackwardCUDAKernelTemplate<float,
// float, ...> averaged 43.419 us at b16 s512 (M = 8192 rows of N = 768) and 16.441 us at b32 s128 (M = 4096);
// layer_norm_grad_input_kernel_vectorized 22.267 and 10.741 us.
#include <gtest/gtest.h>

#include <string>

#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "cost/row_kernels.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

Graph layer_norm_graph(int batch, int seq, int hidden) {
  GraphBuilder b("ln", batch);
  const Tensor x = b.input({seq, hidden});
  b.layer_norm(x, "ln");
  return b.finish();
}

KernelCost norm_backward(const std::string& gpu, const std::string& precision, int batch, int seq, int hidden,
                         const std::string& runtime_id = "pytorch") {
  const DeviceSpec device = find_gpu(gpu);
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const RuntimeProfile runtime = find_runtime(runtime_id);
  const PrecisionPlan plan = resolve_precision(precision, device, arch, runtime, "", true);
  const CostContext ctx{kernels, runtime, plan, true};
  const Graph g = layer_norm_graph(batch, seq, hidden);
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kNorm) return cost_op(g.ops, i, Phase::kBackward, ctx).cost;
  ADD_FAILURE() << "no LayerNorm in the graph";
  return {};
}

// The session's two shapes: both kernels together, within 20% of the traced 43.419 + 22.267 us and 16.441 +
// 10.741 us (the gamma/beta kernel's step rate comes from the block softmax's fitted step, not from these rows).
TEST(LayerNormGrad, EagerPyTorchBackwardMatchesTheH200BertProfile) {
  const KernelCost s512 = norm_backward("h200-sxm-141gb", "amp", 16, 512, 768);
  const KernelCost s128 = norm_backward("h200-sxm-141gb", "amp", 32, 128, 768);
  EXPECT_DOUBLE_EQ(s512.launches, 2.0);
  EXPECT_NEAR(s512.time_us / (43.419 + 22.267), 1.0, 0.2);
  EXPECT_NEAR(s128.time_us / (16.441 + 10.741), 1.0, 0.2);
}

// ceil(768 / 32) = 24 CTAs on 132 SMs: the column reduction's time follows its loop over the rows, not DRAM, so
// doubling the rows doubles it, and the traced s512 kernel took 2.6x the s128 one for 2x the rows.
TEST(LayerNormGrad, FewColumnCtasLoopOverTheRows) {
  const RowKernelConstants& rk = row_kernel_constants();
  EXPECT_DOUBLE_EQ(rk.gamma_beta_block_x, 32.0);
  EXPECT_DOUBLE_EQ(rk.gamma_beta_max_threads_y * rk.gamma_beta_rows_per_thread, 256.0);  // rows_per_block_y
  const double m8k = norm_backward("h200-sxm-141gb", "amp", 16, 512, 768).time_us;
  const double m16k = norm_backward("h200-sxm-141gb", "amp", 32, 512, 768).time_us;
  EXPECT_GT(m16k / m8k, 1.8);
  // A runtime that fuses its norms (no aten kernels) streams the same backward at DRAM rate: well under it.
  EXPECT_LT(norm_backward("h200-sxm-141gb", "amp", 16, 512, 768, "pytorch-compile").time_us, 0.8 * m8k);
}

// Past 65536 rows with N / 32 under half the SMs, LaunchGammaBetaBackwardCUDAKernel splits the rows over many CTAs
// (partial sums, then .sum(0)): twice the rows of the last looped shape take less than twice its time.
TEST(LayerNormGrad, ManyRowsSplitOverCtasAndStream) {
  const double looped = norm_backward("h200-sxm-141gb", "amp", 128, 512, 768).time_us;  // M = 65536
  const double split = norm_backward("h200-sxm-141gb", "amp", 256, 512, 768).time_us;   // M = 131072
  EXPECT_LT(split, 1.5 * looped);
}

}  // namespace
}  // namespace perfcast
