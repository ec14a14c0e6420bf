// GpuSampler over NVML, the NVIDIA driver's management library, opened at run time: perfcast builds and runs on
// machines without the driver, and only `perfcast monitor` needs it. The few declarations below follow NVIDIA's
// public NVML API reference (nvml.h): return codes, the opaque device handle, nvmlUtilization_t, nvmlMemory_t, the
// clock, PCIe-counter and temperature enums and the clocks-event (throttle) reason bits.
#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <string>

#include "core/error.h"
#include "import/gpu_sampler.h"

namespace perfcast {

namespace {

// ---- the part of nvml.h used here -------------------------------------------------------------------------------
using nvmlReturn_t = int;
constexpr nvmlReturn_t kNvmlSuccess = 0;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of the sample period in which one or more kernels ran
  unsigned int memory;  // percent of it in which device memory was read or written
};
struct nvmlMemory_t {
  unsigned long long total, free, used;  // bytes
};
constexpr int kNvmlClockSm = 1;             // nvmlClockType_t NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;            // NVML_CLOCK_MEM
constexpr int kNvmlPcieTxBytes = 0;         // nvmlPcieUtilCounter_t NVML_PCIE_UTIL_TX_BYTES
constexpr int kNvmlPcieRxBytes = 1;         // NVML_PCIE_UTIL_RX_BYTES
constexpr int kNvmlTemperatureGpu = 0;      // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
constexpr unsigned kNvmlNameBufferSize = 96;      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kNvmlDriverBufferSize = 80;    // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*), with what each means for a job.
struct ReasonBit {
  std::uint64_t bit;
  const char* words;
  bool slows_busy_gpu;
};
constexpr std::array<ReasonBit, 9> kReasons{{
    {0x1, "idle", false},                            // GpuIdle
    {0x2, "application clocks", false},              // ApplicationsClocksSetting
    {0x4, "power cap", true},                        // SwPowerCap
    {0x8, "hardware slowdown", true},                // HwSlowdown
    {0x10, "sync boost", false},                     // SyncBoost
    {0x20, "thermal slowdown (software)", true},     // SwThermalSlowdown
    {0x40, "thermal slowdown (hardware)", true},     // HwThermalSlowdown
    {0x80, "power brake (hardware)", true},          // HwPowerBrakeSlowdown
    {0x100, "display clocks", false},                // DisplayClockSetting
}};

// The library and the entry points used, resolved once.
class Nvml {
 public:
  Nvml() {
    lib_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      const char* why = ::dlerror();
      throw InputError(std::string("no NVIDIA driver on this machine: ") + (why ? why : "libnvidia-ml.so.1 not found") +
                       " (perfcast monitor samples this machine's GPUs; --replay FILE reads a recorded session)");
    }
    resolve(init_, "nvmlInit_v2");
    resolve(shutdown_, "nvmlShutdown");
    resolve(error_string_, "nvmlErrorString");
    resolve(count_, "nvmlDeviceGetCount_v2");
    resolve(handle_, "nvmlDeviceGetHandleByIndex_v2");
    resolve(name_, "nvmlDeviceGetName");
    resolve(driver_, "nvmlSystemGetDriverVersion");
    resolve(utilization_, "nvmlDeviceGetUtilizationRates");
    resolve(memory_, "nvmlDeviceGetMemoryInfo");
    resolve(power_, "nvmlDeviceGetPowerUsage");
    resolve(power_limit_, "nvmlDeviceGetEnforcedPowerLimit");
    resolve(clock_, "nvmlDeviceGetClockInfo");
    resolve(max_clock_, "nvmlDeviceGetMaxClockInfo");
    resolve(pcie_, "nvmlDeviceGetPcieThroughput");
    resolve(temperature_, "nvmlDeviceGetTemperature");
    // Renamed in CUDA 12.2's NVML; older drivers have only the throttle name.
    reasons_ = reinterpret_cast<decltype(reasons_)>(::dlsym(lib_, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons_) resolve(reasons_, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (const nvmlReturn_t r = init_(); r != kNvmlSuccess) {
      ::dlclose(lib_);
      throw InputError(std::string("the NVIDIA driver did not start: ") + error_string_(r));
    }
    initialised_ = true;
  }
  ~Nvml() {
    if (initialised_) shutdown_();
    if (lib_) ::dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  unsigned device_count() {
    unsigned n = 0;
    if (const nvmlReturn_t r = count_(&n); r != kNvmlSuccess)
      throw InputError(std::string("the NVIDIA driver cannot count its GPUs: ") + error_string_(r));
    return n;
  }
  nvmlDevice_t device(unsigned index) {
    nvmlDevice_t d = nullptr;
    if (const nvmlReturn_t r = handle_(index, &d); r != kNvmlSuccess)
      throw InputError(fmt::format("the NVIDIA driver cannot open GPU {}: {}", index, error_string_(r)));
    return d;
  }
  std::string driver_version() {
    std::array<char, kNvmlDriverBufferSize> buf{};
    return driver_(buf.data(), static_cast<unsigned>(buf.size())) == kNvmlSuccess ? std::string(buf.data()) : "";
  }
  std::string name(nvmlDevice_t d) {
    std::array<char, kNvmlNameBufferSize> buf{};
    return name_(d, buf.data(), static_cast<unsigned>(buf.size())) == kNvmlSuccess ? std::string(buf.data()) : "";
  }

  // One sample; a field the board does not report stays kNotReported.
  GpuSample sample(nvmlDevice_t d) {
    GpuSample s;
    nvmlUtilization_t u{};
    if (utilization_(d, &u) == kNvmlSuccess) {
      s.util_gpu_pct = u.gpu;
      s.util_mem_pct = u.memory;
    }
    nvmlMemory_t m{};
    if (memory_(d, &m) == kNvmlSuccess) {
      s.mem_used_bytes = static_cast<double>(m.used);
      s.mem_total_bytes = static_cast<double>(m.total);
    }
    unsigned v = 0;
    if (power_(d, &v) == kNvmlSuccess) s.power_w = v / 1e3;  // milliwatts
    if (power_limit_(d, &v) == kNvmlSuccess) s.power_limit_w = v / 1e3;
    if (clock_(d, kNvmlClockSm, &v) == kNvmlSuccess) s.sm_clock_mhz = v;
    if (max_clock_(d, kNvmlClockSm, &v) == kNvmlSuccess) s.sm_clock_max_mhz = v;
    if (clock_(d, kNvmlClockMem, &v) == kNvmlSuccess) s.mem_clock_mhz = v;
    // KB/s over a 20 ms window the driver measures at the call (nvmlDeviceGetPcieThroughput).
    if (pcie_(d, kNvmlPcieTxBytes, &v) == kNvmlSuccess) s.pcie_tx_bytes_per_s = v * 1e3;
    if (pcie_(d, kNvmlPcieRxBytes, &v) == kNvmlSuccess) s.pcie_rx_bytes_per_s = v * 1e3;
    if (temperature_(d, kNvmlTemperatureGpu, &v) == kNvmlSuccess) s.temperature_c = v;
    unsigned long long reasons = 0;
    if (reasons_(d, &reasons) == kNvmlSuccess) s.throttle_mask = reasons;
    return s;
  }

 private:
  template <typename F>
  void resolve(F& f, const char* symbol) {
    f = reinterpret_cast<F>(::dlsym(lib_, symbol));
    if (!f) {
      ::dlclose(lib_);
      lib_ = nullptr;
      throw InputError(std::string("the NVIDIA driver's libnvidia-ml.so.1 lacks ") + symbol + " (a driver older than R450?)");
    }
  }

  void* lib_ = nullptr;
  bool initialised_ = false;
  nvmlReturn_t (*init_)() = nullptr;
  nvmlReturn_t (*shutdown_)() = nullptr;
  const char* (*error_string_)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count_)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name_)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*driver_)(char*, unsigned) = nullptr;
  nvmlReturn_t (*utilization_)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*memory_)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*power_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit_)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*clock_)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock_)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature_)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*reasons_)(nvmlDevice_t, unsigned long long*) = nullptr;
};

