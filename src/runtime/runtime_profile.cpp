#include "runtime/runtime_profile.h"

#include <cmath>
#include <filesystem>
#include <sstream>
#include <utility>

#include "core/error.h"

#include "core/data_files.h"
#include "core/find_by_id.h"
#include "core/toml_folder.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

// Switches a [[version]] rule may set, by their key in the runtime file.
bool* version_switch(RuntimeProfile& r, const std::string& key) {
  if (key == "tf32_conv_default") return &r.tf32_conv_default;
  if (key == "tf32_matmul_default") return &r.tf32_matmul_default;
  if (key == "tf32_available") return &r.tf32_available;
  if (key == "cublas_cuda9_tensor_grid") return &r.cublas_cuda9_tensor_grid;
  if (key == "fuse_epilogue") return &r.fuse_epilogue;
  if (key == "fuse_matmul_epilogue") return &r.fuse_matmul_epilogue;
  if (key == "fuse_elementwise_chains") return &r.fuse_elementwise_chains;
  if (key == "nchw_tensor_core_transposes") return &r.nchw_tensor_core_transposes;
  if (key == "nchw_tf32_tensor_core_transposes") return &r.nchw_tf32_tensor_core_transposes;
  if (key == "nhwc_conv_transposes") return &r.nhwc_conv_transposes;
  if (key == "fuse_bn_activation_inference") return &r.fuse_bn_activation_inference;
  if (key == "fuse_conv_bias_relu_fp32") return &r.fuse_conv_bias_relu_fp32;
  if (key == "conv_bias_separate_pass") return &r.conv_bias_separate_pass;
  if (key == "autocast_softmax_fp32") return &r.autocast_softmax_fp32;
  if (key == "autocast_per_op_casts") return &r.autocast_per_op_casts;
  if (key == "amp_fp32_layer_norm") return &r.amp_fp32_layer_norm;
  if (key == "fused_attention") return &r.fused_attention;
  if (key == "fused_mha_half") return &r.fused_mha_half;
  if (key == "fuse_parallel_gemms") return &r.fuse_parallel_gemms;
  if (key == "elide_concat") return &r.elide_concat;
  if (key == "fuse_pointwise_into_norm") return &r.fuse_pointwise_into_norm;
  if (key == "cudnn_depthwise_half") return &r.cudnn_depthwise_half;
  if (key == "half_batch_norm_native") return &r.half_batch_norm_native;
  if (key == "cudnn_nchw_batch_norm") return &r.cudnn_nchw_batch_norm;
  if (key == "norm_convolution_training") return &r.norm_convolution_training;
  if (key == "residual_grad_addto") return &r.residual_grad_addto;
  if (key == "llm_decode_shared_kv") return &r.llm_decode_shared_kv;
  if (key == "llm_fp8_context_attention") return &r.llm_fp8_context_attention;
  if (key == "llm_window_attention") return &r.llm_window_attention;
  if (key == "llm_window_kv_cache") return &r.llm_window_kv_cache;
  // vLLM 0.6 moved output processing beside the next forward pass (the asynchronous output processor).
  if (key == "llm_output_async") return &r.llm_output_async;
  // TensorFlow 1.x graph mode holds its step's gradients and update products as graph tensors.
  if (key == "step_scoped_gradients") return &r.step_scoped_gradients;
  if (key == "update_products_at_step_start") return &r.update_products_at_step_start;
  return nullptr;
}

