#include "cost/cost_constants.h"

#include <algorithm>
#include <filesystem>

#include "core/data_files.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

// A section's keys, less its free-text `sources`, are the ones read above it: refuse any other.
void refuse_unknown_keys_but_sources(const TomlFields& f) {
  f.has("sources");
  f.refuse_unknown_keys();
}

std::vector<GemmTile> tiles(const TomlFields& f, std::string_view key) {
  std::vector<GemmTile> out;
  const auto* arr = f.node(key).as_array();
  if (!arr) f.fail(key, "is missing or not an array of [m, n, efficiency]");
  for (const auto& e : *arr) {
    const auto* t = e.as_array();
    if (!t || t->size() != 3) f.fail(key, "entries must be [m, n, efficiency]");
    out.push_back({t->get(0)->value<double>().value_or(0), t->get(1)->value<double>().value_or(0),
                   t->get(2)->value<double>().value_or(0)});
  }
  return out;
}

// Blocks of Winograd tiles one CTA computes: [images, tile rows, tile columns], whole numbers from 1.
std::vector<std::array<double, 3>> cta_tiles(const TomlFields& f, std::string_view key) {
  std::vector<std::array<double, 3>> out;
  const auto* arr = f.node(key).as_array();
  if (!arr || arr->empty()) f.fail(key, "is missing or not an array of [images, rows, columns]");
  for (const auto& e : *arr) {
    const auto* t = e.as_array();
    if (!t || t->size() != 3) f.fail(key, "entries must be [images, rows, columns]");
    std::array<double, 3> v{};
    for (std::size_t i = 0; i < 3; ++i) {
      const auto x = t->get(i)->value<std::int64_t>();
      if (!x || *x < 1 || *x > 1024) f.fail(key, "entries must be whole numbers from 1 to 1024");
      v[i] = static_cast<double>(*x);
    }
    out.push_back(v);
  }
  return out;
}

