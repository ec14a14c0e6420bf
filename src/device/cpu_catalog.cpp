#include "device/cpu_catalog.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/data_files.h"
#include "core/toml_folder.h"
#include "core/error.h"
#include "core/toml_reader.h"

namespace perfcast {

double CpuSpec::peak_tflops(std::string_view precision) const {
  const double cores_total = total_cores();
  const double fp32_per_clk = fp32_flops_per_clk();
  const std::string_view unit = math_unit(precision);
  if (unit == "avx2") return cores_total * avx2_allcore_ghz * fp32_per_clk / 1e3;
  if (unit == "avx512") return cores_total * avx512_allcore_ghz * fp32_per_clk / 1e3;
  // VDPBF16PS: two BF16 products per FP32 lane per FMA; VPDPBUSD: four INT8 products per 32-bit lane.
  if (unit == "avx512_bf16") return cores_total * vector_clock_ghz() * fp32_per_clk * 2.0 / 1e3;
  if (unit == "vnni") return cores_total * vector_clock_ghz() * fp32_per_clk * 4.0 / 1e3;
  if (unit == "amx")
    return cores_total * amx_allcore_ghz * (precision == "int8" ? amx_int8_ops_per_clk : amx_bf16_flops_per_clk) / 1e3;
  return 0;
}

std::string_view CpuSpec::math_unit(std::string_view precision) const {
  if (precision == "fp32") return avx512_allcore_ghz > 0 ? "avx512" : "avx2";
  if (precision == "bf16") {
    if (amx_bf16_flops_per_clk > 0) return "amx";
    if (avx512_bf16) return "avx512_bf16";
    return "";
  }
  if (precision == "int8") {
    if (amx_int8_ops_per_clk > 0) return "amx";
    if (vnni) return "vnni";
    return "";
  }
  return "";
}

double CpuSpec::l3_reach_bytes(int n) const {
  if (!(l3_slice_bytes > 0) || n >= cores) return l3_bytes;
  const int slices = static_cast<int>(std::lround(l3_bytes / l3_slice_bytes));
  const int cores_per_slice = std::max(1, cores / slices);
  return std::min(l3_bytes, std::ceil(static_cast<double>(n) / cores_per_slice) * l3_slice_bytes);
}

std::string CpuSpec::source_of(const std::string& field) const {
  if (auto it = sources.find(field); it != sources.end()) return it->second;
  if (auto it = sources.find("default"); it != sources.end()) return it->second;
  return "";
}

CpuSpec load_cpu_file(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  const TomlFields r(t, "CPU file '" + path.string() + "'");
  CpuSpec c;
  c.file = path.string();
  c.id = r.text("id");
  c.name = r.text("name");
  c.vendor = r.text("vendor");
  c.microarchitecture = r.text("microarchitecture");
  c.isa = r.text("isa");
  if (c.isa != "avx2" && c.isa != "avx512") r.fail("isa", "must be avx2 or avx512");
  c.max_sockets = r.count("max_sockets");
  c.cores = r.count("cores");
  c.threads = r.count("threads");
  c.base_clock_ghz = r.number("base_clock_ghz");
  c.avx2_allcore_ghz = r.number("avx2_allcore_ghz");
  c.avx512_allcore_ghz = r.number("avx512_allcore_ghz");
  c.amx_allcore_ghz = r.number("amx_allcore_ghz");
  c.vector_bits = r.count("vector_bits");
  c.fma_units = r.count("fma_units");
  c.avx512_bf16 = r.boolean("avx512_bf16");
  c.vnni = r.boolean("vnni");
  c.amx_bf16_flops_per_clk = r.number("amx_bf16_flops_per_clk");
  c.amx_int8_ops_per_clk = r.number("amx_int8_ops_per_clk");
  c.memory_channels = r.count("memory_channels");
  c.memory_mt_s = r.number("memory_mt_s");
  c.memory_type = r.text("memory_type");
  c.memory_gb = r.number("memory_gb");
  c.l2_bytes_per_core = r.number("l2_bytes_per_core");
  c.l3_bytes = r.number("l3_bytes");
  c.l3_slice_bytes = r.number_or("l3_slice_bytes", 0);
  c.tdp_w = r.number("tdp_w");
  if (c.max_sockets == 2) c.socket_link_gbps = r.number("socket_link_gbps");
  c.launch_date = r.text("launch_date");
  c.launch_price_usd = r.number("launch_price_usd");
  if (c.max_sockets < 1 || c.max_sockets > 2) r.fail("max_sockets", "must be 1 or 2");
  if (c.cores <= 0 || c.cores > 1024) r.fail("cores", "must be 1 to 1024");
  if (c.threads < c.cores) r.fail("threads", "must be at least cores");
  if (!(c.avx2_allcore_ghz > 0) || c.avx2_allcore_ghz > 10) r.fail("avx2_allcore_ghz", "must be in (0, 10]");
  if (c.avx512_allcore_ghz < 0 || c.avx512_allcore_ghz > 10) r.fail("avx512_allcore_ghz", "must be in [0, 10]");
  if ((c.isa == "avx512") != (c.avx512_allcore_ghz > 0))
    r.fail("avx512_allcore_ghz", "must be positive exactly when isa is avx512");
  if (c.amx_allcore_ghz < 0 || c.amx_allcore_ghz > 10) r.fail("amx_allcore_ghz", "must be in [0, 10]");
  if ((c.amx_bf16_flops_per_clk > 0) != (c.amx_allcore_ghz > 0))
    r.fail("amx_allcore_ghz", "must be positive exactly when the part has AMX (amx_bf16_flops_per_clk > 0)");
  if (c.vector_bits != 128 && c.vector_bits != 256 && c.vector_bits != 512) r.fail("vector_bits", "must be 128, 256 or 512");
  if (c.fma_units < 1 || c.fma_units > 4) r.fail("fma_units", "must be 1 to 4");
  if (c.amx_bf16_flops_per_clk < 0 || c.amx_int8_ops_per_clk < 0) r.fail("amx_bf16_flops_per_clk", "must be non-negative");
  if (c.memory_channels < 1 || c.memory_channels > 24) r.fail("memory_channels", "must be 1 to 24");
  if (!(c.memory_mt_s > 0) || c.memory_mt_s > 20000) r.fail("memory_mt_s", "must be in (0, 20000]");
  if (!(c.memory_gb > 0)) r.fail("memory_gb", "must be positive");
  if (!(c.l3_bytes > 0) || !(c.l2_bytes_per_core > 0)) r.fail("l3_bytes", "caches must be positive");
  if (c.l3_slice_bytes < 0 || c.l3_slice_bytes > c.l3_bytes) r.fail("l3_slice_bytes", "must be 0 (one L3) or in (0, l3_bytes]");
  if (c.l3_slice_bytes > 0) {
    const double slices = c.l3_bytes / c.l3_slice_bytes;
    if (std::abs(slices - std::round(slices)) > 1e-9 || c.cores % static_cast<int>(std::round(slices)) != 0)
      r.fail("l3_slice_bytes", "must divide l3_bytes into slices that split the cores evenly");
  }
  if (!(c.tdp_w > 0)) r.fail("tdp_w", "must be positive");
  if (c.max_sockets == 2 && !(c.socket_link_gbps > 0 && c.socket_link_gbps < 10000))
    r.fail("socket_link_gbps", "must be in (0, 10000) for a part with max_sockets = 2");
  if (const auto* src = t["sources"].as_table())
    for (const auto& [k, v] : *src)
      if (auto s = v.value<std::string>()) c.sources[std::string(k.str())] = *s;
  return c;
}

namespace {

std::vector<CpuSpec> load_all() {
  std::vector<std::filesystem::path> dirs{data_dir() / "cpus"};
  for (auto& p : env_paths("PERFCAST_CPU_PATH")) dirs.push_back(p);
  std::vector<CpuSpec> out =
      load_toml_folders_overriding<CpuSpec>(dirs, [](const std::filesystem::path& f) { return load_cpu_file(f); });
  // Two-socket servers: the same part twice, each socket with its own memory channels and caches.
  const std::size_t singles = out.size();
  for (std::size_t i = 0; i < singles; ++i)
    if (out[i].max_sockets == 2) {
      CpuSpec two = out[i];
      two.id += "-2s";
      two.name = "2x " + two.name;
      two.sockets = 2;
      out.push_back(std::move(two));
    }
  std::sort(out.begin(), out.end(), [](const CpuSpec& a, const CpuSpec& b) { return a.id < b.id; });
  return out;
}

}  // namespace

const std::vector<CpuSpec>& cpu_catalog() {
  static const std::vector<CpuSpec> catalog = load_all();
  return catalog;
}

const CpuSpec* cpu_by_id(std::string_view id) {
  for (const auto& c : cpu_catalog())
    if (c.id == id) return &c;
  return nullptr;
}

CpuInstanceSplit cpu_instance_split(const CpuSpec& cpu, int instances, int cores) {
  const int total = cpu.total_cores();
  if (instances < 1) throw InputError("--instances must be a positive integer, got " + std::to_string(instances));
  if (cores < 0) throw InputError("--cores must be a positive integer, got " + std::to_string(cores));
  if (cores > total)
    throw InputError("--cores " + std::to_string(cores) + " is more than " + cpu.id + " has (" + std::to_string(total) +
                     " cores; a hyper-thread, or a cloud vCPU, is half a core, not one)");
  if (instances > total)
    throw InputError("--instances " + std::to_string(instances) + " is more processes than " + cpu.id + " has cores (" +
                     std::to_string(total) + "): each process needs at least one core");
  if (cores > 0 && static_cast<long long>(instances) * cores > total)
    throw InputError("--instances " + std::to_string(instances) + " x --cores " + std::to_string(cores) + " = " +
                     std::to_string(static_cast<long long>(instances) * cores) + " cores, more than " + cpu.id +
                     " has (" + std::to_string(total) + ")");
  CpuInstanceSplit s;
  s.instances = instances;
  if (instances == 1) {
    s.instances_per_socket = 1;
    if (cores == 0 || cores == total) {
      s.cores_per_instance = total;
      s.sockets_per_instance = cpu.sockets;
      return s;
    }
    // One process on part of the part: its threads packed onto as few sockets as hold them (numactl -C 0-(N-1),
    // KMP_AFFINITY=compact); past one socket's cores it spans both, the same number on each.
    s.whole_part = false;
    s.cores_per_instance = cores;
    s.sockets_per_instance = cores <= cpu.cores ? 1 : cpu.sockets;
    if (cores % s.sockets_per_instance != 0)
      throw InputError("--cores " + std::to_string(cores) + " is more than one of " + cpu.id + "'s sockets has (" +
                       std::to_string(cpu.cores) + "), so the process spans both: give an even count (the same cores "
                       "on each socket), or at most " + std::to_string(cpu.cores));
    return s;
  }
  if (cpu.sockets > 1 && instances % cpu.sockets != 0)
    throw InputError("--instances " + std::to_string(instances) + " does not split evenly over " + cpu.id + "'s " +
                     std::to_string(cpu.sockets) + " sockets: give a multiple of " + std::to_string(cpu.sockets) +
                     " (no process spans two sockets), or 1");
  s.whole_part = false;
  s.instances_per_socket = instances / cpu.sockets;
  s.cores_per_instance = cores > 0 ? cores : cpu.cores / s.instances_per_socket;
  s.sockets_per_instance = 1;
  if (cores > 0 && s.instances_per_socket * cores > cpu.cores)
    throw InputError("--instances " + std::to_string(instances) + " x --cores " + std::to_string(cores) + " puts " +
                     std::to_string(s.instances_per_socket * cores) + " cores on each of " + cpu.id + "'s sockets, which have " +
                     std::to_string(cpu.cores) + " (no process spans two sockets)");
  s.cores_given = cores > 0;
  return s;
}

CpuSpec cpu_instance_share(const CpuSpec& cpu, const CpuInstanceSplit& split) {
  if (split.whole_part) return cpu;
  CpuSpec one = cpu;
  const double k = split.instances_per_socket;
  const int per_socket = split.cores_per_instance / split.sockets_per_instance;
  one.sockets = split.sockets_per_instance;
  one.cores = per_socket;
  one.threads = cpu.cores > 0 ? cpu.threads / cpu.cores * per_socket : per_socket;
  one.l3_bytes = cpu.l3_bytes / k;
  // A process given its core count reaches the L3 slices its cores sit on (all of an Intel socket's; on AMD the
  // core complexes it fills): the socket's other cores are idle or another tenant's, and their slices are not its.
  if (split.instances == 1 || split.cores_given) one.l3_bytes = std::min(one.l3_bytes, cpu.l3_reach_bytes(per_socket));
  one.l3_slice_bytes = 0;
  one.memory_share = cpu.memory_share / k;
  one.memory_gb = cpu.memory_gb / k;
  one.tdp_w = cpu.tdp_w / k;
  one.launch_price_usd = 0;
  if (one.sockets == 1) one.socket_link_gbps = 0;
  return one;
}

}  // namespace perfcast