// Numeric settings a [[version]] rule may set (a library generation's kernel rate, per-op dispatch cost).
double* version_number(RuntimeProfile& r, const std::string& key) {
  if (key == "library_efficiency") return &r.library_efficiency;
  if (key == "host_overhead_per_kernel_us") return &r.host_overhead_per_kernel_us;
  if (key == "host_op_us") return &r.host_op_us;
  if (key == "host_autograd_op_us") return &r.host_autograd_op_us;
  if (key == "host_backward_op_us") return &r.host_backward_op_us;
  if (key == "host_library_call_us") return &r.host_library_call_us;
  if (key == "host_optimizer_op_us") return &r.host_optimizer_op_us;
  if (key == "host_step_us") return &r.host_step_us;
  if (key == "optimizer_tensors_per_launch") return &r.optimizer_tensors_per_launch;
  if (key == "host_accumulate_grad_us") return &r.host_accumulate_grad_us;
  if (key == "zero_grad_kernels_per_tensor") return &r.zero_grad_kernels_per_tensor;
  // A fused contrib op's kernels changed between releases (ONNX Runtime's Attention: docs/host-model.md).
  if (key == "attention_op_kernels") return &r.attention_op_kernels;
  if (key == "attention_op_qkv_passes") return &r.attention_op_qkv_passes;
  if (key == "attention_op_context_passes") return &r.attention_op_context_passes;
  if (key == "embed_layer_norm_op_kernels") return &r.embed_layer_norm_op_kernels;
  // A serving engine's scheduler changed between releases (SGLang's overlap scheduler arrived in 0.4).
  if (r.serving && key == "serving.scheduler_us_per_step") return &r.serving->scheduler_us_per_step;
  if (r.serving && key == "serving.scheduler_overlap") return &r.serving->scheduler_overlap;
  if (key == "context_bytes") return &r.context_bytes;
  // PyTorch allocates cuBLAS's workspace itself only from 1.13 (before, cuBLAS kept its own).
  if (key == "cublas_workspace_bytes") return &r.cublas_workspace_bytes;
  if (key == "cublaslt_workspace_bytes") return &r.cublaslt_workspace_bytes;
  if (key == "native_batch_norm_forward_reads") return &r.native_batch_norm_forward_reads;
  // JAX 0.4.27 moved threefry on GPU from a kernel call into XLA (jax CHANGELOG).
  if (key == "dropout_rng_bytes_per_value") return &r.dropout_rng_bytes_per_value;
  // XLA releases that predate an architecture ran their fused half convolutions off its tensor cores.
  if (key == "fused_conv_half_cuda_cores_from_sm") return &r.fused_conv_half_cuda_cores_from_sm;
  // What a release's graph code keeps for backward (TensorFlow 1.x runs GELU and layer norm as primitive ops).
  if (key == "dropout_mask_bytes") return &r.dropout_mask_bytes;
  if (key == "gelu_saved_intermediates") return &r.gelu_saved_intermediates;
  if (key == "layer_norm_saved_intermediates") return &r.layer_norm_saved_intermediates;
  // A serving engine's per-step output processing changed between releases (vLLM's V0 and V1 engines).
  if (key == "llm_output_step_us") return &r.llm_output_step_us;
  if (key == "llm_output_seq_us") return &r.llm_output_seq_us;
  return nullptr;
}

std::vector<int> version_parts(const std::string& v) {
  if (!v.empty() && (v.back() == '.' || v.front() == '.'))
    throw InputError("runtime version '" + v + "' is not a dotted version like 2.4 or 1.15.4");
  std::vector<int> parts;
  std::stringstream in(v);
  std::string part;
  while (std::getline(in, part, '.')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6)
      throw InputError("runtime version '" + v + "' is not a dotted version like 2.4 or 1.15.4");
    parts.push_back(std::stoi(part));
  }
  if (parts.empty()) throw InputError("runtime version is empty");
  return parts;
}

// [cudnn_depthwise]: min_sm, min_channels and the shape rules.
DepthwiseCudnnDispatch read_depthwise_dispatch(const toml::table& t, const std::filesystem::path& path) {
  const TomlFields f(t, "runtime file '" + path.string() + "' [cudnn_depthwise]");
  DepthwiseCudnnDispatch d;
  d.min_sm = f.number("min_sm");
  d.min_channels = f.number("min_channels");
  const auto* rules = f.has("rules") ? t["rules"].as_array() : nullptr;
  if (!rules) f.fail("rules", "must be an array of rule tables {stride = ..., filters = [...], ...}");
  for (const auto& node : *rules) {
    const auto* rt = node.as_table();
    if (!rt) f.fail("rules", "entries must be tables {stride = ..., filters = [...], ...}");
    const TomlFields fr(*rt, "runtime file '" + path.string() + "' [cudnn_depthwise] rule");
    DepthwiseCudnnRule r;
    r.dims = fr.count_or("dims", 2);
    if (r.dims != 1 && r.dims != 2) fr.fail("dims", "must be 1 or 2");
    r.stride = fr.count("stride");
    if (r.stride < 1) fr.fail("stride", "must be at least 1");
    r.filters = fr.count_list("filters", 1, 1 << 10);
    r.min_batch = fr.number_or("min_batch", 0);
    r.max_batch = fr.number_or("max_batch", 0);
    r.min_channels = fr.number_or("min_channels", 0);
    r.min_width = fr.number_or("min_width", 0);
    r.max_width = fr.number_or("max_width", 0);
    fr.refuse_unknown_keys();
    d.rules.push_back(std::move(r));
  }
  f.refuse_unknown_keys();
  return d;
}

