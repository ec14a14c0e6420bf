// A linear layer's bias gradient in eager PyTorch training, checked against the kernels PyTorch launches:
// autograd's formula for addmm (tools/autograd/derivatives.yaml, `self: maybe_multiply(grad, beta)`) and for the
// add_ of F.linear's matmul + bias path hands the broadcast bias a gradient of dY's shape, which the engine sums
// to [out_features] with one reduce kernel. The H200 device session (data/device_sessions/2026-12-04-h200/
// kernels_main.txt) profiled Hugging Face BertForPreTraining BERT-base training: 222
// at::native::reduce_kernel<..., ReduceOp<c10::Half, ...>> launches in 3 steps, 74 a step.
#include <gtest/gtest.h>

#include <string>

#include "analysis/predict.h"
#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// Backward cost of the one linear layer of `g` on an A100 under PyTorch with the switch set as given.
KernelCost linear_backward(const Graph& g, bool bias_grad_kernel) {
  const DeviceSpec device = find_gpu("a100-sxm4-40gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  RuntimeProfile runtime = find_runtime("pytorch");
  runtime.linear_bias_grad_kernel = bias_grad_kernel;
  const PrecisionPlan plan = resolve_precision("fp16", device, arch, runtime, "", true);
  const CostContext ctx{kernels, runtime, plan, true};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == OpKind::kMatmul) return cost_op(g.ops, i, Phase::kBackward, ctx).cost;
  ADD_FAILURE() << "no linear layer in the graph";
  return {};
}

// BERT-large's FFN up-projection over one SQuAD batch: 32 x 384 tokens, 1024 -> 4096.
Graph ffn_up(bool bias) {
  GraphBuilder b("ffn-up", 32);
  const Tensor x = b.input({384, 1024});
  b.linear(x, 4096, bias);
  return b.finish();
}

TEST(LinearBiasGrad, EagerPyTorchReducesTheGradientOnceForEachBias) {
  EXPECT_TRUE(find_runtime("pytorch").linear_bias_grad_kernel);
  const KernelCost with = linear_backward(ffn_up(true), true);
  const KernelCost without = linear_backward(ffn_up(true), false);
  // One reduce kernel beside the weight- and input-gradient GEMMs.
  EXPECT_DOUBLE_EQ(with.launches - without.launches, 1.0);
  // It reads dY once (FP16, the layer's output shape) and writes one value per output feature (the FP32 master's
  // gradient is the parameter's width under this plan).
  const PrecisionPlan plan = resolve_precision("fp16", find_gpu("a100-sxm4-40gb"),
                                               architecture_of(find_gpu("a100-sxm4-40gb")), find_runtime("pytorch"), "",
                                               true);
  const double dy = 32.0 * 384 * 4096 * 2;
  EXPECT_NEAR(with.bytes - without.bytes, dy + 4096 * plan.bytes.weight, 1.0);
  EXPECT_GT(with.time_us, without.time_us);
  // A layer without a bias has nothing to reduce.
  EXPECT_DOUBLE_EQ(linear_backward(ffn_up(false), true).launches, without.launches);
}

// The device session's 74 reduce kernels a step against the zoo's BertForPreTraining BERT-base: 6 biased linear
// layers in each of 12 layers (query, key, value, attention output, FFN up and down) and the heads' few.
TEST(LinearBiasGrad, BertBaseHasAboutAsManyBiasesAsTheH200ProfileReduced) {
  const Graph g = resolve_model("bert_base", {}).build({32, 128});
  int biased = 0;
  for (const auto& op : g.ops)
    if (op.kind == OpKind::kMatmul && op.mm.bias) ++biased;
  EXPECT_GE(biased, 72);
  EXPECT_LE(biased, 76);
}

}  // namespace
}  // namespace perfcast
