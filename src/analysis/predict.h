// The whole prediction for one (model, GPU, runtime, mode, precision, batch): step time, throughput,
// memory, and what bounds the step. Stages after the single-GPU step (input pipeline, data parallelism, power)
// refine it in place.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/anchor.h"
#include "core/mode.h"
#include "cost/op_cost.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "runtime/runtime_profile.h"
#include "schedule/data_parallel.h"
#include "schedule/input_pipeline.h"
#include "schedule/memory.h"
#include "schedule/power_cost.h"
#include "schedule/step.h"

namespace perfcast {

struct CpuSpec;             // device/cpu_spec.h
struct CpuRuntimeProfile;   // runtime/cpu_runtime.h

struct ModelSource;
struct ParallelTrainingCost;  // schedule/llm_parallel.h

// Most micro-batches per weight update a request may accumulate.
inline constexpr int kMaxGradAccum = 1000000;

struct PredictRequest {
  std::string gpu = "gtx-1080-ti";
  std::string model = "resnet50";   // zoo id, config.json or .onnx path
  std::string runtime = "pytorch";
  std::string runtime_version;      // e.g. "2.3": applies the runtime's [[version]] rules ("" = profile default)
  std::string attention;            // eager | sdpa | flash (Hugging Face attn_implementation); "" = the runtime's
  // autotune | heuristic: how cuDNN convolution algorithms are chosen (torch.backends.cudnn.benchmark = True /
  // False, TF_CUDNN_USE_AUTOTUNE, MXNET_CUDNN_AUTOTUNE_DEFAULT); "" = the runtime's documented default.
  std::string conv_algo;
  // How the measurement was timed (data/harnesses): its loop's per-step host work and synchronisation replace
  // the runtime's own; "" = the loop the runtime profile assumes.
  std::string harness;
  // The eager code an LLM pass runs (data/llm_code: transformers, gpt-fast; "none" = the graph's ops alone);
  // "" = the runtime's llm_model_code.
  std::string llm_code;
  Mode mode = Mode::kTrain;         // serve: predict_serving
  std::string precision = "fp32";
  std::int64_t batch = 64;          // 0 = the largest batch that fits
  std::int64_t seq = 0;             // 0 = the model's default
  // Mean real tokens per sequence when the runtime drops padding (variable sequence length, e.g. TensorRT's
  // BERT plugins over packed tokens): the encoder is costed at this length; 0 = every sequence padded to seq.
  std::int64_t seq_mean = 0;
  bool optimizer_step = true;
  std::optional<std::string> optimizer;  // sgd | adam | adamw | lamb; default by model family
  std::optional<bool> fused_optimizer;   // fused update kernel (apex FusedAdam, fused=True); default: the runtime's
  // Mixed precision as apex amp O2 runs it (amp.initialize(opt_level="O2")): the model itself cast to FP16 (BF16),
  // FP32 master weights in the optimizer, no autocast, so softmax runs in half and the gradients autograd makes are
  // half; false: torch.cuda.amp autocast (FP32 parameters and gradients, softmax in FP32).
  bool amp_o2 = false;
  // Recommendation models: the precision of the embedding side (the tables, their looked-up vectors and the
  // feature interaction, forward and backward) when it differs from `precision`, which then sets the MLPs only
  // (NVIDIA's 2020 PyTorch DLRM passes only its MLPs to apex amp: dlrm/scripts/main.py). "" = the tables as the
  // model file stores them, the vectors and the interaction at `precision`.
  std::string embedding_precision;
  int grad_accum = 1;                    // micro-batches per update (gradient accumulation); batch = one micro-batch

  // Language models (prefill/decode, fine-tuning).
  std::int64_t context = 0;         // decode: tokens already in the KV cache
  // --max-positions: the context a rotary/ALiBi decoder LLM runs at past its config's max_position_embeddings
  // (RoPE scaling or a long-context fine-tune); 0 = the config's.
  std::int64_t max_positions = 0;
  std::string kv_precision;         // "" = the activation precision
  std::int64_t lora_rank = 0;       // 0 = full fine-tuning
  bool checkpointing = false;       // activation checkpointing (recompute in backward)
  std::map<std::string, std::int64_t> dims;  // ONNX dynamic dimensions

  // Input pipeline.
  std::string data = "synthetic";   // synthetic | host | real | real-augmented
  bool prefetch = false;            // data=host: copy the next batch from pinned buffers while the GPU computes
  std::string host;                 // host CPU profile id ("" = the default host)
  int host_cores = 0;               // 0 = the host profile's core count
  std::string dataset;              // dataset profile id ("" = by model family: imagenet for CNNs)