// A "from this SM version on" number (fused_conv_half_cuda_cores_from_sm): 0 (never) or a whole SM version
// 50..200. The top-level key and a [[version]] rule's take this one check.
void check_sm_from(const TomlFields& f, const std::string& key, double v) {
  if (v != 0 && (!(v >= 50 && v <= 200) || v != static_cast<double>(static_cast<int>(v))))
    f.fail(key, "must be 0 (never) or an SM version like 80");
}

}  // namespace

void check_conv_algo(std::string_view conv_algo) {
  if (!conv_algo.empty() && conv_algo != "autotune" && conv_algo != "heuristic")
    throw_unknown("convolution algorithm choice (--conv-algo, conv_algo column)", conv_algo, {"autotune", "heuristic"});
}

bool conv_autotune_for(std::string_view conv_algo, const RuntimeProfile& runtime) {
  check_conv_algo(conv_algo);
  return conv_algo.empty() ? runtime.conv_autotune : conv_algo == "autotune";
}

std::string_view conv_algo_name(bool autotune) { return autotune ? "autotune" : "heuristic"; }

RuntimeProfile load_runtime(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  TomlFields f(t, "runtime file '" + path.string() + "'");
  RuntimeProfile r;
  r.id = f.text("id");
  r.name = f.text("name");
  r.host_overhead_per_kernel_us = f.number("host_overhead_per_kernel_us");
  r.gpu_gap_per_kernel_us = f.number("gpu_gap_per_kernel_us");
  for (auto [key, field] : {std::pair{"host_op_us", &r.host_op_us}, {"host_autograd_op_us", &r.host_autograd_op_us},
                            {"host_backward_op_us", &r.host_backward_op_us},
                            {"host_inline_op_us", &r.host_inline_op_us},
                            {"host_module_call_us", &r.host_module_call_us},
                            {"host_library_call_us", &r.host_library_call_us},
                            {"host_optimizer_op_us", &r.host_optimizer_op_us}, {"host_step_us", &r.host_step_us},
                            {"syncs_per_step", &r.syncs_per_step},
                            {"host_accumulate_grad_us", &r.host_accumulate_grad_us},
                            {"zero_grad_kernels_per_tensor", &r.zero_grad_kernels_per_tensor},
                            {"attention_op_kernels", &r.attention_op_kernels},
                            {"attention_op_qkv_passes", &r.attention_op_qkv_passes},
                            {"attention_op_context_passes", &r.attention_op_context_passes},
                            {"embed_layer_norm_op_kernels", &r.embed_layer_norm_op_kernels}}) {
    *field = f.number_or(key, 0);
    if (*field < 0 || *field > 1e6) f.fail(key, "must be between 0 and 1e6");
  }
  // The two halves are the trace fit's parts of host_op_us (tools/host_trace_costs.py): a file that gives them
  // must keep the whole equal to their sum.
  if ((r.host_inline_op_us > 0 || r.host_module_call_us > 0) &&
      std::abs(r.host_inline_op_us + r.host_module_call_us - r.host_op_us) > 0.05)
    f.fail("host_op_us", "must equal host_inline_op_us + host_module_call_us");
  r.fuse_elementwise_chains = f.boolean("fuse_elementwise_chains");
  r.fuse_epilogue = f.boolean("fuse_epilogue");
  // GEMM epilogues follow the convolution rule unless the file says otherwise.
  r.fuse_matmul_epilogue = f.boolean_or("fuse_matmul_epilogue", r.fuse_epilogue);
  r.fold_bn_inference = f.boolean("fold_bn_inference");
  r.conv_autotune = f.boolean("conv_autotune");
  r.tf32_conv_default = f.boolean("tf32_conv_default");
  r.tf32_matmul_default = f.boolean("tf32_matmul_default");
  r.nchw_tensor_core_transposes = f.boolean("nchw_tensor_core_transposes");
  r.optimizer_kernels_per_tensor = f.number("optimizer_kernels_per_tensor");
  r.library_efficiency = f.number("library_efficiency");
  r.library_efficiency_by_sm = f.by_sm("library_efficiency_by_sm");
  r.context_bytes = f.number("context_bytes");
  r.workspace_bytes = f.number("workspace_bytes");
  r.allocator_overhead = f.number("allocator_overhead");
  r.dropout_mask_bytes = f.number_or("dropout_mask_bytes", r.dropout_mask_bytes);
  r.gelu_saved_intermediates = f.number_or("gelu_saved_intermediates", r.gelu_saved_intermediates);
  r.layer_norm_saved_intermediates = f.number_or("layer_norm_saved_intermediates", r.layer_norm_saved_intermediates);
  r.allocator_reserve_fraction = f.number_or("allocator_reserve_fraction", r.allocator_reserve_fraction);
  r.allocator_reserve_min_bytes = f.number_or("allocator_reserve_min_bytes", r.allocator_reserve_min_bytes);
  if (!(r.dropout_mask_bytes >= 1) || r.gelu_saved_intermediates < 0 || r.layer_norm_saved_intermediates < 0)
    f.fail("dropout_mask_bytes", "dropout_mask_bytes must be >= 1 and the saved intermediates >= 0");
  if (r.allocator_reserve_fraction < 0 || r.allocator_reserve_fraction >= 1 || r.allocator_reserve_min_bytes < 0)
    f.fail("allocator_reserve_fraction", "must be in [0, 1), and allocator_reserve_min_bytes >= 0");
  r.cublas_workspace_bytes = f.number_or("cublas_workspace_bytes", 0);
  r.cublaslt_workspace_bytes = f.number_or("cublaslt_workspace_bytes", 0);
  r.blas_threads_training = f.number_or("blas_threads_training", 1);
  if (r.cublas_workspace_bytes < 0 || r.cublaslt_workspace_bytes < 0 || r.blas_threads_training < 1)
    f.fail("cublas_workspace_bytes", "workspaces must be >= 0 and blas_threads_training >= 1");
  r.cublas_workspace_bytes_by_sm = f.by_sm("cublas_workspace_bytes_by_sm");
  for (const auto& [sm, bytes] : r.cublas_workspace_bytes_by_sm)
    if (bytes < 0) f.fail("cublas_workspace_bytes_by_sm", "entry sm_" + std::to_string(sm) + " must be >= 0");
  r.fuse_bn_activation_inference = f.boolean_or("fuse_bn_activation_inference", r.fuse_bn_activation_inference);
  r.fuse_conv_bias_relu_fp32 = f.boolean_or("fuse_conv_bias_relu_fp32", r.fuse_conv_bias_relu_fp32);
  r.nchw_tf32_tensor_core_transposes = f.boolean_or("nchw_tf32_tensor_core_transposes", r.nchw_tf32_tensor_core_transposes);
  r.cublas_cuda9_tensor_grid = f.boolean_or("cublas_cuda9_tensor_grid", r.cublas_cuda9_tensor_grid);
  r.fuse_conv_max_pool_int8 = f.boolean_or("fuse_conv_max_pool_int8", r.fuse_conv_max_pool_int8);
  r.conv_bias_separate_pass = f.boolean_or("conv_bias_separate_pass", r.conv_bias_separate_pass);
  r.lrn_own_kernel = f.boolean_or("lrn_own_kernel", r.lrn_own_kernel);
  r.tf32_available = f.boolean_or("tf32_available", r.tf32_available);
  r.autocast_softmax_fp32 = f.boolean_or("autocast_softmax_fp32", r.autocast_softmax_fp32);
  r.autocast_per_op_casts = f.boolean_or("autocast_per_op_casts", r.autocast_per_op_casts);
  r.amp_fp32_layer_norm = f.boolean_or("amp_fp32_layer_norm", r.amp_fp32_layer_norm);
  r.amp_unscale_per_micro_batch = f.boolean_or("amp_unscale_per_micro_batch", r.amp_unscale_per_micro_batch);
  r.amp_fp32_variables = f.boolean_or("amp_fp32_variables", r.amp_fp32_variables);
  r.fused_scale_mask_softmax = f.boolean_or("fused_scale_mask_softmax", r.fused_scale_mask_softmax);
  r.attention_head_copies = f.boolean_or("attention_head_copies", r.attention_head_copies);
  r.count_model_code_calls = f.boolean_or("count_model_code_calls", r.count_model_code_calls);
  if (r.count_model_code_calls && r.host_inline_op_us <= 0)
    f.fail("count_model_code_calls", "needs host_inline_op_us and host_module_call_us");
  r.linear_bias_grad_kernel = f.boolean_or("linear_bias_grad_kernel", r.linear_bias_grad_kernel);
  r.softmax_grad_product_kernel = f.boolean_or("softmax_grad_product_kernel", r.softmax_grad_product_kernel);
  r.gelu_new_kernels = f.boolean_or("gelu_new_kernels", r.gelu_new_kernels);
  r.gemm_alignment_fallback = f.boolean_or("gemm_alignment_fallback", r.gemm_alignment_fallback);
  r.conv_workspace_limit_bytes = f.number_or("conv_workspace_limit_bytes", r.conv_workspace_limit_bytes);
  r.fused_attention = f.boolean_or("fused_attention", r.fused_attention);
  r.fused_mha_half = f.boolean_or("fused_mha_half", r.fused_mha_half);
  r.fuse_parallel_gemms = f.boolean_or("fuse_parallel_gemms", r.fuse_parallel_gemms);
  r.elide_concat = f.boolean_or("elide_concat", r.elide_concat);
  r.fuse_pointwise_into_norm = f.boolean_or("fuse_pointwise_into_norm", r.fuse_pointwise_into_norm);
  r.nhwc_conv_transposes = f.boolean_or("nhwc_conv_transposes", r.nhwc_conv_transposes);
  r.native_half_elementwise = f.boolean_or("native_half_elementwise", r.native_half_elementwise);
  r.inference_only = f.boolean_or("inference_only", r.inference_only);
  r.int8_convolution = f.boolean_or("int8_convolution", r.int8_convolution);
  r.dp4a_fully_connected_as_convolution =
      f.boolean_or("dp4a_fully_connected_as_convolution", r.dp4a_fully_connected_as_convolution);
  r.half_needs_fast_fp16 = f.boolean_or("half_needs_fast_fp16", r.half_needs_fast_fp16);
  r.native_depthwise_conv = f.boolean_or("native_depthwise_conv", r.native_depthwise_conv);
  r.cudnn_depthwise_half = f.boolean_or("cudnn_depthwise_half", r.cudnn_depthwise_half);
  if (f.has("cudnn_depthwise")) r.cudnn_depthwise = read_depthwise_dispatch(f.table("cudnn_depthwise"), path);
  r.variable_sequence_length = f.boolean_or("variable_sequence_length", r.variable_sequence_length);
  r.conv_input_channel_pad_int8 = f.number_or("conv_input_channel_pad_int8", r.conv_input_channel_pad_int8);
  r.conv_input_channel_pad_half = f.number_or("conv_input_channel_pad_half", r.conv_input_channel_pad_half);
  for (const char* key : {"conv_input_channel_pad_int8", "conv_input_channel_pad_half"}) {
    const double v = f.number_or(key, 0);
    if (v < 0 || v > 64 || v != static_cast<double>(static_cast<int>(v))) f.fail(key, "must be a whole number 0-64");
  }
  r.fused_conv_half_cuda_cores_from_sm =
      f.number_or("fused_conv_half_cuda_cores_from_sm", r.fused_conv_half_cuda_cores_from_sm);
  check_sm_from(f, "fused_conv_half_cuda_cores_from_sm", r.fused_conv_half_cuda_cores_from_sm);
  r.rgb_conv_pad_half = f.number_or("rgb_conv_pad_half", r.rgb_conv_pad_half);
  if (const double v = r.rgb_conv_pad_half; v != 0 && v != 4 && v != 8)
    f.fail("rgb_conv_pad_half", "must be 0 (never), 4 or 8 channels");
  r.optimizer_fused = f.boolean_or("optimizer_fused", r.optimizer_fused);
  r.optimizer_tensors_per_launch = f.number_or("optimizer_tensors_per_launch", r.optimizer_tensors_per_launch);
  if (r.optimizer_tensors_per_launch < 1) f.fail("optimizer_tensors_per_launch", "must be at least 1");
  r.amp_sync_before_update = f.boolean_or("amp_sync_before_update", r.amp_sync_before_update);
  r.gradients_at_cluster_end = f.boolean_or("gradients_at_cluster_end", r.gradients_at_cluster_end);
  r.step_scoped_gradients = f.boolean_or("step_scoped_gradients", r.step_scoped_gradients);
  r.dropout_mask_in_activation_dtype = f.boolean_or("dropout_mask_in_activation_dtype", r.dropout_mask_in_activation_dtype);
  r.update_products_at_step_start = f.boolean_or("update_products_at_step_start", r.update_products_at_step_start);
  if (f.has("unsupported_precisions") && !t["unsupported_precisions"].as_array())
    f.fail("unsupported_precisions", "must be an array of precision names");
  if (const auto* list = t["unsupported_precisions"].as_array())
    for (const auto& v : *list) {
      const auto name = v.value<std::string>();
      if (!name) f.fail("unsupported_precisions", "must be an array of precision names");
      r.unsupported_precisions.push_back(*name);
    }
  r.bn_inference_instructions_per_element =
      f.number_or("bn_inference_instructions_per_element", r.bn_inference_instructions_per_element);
  if (r.bn_inference_instructions_per_element < 0) f.fail("bn_inference_instructions_per_element", "must be >= 0");
  r.half_batch_norm_native = f.boolean_or("half_batch_norm_native", r.half_batch_norm_native);
  r.cudnn_nchw_batch_norm = f.boolean_or("cudnn_nchw_batch_norm", r.cudnn_nchw_batch_norm);
  r.norm_convolution_training = f.boolean_or("norm_convolution_training", r.norm_convolution_training);
  r.norm_convolution_min_sm = f.count_or("norm_convolution_min_sm", r.norm_convolution_min_sm, 1000);
  r.residual_grad_addto = f.boolean_or("residual_grad_addto", r.residual_grad_addto);
  r.native_batch_norm_forward_reads = f.number_or("native_batch_norm_forward_reads", r.native_batch_norm_forward_reads);
  if (!(r.native_batch_norm_forward_reads >= 1)) f.fail("native_batch_norm_forward_reads", "must be >= 1");
  r.dropout_rng_bytes_per_value = f.number_or("dropout_rng_bytes_per_value", r.dropout_rng_bytes_per_value);
  if (!(r.dropout_rng_bytes_per_value >= 0)) f.fail("dropout_rng_bytes_per_value", "must be >= 0");
  // A version named in the file: dotted digits, or an error naming the key.
  const auto checked_version = [&](const std::string& key, const std::string& text) {
    try {
      version_parts(text);
    } catch (const InputError&) {
      f.fail(key, "'" + text + "' is not a dotted version like 2.4");
    }
    return text;
  };
  r.llm_gguf = f.boolean_or("llm_gguf", r.llm_gguf);
  r.llm_fp16_accumulate = f.boolean_or("llm_fp16_accumulate", r.llm_fp16_accumulate);
  r.llm_activation_bytes = f.number_or("llm_activation_bytes", r.llm_activation_bytes);
  r.llm_kv_default = f.text_or("llm_kv_default", r.llm_kv_default);
  r.llm_fused_attention = f.boolean_or("llm_fused_attention", r.llm_fused_attention);
  r.llm_decode_shared_kv = f.boolean_or("llm_decode_shared_kv", r.llm_decode_shared_kv);
  r.llm_masked_mha_decode = f.boolean_or("llm_masked_mha_decode", r.llm_masked_mha_decode);
  r.llm_fp8_context_attention = f.boolean_or("llm_fp8_context_attention", r.llm_fp8_context_attention);
  r.llm_window_attention = f.boolean_or("llm_window_attention", r.llm_window_attention);
  r.llm_window_kv_cache = f.boolean_or("llm_window_kv_cache", r.llm_window_kv_cache);
  r.llm_matvec_max_batch = f.number_or("llm_matvec_max_batch", r.llm_matvec_max_batch);
  r.llm_int8_tile_max_batch = f.number_or("llm_int8_tile_max_batch", r.llm_int8_tile_max_batch);
  r.llm_ubatch = f.number_or("llm_ubatch", r.llm_ubatch);
  r.llm_prefill_all_logits = f.boolean_or("llm_prefill_all_logits", r.llm_prefill_all_logits);
  r.llm_min_sm = f.number_or("llm_min_sm", r.llm_min_sm);
  r.llm_memory_fraction = f.number_or("llm_memory_fraction", r.llm_memory_fraction);
  r.llm_step_host_us = f.number_or("llm_step_host_us", r.llm_step_host_us);
  r.llm_output_step_us = f.number_or("llm_output_step_us", r.llm_output_step_us);
  r.llm_output_seq_us = f.number_or("llm_output_seq_us", r.llm_output_seq_us);
  r.llm_output_async = f.boolean_or("llm_output_async", r.llm_output_async);
  r.llm_model_code = f.text_or("llm_model_code", "");
  r.zero_engine = f.text_or("zero_engine", "");
  if (!r.zero_engine.empty() && r.zero_engine != "deepspeed" && r.zero_engine != "megatron-distributed-optimizer")
    throw_unknown("zero_engine in " + path.string(), r.zero_engine, {"deepspeed", "megatron-distributed-optimizer"});
  if (r.llm_activation_bytes <= 0 || r.llm_memory_fraction <= 0 || r.llm_memory_fraction > 1 || r.llm_ubatch < 0 || r.llm_step_host_us < 0 ||
      r.llm_output_step_us < 0 || r.llm_output_seq_us < 0)
    f.fail("llm_*", "must be positive (llm_memory_fraction at most 1)");
  r.framework = f.text_or("framework", r.id);
  r.default_version = f.text_or("default_version", "");
  if (!r.default_version.empty()) checked_version("default_version", r.default_version);
  f.has("serving");  // read_serving_table reads it
  r.serving = read_serving_table(t, "runtime file '" + path.string() + "'");
  if (f.has("version") && !t["version"].as_array()) f.fail("version", "must be an array of tables ([[version]])");
  if (const auto* rules = t["version"].as_array())
    for (const auto& node : *rules) {
      const auto* rule = node.as_table();
      if (!rule) f.fail("version", "must be an array of tables ([[version]])");
      VersionRule v;
      for (const auto& [k, val] : *rule) {
        const std::string key(k.str());
        if (key == "from" || key == "below") {
          const auto text = val.value<std::string>();
          if (!text) f.fail("version." + key, "must be a version string");
          (key == "from" ? v.from : v.below) = checked_version("version." + key, *text);
        } else if (key == "source") {
        } else if (version_number(r, key)) {
          const auto number = val.value<double>();
          if (!number || !std::isfinite(*number) || *number < 0 || (key == "library_efficiency" && *number == 0) ||
              (key == "serving.scheduler_overlap" && *number > 1))
            f.fail("version." + key, "must be a finite number >= 0 (library_efficiency > 0, serving.scheduler_overlap at most 1)");
          if (key == "fused_conv_half_cuda_cores_from_sm") check_sm_from(f, "version." + key, *number);
          v.numbers[key] = *number;
        } else if (!version_switch(r, key)) {
          f.fail("version." + key, "is not a switch or number a version rule can set");
        } else if (!val.is_boolean()) {
          f.fail("version." + key, "must be true or false");
        } else {
          v.switches[key] = *val.value<bool>();
        }
      }
      r.version_rules.push_back(std::move(v));
    }
  if (f.has("sources"))
    if (const auto* s = t["sources"].as_table())
      for (const auto& [k, v] : *s) r.sources[std::string(k.str())] = v.value_or(std::string{});
  f.refuse_unknown_keys();
  return r;
}


