// Loaded specs stay as loaded (src/README.md, "Specs stay specs" in the style guide): a request's version, switches
// and GPU change what it costs, never the catalog entries every later request reads. The accessors hand out
// const references, so the compiler holds most of this; these tests catch a const_cast or a copy written back.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/predict.h"
#include "cost/kernel_cost.h"
#include "cost/llm_kernels.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "device/cpu_catalog.h"
#include "device/host_profile.h"
#include "graph/builder.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

static_assert(std::is_same_v<decltype(find_runtime("")), const RuntimeProfile&>, "runtimes are handed out read-only");
static_assert(std::is_same_v<decltype(runtime_catalog()), const std::vector<RuntimeProfile>&>);
static_assert(std::is_same_v<decltype(gpu_catalog()), const std::vector<DeviceSpec>&>, "GPUs are handed out read-only");
static_assert(std::is_same_v<decltype(architecture_of(std::declval<const DeviceSpec&>())), const ArchitectureProfile&>);
static_assert(std::is_same_v<decltype(find_host("")), const HostProfile&>);
static_assert(std::is_same_v<decltype(find_dataset("")), const DatasetProfile&>);
static_assert(std::is_same_v<decltype(cpu_catalog()), const std::vector<CpuSpec>&>);

TEST(ImmutableSpecs, PredictionsLeaveTheRuntimeAndGpuCatalogsAsLoaded) {
  // tensorflow-xla carries [[version]] rules and an sm_80 entry of library_efficiency_by_sm: a request on an A100
  // at an old version with CUDA graphs and a power limit applies all of them, to its own copies only.
  const RuntimeProfile runtime_before = find_runtime("tensorflow-xla");
  const RuntimeProfile llm_runtime_before = find_runtime("pytorch");
  const DeviceSpec gpu_before = find_gpu("a100-sxm4-40gb");
  PredictRequest r;
  r.gpu = "a100-sxm4-40gb";
  r.model = "resnet50";
  r.runtime = "tensorflow-xla";
  r.runtime_version = "2.3";
  r.precision = "amp";
  r.batch = 64;
  r.cuda_graphs = true;
  r.power_limit_w = 300;
  const Prediction p = predict(r);
  EXPECT_EQ(p.request.runtime_version, "2.3");
  EXPECT_EQ(p.device.tdp_w, 300);  // the request's board limit is in the prediction's copy ...
  const DeviceSpec& gpu_after = find_gpu("a100-sxm4-40gb");
  EXPECT_EQ(gpu_after.tdp_w, gpu_before.tdp_w);  // ... not in the catalog
  EXPECT_TRUE(find_runtime("tensorflow-xla") == runtime_before);

  PredictRequest llm;
  llm.gpu = "a100-sxm4-80gb";
  llm.model = "llama-3-8b";
  llm.runtime = "pytorch";
  llm.mode = Mode::kDecode;
  llm.precision = "fp16";
  llm.batch = 4;
  llm.attention = "sdpa";  // sets the serving pass's fused attention for this request only
  predict(llm);
  EXPECT_TRUE(find_runtime("pytorch") == llm_runtime_before);
}

// The runtime's per-architecture library efficiency (tensorflow-xla: cuDNN/cuBLAS 8.0 on A100 at 0.8 of the
// measured kernels, data/runtimes/tensorflow-xla.toml) is one rule for every library GEMM: a language model's weight
// GEMM slows by the same factor as the same GEMM costed as a graph matmul.
TEST(ImmutableSpecs, LanguageModelGemmsTakeTheRuntimesPerArchitectureLibraryEfficiency) {
  const DeviceSpec device = find_gpu("a100-sxm4-80gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel km(device, arch);
  const RuntimeProfile& xla = find_runtime("tensorflow-xla");
  ASSERT_EQ(tensor_library_efficiency(xla, device.sm_version), 0.8);
  RuntimeProfile plain = xla;  // the same runtime without the entry
  plain.library_efficiency_by_sm.clear();
  const PrecisionPlan plan = resolve_precision("fp16", device, arch, xla, "", false);
  ASSERT_TRUE(is_tensor_pipe(plan.matmul_pipe));

  GraphBuilder g("gemm", 4096);
  g.linear(g.input({4096}), 4096);
  const Graph graph = g.finish();
  std::size_t index = 0;
  while (graph.ops[index].kind != OpKind::kMatmul) ++index;
  const auto graph_us = [&](const RuntimeProfile& rt) {
    return cost_op(graph.ops, index, Phase::kForward, CostContext{km, rt, plan, false}).cost.time_us;
  };
  const WeightPrecision weights = resolve_weight_precision("fp16");
  const LlmShape shape;
  const auto llm_us = [&](const RuntimeProfile& rt) {
    const LlmKernelContext c{device, arch, km, rt, weights, shape, plan, 2, plan.matmul_pipe, std::nullopt};
    double us = 0;
    for (const OpCost& k : weight_matmul_kernels(graph.ops[index], WeightFormat{"f16", 16}, 4096, 1, c))
      us += k.cost.time_us;
    return us;
  };
  const double graph_ratio = graph_us(xla) / graph_us(plain);
  EXPECT_GT(graph_ratio, 1.1) << "a 4096-cube fp16 GEMM is compute-bound on an A100: most of 1/0.8 shows";
  EXPECT_NEAR(llm_us(xla) / llm_us(plain), graph_ratio, 1e-9);
}

}  // namespace
}  // namespace perfcast
