// Training and inference on a CPU (data/cpus): the same graph as on a GPU, costed op by op on the cores
// (cost/cpu_cost.cpp) and scheduled as synchronous framework calls (schedule/cpu_step.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "analysis/predict.h"
#include "analysis/request_resolution.h"
#include "core/error.h"
#include "cost/cpu_cost.h"
#include "device/catalog.h"
#include "device/cpu_catalog.h"
#include "import/model_source.h"
#include "runtime/cpu_runtime.h"
#include "schedule/cpu_step.h"
#include "schedule/memory.h"

namespace perfcast {

namespace {

[[noreturn]] void not_on_cpu(const PredictRequest& r, const std::string& what) {
  throw UnsupportedError(what + " does not apply to CPU '" + r.gpu + "' (perfcast models GPUs for it)");
}

// The memory of `instances` processes, each holding `one` (its own weights, activations, workspace and runtime),
// against the part's `capacity_bytes`.
MemoryBreakdown all_instances(MemoryBreakdown one, int instances, double capacity_bytes) {
  if (instances <= 1) return one;
  const double n = instances;
  for (double* b : {&one.weights, &one.master_weights, &one.gradients, &one.optimizer_state, &one.activations,
                    &one.workspace, &one.runtime, &one.comm_buffers, &one.embedding_tables, &one.transient,
                    &one.allocated, &one.reserved, &one.total})
    *b *= n;
  one.capacity = capacity_bytes;
  one.fits = one.total <= one.capacity;
  return one;
}

}  // namespace

PrecisionPlan cpu_precision_plan(const std::string& precision, const CpuSpec& cpu, const CpuRuntimeProfile& runtime,
                                 bool training, std::string& math) {
  PrecisionPlan plan;
  plan.name = precision;
  if (precision == "fp32") {
    math = "fp32";
    plan.bytes = {4, 4};
  } else if (precision == "bf16") {
    math = "bf16";
    plan.bytes = {2, 2};
  } else if (precision == "amp" || precision == "amp-bf16") {
    // torch.autocast("cpu") casts to bfloat16 by default: bf16 GEMM inputs, fp32 master weights in training.
    math = "bf16";
    plan.bytes = {2, 2};
    plan.mixed = training;
  } else if (precision == "int8") {
    if (training) throw UnsupportedError("int8 is an inference precision: --mode train runs fp32, bf16 or amp-bf16");
    math = "int8";
    plan.bytes = {1, 1};
  } else {
    throw UnsupportedError("precision '" + precision + "' is not modelled on CPUs (fp32, bf16, amp-bf16, int8): " +
                           cpu.id + " has no " + precision + " GEMM units");
  }
  if (std::find(runtime.precisions.begin(), runtime.precisions.end(), precision) == runtime.precisions.end())
    throw UnsupportedError(fmt::format("{} on CPU does not run --precision {} (its CPU kernels: {})", runtime.name,
                                       precision, fmt::join(runtime.precisions, ", ")));
  const std::string_view unit = cpu.math_unit(math);
  if (unit.empty())
    throw UnsupportedError(fmt::format("{} is not supported on {} ({}): it needs {}", precision, cpu.id,
                                       cpu.microarchitecture,
                                       math == "bf16" ? "AMX or AVX512_BF16" : "AMX or AVX-512 VNNI"));
  plan.note = fmt::format("{} GEMMs on {} at {:.2f} T{}/s peak ({} cores x {:.2f} GHz all-core)", math, unit,
                          cpu.peak_tflops(math), math == "int8" ? "OP" : "FLOP", cpu.total_cores(),
                          unit == "amx" ? cpu.amx_allcore_ghz : cpu.vector_clock_ghz());
  return plan;
}

bool is_cpu_device(const std::string& id) { return cpu_by_id(id) != nullptr; }

Prediction predict_cpu(const PredictRequest& request) {
  PredictRequest r = request;
  const CpuSpec* cpu_ptr = cpu_by_id(r.gpu);
  if (!cpu_ptr) throw InputError("'" + r.gpu + "' is not a CPU id (perfcast cpus)");
  const CpuSpec& whole = *cpu_ptr;
  // With --instances the step is one process's, on its share of the part (its cores, one socket, its share of that
  // socket's L3 and channels); the throughput of all of them is assembled in finalize_prediction.
  const CpuInstanceSplit split = cpu_instance_split(whole, r.instances, r.cores);
  CpuSpec instance = cpu_instance_share(whole, split);
  instance.pages_balanced = r.numa_pages == "balanced";
  const CpuSpec& cpu = instance;
  const bool serving = is_llm_pass(r.mode);
  if (serving) not_on_cpu(r, "--mode " + mode_string(r.mode) + " (language-model serving)");
  if (r.lora_rank > 0) not_on_cpu(r, "--lora-rank");
  if (r.gpus * r.nodes > 1)
    throw UnsupportedError("data parallelism over several CPUs is not modelled; a two-socket server is its own id (" +
                           whole.id + (whole.max_sockets == 2 && whole.sockets == 1 ? "-2s" : "") + ")");
  if (!r.interconnect.empty() || !r.network.empty()) not_on_cpu(r, "--interconnect/--network");
  if (r.data == "real" || r.data == "real-augmented")
    throw UnsupportedError("--data " + r.data + " on a CPU decodes on the cores that train, which is not modelled; use "
                           "--data synthetic or host");
  if (r.cuda_graphs) not_on_cpu(r, "--cuda-graphs");
  if (r.gpu_decode) not_on_cpu(r, "--gpu-decode");
  if (r.channels_last) not_on_cpu(r, "--channels-last (oneDNN picks its own blocked layouts on CPUs)");
  if (r.power_limit_w > 0) not_on_cpu(r, "--power-limit");
  if (!r.attention.empty()) not_on_cpu(r, "--attention");
  if (!r.conv_algo.empty()) not_on_cpu(r, "--conv-algo (cuDNN algorithm choice; oneDNN picks its own)");
  if (r.amp_o2) not_on_cpu(r, "--amp-o2 (apex amp runs on CUDA devices only)");
  if (!r.embedding_precision.empty()) not_on_cpu(r, "--embedding-precision");
  bool version_rule = false;
  const CpuRuntimeProfile crt = r.runtime_version.empty()
                                    ? find_cpu_runtime(r.runtime)
                                    : cpu_runtime_at_version(find_cpu_runtime(r.runtime), r.runtime_version, version_rule);
  const bool training = r.mode == Mode::kTrain;
  if (training && crt.inference_only)
    throw UnsupportedError(crt.name + " is an inference runtime: --mode train is not modelled for it");
  std::string math;
  const PrecisionPlan plan = cpu_precision_plan(r.precision, cpu, crt, training, math);
  const ModelSource model = model_for(r);
  if (model.sequence && r.seq == 0) r.seq = model.default_seq;
  if (!model.sequence && r.seq != 0)
    throw InputError("--seq applies to sequence models; '" + r.model + "' takes fixed-size inputs");
  if (r.seq_mean > 0)
    throw InputError("--seq-mean needs a GPU runtime that runs sequences without padding (tensorrt), not a CPU runtime");
  const RuntimeProfile runtime = crt.as_runtime();
  const OptimizerKind optimizer = optimizer_for(r, model.sequence);
  const MemoryOptions mem_opts = memory_options(r, optimizer);
  // The reports describe the whole part; memory is one process's estimate times the processes, against all of it.
  DeviceSpec device = device_from_cpu(whole);
  const DeviceSpec instance_device = device_from_cpu(cpu);
  const auto build = [&](std::int64_t b) { return graph_as_run(model, ModelOptions{b, r.seq}, runtime); };
  const auto memory_of = [&](const Graph& g) {
    return all_instances(estimate_memory(g, plan, runtime, instance_device, mem_opts), split.instances,
                         device.memory_bytes());
  };
  if (r.batch == 0) {
    r.batch = largest_batch_that_fits(1 << 20, [&](std::int64_t b) { return memory_of(build(b)).fits; });
    if (r.batch == 0)
      throw UnsupportedError("model '" + r.model + "' does not fit in " + cpu.id + "'s memory even at batch 1");
  }
  const Graph graph = build(r.batch);
  const CpuCostModel costs(cpu, crt, cpu_cost_constants(), math);
  // The framework's per-op host costs come from its GPU profile (the same Python, dispatcher and autograd); the
  // CUDA launch and cuDNN/cuBLAS setup terms do not apply on a CPU. The CPU itself is the host: its clock scales them.
  std::optional<RuntimeProfile> framework_host;
  const auto& gpu_runtimes = runtime_catalog();
  const auto same = std::find_if(gpu_runtimes.begin(), gpu_runtimes.end(), [&](const RuntimeProfile& g) { return g.id == crt.id; });
  if (same != gpu_runtimes.end() && same->host_op_us > 0) {
    framework_host = *same;
    framework_host->host_overhead_per_kernel_us = 0;
    framework_host->host_library_call_us = 0;
  }
  CpuCostContext ctx{costs, runtime, plan, training};
  ctx.framework_host = framework_host ? &*framework_host : nullptr;
  ctx.weight_bytes = static_cast<double>(graph.params()) * plan.bytes.weight;
  StepOptions step_options{training, r.optimizer_step, optimizer, r.checkpointing,
                           r.fused_optimizer.value_or(crt.optimizer_fused), r.grad_accum};
  step_options.host_time_scale = cpu_cost_constants().reference_host_ghz / cpu.avx2_allcore_ghz;
  StepCost step = schedule_cpu_step(graph, ctx, step_options);
  const MemoryBreakdown memory = memory_of(graph);
  Prediction p = prediction_for(r, std::move(device), runtime, model);
  {
    CpuInstancesCost c;
    c.instances = split.instances;
    c.cores_per_instance = split.cores_per_instance;
    c.instances_per_socket = split.instances_per_socket;
    c.dram_gbps_per_instance = std::min(cpu.mem_bw_gbps(), costs.cores_dram_gbps());
    c.l3_bytes_per_instance = cpu.l3_bytes * cpu.sockets;  // a process split off sits on one socket (sockets = 1)
    p.cpu_instances = c;
  }
  if (r.cores > 0 && !split.whole_part)
    p.notes.push_back(fmt::format(
        "{} of {}'s {} cores per process ({} socket{}): compute at the all-core licence clocks (no per-active-core "
        "turbo table is catalogued), DRAM at most {} x {:.0f} GB/s a core can have in flight, {:.1f} MiB of L3 in reach",
        split.cores_per_instance, whole.id, whole.total_cores(), split.sockets_per_instance,
        split.sockets_per_instance > 1 ? "s" : "", split.cores_per_instance, cpu_cost_constants().single_core_dram_gbps,
        cpu.l3_total_bytes() / 1048576.0));
  if (version_rule && crt.gemm_packs_weights_per_call && !crt.gemm_prepack_from_version.empty())
    p.notes.push_back(fmt::format("{} {} predates weight pre-packing ({}): every GEMM packs its weights per call",
                                  crt.name, r.runtime_version, crt.gemm_prepack_from_version));
  if (version_rule && !crt.reorder_primitives_cached && !crt.reorder_primitive_cache_from_version.empty())
    p.notes.push_back(fmt::format("{} {} predates oneDNN's primitive cache ({}): each per-call reorder takes MKL-DNN "
                                  "0.x's measured call time",
                                  crt.name, r.runtime_version, crt.reorder_primitive_cache_from_version));
  if (!version_rule && !r.runtime_version.empty())
    p.notes.push_back("--runtime-version has no rules for the CPU profile (" + crt.file + ") at " + r.runtime_version +
                      "; its defaults apply");
  p.params = graph.params();
  p.precision_note = plan.note;
  p.step = std::move(step);
  p.memory = memory;
  p.flops_per_sample = p.step.flops / static_cast<double>(r.batch);
  finalize_prediction(p);
  return p;
}

}  // namespace perfcast