  // Runtime switches (what-if strategies; also CLI flags).
  bool channels_last = false;       // NHWC tensors: no layout transposes around tensor-core convolutions
  bool cuda_graphs = false;         // capture the step in a CUDA graph: one launch for all kernels
  bool gpu_decode = false;          // decode/augment on the GPU (DALI/nvJPEG) instead of host cores
  std::optional<bool> pinned_memory;  // override the host profile's pinned/pageable host buffers

  // Scale-out and power.
  int gpus = 1;                     // GPUs per node, data parallel
  int nodes = 1;
  int tensor_parallel = 1;          // --tp: GPUs one model's layers are split across (Megatron column/row split)
  int pipeline_parallel = 1;        // --pp: pipeline stages (consecutive layers per stage)
  std::string interconnect;         // inside a node ("" = the GPU's default)
  std::string network;              // between nodes
  std::string strategy;             // gradient reduction ("" = the runtime's, data/interconnects.toml)
  bool fp16_gradients = false;      // compress gradients to fp16 before reducing them
  bool hierarchical = false;        // force the hierarchical all-reduce across nodes
  double power_limit_w = 0;         // 0 = the board's TDP
  // CPU devices: processes of the model run side by side, each pinned to cores / instances cores of one socket at
  // `batch` (Intel's multi-instance throughput mode); 1 = one process over the whole part.
  int instances = 1;
  // CPU devices: the physical cores one process runs on (OMP_NUM_THREADS, torch.set_num_threads,
  // intra_op_num_threads = that many, one thread per core); 0 = every core of the part (or cores / instances).
  int cores = 0;
  // CPU devices on several sockets: where the process's pages live. "first-touch" (or ""): on the node of the thread
  // that first wrote them, and they stay there (numactl --membind / --localalloc, or kernel.numa_balancing = 0);
  // "balanced": Linux's automatic NUMA balancing (the default memory policy on a kernel with numa_balancing = 1)
  // moves each page to the node whose threads read it.
  std::string numa_pages;

