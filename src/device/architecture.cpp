#include "device/architecture.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/data_files.h"
#include "core/nearest_sm.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

// Calls fn(sm, fields) for every [sm_XX] table of a parsed TOML file (other keys are skipped); a table named sm_
// without a compute capability after it fails naming it.
template <typename Fn>
void for_each_sm_table(const toml::table& root, const std::filesystem::path& path, Fn&& fn) {
  for (const auto& [key, node] : root) {
    const auto* t = node.as_table();
    const std::string k(key.str());
    if (!t || k.rfind("sm_", 0) != 0) continue;
    TomlFields f(*t, path.string() + " [" + k.substr(0, 40) + "]");
    // At most four digits: compute capabilities are two or three, and stoi stays in range.
    if (k.size() < 4 || k.size() > 7 || k.find_first_not_of("0123456789", 3) != std::string::npos)
      throw InputError(path.string() + ": table [" + k.substr(0, 40) +
                       "] is not a compute capability (tables look like [sm_90])");
    fn(std::stoi(k.substr(3)), f);
  }
}

std::vector<ArchitectureProfile> load_architectures() {
  const auto path = data_dir() / "architectures.toml";
  const toml::table root = parse_toml_file(path);
  std::vector<ArchitectureProfile> out;
  for_each_sm_table(root, path, [&](int sm, const TomlFields& f) {
    ArchitectureProfile a;
    a.sm_version = sm;
    a.name = f.text("name");
    for (const auto& [p, v] : f.table("math")) a.math[std::string(p.str())] = v.value_or(std::string{});
    a.gemm_efficiency_cuda = f.number("gemm_efficiency_cuda");
    a.gemm_efficiency_tensor = f.number("gemm_efficiency_tensor");
    a.dram_efficiency = f.number("dram_efficiency");
    a.kernel_floor_us = f.number("kernel_floor_us");
    a.sm_power_w = f.number("sm_power_w");
    a.sm_power_clock_mhz = f.number("sm_power_clock_mhz");
    a.tensor_fp32acc_flops_per_clk_sm = f.number_or("tensor_fp32acc_flops_per_clk_sm", 0);
    a.tensor_int8_ops_per_clk_sm = f.number_or("tensor_int8_ops_per_clk_sm", 0);
    a.issue_slots_per_clk_sm = f.number_or("issue_slots_per_clk_sm", a.issue_slots_per_clk_sm);
    a.l2_read_bytes_per_clk_sm = f.number_or("l2_read_bytes_per_clk_sm", 0);
    a.max_blocks_per_sm = f.number_or("max_blocks_per_sm", 0);
    a.max_warps_per_sm = f.number_or("max_warps_per_sm", 0);
    a.dram_latency_ns = f.number_or("dram_latency_ns", 0);
    if (a.dram_latency_ns < 0) f.fail("dram_latency_ns", "must be 0 (no measurement) or a latency in ns");
    a.l2_reuse_full_fraction = f.number_or("l2_reuse_full_fraction", 0);
    a.l2_reuse_zero_fraction = f.number_or("l2_reuse_zero_fraction", 0);
    a.cublas_tensor_ctas_per_sm = f.number_or("cublas_tensor_ctas_per_sm", 0);
    a.cublas_tensor_split_k = f.boolean_or("cublas_tensor_split_k", true);
    a.cublas_tensor_split_to_rule_waves = f.boolean_or("cublas_tensor_split_to_rule_waves", false);
    a.cublas_sgemm_split_k_waves = f.number_or("cublas_sgemm_split_k_waves", 0);
    if (a.cublas_sgemm_split_k_waves != 0 && a.cublas_sgemm_split_k_waves < 1)
      f.fail("cublas_sgemm_split_k_waves", "must be 0 (the shared value) or at least 1");
    a.tensor_step_bytes = f.number_or("tensor_step_bytes", 0);
    a.tensor_pipeline_stages = f.number_or("tensor_pipeline_stages", 0);
    a.power.clock_exponent = f.number_or("power_clock_exponent", a.power.clock_exponent);
    a.power.tensor_power_fraction = f.number_or("tensor_power_fraction", a.power.tensor_power_fraction);
    for (const auto& [s, v] : f.table("sources")) a.sources[std::string(s.str())] = v.value_or(std::string{});
    f.refuse_unknown_keys();
    out.push_back(std::move(a));
  });
  return out;
}

