#include "device/catalog.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/data_files.h"
#include "core/toml_folder.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "core/find_by_id.h"
#include "device/cpu_catalog.h"

namespace perfcast {

namespace {

constexpr std::string_view kPipeNames[] = {"fp32",        "fp64",         "fp16",        "dp4a",     "tc_fp16_fp16acc",
                                           "tc_fp16_fp32acc", "tc_bf16", "tc_tf32",    "tc_fp8",   "tc_int8"};
constexpr std::string_view kPipePeakKeys[] = {
    "fp32_tflops",    "fp64_tflops",           "fp16_tflops",           "int8_dp4a_tops",
    "tc_fp16_fp16acc_tflops", "tc_fp16_fp32acc_tflops", "tc_bf16_tflops", "tc_tf32_tflops",
    "tc_fp8_tflops",  "tc_int8_tops"};
static_assert(std::size(kPipeNames) == kPipeCount && std::size(kPipePeakKeys) == kPipeCount,
              "every Pipe needs a name and a data-file key");

// The architecture name of each compute capability the shipped catalog (data/gpus) has, e.g. 61 -> "pascal".
const std::map<int, std::string>& shipped_architectures() {
  static const std::map<int, std::string> names = [] {
  std::map<int, std::string> out;
  for (const auto& d : load_toml_folders_overriding<DeviceSpec>(
           {data_dir() / "gpus"}, [](const std::filesystem::path& f) { return load_device_file(f); }))
    out.emplace(d.sm_version, d.architecture);
  return out;
  }();
  return names;
}

// A GPU file of the user's names its architecture as the shipped files of its compute capability do: the name
// selects the Pascal-only collectives and the interval regime (arch=...), so a typo ("pascla") would change the
// prediction without a word. A compute capability the catalog lacks (a newer chip) may take any name.
void check_architecture_name(const DeviceSpec& d, const std::map<int, std::string>& shipped) {
  const auto it = shipped.find(d.sm_version);
  if (it == shipped.end() || it->second == d.architecture) return;
  throw InputError(fmt::format("GPU file '{}': field 'architecture' is '{}', but compute capability {} is '{}' in the "
                               "catalog (data/gpus); write architecture = \"{}\"",
                               d.file, d.architecture, d.compute_capability, it->second, it->second));
}

std::vector<DeviceSpec> load_all() {
  std::vector<std::filesystem::path> dirs{data_dir() / "gpus"};
  for (auto& p : env_paths("PERFCAST_GPU_PATH")) dirs.push_back(p);
  std::vector<DeviceSpec> out =
      load_toml_folders_overriding<DeviceSpec>(dirs, [](const std::filesystem::path& f) { return load_device_file(f); });
  if (dirs.size() > 1) {
    const auto& shipped = shipped_architectures();
    for (const auto& d : out) check_architecture_name(d, shipped);
  }
  std::sort(out.begin(), out.end(), [](const DeviceSpec& a, const DeviceSpec& b) { return a.id < b.id; });
  // Boards whose sustained clock was fitted to measured kernels (perfcast fit-kernels).
  const auto fit = data_dir() / "kernel_fit.toml";
  if (std::filesystem::exists(fit)) {
    const toml::table root = parse_toml_file(fit);
    if (const auto* gpus = root["gpu"].as_table())
      for (auto& d : out)
        if (const auto* t = (*gpus)[d.id].as_table()) {
          d.sustained_clock_factor = (*t)["sustained_clock"].value_or(0.0);
          d.sustained_clock_tdp_w = d.tdp_w;
          d.sources["sustained_clock_factor"] = "fitted to measured kernels by perfcast fit-kernels (data/kernel_fit.toml)";
        }
  }
  return out;
}

}  // namespace

std::string_view pipe_name(Pipe p) { return kPipeNames[static_cast<int>(p)]; }
std::string_view pipe_peak_key(Pipe p) { return kPipePeakKeys[static_cast<int>(p)]; }
bool is_tensor_pipe(Pipe p) { return static_cast<int>(p) >= static_cast<int>(Pipe::kTcFp16Fp16Acc); }

std::string DeviceSpec::source_of(const std::string& field) const {
  if (auto it = sources.find(field); it != sources.end()) return it->second;
  if (auto it = sources.find("default"); it != sources.end()) return it->second;
  return "";
}

DeviceSpec load_device_file(const std::filesystem::path& path) {
  toml::table t;
  try {
    t = toml::parse(read_text_file(path), path.string());
  } catch (const toml::parse_error& e) {
    throw InputError("GPU file '" + path.string() + "' is not valid TOML: " + std::string(e.description()) +
                     " (line " + std::to_string(e.source().begin.line) + ")");
  }
  const TomlFields r(t, "GPU file '" + path.string() + "'");
  DeviceSpec d;
  d.file = path.string();
  d.id = r.text("id");
  d.name = r.text("name");
  d.architecture = r.text("architecture");
  d.chip = r.text("chip");
  d.compute_capability = r.text("compute_capability");
  {
    // Major and minor are one or two digits each (1.0 to 12.x so far): no overflow on "666666666.6" (found by
    // fuzz_gpu_toml, fuzz/regressions/gpu_toml/).
    const std::string& cc = d.compute_capability;
    const auto dot = cc.find('.');
    auto digits = [](std::string_view v) {
      return !v.empty() && v.size() <= 2 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (dot == std::string::npos || !digits(std::string_view(cc).substr(0, dot)) ||
        !digits(std::string_view(cc).substr(dot + 1)))
      r.fail("compute_capability", "is not of the form '8.6'");
    d.sm_version = std::stoi(cc.substr(0, dot)) * 10 + std::stoi(cc.substr(dot + 1));
  }
  d.sm_count = r.count("sm_count");
  d.cuda_cores = r.count("cuda_cores");
  d.base_clock_mhz = r.number("base_clock_mhz");
  d.boost_clock_mhz = r.number("boost_clock_mhz");
  for (int i = 0; i < kPipeCount; ++i) d.peak_tflops[i] = r.number(kPipePeakKeys[i]);
  d.memory_gb = r.number("memory_gb");
  d.memory_type = r.text("memory_type");
  d.memory_bus_bits = r.count("memory_bus_bits");
  d.mem_bw_gbps = r.number("mem_bw_gbps");
  d.l2_bytes = r.number("l2_bytes");
  d.smem_per_sm_bytes = r.number("smem_per_sm_bytes");
  d.tdp_w = r.number("tdp_w");
  d.rated_tdp_w = d.tdp_w;
  d.power_limit_min_w = r.number_or("power_limit_min_w", 0);
  d.power_limit_max_w = r.number_or("power_limit_max_w", 0);
  if (d.power_limit_min_w < 0 || (d.power_limit_max_w > 0 && d.power_limit_max_w < d.power_limit_min_w))
    r.fail("power_limit_min_w", "must be non-negative and at most power_limit_max_w");
  d.pcie_gen = r.count("pcie_gen");
  d.pcie_lanes = r.count("pcie_lanes");
  d.nvlink_gbps = r.number("nvlink_gbps");
  d.launch_date = r.text("launch_date");
  d.launch_price_usd = r.number("launch_price_usd");
  if (d.sm_count <= 0) r.fail("sm_count", "must be positive");
  if (d.mem_bw_gbps <= 0) r.fail("mem_bw_gbps", "must be positive");
  if (d.memory_gb <= 0) r.fail("memory_gb", "must be positive");
  if (d.peak(Pipe::kFp32) <= 0) r.fail("fp32_tflops", "must be positive");
  // A board with no power or no clock has no step time or energy: the power model divides by both.
  if (d.tdp_w <= 0) r.fail("tdp_w", "must be positive (the board power limit in watts)");
  if (d.boost_clock_mhz <= 0) r.fail("boost_clock_mhz", "must be positive");
  if (d.base_clock_mhz <= 0 || d.base_clock_mhz > d.boost_clock_mhz)
    r.fail("base_clock_mhz", "must be positive and at most boost_clock_mhz");
  // A CUDA core retires at most one FMA (2 FLOP) per clock, so the FP32 peak cannot pass cores x 2 x boost clock.
  // Datasheets round their figure (Tesla P4: 5.5 TFLOPS against 2560 x 2 x 1063 MHz = 5.44), hence 5% of slack.
  if (d.cuda_cores > 0) {
    const double fma_peak_tflops = 2.0 * d.cuda_cores * d.boost_clock_mhz * 1e-6;
    if (d.peak(Pipe::kFp32) > 1.05 * fma_peak_tflops)
      r.fail("fp32_tflops", fmt::format("is {:g}, more than cuda_cores x 2 FLOP x boost_clock_mhz allows ({} x 2 x {:g} "
                                        "MHz = {:.2f} TFLOPS)",
                                        d.peak(Pipe::kFp32), d.cuda_cores, d.boost_clock_mhz, fma_peak_tflops));
  }
  if (const auto* m = r.has("measured") ? t["measured"].as_table() : nullptr) {
    const TomlFields fm(*m, "GPU file '" + path.string() + "' [measured]");
    MeasuredEfficiency me;
    const auto bounded = [&](std::string_view key, std::optional<double>& out, double hi) {
      const auto node = fm.node(key);
      if (!node) return;
      const auto v = node.value<double>();
      if (!v || *v <= 0 || *v > hi)
        r.fail("measured." + std::string(key), "must be a number in (0, " + fmt::format("{:g}", hi) + "]");
      out = *v;
    };
    bounded("gemm_efficiency_cuda", me.gemm_efficiency_cuda, 1.2);
    bounded("gemm_efficiency_tensor", me.gemm_efficiency_tensor, 1.2);
    bounded("dram_efficiency", me.dram_efficiency, 1.2);
    bounded("kernel_floor_us", me.kernel_floor_us, 1000);
    bounded("sustained_clock_mhz", me.sustained_clock_mhz, 5000);
    me.tdp_w = d.tdp_w;
    for (const char* key : {"device_name", "driver", "tool", "date"})
      if (auto v = fm.node(key).value<std::string>()) me.source += (me.source.empty() ? "" : ", ") + *v;
    fm.refuse_unknown_keys();
    d.measured = me;
  }
  if (const auto* src = r.has("sources") ? t["sources"].as_table() : nullptr) {
    for (const auto& [k, v] : *src)
      if (auto s = v.value<std::string>()) d.sources[std::string(k.str())] = *s;
  }
  r.refuse_unknown_keys();
  return d;
}

const std::vector<DeviceSpec>& gpu_catalog() {
  static const std::vector<DeviceSpec> catalog = load_all();
  return catalog;
}

DeviceSpec find_gpu(std::string_view id_or_path) {
  if (id_or_path.empty()) throw InputError("empty gpu id (list them with `perfcast gpus`)");
  if (id_or_path.size() > 5 && id_or_path.substr(id_or_path.size() - 5) == ".toml") {
    if (!std::filesystem::is_regular_file(std::filesystem::path(id_or_path)))
      throw InputError("GPU file '" + std::string(id_or_path) + "' does not exist or is not a file");
    DeviceSpec d = load_device_file(std::filesystem::path(id_or_path));
    check_architecture_name(d, shipped_architectures());
    return d;
  }
  if (cpu_by_id(id_or_path))
    throw InputError("'" + std::string(id_or_path) +
                     "' is a CPU (perfcast cpus): this needs a GPU; predict, advise, compare and op take CPUs with "
                     "--device");
  return find_by_id(gpu_catalog(), id_or_path, "gpu");
}

DeviceSpec device_from_cpu(const CpuSpec& cpu) {
  DeviceSpec d;
  d.kind = DeviceKind::kCpu;
  d.id = cpu.id;
  d.name = cpu.name;
  d.architecture = cpu.microarchitecture;
  d.chip = cpu.name;
  d.compute_capability = "cpu";
  d.sm_count = cpu.total_cores();
  d.base_clock_mhz = cpu.base_clock_ghz * 1e3;
  d.boost_clock_mhz = cpu.vector_clock_ghz() * 1e3;
  d.peak_tflops[static_cast<int>(Pipe::kFp32)] = cpu.peak_tflops("fp32");
  d.memory_gb = cpu.memory_gb * cpu.sockets;
  d.memory_type = cpu.memory_type;
  d.mem_bw_gbps = cpu.mem_bw_gbps();
  d.l2_bytes = cpu.l3_total_bytes();
  d.tdp_w = cpu.tdp_w * cpu.sockets;
  d.launch_date = cpu.launch_date;
  d.launch_price_usd = cpu.launch_price_usd * cpu.sockets;
  d.sources = cpu.sources;
  d.file = cpu.file;
  d.cpu = cpu;
  return d;
}

DeviceSpec find_device(std::string_view id_or_path) {
  if (id_or_path.empty()) throw InputError("empty device id (list them with `perfcast gpus` and `perfcast cpus`)");
  if (const CpuSpec* cpu = cpu_by_id(id_or_path)) return device_from_cpu(*cpu);
  if (id_or_path.size() > 5 && id_or_path.substr(id_or_path.size() - 5) == ".toml") return find_gpu(id_or_path);
  std::vector<std::string> ids;
  for (const auto& g : gpu_catalog()) {
    if (g.id == id_or_path) return g;
    ids.push_back(g.id);
  }
  for (const auto& c : cpu_catalog()) ids.push_back(c.id);
  throw_unknown("device", id_or_path, ids);
}

}  // namespace perfcast