  // Parallel training of decoder language models (analysis/llm_parallel.h; any of these, or --tp/--pp above,
  // routes train there; --mode serve reads --tp/--pp too).
  int data_parallel = 0;            // --dp; 0 = the GPUs left by tp x pp x cp
  int expert_parallel = 1;          // --ep
  int context_parallel = 1;         // --cp
  int virtual_pipeline = 1;         // --vpp: model chunks per stage (interleaved 1F1B)
  int zero_stage = 0;               // --zero 0-3
  bool fsdp = false;                // --fsdp (ZeRO-3 as PyTorch FSDP runs it)
  std::optional<bool> sequence_parallel;  // default: on with tp > 1
  std::int64_t micro_batch = 0;     // --micro-batch; 0 = 1
  std::int64_t global_batch = 0;    // --global-batch; 0 = micro-batch x dp x (4 x pp micro-batches, or --grad-accum)
  std::string recompute;            // --recompute none | selective | full ("" = none, full with --checkpointing)
  bool offload_optimizer = false;   // --offload-optimizer
  std::optional<bool> overlap_grad_reduce;  // --overlap-grad-reduce; default: FSDP overlaps, Megatron/ZeRO 0-2 not
  double train_tokens = 0;          // --train-tokens: report time and cost to train this many
};

// The processes of the model on one CPU (PredictRequest::instances; one unless --instances): the step is one
// process's, run on its share of the part; throughput counts them all. One process on a two-socket entry spans both
// sockets (instances_per_socket stays 1 there; its DRAM and L3 are both sockets').
struct CpuInstancesCost {
  int instances = 1;
  int cores_per_instance = 0;
  int instances_per_socket = 1;
  double latency_ms = 0;             // one process's step: what a request waits at this batch
  double instance_samples_per_s = 0; // one process's throughput (samples_per_s = instances x this)
  double dram_gbps_per_instance = 0; // its share of the channels (datasheet peak)
  double l3_bytes_per_instance = 0;  // its share of the L3
};

// LLM serving metrics (prefill/decode).
struct LlmCost {
  double time_to_first_token_ms = 0;
  double time_per_output_token_ms = 0;
  double kv_cache_bytes = 0;
};

struct Prediction {
  PredictRequest request;  // with batch and seq resolved
  DeviceSpec device;
  RuntimeProfile runtime;          // as used, with the request's switches applied
  std::string model_id;
  std::string model_family;        // zoo family ("cnn", "cnn3d", "transformer", "llm", ...)
  std::string model_description;
  bool sequence = false;
  std::int64_t params = 0;
  double flops_per_sample = 0;  // forward (+ backward in training) FLOPs per sample as executed
  std::string precision_note;
  ReasonCode precision_note_code;  // the note as a code, for reports in other languages
  std::vector<std::string> notes;  // other modelling notes for reports (importer gaps, fallbacks)
  StepCost step;                   // one GPU's kernels
  double step_us = 0;              // the whole step after input pipeline and scale-out
  MemoryBreakdown memory;
  double samples_per_s = 0;        // all GPUs
  std::optional<double> tokens_per_s;
  std::array<double, static_cast<int>(Bound::kCount)> bound_us{};  // step time by what bounds it
  Bound primary = Bound::kMemory;
  std::optional<InputPipelineCost> input;
  std::optional<ScaleOutCost> scale;
  std::optional<PowerCost> power;
  std::optional<LlmCost> llm;
  std::optional<CpuInstancesCost> cpu_instances;  // every CPU prediction (one process unless --instances)
  std::optional<Anchor> anchor;    // the user's own measurement of this configuration (--measured), if given
  // Parallel LLM training (schedule/llm_parallel.h): layout, MFU, tokens/s per GPU; shared so that this header
  // does not pull in the layout model.
  std::shared_ptr<const ParallelTrainingCost> parallel;
};

// Throws InputError for bad ids and values, UnsupportedError for valid requests this GPU cannot run.
Prediction predict(const PredictRequest& request);

// Validates the plain arguments of a request without predicting (mode, counts).
void check_request(const PredictRequest& request);

// A prediction naming what `r` resolved to (request, device, runtime, model id, family, description, sequence)
// with the model's importer notes; the step, memory and stages are filled in by the caller.
Prediction prediction_for(const PredictRequest& r, DeviceSpec device, RuntimeProfile runtime, const ModelSource& model);

// Stages (each in its own file).
// Language-model LoRA fine-tuning and prefill/decode/generate (analysis/llm_predict.cpp); predict() routes
// these requests here.
Prediction predict_llm(const PredictRequest& request);
// Training and inference on a CPU of data/cpus (analysis/cpu_predict.cpp); predict() routes CPU ids here.
Prediction predict_cpu(const PredictRequest& request);
// Whether `id` names a CPU of the catalog (data/cpus) rather than a GPU.
bool is_cpu_device(const std::string& id);
// What a CPU's GEMMs run in for `precision` under `runtime` and how tensors are stored (`math` set to the GEMM math:
// fp32, bf16 or int8), or UnsupportedError naming what the part or the runtime lacks (analysis/cpu_predict.cpp).
PrecisionPlan cpu_precision_plan(const std::string& precision, const CpuSpec& cpu, const CpuRuntimeProfile& runtime,
                                 bool training, std::string& math);
// Board power and energy per step (analysis/power.cpp).
void apply_power(Prediction& p);

// Data parallelism as a schedule over the costed single-GPU step (analysis/data_parallel_prediction.cpp; the
// scale-out itself is schedule/data_parallel.cpp).
// The request's own choices (--strategy, --fp16-grads, --hierarchical) as options.
DataParallelOptions data_parallel_options(const PredictRequest& request);
// What the scale-out reads from a single-GPU prediction.
ReplicaStep replica_step(const Prediction& single);
// The gradient timeline of a single-GPU prediction of `graph`.
GradientProfile gradient_profile(const Prediction& single, const Graph& graph);
// The whole prediction with explicit data-parallel options (compare, plan, case studies): the single-GPU
// prediction, then its scale-out.
Prediction predict_data_parallel(const PredictRequest& request, const DataParallelOptions& options);
// Scales p (predicted for one GPU) to gpus x nodes in place and re-derives its throughput; with one GPU, checks
// the links and clears any scale-out.
void apply_scale_out(Prediction& p, const GradientProfile& profile, int gpus_per_node, int nodes,
                     const std::string& interconnect, const std::string& network, const DataParallelOptions& options);
// A copy of `single` scaled to gpus x nodes without re-costing its kernels (plan evaluates many counts).
Prediction scaled_prediction(const Prediction& single, const GradientProfile& profile, int gpus_per_node, int nodes,
                             const std::string& interconnect, const std::string& network,
                             const DataParallelOptions& options);

// Re-derives throughput and the bound attribution from p.step, p.input and p.scale (used by the stages).
void finalize_prediction(Prediction& p);

}  // namespace perfcast