std::vector<ConvHeuristicRule> heuristic_rules(const TomlFields& f, std::string_view key) {
  std::vector<ConvHeuristicRule> out;
  const auto* arr = f.node(key).as_array();
  if (!arr) f.fail(key, "is missing or not an array of rule tables");
  for (const auto& e : *arr) {
    const auto* t = e.as_table();
    if (!t) f.fail(key, "entries must be tables {algorithm = ..., max_batch = ..., ...}");
    const TomlFields f_rule(*t, "[conv] " + std::string(key) + " rule");
    ConvHeuristicRule r;
    r.algorithm = f_rule.text("algorithm");
    if (r.algorithm != "gemm" && r.algorithm != "winograd_fused" && r.algorithm != "winograd_nonfused" &&
        r.algorithm != "fft")
      f_rule.fail("algorithm", "must be gemm, winograd_fused, winograd_nonfused or fft");
    r.sm = f_rule.count_list("sm", 1, 1000);  // compute capabilities such as 61
    r.min_batch = f_rule.number_or("min_batch", 0);
    r.max_batch = f_rule.number_or("max_batch", 0);
    r.min_c_in = f_rule.number_or("min_c_in", 0);
    r.max_c_in = f_rule.number_or("max_c_in", 0);
    r.min_map = f_rule.number_or("min_map", 0);
    r.max_map = f_rule.number_or("max_map", 0);
    f_rule.refuse_unknown_keys();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ImplicitGemmArch> implicit_gemm_arch(const TomlFields& f, std::string_view key) {
  std::vector<ImplicitGemmArch> out;
  const auto node = f.node(key);
  if (!node) return out;
  const auto* arr = node.as_array();
  if (!arr) f.fail(key, "must be an array of tables ([[conv.implicit_gemm_arch]])");
  for (const auto& e : *arr) {
    const auto* t = e.as_table();
    if (!t) f.fail(key, "entries must be tables");
    const TomlFields fa(*t, "[[conv." + std::string(key) + "]]");
    ImplicitGemmArch a;
    a.sm = fa.count_list("sm", 1, 1000);
    if (a.sm.empty()) fa.fail("sm", "must list at least one compute capability");
    a.conv_efficiency_cuda = fa.number("conv_efficiency_cuda");
    if (!(a.conv_efficiency_cuda > 0 && a.conv_efficiency_cuda <= 1)) fa.fail("conv_efficiency_cuda", "must be in (0, 1]");
    a.implicit_gemm_step_latency_clk = fa.number("implicit_gemm_step_latency_clk");
    if (a.implicit_gemm_step_latency_clk < 0) fa.fail("implicit_gemm_step_latency_clk", "must not be negative");
    a.implicit_gemm_tile_m = fa.number("implicit_gemm_tile_m");
    if (a.implicit_gemm_tile_m < 0) fa.fail("implicit_gemm_tile_m", "must not be negative");
    // At most 8: FP16 tensor-core convolutions take channels in multiples of 8 (NVIDIA's Convolutional Layers
    // User's Guide), so only layers of fewer channels are padded, and to a whole number of channels.
    a.half_input_channel_pad = fa.count_or("half_input_channel_pad", 0, 8);
    fa.refuse_unknown_keys();
    out.push_back(std::move(a));
  }
  return out;
}

CostConstants load() {
  const auto path = data_dir() / "cost_model.toml";
  const toml::table root = parse_toml_file(path);
  CostConstants c;
  TomlFields top(root, path.string());
  TomlFields g(top.table("gemm"), path.string() + " [gemm]");
  c.tiles_cuda = tiles(g, "tiles_cuda");
  c.tiles_tensor = tiles(g, "tiles_tensor");
  c.ctas_per_sm = g.number("ctas_per_sm");
  c.k_half_cuda = g.number("k_half_cuda");
  c.k_half_tensor = g.number("k_half_tensor");
  c.split_k_overhead = g.number("split_k_overhead");
  c.split_k_min_depth = g.number("split_k_min_depth");
  c.split_k_waves_cublas_cuda = g.number("split_k_waves_cublas_cuda");
  if (c.split_k_waves_cublas_cuda < 1) g.fail("split_k_waves_cublas_cuda", "must be at least 1");
  c.split_k_partial_bytes_cublas_cuda = g.number_or("split_k_partial_bytes_cublas_cuda", 0);
  if (c.split_k_partial_bytes_cublas_cuda < 0) g.fail("split_k_partial_bytes_cublas_cuda", "must not be negative");
  c.misaligned_tensor_efficiency_2b = g.by_sm("misaligned_tensor_efficiency_2b");
  c.misaligned_tensor_efficiency_4b = g.by_sm("misaligned_tensor_efficiency_4b");
  c.misaligned_tensor_efficiency_8b = g.by_sm("misaligned_tensor_efficiency_8b");
  for (const auto* m : {&c.misaligned_tensor_efficiency_2b, &c.misaligned_tensor_efficiency_4b, &c.misaligned_tensor_efficiency_8b})
    for (const auto& [sm, e] : *m)
      if (!(e > 0 && e <= 1)) g.fail("misaligned_tensor_efficiency_*", "entry sm_" + std::to_string(sm) + " must be in (0, 1]");
  c.cublas_nn_backward_both_sets = g.boolean_or("cublas_nn_backward_both_sets", false);
  c.cublas_nt_backward_both_sets = g.boolean_or("cublas_nt_backward_both_sets", false);
  refuse_unknown_keys_but_sources(g);
  TomlFields cv(top.table("conv"), path.string() + " [conv]");
  c.conv_efficiency_tensor = cv.number("conv_efficiency_tensor");
  c.conv_efficiency_tensor_1x1 = cv.number("conv_efficiency_tensor_1x1");
  // Required, not defaulted: the switch is off in the shipped file, and a misspelt key must not leave it off silently.
  c.conv_gather_hidden_at_reduced_rate = cv.boolean("conv_gather_hidden_at_reduced_rate");
  c.winograd_fused_efficiency = cv.number("winograd_fused_efficiency");
  c.winograd_nonfused_efficiency = cv.number("winograd_nonfused_efficiency");
  c.winograd_nonfused_filter_transform = cv.boolean_or("winograd_nonfused_filter_transform", false);
  c.winograd_fused_cta_channels = cv.count("winograd_fused_cta_channels");
  c.winograd_fused_resident_ctas = cv.count("winograd_fused_resident_ctas");
  c.winograd_fused_step_latency_clk = cv.number("winograd_fused_step_latency_clk");
  c.winograd_fused_cta_tiles = cta_tiles(cv, "winograd_fused_cta_tiles");
  c.implicit_gemm_step_depth = cv.count("implicit_gemm_step_depth");
  if (c.implicit_gemm_step_depth < 1) cv.fail("implicit_gemm_step_depth", "must be at least 1");
  c.implicit_gemm_resident_outputs = cv.count("implicit_gemm_resident_outputs");
  c.implicit_gemm_step_latency_clk = cv.number("implicit_gemm_step_latency_clk");
  c.implicit_gemm_tile_m = cv.number("implicit_gemm_tile_m");
  c.winograd_min_channels = cv.number("winograd_min_channels");
  c.conv_heuristic = heuristic_rules(cv, "heuristic_fwd");
  c.conv_efficiency_cuda = cv.number("conv_efficiency_cuda");
  c.implicit_gemm_arch = implicit_gemm_arch(cv, "implicit_gemm_arch");
  c.dgrad_efficiency = cv.number("dgrad_efficiency");
  c.wgrad_efficiency = cv.number("wgrad_efficiency");
  c.depthwise_compute_efficiency = cv.number("depthwise_compute_efficiency");
  c.depthwise_native_wgrad_reads_per_tap = cv.number_or("depthwise_native_wgrad_reads_per_tap", 0);
  c.grouped_tensor_tile_channels = cv.number("grouped_tensor_tile_channels");
  c.grouped_tensor_channel_pad = cv.number("grouped_tensor_channel_pad");
  c.grouped_tensor_min_sm = cv.number("grouped_tensor_min_sm");
  if (c.grouped_tensor_tile_channels < 0 || c.grouped_tensor_channel_pad < 0 || c.grouped_tensor_min_sm < 0)
    cv.fail("grouped_tensor_tile_channels", "grouped_tensor_* must not be negative");
  refuse_unknown_keys_but_sources(cv);
  TomlFields m(top.table("memory"), path.string() + " [memory]");
  c.ramp_us = m.number("ramp_us");
  c.elementwise_compute_efficiency = m.number("elementwise_compute_efficiency");
  c.reduction_bandwidth_efficiency = m.number("reduction_bandwidth_efficiency");
  c.native_half_elementwise_efficiency = m.number("native_half_elementwise_efficiency");
  c.dynamic_cast_copy_efficiency = m.number("dynamic_cast_copy_efficiency");
  if (!(c.dynamic_cast_copy_efficiency > 0 && c.dynamic_cast_copy_efficiency <= 1))
    m.fail("dynamic_cast_copy_efficiency", "must be in (0, 1]");
  c.strided_copy_elements_per_sm_clk = m.by_sm("strided_copy_elements_per_sm_clk");
  for (const auto& [sm, e] : c.strided_copy_elements_per_sm_clk)
    if (!(e > 0))
      m.fail("strided_copy_elements_per_sm_clk", "entry sm_" + std::to_string(sm) + " must be positive");
  c.cudnn_nchw_batch_norm_cta_gelems = m.number("cudnn_nchw_batch_norm_cta_gelems");
  if (!(c.cudnn_nchw_batch_norm_cta_gelems > 0)) m.fail("cudnn_nchw_batch_norm_cta_gelems", "must be positive");
  c.cudnn_nchw_batch_norm_cta_latency_us = m.number("cudnn_nchw_batch_norm_cta_latency_us");
  if (!(c.cudnn_nchw_batch_norm_cta_latency_us >= 0))
    m.fail("cudnn_nchw_batch_norm_cta_latency_us", "must be zero or positive");
  c.cudnn_nchw_batch_norm_cta_threads = m.number("cudnn_nchw_batch_norm_cta_threads");
  if (!(c.cudnn_nchw_batch_norm_cta_threads >= 32 && c.cudnn_nchw_batch_norm_cta_threads <= 1024))
    m.fail("cudnn_nchw_batch_norm_cta_threads", "must be 32-1024 threads (a CTA's limit)");
  c.cudnn_nhwc_batch_norm_cta_channels = m.number("cudnn_nhwc_batch_norm_cta_channels");
  if (!(c.cudnn_nhwc_batch_norm_cta_channels >= 1 && c.cudnn_nhwc_batch_norm_cta_channels <= 1024))
    m.fail("cudnn_nhwc_batch_norm_cta_channels", "must be 1-1024 channels");
  refuse_unknown_keys_but_sources(m);
  TomlFields h(top.table("host"), path.string() + " [host]");
  c.cuda_graph_host_us_per_kernel = h.number("cuda_graph_host_us_per_kernel");
  c.cuda_graph_gap_us = h.number("cuda_graph_gap_us");
  c.host_reference_single_thread_score = h.number("reference_single_thread_score");
  if (!(c.host_reference_single_thread_score > 0)) h.fail("reference_single_thread_score", "must be positive");
  refuse_unknown_keys_but_sources(h);
  TomlFields gd(top.table("gpu_decode"), path.string() + " [gpu_decode]");
  c.gpu_decode_us_per_mpixel = gd.number("gpu_us_per_mpixel");
  refuse_unknown_keys_but_sources(gd);
  TomlFields at(top.table("attention"), path.string() + " [attention]");
  c.fused_attention_efficiency = at.number("fused_efficiency");
  c.decode_attention_fp32_efficiency = at.number("decode_fp32_efficiency");
  refuse_unknown_keys_but_sources(at);
  top.has("row_kernels");  // read by cost/row_kernels.cpp
  top.refuse_unknown_keys();
  return c;
}

// data/kernel_fit.toml's [global] values (fitted to measured kernels) replace the ones they started from.
CostConstants apply_kernel_fit(CostConstants c) {
  const auto path = data_dir() / "kernel_fit.toml";
  if (!std::filesystem::exists(path)) return c;
  const toml::table root = parse_toml_file(path);
  const auto* g = root["global"].as_table();
  if (!g) return c;
  TomlFields f(*g, path.string() + " [global]");
  c.k_half_cuda = f.number_or("k_half_cuda", c.k_half_cuda);
  c.ramp_us = f.number_or("ramp_us", c.ramp_us);
  c.reduction_bandwidth_efficiency = f.number_or("reduction_bandwidth_efficiency", c.reduction_bandwidth_efficiency);
  c.winograd_fused_efficiency = f.number_or("winograd_fused_efficiency", c.winograd_fused_efficiency);
  c.winograd_nonfused_efficiency = f.number_or("winograd_nonfused_efficiency", c.winograd_nonfused_efficiency);
  c.conv_efficiency_cuda = f.number_or("conv_efficiency_cuda", c.conv_efficiency_cuda);
  c.winograd_fused_step_latency_clk = f.number_or("winograd_fused_step_latency_clk", c.winograd_fused_step_latency_clk);
  c.implicit_gemm_step_latency_clk = f.number_or("implicit_gemm_step_latency_clk", c.implicit_gemm_step_latency_clk);
  for (std::size_t i = 1; i < c.tiles_cuda.size(); ++i)
    c.tiles_cuda[i].efficiency = f.number_or("tile_efficiency_" + std::to_string(i + 1), c.tiles_cuda[i].efficiency);
  return c;
}

}  // namespace

const CostConstants& cost_constants_prior() {
  static const CostConstants c = load();
  return c;
}

const CostConstants& cost_constants() {
  static const CostConstants c = apply_kernel_fit(cost_constants_prior());
  return c;
}

CostConstants constants_for_sm(const CostConstants& c, int sm) {
  CostConstants out = c;
  for (const auto& a : c.implicit_gemm_arch) {
    if (std::find(a.sm.begin(), a.sm.end(), sm) == a.sm.end()) continue;
    out.conv_efficiency_cuda = a.conv_efficiency_cuda;
    out.implicit_gemm_step_latency_clk = a.implicit_gemm_step_latency_clk;
    out.implicit_gemm_tile_m = a.implicit_gemm_tile_m;
    out.half_input_channel_pad = a.half_input_channel_pad;
    break;
  }
  return out;
}

std::string conv_heuristic_algorithm(const CostConstants& c, int sm, double batch, double c_in, double map) {
  const auto within = [](double v, double lo, double hi) { return (lo <= 0 || v >= lo) && (hi <= 0 || v <= hi); };
  for (const auto& r : c.conv_heuristic) {
    if (!r.sm.empty() && std::find(r.sm.begin(), r.sm.end(), sm) == r.sm.end()) continue;
    if (within(batch, r.min_batch, r.max_batch) && within(c_in, r.min_c_in, r.max_c_in) && within(map, r.min_map, r.max_map))
      return r.algorithm;
  }
  return {};
}

}  // namespace perfcast