void check_version(const std::string& version) { version_parts(version); }

int compare_versions(const std::string& a, const std::string& b) {
  const auto x = version_parts(a), y = version_parts(b);
  for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
    const int p = i < x.size() ? x[i] : 0, q = i < y.size() ? y[i] : 0;
    if (p != q) return p < q ? -1 : 1;
  }
  return 0;
}

RuntimeProfile at_version(RuntimeProfile runtime, const std::string& version) {
  version_parts(version);
  for (const auto& rule : runtime.version_rules) {
    if (!rule.from.empty() && compare_versions(version, rule.from) < 0) continue;
    if (!rule.below.empty() && compare_versions(version, rule.below) >= 0) continue;
    for (const auto& [key, value] : rule.switches) *version_switch(runtime, key) = value;
    for (const auto& [key, value] : rule.numbers) *version_number(runtime, key) = value;
  }
  return runtime;
}

double tensor_library_efficiency(const RuntimeProfile& runtime, int sm_version) {
  const auto it = runtime.library_efficiency_by_sm.find(sm_version);
  return it == runtime.library_efficiency_by_sm.end() ? 1.0 : it->second;
}

const std::vector<RuntimeProfile>& runtime_catalog() {
  static const auto all = load_toml_folder<RuntimeProfile>(data_dir() / "runtimes", load_runtime);
  return all;
}

const RuntimeProfile& find_runtime(std::string_view id) { return find_by_id(runtime_catalog(), id, "runtime"); }

}  // namespace perfcast
