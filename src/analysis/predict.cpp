#include "analysis/predict.h"

#include "analysis/llm_parallel.h"

#include <algorithm>
#include <optional>

#include "analysis/request_resolution.h"
#include "core/error.h"
#include "core/limits.h"
#include "cost/precision_note.h"
#include "device/architecture.h"
#include "device/host_profile.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"
#include "schedule/collectives.h"
#include "runtime/harness_profile.h"
#include "schedule/data_parallel.h"
#include "schedule/embedding_placement.h"
#include "schedule/input_pipeline.h"

namespace perfcast {

void check_request(const PredictRequest& r) {
  if (r.mode == Mode::kServe)
    throw InputError("--mode serve (continuous batching under load) is for perfcast predict with --request-rate, --input-len, --output-len");
  PERFCAST_ASSERT(r.mode < Mode::kCount, "modes are parsed where a request enters (parse_mode)");
  if ((r.tensor_parallel > 1 || r.pipeline_parallel > 1) && r.mode != Mode::kTrain)
    throw InputError("--tp and --pp split a model across GPUs for training (--mode train) or for serving under load "
                     "(perfcast predict --mode serve)");
  if (r.batch < 0) throw InputError("batch must be a positive integer or 'max', got " + std::to_string(r.batch));
  if (r.seq < 0) throw InputError("seq must be a positive integer, got " + std::to_string(r.seq));
  if (r.seq_mean < 0) throw InputError("seq_mean must be a positive integer, got " + std::to_string(r.seq_mean));
  if (r.seq_mean > 0 && r.mode != Mode::kInfer)
    throw InputError("--seq-mean (sequences run without padding) applies to --mode infer, not --mode " + mode_string(r.mode));
  if (!r.llm_code.empty() && !is_serving(r.mode))
    throw InputError("--llm-code (llm_code) names the eager code of an LLM's token loop: it applies to --mode prefill, "
                     "decode, generate or serve, not --mode " + mode_string(r.mode));
  // Beyond these no GPU holds even the input tensor, and no system has that many GPUs (data/limits.toml); they
  // also keep shape products inside 64 bits.
  const InputLimits& limits = input_limits();
  if (r.batch > limits.max_batch)
    throw InputError("batch " + std::to_string(r.batch) + " is beyond any GPU (limit " + std::to_string(limits.max_batch) + ")");
  if (r.seq > limits.max_seq)
    throw InputError("seq " + std::to_string(r.seq) + " is beyond any GPU (limit " + std::to_string(limits.max_seq) + ")");
  if (r.gpus > limits.max_gpus_per_node)
    throw InputError("--gpus " + std::to_string(r.gpus) + " is more GPUs than any node holds (limit " +
                     std::to_string(limits.max_gpus_per_node) + " per node, data/limits.toml; use --nodes)");
  if (r.nodes > limits.max_nodes)
    throw InputError("--nodes " + std::to_string(r.nodes) + " is more nodes than any cluster has (limit " +
                     std::to_string(limits.max_nodes) + ", data/limits.toml)");
  if (r.context < 0) throw InputError("context must be zero or positive, got " + std::to_string(r.context));
  // Both describe a language model's KV cache, which train and infer passes do not keep: given there they would
  // change nothing while the report's title still showed them.
  if (r.context > 0 && !is_serving(r.mode))
    throw InputError("--context (context, tokens already in the KV cache) applies to --mode prefill, decode or "
                     "generate (--mode serve takes --input-len), not --mode " + mode_string(r.mode));
  if (!r.kv_precision.empty() && !is_serving(r.mode))
    throw InputError("--kv-precision (kv_precision) applies to --mode prefill, decode, generate or serve, not --mode " +
                     mode_string(r.mode));
  if (r.gpus <= 0 || r.nodes <= 0)
    throw InputError("GPU and node counts must be positive, got --gpus " + std::to_string(r.gpus) + " --nodes " +
                     std::to_string(r.nodes));
  if (r.power_limit_w < 0) throw InputError("power limit must be positive watts");
  if (r.instances < 1) throw InputError("--instances must be a positive integer, got " + std::to_string(r.instances));
  if (r.instances > 1 && !is_cpu_device(r.gpu))
    throw InputError("--instances runs several processes of a model on one CPU's cores (a CPU id, perfcast cpus); '" +
                     r.gpu + "' is not a CPU: use --gpus for several GPUs");
  if (r.cores < 0) throw InputError("--cores must be a positive integer, got " + std::to_string(r.cores));
  if (r.cores > 0 && !is_cpu_device(r.gpu))
    throw InputError("--cores sets the cores one process runs on, on a CPU (perfcast cpus); '" + r.gpu +
                     "' is not a CPU");
  if (r.instances > 1 && r.mode != Mode::kInfer)
    throw InputError("--instances (several inference processes on one CPU) applies to --mode infer, not --mode " +
                     mode_string(r.mode));
  if (!r.numa_pages.empty()) {
    if (r.numa_pages != "first-touch" && r.numa_pages != "balanced")
      throw_unknown("--numa-pages value", r.numa_pages.substr(0, 40), {"first-touch", "balanced"});
    if (!is_cpu_device(r.gpu))
      throw InputError("--numa-pages says where a CPU process's pages live (a CPU id, perfcast cpus); '" + r.gpu +
                       "' is not a CPU");
  }
  if (r.host_cores < 0) throw InputError("host cores must be positive, got " + std::to_string(r.host_cores));
  const std::vector<std::string> data{"synthetic", "host", "real", "real-augmented"};
  if (std::find(data.begin(), data.end(), r.data) == data.end()) throw_unknown("data", r.data, data);
  if (r.prefetch && r.data != "host") throw InputError("--prefetch applies to --data host (batches held in host memory)");
  if (r.data == "host" && (is_llm_pass(r.mode) || r.lora_rank > 0))
    throw InputError("--data host applies to --mode train and infer of fixed-size models, not --mode " + mode_string(r.mode) +
                     (r.lora_rank > 0 ? " with --lora-rank" : ""));
  if (r.checkpointing && r.mode != Mode::kTrain) throw InputError("--checkpointing applies to --mode train only");
  if (r.grad_accum < 1 || r.grad_accum > kMaxGradAccum)
    throw InputError("gradient accumulation takes 1 to " + std::to_string(kMaxGradAccum) + " micro-batches, got " +
                     std::to_string(r.grad_accum));
  if (r.grad_accum > 1 && (r.mode != Mode::kTrain || r.lora_rank > 0))
    throw InputError("--grad-accum applies to --mode train of fixed-size models, not --mode " + mode_string(r.mode) +
                     (r.lora_rank > 0 ? " with --lora-rank" : ""));
  // Ids are checked even where this request does not use them (a host with synthetic data): a typo is a typo.
  if (!r.host.empty()) find_host(r.host);
  if (!r.strategy.empty()) find_strategy(r.strategy);
  if (!r.dataset.empty()) find_dataset(r.dataset);
  check_conv_algo(r.conv_algo);
  if (!r.harness.empty()) find_harness(r.harness);
}

namespace {

// The framework's collectives: the row's or flag's strategy, else the runtime's default.
const StrategySpec& reduction_strategy(const PredictRequest& r) {
  return r.strategy.empty() ? strategy_for_runtime(r.runtime) : find_strategy(r.strategy);
}

// Requests predict_llm serves: language-model serving and LoRA fine-tuning.
bool routed_to_llm(const PredictRequest& r) {
  return is_llm_pass(r.mode) || (r.mode == Mode::kTrain && r.lora_rank > 0);
}

// Dataset a model reads when none is given: images for 2D vision models, CT volumes for 3D ones.
std::string default_dataset(const ModelSource& model) {
  if (model.family == "cnn3d" || model.family == "segmentation3d") return "ct-crops";
  if (model.sequence) return "";
  return "imagenet";
}

InputPipelineRequest input_request(const PredictRequest& r, const ModelSource& model) {
  InputPipelineRequest in;
  in.data = r.data;
  in.prefetch = r.prefetch;
  in.host = r.host;
  in.host_cores = r.host_cores;
  in.dataset = r.dataset;
  in.default_dataset = default_dataset(model);
  in.gpu_decode = r.gpu_decode;
  in.pinned_memory = r.pinned_memory;
  in.batch = r.batch;
  in.gpus = r.gpus;
  if (!r.harness.empty()) {
    const HarnessProfile& h = find_harness(r.harness);
    in.max_threads = h.input_threads;
    in.copy_in_step = h.input_copy_in_step;
  }
  return in;
}

// Fixed-size models (CNNs, encoders, full fine-tuning): the graph is built and costed once, its step scheduled,
// then the stages over that step: input pipeline, data parallelism, power. `single_gradients`, when given,
// receives the gradient timeline of the one-GPU step (predict_data_parallel scales it to other counts).
Prediction predict_fixed(const PredictRequest& request, const DataParallelOptions& options,
                         GradientProfile* single_gradients) {
  PredictRequest r = request;
  DeviceSpec device = device_for(r);
  const ModelSource model = model_for(r);
  RuntimeProfile runtime = runtime_for(r);
  // (nchw_tf32_tensor_core_transposes stays: TensorFlow's layout pass moves an NHWC FP32 graph to NCHW on the GPU.)
  if (r.channels_last) runtime.nchw_tensor_core_transposes = false;
  else runtime.nhwc_conv_transposes = false;  // only NHWC tensors are transposed to NCHW
  // architecture_of's profile unless the card carries measured efficiencies (no copy in the common case).
  // A runtime release that linked CUDA 9.0's cuBLAS costs its tensor-core GEMMs with that library's fitted grid rule.
  std::optional<ArchitectureProfile> measured_arch;
  if (device.measured) measured_arch = architecture_for(device);
  if (runtime.cublas_cuda9_tensor_grid)
    measured_arch = with_cuda9_tensor_grid(measured_arch ? *measured_arch : architecture_of(device));
  const ArchitectureProfile& arch = measured_arch ? *measured_arch : architecture_of(device);
  const bool training = r.mode == Mode::kTrain;
  const PrecisionPlan plan = resolve_precision(r.precision, device, arch, runtime, r.runtime_version, training);
  const OptimizerKind optimizer = optimizer_for(r, model.sequence);
  if (model.sequence && r.seq == 0) r.seq = model.default_seq;
  if (!model.sequence && r.seq != 0)
    throw InputError("--seq applies to sequence models; '" + r.model + "' takes fixed-size inputs");
  if (r.seq_mean > 0) {
    if (!model.sequence)
      throw InputError("--seq-mean applies to sequence models; '" + r.model + "' takes fixed-size inputs");
    if (r.seq_mean > r.seq)
      throw InputError("--seq-mean " + std::to_string(r.seq_mean) + " is longer than --seq " + std::to_string(r.seq) +
                       " (the longest sequence)");
    if (!runtime.variable_sequence_length)
      throw InputError("runtime '" + runtime.id + "' pads every sequence to --seq; --seq-mean needs a runtime that "
                       "runs without padding (variable_sequence_length in data/runtimes: tensorrt)");
  }
  // Without padding every layer works on the real tokens only: the graph is built at their mean length.
  const std::int64_t costed_seq = r.seq_mean > 0 ? r.seq_mean : r.seq;
  MemoryOptions mem_opts = memory_options(r, optimizer);

  const AttentionPlan attention = attention_plan_for(r, runtime, device, training);
  // The embedding side at its own precision (--embedding-precision): tables stored in it, lookups and the
  // interaction costed with its bytes and pipe.
  std::optional<PrecisionPlan> embedding_plan;
  if (!r.embedding_precision.empty()) {
    static const std::vector<std::string> kinds{"fp32", "tf32", "fp16", "bf16"};
    if (std::find(kinds.begin(), kinds.end(), r.embedding_precision) == kinds.end())
      throw_unknown("embedding precision", r.embedding_precision, kinds);
    embedding_plan = resolve_precision(r.embedding_precision, device, arch, runtime, r.runtime_version, training);
    mem_opts.embedding_plan = &*embedding_plan;
  }
  const auto build = [&](std::int64_t b) {
    Graph g = graph_as_run(model, ModelOptions{b, costed_seq}, runtime, attention);
    if (embedding_plan)
      for (auto& op : g.ops)
        if (op.kind == OpKind::kEmbeddingBag) op.bag.table_elem_bytes = embedding_plan->bytes.act;
    return g;
  };
  if (plan.name == "int8" && !runtime.int8_convolution) check_int8_convolutions(build(1), runtime, device);
  // Recommendation models: where the embedding tables live (schedule/embedding_placement.h) sets how much of them
  // each GPU holds before the batch is sized, and adds its transfers to the step below.
  std::optional<EmbeddingPlacement> placement;
  // Built at the requested batch, this probe is the graph predicted below unless --batch max moves the batch.
  const std::int64_t probe_batch = std::max<std::int64_t>(1, r.batch);
  Graph probe = build(probe_batch);
  if (embedding_plan && probe.table_params() <= 0)
    throw InputError("--embedding-precision (embedding_precision) applies to recommendation models with embedding "
                     "tables; '" + r.model + "' has none");
  if (probe.table_params() > 0) {
    const Fabric fabric = resolve_fabric(device, r.gpus, r.nodes, r.interconnect, r.network);
    const bool fits = fabric.gpus() > 1 || estimate_memory(probe, plan, runtime, device, mem_opts).fits;
    placement = place_embeddings(probe, device, fabric, training, reduction_strategy(r), fits);
    mem_opts.table_share = placement->share_per_gpu;
  }
  if (r.batch == 0) {
    r.batch = largest_batch_that_fits(1 << 20, [&](std::int64_t b) {
      return estimate_memory(build(b), plan, runtime, device, mem_opts).fits;
    });
    if (r.batch == 0)
      throw UnsupportedError("model '" + r.model + "' does not fit on " + device.id + " even at batch 1",
                             {"memory.no_batch_fits", {{"model", r.model}, {"gpu", device.id}}});
  }

  const Graph graph = r.batch == probe_batch ? std::move(probe) : build(r.batch);
  StepCost step;
  MemoryBreakdown memory;
  {
    const KernelCostModel kernels(device, arch);
    CostContext ctx{kernels, runtime, plan, training};
    if (embedding_plan) ctx.embedding_plan = &*embedding_plan;
    ctx.conv_autotune = conv_autotune_for(r.conv_algo, runtime);
    ctx.channels_last = r.channels_last;
    // Sharded tables: each GPU serves every sample's lookups into its own tables (the same lookups per GPU as
    // one GPU with all of them) but holds and updates 1/n of the rows.
    Graph costed;
    if (placement && placement->where == TablePlacement::kSharded) {
      costed = graph;
      for (auto& op : costed.ops)
        if (op.kind == OpKind::kEmbeddingBag)
          for (auto& rows : op.bag.rows) rows = std::max<std::int64_t>(1, rows / placement->gpus);
      // The busiest GPU's share of the lookups (whole tables per GPU).
      for (auto& op : costed.ops)
        if (op.kind == OpKind::kEmbeddingBag) {
          for (auto& pool : op.bag.pooling) pool *= placement->lookup_scale;
          // A layer per table: the busiest GPU calls the layers of its own tables only.
          if (op.bag.lookup_ops > 1) op.bag.lookup_ops = (op.bag.lookup_ops + placement->gpus - 1) / placement->gpus;
        }
    }
    step = schedule_step(costed.ops.empty() ? graph : costed, ctx,
                         StepOptions{training, r.optimizer_step, optimizer, r.checkpointing,
                                     r.fused_optimizer.value_or(runtime.optimizer_fused), r.grad_accum,
                                     host_time_scale(r)});
    memory = estimate_memory(graph, plan, runtime, device, mem_opts);
  }
  if (placement) {
    // The transfers scale with the batch: place again at the batch predicted (same decision, its sizes).
    const Fabric fabric = resolve_fabric(device, r.gpus, r.nodes, r.interconnect, r.network);
    placement = place_embeddings(graph, device, fabric, training, reduction_strategy(r),
                                 placement->where != TablePlacement::kHost);
    add_placement_costs(step, *placement, runtime.gpu_gap_per_kernel_us, runtime.host_overhead_per_kernel_us);
  }

  // The prediction takes the specs as used (moved: device and runtime are not read below).
  Prediction p = prediction_for(r, std::move(device), std::move(runtime), model);
  if (const std::string note = attention_note(attention, graph); !note.empty()) p.notes.push_back(note);
  if (placement && !placement->note.empty()) p.notes.push_back(placement->note);
  p.params = graph.params();
  // The precision's note names only the op kinds this graph runs (BERT has no convolution to run as TF32).
  PrecisionPlan shown = plan;
  note_only_present_ops(shown, p.runtime, math_ops_present(graph));
  p.precision_note = shown.note;
  p.precision_note_code = shown.note_code;
  p.step = std::move(step);
  p.memory = memory;
  p.flops_per_sample = p.step.flops / static_cast<double>(r.batch);
  finalize_prediction(p);
  if (auto in = input_pipeline_cost(input_request(r, model), p.device, graph, p.step.step_us)) {
    if (r.gpu_decode && in->dataset_kind == "jpeg") {
      p.step.gpu_us += in->gpu_decode_us;
      p.step.step_us = std::max(p.step.step_us + in->gpu_decode_us, p.step.host_us);
    }
    p.input = std::move(in);
    finalize_prediction(p);
  }
  const bool scaled = r.gpus * r.nodes > 1;
  const GradientProfile g = scaled || single_gradients ? gradient_profile(p, graph) : GradientProfile{};
  if (single_gradients) *single_gradients = g;
  apply_scale_out(p, g, r.gpus, r.nodes, r.interconnect, r.network, options);
  apply_power(p);
  return p;
}

}  // namespace

Prediction predict(const PredictRequest& request) {
  check_request(request);
  if (is_cpu_device(request.gpu)) return predict_cpu(request);
  if (wants_parallel_training(request)) return predict_llm_training(request);
  if (routed_to_llm(request)) return predict_llm(request);
  return predict_fixed(request, data_parallel_options(request), nullptr);
}

Prediction predict_data_parallel(const PredictRequest& request, const DataParallelOptions& options) {
  if (is_cpu_device(request.gpu)) return predict(request);
  PredictRequest one = request;
  one.gpus = 1;
  one.nodes = 1;
  one.interconnect.clear();
  one.network.clear();
  check_request(one);
  // --batch max with several GPUs: the largest batch that fits beside the reduction's buffers.
  if (request.batch == 0 && request.mode == Mode::kTrain && request.gpus * request.nodes > 1 && request.lora_rank == 0)
    one.batch = predict(request).request.batch;
  const int gpus = request.gpus, nodes = request.nodes;
  if (gpus <= 0 || nodes <= 0)
    throw InputError("GPU and node counts must be positive, got --gpus " + std::to_string(gpus) + " --nodes " +
                     std::to_string(nodes));
  if (routed_to_llm(one)) {
    // Serving and LoRA predict one GPU: predict() names what is not modelled for several.
    if (gpus * nodes > 1) return predict(request);
    const Prediction single = predict_llm(one);
    if (request.interconnect.empty() && request.network.empty()) return single;
    return scaled_prediction(single, GradientProfile{}, gpus, nodes, request.interconnect, request.network, options);
  }
  // Embedding tables are sharded over the GPUs (whole tables per GPU, an all-to-all of the pooled vectors), so one
  // GPU's prediction is no replica of a GPU among several: it may even hold its tables in host memory. predict()
  // places the tables for the whole fleet; compare and plan take the same prediction.
  if (gpus * nodes > 1 &&
      resolve_model(one.model, import_options(one)).build(ModelOptions{1, one.seq}).table_params() > 0) {
    check_request(request);
    return predict_fixed(request, options, nullptr);
  }
  GradientProfile g;
  const Prediction single = predict_fixed(one, data_parallel_options(one), &g);
  if (gpus * nodes == 1 && request.interconnect.empty() && request.network.empty()) return single;
  return scaled_prediction(single, g, gpus, nodes, request.interconnect, request.network, options);
}

Prediction prediction_for(const PredictRequest& r, DeviceSpec device, RuntimeProfile runtime, const ModelSource& model) {
  Prediction p;
  p.request = r;
  p.device = std::move(device);
  p.runtime = std::move(runtime);
  p.model_id = model.id;
  p.model_family = model.family;
  p.model_description = model.description;
  p.sequence = model.sequence;
  p.notes = model.uncosted;
  if (p.device.measured)
    p.notes.push_back("kernel efficiencies measured on this card (" +
                      (p.device.measured->source.empty() ? p.device.file : p.device.measured->source) + ")");
  return p;
}

void finalize_prediction(Prediction& p) {
  const RuntimeProfile& runtime = p.runtime;
  p.bound_us.fill(0);
  // Kernel time by its bound; gaps between kernels count as latency.
  for (const auto& e : p.step.entries) {
    p.bound_us[static_cast<int>(e.cost.bound)] += e.cost.time_us;
    p.bound_us[static_cast<int>(Bound::kLatency)] += e.cost.launches * runtime.gpu_gap_per_kernel_us;
  }
  double step = p.step.step_us;
  // On a CPU the dispatching thread waits for each op, so dispatch adds to the step instead of hiding behind it.
  const bool cpu = p.device.kind == DeviceKind::kCpu;
  if (cpu) p.bound_us[static_cast<int>(Bound::kHost)] = p.step.host_us;
  // The GPU idles while the host is behind it (docs/host-model.md): that wait is host-bound time.
  else if (p.step.step_us > p.step.gpu_us) p.bound_us[static_cast<int>(Bound::kHost)] = p.step.step_us - p.step.gpu_us;
  bool decode_paces = false;  // a serial copy's step still waits for decoding when that is slower
  if (p.input && p.input->serial_copy) {
    // The step waits for its own input copy before the first kernel (a blocking copy from pageable memory, or a
    // harness that copies inside the step); decoding runs ahead of it and paces the step only when slower.
    p.bound_us[static_cast<int>(Bound::kHostToDevice)] = p.input->h2d_ms * 1e3;
    step += p.input->h2d_ms * 1e3;
    const double decode_us =
        p.input->decode_ms(static_cast<double>(p.request.batch) * std::max(1, p.request.gpus)) * 1e3;
    if (decode_us > step) {
      p.bound_us[static_cast<int>(Bound::kInputPipeline)] = decode_us - step;
      step = decode_us;
      decode_paces = true;
    }
  } else if (p.input) {
    const double pipeline_us = p.input->step_ms * 1e3;
    if (pipeline_us > step) {
      p.bound_us[static_cast<int>(Bound::kInputPipeline)] = pipeline_us - step;
      step = pipeline_us;
    }
  }
  if (p.scale) {
    p.bound_us[static_cast<int>(Bound::kCommunication)] = p.scale->exposed_comm_ms * 1e3;
    step += p.scale->exposed_comm_ms * 1e3;
  }
  p.step_us = step;
  // Several processes on one CPU each run the step on their own cores: their throughputs add.
  const double gpus = p.scale ? p.scale->gpus_total : p.cpu_instances ? p.cpu_instances->instances : 1;
  p.samples_per_s = static_cast<double>(p.request.batch) * gpus / (step * 1e-6);
  if (p.cpu_instances) {
    p.cpu_instances->latency_ms = step / 1e3;
    p.cpu_instances->instance_samples_per_s = p.samples_per_s / p.cpu_instances->instances;
  }
  if (p.sequence)
    p.tokens_per_s = p.samples_per_s * static_cast<double>(p.request.seq_mean > 0 ? p.request.seq_mean : p.request.seq);
  // The primary bound is where most of the step goes; a step waiting on the host, the input pipeline or
  // communication is bound there even when kernels dominate the busy time.
  int best = 0;
  for (int i = 1; i < static_cast<int>(Bound::kCount); ++i)
    if (p.bound_us[i] > p.bound_us[best]) best = i;
  p.primary = static_cast<Bound>(best);
  // Making the GPU faster does not help a step that waits on the host or its input pipeline.
  if (!cpu && host_bound(p.step)) p.primary = Bound::kHost;
  if (decode_paces) p.primary = Bound::kInputPipeline;
  if (p.input && !p.input->serial_copy && p.input->step_ms * 1e3 > p.step.step_us) {
    // An overlapped copy that outlasts the GPU step is a transfer bound; slow decoding is an input-pipeline one.
    const double decode_ms = p.input->decode_ms(static_cast<double>(p.request.batch) * std::max(1, p.request.gpus));
    p.primary = p.input->h2d_ms >= decode_ms ? Bound::kHostToDevice : Bound::kInputPipeline;
    if (p.primary == Bound::kHostToDevice) {
      p.bound_us[static_cast<int>(Bound::kHostToDevice)] = p.bound_us[static_cast<int>(Bound::kInputPipeline)];
      p.bound_us[static_cast<int>(Bound::kInputPipeline)] = 0;
    }
  }
}

}  // namespace perfcast
