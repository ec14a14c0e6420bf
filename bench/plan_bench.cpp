// `perfcast plan` over the whole price catalog and 1 to 64 GPUs (issue target: under one second), and the
// scale-out of one prediction to many GPU counts that plan repeats for every instance type.
#include <benchmark/benchmark.h>

#include "analysis/plan.h"
#include "import/model_source.h"
#include "schedule/data_parallel.h"

namespace {

using namespace perfcast;

// The whole plan: one single-GPU prediction per GPU type in the catalog, then every (instance type, count) up
// to 64 GPUs with its scale-out, time, cost and energy. ResNet-50, PyTorch DDP, AMP, 90 ImageNet epochs.
void BM_PlanWholeCatalog64Gpus(benchmark::State& state) {
  PlanRequest r;
  r.base.model = "resnet50";
  r.base.precision = state.range(0) ? "best" : "amp";
  r.deadline_hours = 24;
  r.size.epochs = 90;
  r.max_gpus = 64;
  const PriceCatalog& catalog = default_price_catalog();
  std::size_t options = 0;
  for (auto _ : state) {
    PlanResult res = plan(r, catalog);
    options = res.options.size();
    benchmark::DoNotOptimize(res);
  }
  state.counters["options"] = static_cast<double>(options);
  state.counters["instance_types"] = static_cast<double>(catalog.instances.size());
  state.SetItemsProcessed(state.iterations());  // plans
}
BENCHMARK(BM_PlanWholeCatalog64Gpus)->Arg(0)->Arg(1)->ArgName("best_precision")->Unit(benchmark::kMillisecond);

// One scale-out evaluation (buckets, collectives, overlap) of ResNet-152 under TensorFlow's per-tensor
// reduction on 8 GPUs x 8 nodes: the inner step of plan.
void BM_ScaleOutResNet152PerTensor(benchmark::State& state) {
  PredictRequest r;
  r.gpu = "v100-sxm2-16gb";
  r.model = "resnet152";
  r.runtime = "tensorflow";
  const Prediction p = predict(r);
  const Graph g = resolve_model("resnet152").build(ModelOptions{p.request.batch, 0});
  const GradientProfile prof = gradient_profile(p, g);
  const ReplicaStep one = replica_step(p);
  for (auto _ : state) {
    ScaleOutCost c = scale_out(p.device, one, prof, 8, 8, "nvlink", "ib-edr", DataParallelOptions{});
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScaleOutResNet152PerTensor)->Unit(benchmark::kMicrosecond);

}  // namespace