// data/kernel_fit.toml's [arch.sm_XX] values (fitted to measured kernels by `perfcast fit-kernels`) replace
// the architectures.toml values they were fitted from; the file is optional.
std::vector<ArchitectureProfile> apply_kernel_fit(std::vector<ArchitectureProfile> all) {
  const auto path = data_dir() / "kernel_fit.toml";
  if (!std::filesystem::exists(path)) return all;
  const toml::table root = parse_toml_file(path);
  const auto* archs = root["arch"].as_table();
  if (!archs) return all;
  for (auto& a : all) {
    const auto* t = (*archs)["sm_" + std::to_string(a.sm_version)].as_table();
    if (!t) continue;
    TomlFields f(*t, path.string() + " [arch.sm_" + std::to_string(a.sm_version) + "]");
    const std::string why = "fitted to measured kernels by perfcast fit-kernels (data/kernel_fit.toml, docs/kernel-model.md)";
    for (const auto& [key, tiles] : {std::pair{"sgemm_tiles", &a.sgemm_tiles}, std::pair{"sgemm_tiles_batched", &a.sgemm_tiles_batched}}) {
      const auto* arr = f.raw()[key].as_array();
      if (!arr) continue;
      tiles->clear();
      for (const auto& e : *arr) {
        const std::string name = e.value_or(std::string{});
        const std::size_t x = name.find('x');
        if (x == std::string::npos) f.fail(key, "entries are tile names such as \"128x64\"");
        tiles->emplace_back(std::atoi(name.c_str()), std::atoi(name.c_str() + x + 1));
      }
      a.sources[key] = "cuBLAS kernel names in shared/kernels/neusight_train (data/kernel_fit.toml)";
    }
    for (const auto& [key, field] : {std::pair{"gemm_efficiency_cuda", &a.gemm_efficiency_cuda},
                                     std::pair{"dram_efficiency", &a.dram_efficiency},
                                     std::pair{"sgemm_tile_loss_share", &a.sgemm_tile_loss_share}}) {
      const double v = f.number_or(key, -1);
      if (v <= 0) continue;
      *field = v;
      a.sources[key] = why;
    }
  }
  return all;
}

const ArchitectureProfile& nearest(const std::vector<ArchitectureProfile>& all, const DeviceSpec& device) {
  const ArchitectureProfile* best =
      nearest_sm_at_or_below(all, device.sm_version, [](const ArchitectureProfile& a) { return a.sm_version; });
  if (!best)
    throw InputError("no architecture profile for compute capability " + device.compute_capability + " of '" +
                     device.id + "' in data/architectures.toml");
  return *best;
}

}  // namespace

const std::vector<ArchitectureProfile>& architecture_priors() {
  static const std::vector<ArchitectureProfile> all = load_architectures();
  return all;
}

const ArchitectureProfile& architecture_prior(const DeviceSpec& device) { return nearest(architecture_priors(), device); }

std::optional<Pipe> parse_pipe(const std::string& name) {
  for (int i = 0; i < kPipeCount; ++i)
    if (pipe_name(static_cast<Pipe>(i)) == name) return static_cast<Pipe>(i);
  return std::nullopt;
}

std::optional<Pipe> ArchitectureProfile::math_pipe(const std::string& precision) const {
  auto it = math.find(precision);
  if (it == math.end()) return std::nullopt;
  return parse_pipe(it->second);
}

const ArchitectureProfile& architecture_of(const DeviceSpec& device) {
  static const std::vector<ArchitectureProfile> all = apply_kernel_fit(load_architectures());
  return nearest(all, device);
}

ArchitectureProfile with_cuda9_tensor_grid(ArchitectureProfile a) {
  struct Fit {
    int sm = 0;
    double ctas_per_sm = 0;
    bool split_k = true;
  };
  static const std::vector<Fit> fits = [] {
    std::vector<Fit> out;
    const auto path = data_dir() / "tensor_gemm_fit.toml";
    if (!std::filesystem::exists(path)) return out;
    for_each_sm_table(parse_toml_file(path), path, [&](int sm, const TomlFields& f) {
      Fit fit;
      fit.sm = sm;
      fit.ctas_per_sm = f.number("cublas_tensor_ctas_per_sm");
      if (!(fit.ctas_per_sm > 0)) f.fail("cublas_tensor_ctas_per_sm", "must be a number > 0");
      fit.split_k = f.boolean("cublas_tensor_split_k");
      out.push_back(fit);
    });
    return out;
  }();
  for (const auto& fit : fits)
    if (fit.sm == a.sm_version) {
      a.cublas_tensor_ctas_per_sm = fit.ctas_per_sm;
      a.cublas_tensor_split_k = fit.split_k;
    }
  return a;
}

ArchitectureProfile architecture_for(const DeviceSpec& device) {
  ArchitectureProfile a = architecture_of(device);
  if (!device.measured) return a;
  const MeasuredEfficiency& m = *device.measured;
  if (m.gemm_efficiency_cuda) a.gemm_efficiency_cuda = *m.gemm_efficiency_cuda;
  if (m.gemm_efficiency_tensor) {
    a.gemm_efficiency_tensor = *m.gemm_efficiency_tensor;
    a.tensor_fp32acc_flops_per_clk_sm = 0;
    a.tensor_int8_ops_per_clk_sm = 0;
  }
  if (m.dram_efficiency) a.dram_efficiency = *m.dram_efficiency;
  if (m.kernel_floor_us) a.kernel_floor_us = *m.kernel_floor_us;
  return a;
}

}  // namespace perfcast
