// How a framework runs a graph: its dispatch overhead, what it fuses, its algorithm and precision defaults,
// its memory overheads. Loaded from data/runtimes/<id>.toml and never changed after: what a request makes of it
// (the version it names, the entry of library_efficiency_by_sm for its GPU) is the request's (analysis/
// request_resolution.h, CostContext in cost/op_cost.h), not the profile's.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/per_tensor_optimizer.h"
#include "runtime/serving_profile.h"

namespace perfcast {

// Switches that change with the framework version, applied by --runtime-version (e.g. TF32 arrived in TF 2.4).
struct VersionRule {
  std::string from, below;                 // applies when from <= version < below (either may be empty)
  std::map<std::string, bool> switches;    // switch name (as in the runtime file) -> value
  std::map<std::string, double> numbers;   // numeric setting (library_efficiency, ...) -> value
  bool operator==(const VersionRule&) const = default;
};

// One shape class for which PyTorch sends a half-precision depthwise convolution to cuDNN instead of its own
// kernel (Convolution.cpp check_cudnn_depthwise_workload_with_filter); 0 = no bound.
struct DepthwiseCudnnRule {
  int dims = 2;                // 1: conv1d (PyTorch views it as 2-D with height 1), 2: conv2d
  int stride = 1;
  std::vector<int> filters;    // square filter sizes it covers (empty: any)
  double min_batch = 0, max_batch = 0;
  double min_channels = 0;
  double min_width = 0, max_width = 0;  // input width
  bool operator==(const DepthwiseCudnnRule&) const = default;
};

// When a runtime with its own depthwise kernel hands a depthwise convolution to cuDNN instead.
struct DepthwiseCudnnDispatch {
  double min_sm = 0;        // cuDNN's fast depthwise kernels need this compute capability
  double min_channels = 0;  // and at least this many channels
  std::vector<DepthwiseCudnnRule> rules;  // and a shape one of these covers
  bool operator==(const DepthwiseCudnnDispatch&) const = default;
};

struct RuntimeProfile {
  std::string id;
  std::string name;
  double host_overhead_per_kernel_us = 8;  // CPU time per kernel dispatch
  double gpu_gap_per_kernel_us = 1;        // device idle between dependent kernels
  // The host timeline (docs/host-model.md): CPU time beside each launch, at the reference host's single-thread
  // speed (data/cost_model.toml [host]). Zero for runtimes whose file does not name them (per-launch cost only).
  double host_op_us = 0;               // per forward op: interpreter, module call, argument parsing, dispatcher
  // host_op_us split for model code that issues many torch calls inside one module (an LLM's eager code,
  // data/llm_code): a torch call's own dispatch, and the module call with the Python between module-level ops.
  double host_inline_op_us = 0;
  double host_module_call_us = 0;
  std::string llm_model_code;          // the eager LLM code decode/prefill/generate run by default (data/llm_code id)
  // What `--zero` means on this runtime in LLM training: "deepspeed" (DeepSpeed's ZeRO engine, stages 1-3 and
  // optimizer offload, with its module hooks: data/llm_training.toml [deepspeed]), "megatron-distributed-optimizer"
  // (Megatron's ZeRO-1 only) or "" (no ZeRO engine: --zero is refused).
  std::string zero_engine;
  // A graph that names its eager model code (Graph::model_code, data/graph_code) is charged, layer by layer, the
  // code's counted torch calls at host_inline_op_us and module calls at host_module_call_us instead of host_op_us
  // per graph op.
  bool count_model_code_calls = false;
  double host_autograd_op_us = 0;      // per forward op in training: recording its autograd node
  double host_backward_op_us = 0;      // per backward op: the autograd engine evaluating its node
  double host_library_call_us = 0;     // per convolution / GEMM call: cuDNN / cuBLAS descriptors, algorithm cache
  double host_optimizer_op_us = 0;     // per Python-level optimizer operation (per tensor in a for-loop, per list in foreach)
  double host_accumulate_grad_us = 0;  // per parameter tensor per backward: the engine's AccumulateGrad node
  double zero_grad_kernels_per_tensor = 0;  // zero_grad() launches per parameter tensor (zeroing kept gradients)
  double host_step_us = 0;             // per step: the training loop, zero_grad, backward() and step() entries
  double syncs_per_step = 0;           // host waits for the GPU this often per step (.item(), a timing harness's sync)
  bool amp_sync_before_update = false; // mixed precision: the loss scaler reads found_inf on the host before the update
  PerTensorOptimizer per_tensor;  // a harness's per-tensor clip and update (runtime/per_tensor_optimizer.h)
  bool fuse_elementwise_chains = false;    // elementwise/norm chains run as one kernel
  bool fuse_epilogue = false;              // bias/activation/residual fused into the producing conv (and GEMM)
  bool fuse_matmul_epilogue = false;       // ... into the producing GEMM (default: as fuse_epilogue)
  bool fold_bn_inference = false;          // inference batch norm folded into conv weights
  bool fuse_bn_activation_inference = false;  // inference batch norm (+ residual add) + ReLU run as one kernel
  // FP32 2-D convolution with bias, not 1x1, + ReLU runs as one kernel (TF grappler remapper _FusedConv2D); resolved
  // off for other precisions by runtime_for
  bool fuse_conv_bias_relu_fp32 = false;
  // The framework adds a convolution's bias in a pass of its own after the library call (eager PyTorch's
  // ConvBackend::Cudnn: output.add_(bias)), reading and writing the output once more
  bool conv_bias_separate_pass = false;
  bool fuse_conv_max_pool_int8 = false;  // an INT8 engine runs a max pool in the kernel of the convolution before it
  bool lrn_own_kernel = false;  // local response normalization is a layer of its own, never a fused epilogue
  // Thread instructions per element of that fused kernel (0 = bandwidth-bound like any streaming kernel).
  double bn_inference_instructions_per_element = 0;
  // Training batch norm over half weights (--precision fp16: the model itself is half) runs the framework's own
  // kernels, one thread block per channel reducing the statistics, not cuDNN's (PyTorch: cuDNN only for float
  // weights); such a kernel streams at the block-reduction rate of softmax and layer norm.
  bool half_batch_norm_native = false;
  // Training batch norm on NCHW (not channels-last) tensors that the framework hands to cuDNN runs in
  // CUDNN_BATCHNORM_SPATIAL mode, whose per-channel kernels stream slower than the NHWC persistent ones
  // (PyTorch cudnn/BatchNorm.cpp getCudnnBatchNormMode: SPATIAL_PERSISTENT for channels-last training only).
  bool cudnn_nchw_batch_norm = false;
  // Training batch norm computed by the convolutions around it (cuDNN's fused-ops API, NVIDIA's MLPerf MXNet
  // NormConvolution / BNStatsFinalize / ScaleBiasAddRelu): a convolution's epilogue writes its output's per-channel
  // sum and sum of squares, so the norm's statistics pass is gone; where the normalized output (after its ReLU) is
  // read by convolutions only, they apply scale, bias and ReLU to their operand as they load it, so the apply pass
  // is gone too; a residual add's two norms are applied in the add's own kernel. Forward passes only: the backward
  // keeps its passes.
  bool norm_convolution_training = false;
  int norm_convolution_min_sm = 0;  // the compute capability x 10 cuDNN's fused ops need (0 = any)
  // Training sums the two gradients at a residual fork without a kernel: the later gradient's producer (the
  // branch's first convolution's data gradient) adds into the sum's storage (MXNet's DetectInplaceAddTo: req
  // kAddTo, cuDNN beta = 1) and the gradient add is skipped. A two-input add's backward then costs one more read
  // of its output's size inside that producer's call, and no launch (cost/op_cost.cpp).
  bool residual_grad_addto = false;
  // Passes that native kernel's forward makes over the input (2: statistics, then normalize; THCUNN's: 3).
  double native_batch_norm_forward_reads = 2;
  // DRAM bytes per 32-bit random value that a dropout's random bits cost outside its fused kernel, in training.
  // 0: the framework draws them inside the kernel that applies the mask (PyTorch's Philox in the dropout kernel,
  // XLA's inlined PRNG). JAX before 0.4.27 lowered jax.random's threefry2x32 on GPU to jaxlib's CUDA kernel (a
  // custom call): its four operands (both key words and both counter halves, broadcast to the output's shape) are
  // written by XLA and read by the kernel, whose two output halves are written and then read by the fusion that
  // applies the mask: 24 bytes per value (data/runtimes/jax.toml).
  double dropout_rng_bytes_per_value = 0;
  // The runtime's documented default for choosing cuDNN convolution algorithms: true = it times them and keeps the
  // fastest (cudnn.benchmark = True, TF_CUDNN_USE_AUTOTUNE=1), false = cuDNN's heuristic ([conv] heuristic_fwd).
  // A request may name the other (PredictRequest::conv_algo); CostContext::conv_autotune is what is costed.
  bool conv_autotune = true;
  double conv_workspace_limit_bytes = 1e18;  // largest cuDNN workspace the autotuner may pick an algorithm with
  bool tf32_conv_default = false;          // "fp32" convolutions run as TF32 on sm_80+
  bool tf32_matmul_default = false;        // "fp32" matmuls run as TF32 on sm_80+
  // cuBLAS tensor-core GEMMs follow the CUDA 9.0 grid rule fitted to DeepBench's timings (data/tensor_gemm_fit.toml:
  // CTAs per SM for the full rate, no split-K) on the architectures that fit covers; set by a [[version]] rule for
  // releases whose GPU builds linked CUDA 9.x's cuBLAS.
  bool cublas_cuda9_tensor_grid = false;
  bool tf32_available = true;              // the framework can run TF32 at all (--precision tf32)
  bool nchw_tensor_core_transposes = false;  // NCHW<->NHWC transposes around tensor-core convolutions
  // The same transposes around TF32 tensor-core convolutions only: a runtime whose layout pass moves half-precision
  // graphs to NHWC but leaves FP32 graphs (TF32 on Ampere and later) in NCHW.
  bool nchw_tf32_tensor_core_transposes = false;
  std::vector<std::string> unsupported_precisions;  // precisions this runtime's kernels do not run (not modelled)
  bool inference_only = false;             // an inference engine: --mode train is an input error
  bool int8_convolution = false;           // has CUDA INT8 convolution kernels (--precision int8 on a CNN)
  // An INT8 fully connected layer on dp4a (sm_61) runs as the engine's int8x4 implicit-GEMM convolution kernel, a 1x1
  // convolution whose output pixels are the batch rows, or as its FP32 GEMM where that is faster (the builder's pick).
  bool dp4a_fully_connected_as_convolution = false;
  // --precision fp16/amp builds half kernels only where the GPU has fast FP16 (TensorRT's platformHasFastFp16): on a
  // GPU whose FP16 math runs below FP32 (sm_61) the engine keeps its FP32 kernels and tensors (resolve_precision).
  bool half_needs_fast_fp16 = false;
  // Depthwise convolutions run the framework's own direct kernel (no cuDNN call) unless cudnn_depthwise_half
  // and cudnn_depthwise send an FP16 one to cuDNN (PyTorch's conv_depthwise2d; docs/calibration.md).
  bool native_depthwise_conv = false;
  bool cudnn_depthwise_half = false;
  std::optional<DepthwiseCudnnDispatch> cudnn_depthwise;
  // Runs sequences without padding (packed tokens with per-sequence offsets): --seq-mean is what is costed.
  bool variable_sequence_length = false;
  // Tensor-core convolutions on inputs whose channels are not a multiple of 8 (the RGB layer): the runtime
  // reformats the input into a vectorized layout padded to this many channels (TensorRT kCHW4 for INT8, kHWC8
  // for FP16) and keeps the layer on tensor cores; 0 = the layer runs on CUDA cores in FP32 math.
  double conv_input_channel_pad_int8 = 0;
  double conv_input_channel_pad_half = 0;
  // A half-precision forward convolution whose ReLU (and bias) the runtime fuses into one library call (XLA's
  // cudnn_fused_conv_rewriter: cudnnConvolutionBiasActivationForward) runs on CUDA cores in FP32 math, with half
  // storage, on GPUs of this SM version and later; 0 = never. Set by a [[version]] rule for TensorFlow releases
  // whose XLA predates the architecture (data/runtimes/tensorflow-xla.toml [sources]).
  double fused_conv_half_cuda_cores_from_sm = 0;
  // XLA's CudnnPadForConvolutions (CudnnConvPadForTensorCores before): on Volta and later a half convolution with
  // 3 input channels and 32 or 64 output channels (an RGB input layer) gets its input and filter zero-padded to
  // this many channels by a pad kernel and runs on tensor cores, in the weight gradient too; a forward
  // convolution whose bias + ReLU was fused into it (cudnnConvolutionBiasActivationForward) is skipped and stays
  // on CUDA cores. 0 = never (data/runtimes/tensorflow-xla.toml [sources]).
  double rgb_conv_pad_half = 0;
  bool native_half_elementwise = false;    // fp16 elementwise kernels compute in half (Eigen), not in float
  bool nhwc_conv_transposes = false;       // NHWC tensors: every convolution runs in NCHW between two transposes
  bool autocast_softmax_fp32 = false;      // mixed precision runs softmax in FP32 (FP32 probabilities in DRAM)
  // Mixed precision casts per op at dispatch (torch.autocast): each weight a low-precision op takes is cast by a
  // framework op every forward (and its gradient cast back by an autograd node), and an activation an FP32-list op
  // (layer norm, softmax) or the FP32 input produced is cast again by each low-precision op that reads it.
  bool autocast_per_op_casts = false;
  // Mixed precision by graph rewrite (TensorFlow's auto_mixed_precision): layer normalization (its Mean is on the
  // deny list) and the infer-list ops around it (its scale and shift, the residual add and dropout before it) stay
  // FP32, so the residual stream is stored in FP32 and the GEMMs after a LayerNorm read a half copy of it.
  bool amp_fp32_layer_norm = false;
  // Mixed precision: the loss scaler unscales each gradient as it is computed (TensorFlow's
  // LossScaleOptimizer.compute_gradients), so with gradient accumulation every micro-batch pays the pass.
  bool amp_unscale_per_micro_batch = false;
  // Mixed precision keeps the variables FP32 and casts them where a half op reads them (TensorFlow), so their
  // gradients arrive FP32: the unscale reads and writes 4 bytes per parameter (as under autocast).
  bool amp_fp32_variables = false;
  // Unfused attention whose scale, mask and softmax run as one kernel (Megatron-LM's fused scale-mask-softmax),
  // with dropout still its own kernel; without it each step is a kernel (or one chain when fusing elementwise).
  bool fused_scale_mask_softmax = false;
  // Eager attention whose per-head Q, K, V and context tensors are permuted views of the [batch, seq, hidden]
  // projections: torch.matmul reshapes each to [batch x heads, seq, head_dim], which copies a non-viewable permute,
  // and the context's .contiguous() copies it back; backward copies each gradient back the same way. Each copy
  // reads and writes the tensor once (4 per phase), a kernel each.
  bool attention_head_copies = false;
  // Eager autograd gives a linear layer's bias its gradient by summing dY over the rows (the broadcast's
  // sum_to_size in addmm's and add's backward): one reduction kernel per biased layer in backward, reading dY.
  bool linear_bias_grad_kernel = false;
  // Eager softmax backward on CUDA forms the product of the gradient and the probabilities as a kernel of its own
  // (ATen's softmax_backward_cuda_out: tmp = grad * output, then the softmax backward kernel reads tmp and the
  // probabilities): one more pass over the scores in backward, reading two tensors and writing one.
  bool softmax_grad_product_kernel = false;
  // Eager PyTorch runs Hugging Face's gelu_new (NewGELUActivation, written as eight torch calls) as that many
  // kernels, and autograd runs its backward node by node: a graph op marked Op::gelu_new_code is costed as the chain
  // of data/eager_activations.toml [gelu_new] (src/cost/activation_chains.h) instead of one elementwise pass.
  bool gelu_new_kernels = false;
  // The runtime hands cuBLAS a tensor-core GEMM whose leading dimensions are not multiples of 16 bytes as it is
  // (no padding): cuBLAS then runs an under-aligned kernel ([gemm] misaligned_tensor_efficiency_*; XLA pads such
  // GEMMs to multiples of 8 itself, TensorRT and Inductor choose or pad their own, Megatron-LM pads its vocabulary).
  // On for pytorch and torchscript; every GEMM those runtimes cost takes it (gemm_alignment_efficiency, op_cost.h).
  bool gemm_alignment_fallback = false;
  bool fused_attention = false;            // attention runs as one kernel (scores never reach DRAM)
  // ONNX Runtime's Attention op runs TensorRT's fused MHA kernel on half-precision cores that
  // data/attention.toml [onnxruntime_fused_mha] admits (GPU, head size, sequence length).
  bool fused_mha_half = false;
  // Inference GEMMs that read the same input with the same shape of reduction (BERT's Q, K and V projections) run
  // as one GEMM over their concatenated weights (TensorRT's horizontal fusion; demoBERT builds them as one layer).
  bool fuse_parallel_gemms = false;
  // Inference concatenations whose every input is a kernel's output read by nothing else run no kernel: the
  // producers write straight into their slice of the output (TensorRT's builder, "Eliminating concatenation").
  bool elide_concat = false;
  // Inference and training forward: a pointwise op feeding a LayerNorm / RMSNorm runs inside the norm's kernel
  // (TorchInductor fuses a pointwise producer into the reduction that reads it), so the norm reads nothing back.
  bool fuse_pointwise_into_norm = false;
  // ONNX Runtime's fused contrib ops (docs/host-model.md): kernels one Attention node launches (its Q/K/V
  // projection included), the extra DRAM passes its bias-broadcast GEMM and transposes make over the QKV and
  // context tensors, and kernels one EmbedLayerNormalization node launches. 0 = the runtime has no such node.
  double attention_op_kernels = 0;
  double attention_op_qkv_passes = 0;
  double attention_op_context_passes = 0;
  double embed_layer_norm_op_kernels = 0;
  double library_efficiency = 1;            // conv/GEMM kernel rate of its cuDNN/cuBLAS generation vs cuDNN 7+
  std::map<int, double> library_efficiency_by_sm;  // tensor-core kernels only, per architecture (e.g. {80: 0.8})
  double optimizer_kernels_per_tensor = 1;   // optimizer launches per parameter tensor
  bool optimizer_fused = true;               // the update is one pass over weights, gradients and state
  double optimizer_tensors_per_launch = 1;   // unfused updates: tensors one launch of an operation covers
  bool gradients_at_cluster_end = false;     // compiled clusters release their gradients only when they finish
  double context_bytes = 5e8;
  double workspace_bytes = 2.7e8;
  // cuBLAS workspaces the framework allocates through its caching allocator, one per (handle, stream): handles are
  // per thread, so training holds one for the forward thread and one for the autograd engine's device thread.
  double cublas_workspace_bytes = 0;              // per handle
  std::map<int, double> cublas_workspace_bytes_by_sm;  // per handle, where the default differs (e.g. {90: 32 MiB})
  double cublaslt_workspace_bytes = 0;            // per handle (cuBLASLt's own pool)
  double blas_threads_training = 1;               // threads holding a handle in a training step
  double allocator_overhead = 1.0;
  // What a graph executor keeps for backward beside the graph's saved tensors, and how it holds the step's state
  // (TensorFlow 1.x graph mode: data/runtimes/tensorflow.toml, docs/memory.md). The defaults are eager PyTorch's.
  double dropout_mask_bytes = 1;              // per element of a dropout mask kept for backward (a bool: 1; float: 4)
  bool dropout_mask_in_activation_dtype = false;  // the mask is a tensor of the activation's dtype (TF: x's), not
                                               // dropout_mask_bytes wide
  double gelu_saved_intermediates = 0;        // GELU run as primitive ops: extra output-sized tensors kept
  double layer_norm_saved_intermediates = 0;  // layer norm run as primitive ops: extra output-sized tensors kept
  // Gradients are tensors of the step, made in backward and freed by the update (graph mode), not .grad buffers
  // held between steps: the peak walks backward with the gradients made so far.
  bool step_scoped_gradients = false;
  // An unfused update's products that do not read the gradient (beta1 * m, beta2 * v, decay * w) run as soon as the
  // step starts, as a dataflow executor runs every ready node, and are held until the gradient arrives.
  bool update_products_at_step_start = false;
  // The allocator's region leaves this much of the memory free after the context to the system: max(fraction x
  // free, min bytes) (TensorFlow's gpu_device.cc MinSystemMemory); 0 = the whole card.
  double allocator_reserve_fraction = 0;
  double allocator_reserve_min_bytes = 0;
  // Language-model serving (prefill/decode, src/analysis/llm_predict.cpp). The defaults describe a framework
  // running the Hugging Face model eagerly, so runtime files without these keys stay valid.
  bool llm_gguf = false;                  // runs GGUF block types with llama.cpp's kernels (MMVQ, MMQ, dequant + cuBLAS)
  bool llm_fp16_accumulate = false;       // its FP16 cuBLAS GEMMs accumulate in FP16 (full rate on GeForce boards)
  double llm_activation_bytes = 2;        // activations between kernels (llama.cpp keeps them in f32)
  std::string llm_kv_default = "f16";     // KV-cache type when --kv-precision is not given ("model": the weights' compute dtype)
  bool llm_fused_attention = false;       // flash / paged attention kernels (no score matrix in DRAM)
  // Generation-phase attention reads each KV head once for all the query heads that share it (XQA, paged and
  // flash decode kernels); false: one thread block per query head streams its KV head (TensorRT-LLM's masked
  // MHA kernel), so grouped-query models re-read the cache heads / kv_heads times.
  bool llm_decode_shared_kv = true;
  // Where the grouped-query kernel does not run (or the model has one KV head per query head), generation
  // attention is TensorRT-LLM's masked MHA kernel: CUDA-core dot products per query head, the cache converted to
  // float element by element (data/quantization.toml [masked_mha]), bound by that issue work or by DRAM.
  bool llm_masked_mha_decode = false;
  // The fused context-phase (prefill) attention runs in FP8 when the GEMMs do; false: it stays in the half
  // precision the attention plugin is built in (TensorRT-LLM before `--use_fp8_context_fmha`).
  bool llm_fp8_context_attention = true;
  // Sliding-window models (AttentionGeometry::window): the engine's prefill and decode attention kernels skip the
  // keys outside the window (flash window_size, a paged decode over the window's blocks); false: every cached key
  // is scored and masked.
  bool llm_window_attention = false;
  // The engine's KV cache holds at most the window's positions per sequence (a rolling buffer, or paged blocks
  // freed once they leave the window); false: every position stays cached.
  bool llm_window_kv_cache = false;
  double llm_matvec_max_batch = 1;        // tokens per matmul that still run as mat-vec kernels
  double llm_int8_tile_max_batch = 32;    // llama.cpp: int8 tile (MMQ) kernels up to this many tokens on tensor-core GPUs
  double llm_ubatch = 0;                  // prompt tokens per forward pass (0 = the whole prompt at once)
  bool llm_prefill_all_logits = false;    // the LM head runs on every prompt token, not only the last
  double llm_min_sm = 0;                  // oldest compute capability the runtime runs on (70 = sm_70)
  double llm_memory_fraction = 1;         // share of GPU memory the runtime may use (vLLM gpu_memory_utilization)
  double llm_step_host_us = 0;            // host work per forward pass the GPU waits for (graph build, logits sync)
  // A serving engine's output processing per generation step on the host (vLLM LLMEngine._process_model_outputs:
  // the sampled token appended to each sequence, incremental detokenization, stop checks, request outputs): a
  // per-step part and a part per running sequence, at the reference host. It waits for the step's sampled tokens;
  // llm_output_async: it runs while the next step's forward pass is on the GPU (vLLM >= 0.6's asynchronous output
  // processor), so a step lasts the longer of the two; false: the next step is scheduled only after it.
  double llm_output_step_us = 0;
  double llm_output_seq_us = 0;
  bool llm_output_async = false;
  std::optional<ServingProfile> serving;     // serving engines: how they batch requests (--mode serve)
  std::string framework;                    // runtimes of one framework share versions ("tensorflow" for -xla too)
  std::string default_version;              // the version the profile's defaults describe ("" = unspecified)
  std::vector<VersionRule> version_rules;  // in file order; later rules win
  std::map<std::string, std::string> sources;
  bool operator==(const RuntimeProfile&) const = default;
};

// The entry of the runtime's library_efficiency_by_sm for an sm_<sm_version> GPU (its tensor-core library kernels'
// rate there), 1 when the map has none. The one lookup: CostContext (cost/op_cost.h) holds it for a request.
double tensor_library_efficiency(const RuntimeProfile& runtime, int sm_version);

// The conv_algo column / --conv-algo value: "autotune" (time every algorithm, keep the fastest), "heuristic"
// (cuDNN's heuristic choice), or "" for the runtime's own default (its conv_autotune). InputError naming the nearest
// value for anything else.
bool conv_autotune_for(std::string_view conv_algo, const RuntimeProfile& runtime);
// The same check without a runtime (flags are checked before any profile is loaded).
void check_conv_algo(std::string_view conv_algo);
// "autotune" or "heuristic": what a request's convolutions are costed with (conv_autotune_for), for reports.
std::string_view conv_algo_name(bool autotune);

// The profile as it behaves at `version` ("2.3", "1.15.4"): every matching [[version]] rule applied in order to a
// copy. The version itself stays with the request (PredictRequest::runtime_version). InputError when the text is
// not a dotted version.
RuntimeProfile at_version(RuntimeProfile runtime, const std::string& version);

// InputError unless `version` is a dotted version ("2.4", "1.15.4").
void check_version(const std::string& version);

// Compares dotted versions numerically ("1.15" > "1.9"); missing parts count as 0.
int compare_versions(const std::string& a, const std::string& b);

// One runtime file (data/runtimes/<id>.toml); InputError naming the file and field when it is malformed.
RuntimeProfile load_runtime(const std::filesystem::path& path);

const std::vector<RuntimeProfile>& runtime_catalog();

// InputError with the nearest id when unknown.
const RuntimeProfile& find_runtime(std::string_view id);

}  // namespace perfcast