class NvmlSampler final : public GpuSampler {
 public:
  NvmlSampler() {
    const unsigned n = nvml_.device_count();
    if (n == 0) throw InputError("the NVIDIA driver sees no GPU on this machine");
    for (unsigned i = 0; i < n; ++i) {
      devices_.push_back(nvml_.device(i));
      names_.push_back(nvml_.name(devices_.back()));
    }
    driver_ = nvml_.driver_version();
  }
  std::string source() const override {
    return fmt::format("NVML (driver {}), {} GPU{}", driver_.empty() ? "?" : driver_, devices_.size(),
                       devices_.size() == 1 ? "" : "s");
  }
  bool live() const override { return true; }
  std::vector<GpuSample> next_round(double time_s) override {
    std::vector<GpuSample> round;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      GpuSample s = nvml_.sample(devices_[i]);
      s.time_s = time_s;
      s.gpu = static_cast<int>(i);
      s.name = names_[i];
      round.push_back(std::move(s));
    }
    return round;
  }

 private:
  Nvml nvml_;
  std::vector<nvmlDevice_t> devices_;
  std::vector<std::string> names_;
  std::string driver_;
};

}  // namespace

std::vector<std::string> throttle_reason_words(std::uint64_t mask) {
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& r : kReasons) {
    known |= r.bit;
    if (mask & r.bit) out.emplace_back(r.words);
  }
  if (mask & ~known) out.push_back(fmt::format("reason {:#x}", mask & ~known));
  return out;
}

bool throttle_slows_clocks(std::uint64_t mask) {
  for (const auto& r : kReasons)
    if (r.slows_busy_gpu && (mask & r.bit)) return true;
  return false;
}

std::unique_ptr<GpuSampler> open_nvml_sampler() { return std::make_unique<NvmlSampler>(); }

}  // namespace perfcast
