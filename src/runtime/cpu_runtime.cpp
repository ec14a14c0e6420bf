#include "runtime/cpu_runtime.h"

#include <algorithm>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_folder.h"
#include "core/toml_reader.h"

namespace perfcast {

CpuRuntimeProfile load_cpu_runtime(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  const TomlFields f(t, "CPU runtime file '" + path.string() + "'");
  CpuRuntimeProfile r;
  r.file = path.string();
  r.id = f.text("id");
  r.name = f.text("name");
  r.library = f.text("library");
  const auto fraction = [&](std::string_view key) {
    const double v = f.number(key);
    if (!(v > 0 && v <= 1)) f.fail(key, "must be in (0, 1]");
    return v;
  };
  r.dispatch_us_per_op = f.number("dispatch_us_per_op");
  if (!(r.dispatch_us_per_op >= 0 && r.dispatch_us_per_op < 1e4)) f.fail("dispatch_us_per_op", "must be in [0, 10000)");
  r.conv_efficiency = fraction("conv_efficiency");
  r.matmul_efficiency = fraction("matmul_efficiency");
  r.backward_efficiency = fraction("backward_efficiency");
  r.depthwise_efficiency = fraction("depthwise_efficiency");
  r.amx_efficiency = fraction("amx_efficiency");
  r.low_precision_efficiency = fraction("low_precision_efficiency");
  r.dram_efficiency = fraction("dram_efficiency");
  r.conv_im2col_per_image = f.boolean("conv_im2col_per_image");
  r.streaming_cores = f.number("streaming_cores");
  r.gemm_call_overhead_us = f.number("gemm_call_overhead_us");
  if (!(r.gemm_call_overhead_us >= 0 && r.gemm_call_overhead_us < 1e6)) f.fail("gemm_call_overhead_us", "must be in [0, 1e6)");
  if (!(r.streaming_cores >= 0 && r.streaming_cores <= 4096)) f.fail("streaming_cores", "must be 0 (all) to 4096");
  r.conv_reorders_per_call = f.boolean("conv_reorders_per_call");
  r.gemm_packs_weights_per_call = f.boolean("gemm_packs_weights_per_call");
  r.native_conv_max_input_elements = f.number_or("native_conv_max_input_elements", 0);
  if (!(r.native_conv_max_input_elements >= 0 && r.native_conv_max_input_elements < 1e9))
    f.fail("native_conv_max_input_elements", "must be in [0, 1e9)");
  if (r.native_conv_max_input_elements > 0 && !r.conv_reorders_per_call)
    f.fail("native_conv_max_input_elements", "applies to a profile whose library convolutions reorder per call");
  r.gemm_prepack_from_version = f.text_or("gemm_prepack_from_version", "");
  if (!r.gemm_prepack_from_version.empty()) try {
      check_version(r.gemm_prepack_from_version);
    } catch (const InputError&) {
      f.fail("gemm_prepack_from_version", "must be a dotted version such as \"1.5\"");
    }
  if (!r.gemm_prepack_from_version.empty() && r.gemm_packs_weights_per_call)
    f.fail("gemm_prepack_from_version", "applies to a profile that pre-packs (gemm_packs_weights_per_call = false)");
  r.reorder_primitive_cache_from_version = f.text_or("reorder_primitive_cache_from_version", "");
  if (!r.reorder_primitive_cache_from_version.empty()) {
    try {
      check_version(r.reorder_primitive_cache_from_version);
    } catch (const InputError&) {
      f.fail("reorder_primitive_cache_from_version", "must be a dotted version such as \"1.8\"");
    }
    if (!r.conv_reorders_per_call)
      f.fail("reorder_primitive_cache_from_version", "applies to a profile whose convolutions reorder per call");
    r.reorder_primitives_cached = true;
  }
  r.nchwc_filter_set_blocks = f.number_or("nchwc_filter_set_blocks", 0);
  if (!(r.nchwc_filter_set_blocks >= 0 && r.nchwc_filter_set_blocks <= 64))
    f.fail("nchwc_filter_set_blocks", "must be 0 (no NCHWc kernels) to 64");
  if (r.nchwc_filter_set_blocks > 0 && r.conv_reorders_per_call)
    f.fail("nchwc_filter_set_blocks", "applies to a profile whose convolutions keep their layout between calls");
  r.nchwc_depthwise_efficiency = f.number_or("nchwc_depthwise_efficiency", r.depthwise_efficiency);
  if (!(r.nchwc_depthwise_efficiency > 0 && r.nchwc_depthwise_efficiency <= 1))
    f.fail("nchwc_depthwise_efficiency", "must be in (0, 1]");
  r.fresh_pages_above_bytes = f.number_or("fresh_pages_above_bytes", 0);
  if (!(r.fresh_pages_above_bytes >= 0 && r.fresh_pages_above_bytes < 1e12))
    f.fail("fresh_pages_above_bytes", "must be 0 (buffers reused) or a size in bytes below 1e12");
  r.fuse_elementwise_chains = f.boolean("fuse_elementwise_chains");
  r.fuse_epilogue = f.boolean("fuse_epilogue");
  r.fold_bn_inference = f.boolean("fold_bn_inference");
  r.inference_only = f.boolean("inference_only");
  r.optimizer_fused = f.boolean("optimizer_fused");
  r.context_bytes = f.number("context_bytes");
  if (f.has("precisions"))
    if (const auto* list = t["precisions"].as_array())
      for (const auto& v : *list)
        if (auto s = v.value<std::string>()) r.precisions.push_back(*s);
  if (r.precisions.empty()) f.fail("precisions", "must list at least one precision");
  if (f.has("sources"))
    if (const auto* src = t["sources"].as_table())
      for (const auto& [k, v] : *src)
        if (auto s = v.value<std::string>()) r.sources[std::string(k.str())] = *s;
  f.refuse_unknown_keys();
  return r;
}

RuntimeProfile CpuRuntimeProfile::as_runtime() const {
  RuntimeProfile r;
  r.id = id;
  r.name = name;
  r.framework = id;
  r.host_overhead_per_kernel_us = dispatch_us_per_op;
  r.gpu_gap_per_kernel_us = 0;
  r.fuse_elementwise_chains = fuse_elementwise_chains;
  r.fuse_epilogue = fuse_epilogue;
  r.fuse_matmul_epilogue = fuse_epilogue;
  r.fold_bn_inference = fold_bn_inference;
  r.conv_autotune = false;
  r.tf32_available = false;
  r.inference_only = inference_only;
  r.optimizer_fused = optimizer_fused;
  r.optimizer_kernels_per_tensor = 1;
  r.optimizer_tensors_per_launch = 1;
  r.context_bytes = context_bytes;
  r.workspace_bytes = 0;
  r.allocator_overhead = 1;
  r.sources = sources;
  return r;
}

CpuRuntimeProfile cpu_runtime_at_version(CpuRuntimeProfile runtime, const std::string& version, bool& applied) {
  applied = false;
  check_version(version);
  if (!runtime.gemm_prepack_from_version.empty() && compare_versions(version, runtime.gemm_prepack_from_version) < 0) {
    runtime.gemm_packs_weights_per_call = true;
    applied = true;
  }
  if (!runtime.reorder_primitive_cache_from_version.empty() &&
      compare_versions(version, runtime.reorder_primitive_cache_from_version) < 0) {
    runtime.reorder_primitives_cached = false;
    applied = true;
  }
  return runtime;
}

const std::vector<CpuRuntimeProfile>& cpu_runtime_catalog() {
  static const auto all = load_toml_folder<CpuRuntimeProfile>(data_dir() / "runtimes" / "cpu", load_cpu_runtime);
  return all;
}

const CpuRuntimeProfile& find_cpu_runtime(std::string_view id) {
  std::string ids;
  for (const auto& r : cpu_runtime_catalog()) {
    if (r.id == id) return r;
    ids += (ids.empty() ? "" : ", ") + r.id;
  }
  // A valid runtime id that only runs on GPUs is unsupported here; anything else is a typo.
  if (std::any_of(runtime_catalog().begin(), runtime_catalog().end(), [&](const RuntimeProfile& r) { return r.id == id; }))
    throw UnsupportedError("runtime '" + std::string(id) + "' runs on GPUs only here: CPU profiles are " + ids +
                           " (data/runtimes/cpu)");
  std::vector<std::string> all;
  for (const auto& r : cpu_runtime_catalog()) all.push_back(r.id);
  throw_unknown("CPU runtime", id, all);
}

}  // namespace perfcast
