#include "analysis/predict.h"

#include "core/error.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "import/zoo/zoo.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

namespace {

OptimizerKind optimizer_for(const PredictRequest& r, const ZooModel& model) {
  if (!r.optimizer) return model.sequence ? OptimizerKind::kAdamW : OptimizerKind::kSgdMomentum;
  const std::string& o = *r.optimizer;
  if (o == "sgd") return OptimizerKind::kSgdMomentum;
  if (o == "adam") return OptimizerKind::kAdam;
  if (o == "adamw") return OptimizerKind::kAdamW;
  if (o == "lamb") return OptimizerKind::kLamb;
  throw_unknown("optimizer", o, {"sgd", "adam", "adamw", "lamb"});
}

struct Evaluated {
  Graph graph;
  StepCost step;
  MemoryBreakdown memory;
};

Evaluated evaluate(const ZooModel& model, const PredictRequest& r, const DeviceSpec& device,
                   const ArchitectureProfile& arch, const RuntimeProfile& runtime, const PrecisionPlan& plan,
                   OptimizerKind optimizer) {
  const bool training = r.mode == "train";
  Evaluated e{model.build(ModelOptions{r.batch, r.seq}), {}, {}};
  const KernelCostModel kernels(device, arch);
  const CostContext ctx{kernels, runtime, plan, training};
  e.step = schedule_step(e.graph, ctx, StepOptions{training, r.optimizer_step, optimizer});
  e.memory = estimate_memory(e.graph, plan, runtime, device, training, r.optimizer_step, optimizer);
  return e;
}

}  // namespace

void check_request(const PredictRequest& r) {
  if (r.mode != "train" && r.mode != "infer") throw_unknown("mode", r.mode, {"train", "infer"});
  if (r.batch < 0) throw InputError("batch must be a positive integer or 'max', got " + std::to_string(r.batch));
  if (r.seq < 0) throw InputError("seq must be a positive integer, got " + std::to_string(r.seq));
  // Beyond this no GPU holds even the input tensor; it also keeps shape products inside 64 bits.
  constexpr std::int64_t kMaxBatch = 1 << 24, kMaxSeq = 1 << 22;
  if (r.batch > kMaxBatch) throw InputError("batch " + std::to_string(r.batch) + " is beyond any GPU (limit " + std::to_string(kMaxBatch) + ")");
  if (r.seq > kMaxSeq) throw InputError("seq " + std::to_string(r.seq) + " is beyond any GPU (limit " + std::to_string(kMaxSeq) + ")");
}

Prediction predict(const PredictRequest& request) {
  check_request(request);
  PredictRequest r = request;
  const DeviceSpec device = find_gpu(r.gpu);
  const ZooModel& model = find_zoo_model(r.model);
  const RuntimeProfile& runtime = find_runtime(r.runtime);
  const ArchitectureProfile& arch = architecture_of(device);
  const bool training = r.mode == "train";
  const PrecisionPlan plan = resolve_precision(r.precision, device, arch, runtime, training);
  const OptimizerKind optimizer = optimizer_for(r, model);
  if (model.sequence && r.seq == 0) r.seq = model.default_seq;
  if (!model.sequence && r.seq != 0)
    throw InputError("--seq applies to sequence models; '" + r.model + "' takes fixed-size inputs");

  if (r.batch == 0) {
    // Largest batch that fits: double until it does not, then bisect.
    std::int64_t lo = 0, hi = 1;
    auto fits = [&](std::int64_t b) {
      PredictRequest t = r;
      t.batch = b;
      return estimate_memory(model.build(ModelOptions{b, r.seq}), plan, runtime, device, training, r.optimizer_step,
                             optimizer)
          .fits;
    };
    while (hi <= (1 << 20) && fits(hi)) {
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1) {
      const std::int64_t mid = (lo + hi) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    if (lo == 0) throw UnsupportedError("model '" + r.model + "' does not fit on " + device.id + " even at batch 1");
    r.batch = lo;
  }

  Evaluated e = evaluate(model, r, device, arch, runtime, plan, optimizer);
  Prediction p;
  p.request = r;
  p.device = device;
  p.model_description = model.description;
  p.sequence = model.sequence;
  p.params = e.graph.params();
  p.precision_note = plan.note;
  p.step = std::move(e.step);
  p.memory = e.memory;
  p.flops_per_sample = p.step.flops / static_cast<double>(r.batch);
  p.samples_per_s = static_cast<double>(r.batch) / (p.step.step_us * 1e-6);
  if (model.sequence) p.tokens_per_s = p.samples_per_s * static_cast<double>(r.seq);

  // Attribute step time: kernel time by its bound, gaps to latency; host-bound excess to the host.
  for (const auto& e2 : p.step.entries) {
    p.bound_us[static_cast<int>(e2.cost.bound)] += e2.cost.time_us;
    p.bound_us[static_cast<int>(Bound::kLatency)] += e2.cost.launches * runtime.gpu_gap_per_kernel_us;
  }
  if (p.step.host_us > p.step.gpu_us) p.bound_us[static_cast<int>(Bound::kHost)] = p.step.host_us - p.step.gpu_us;
  int best = 0;
  for (int i = 1; i < static_cast<int>(Bound::kCount); ++i)
    if (p.bound_us[i] > p.bound_us[best]) best = i;
  p.primary = p.step.host_us > p.step.gpu_us ? Bound::kHost : static_cast<Bound>(best);
  return p;
}

}  // namespace perfcast
