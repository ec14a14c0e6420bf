#include "device/architecture.h"

#include <vector>

#include "core/data_files.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

std::vector<ArchitectureProfile> load_architectures() {
  const auto path = data_dir() / "architectures.toml";
  const toml::table root = parse_toml_file(path);
  std::vector<ArchitectureProfile> out;
  for (const auto& [key, node] : root) {
    const auto* t = node.as_table();
    const std::string k(key.str());
    if (!t || k.rfind("sm_", 0) != 0) continue;
    TomlFields f(*t, path.string() + " [" + k + "]");
    ArchitectureProfile a;
    a.sm_version = std::stoi(k.substr(3));
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
    for (const auto& [s, v] : f.table("sources")) a.sources[std::string(s.str())] = v.value_or(std::string{});
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

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
  static const std::vector<ArchitectureProfile> all = load_architectures();
  const ArchitectureProfile* best = nullptr;
  for (const auto& a : all)
    if (a.sm_version <= device.sm_version && (!best || a.sm_version > best->sm_version)) best = &a;
  if (!best)
    throw InputError("no architecture profile for compute capability " + device.compute_capability + " of '" +
                     device.id + "' in data/architectures.toml");
  return *best;
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
