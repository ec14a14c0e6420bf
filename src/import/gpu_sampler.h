// What the GPUs of this machine do while a job runs, one sample per GPU per round: from NVML, loaded at run time
// (nvml_sampler.cpp), or replayed from a recorded session file (session_csv.cpp). The analysis (analysis/monitor.h)
// reads either through GpuSampler, so a recording goes through the same code as a live run.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace perfcast {

// NaN: the driver does not report the field on this board (NVML_ERROR_NOT_SUPPORTED), or the recording left it empty.
inline constexpr double kNotReported = std::numeric_limits<double>::quiet_NaN();

struct GpuSample {
  double time_s = 0;                     // since the session started
  int gpu = 0;                           // the driver's index
  std::string name;                      // "NVIDIA H200"
  double util_gpu_pct = kNotReported;    // share of the driver's last sample period in which a kernel ran
  double util_mem_pct = kNotReported;    // share of it in which device memory was read or written
  double mem_used_bytes = kNotReported;
  double mem_total_bytes = kNotReported;
  double power_w = kNotReported;
  double power_limit_w = kNotReported;   // enforced limit
  double sm_clock_mhz = kNotReported;
  double sm_clock_max_mhz = kNotReported;
  double mem_clock_mhz = kNotReported;
  double pcie_tx_bytes_per_s = kNotReported;  // GPU to host
  double pcie_rx_bytes_per_s = kNotReported;  // host to GPU
  double temperature_c = kNotReported;
  std::uint64_t throttle_mask = 0;       // NVML clocks-event (throttle) reasons, nvml.h nvmlClocksEventReason*
};

// The reasons set in an NVML throttle mask, in words ("power cap", "thermal slowdown (hardware)", ...); an idle
// GPU's "idle" included. Unknown bits read "reason 0x...".
std::vector<std::string> throttle_reason_words(std::uint64_t mask);
// True when the mask holds a reason that lowers the clocks of a busy GPU (power or thermal caps, hardware
// slowdowns), not idle, application clocks, sync boost or display clocks.
bool throttle_slows_clocks(std::uint64_t mask);

class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  // Where the samples come from: "NVML (driver 550.54.15), 8 GPUs" or "recording '<file>'".
  virtual std::string source() const = 0;
  // True for samples taken now (one round per interval, the caller waits between rounds); false for a recording.
  virtual bool live() const = 0;
  // One sample per GPU; `time_s` is stamped on live samples. Empty when a recording has no more rounds.
  virtual std::vector<GpuSample> next_round(double time_s) = 0;
};

// NVML through dlopen("libnvidia-ml.so.1"): no build dependency, and a machine without the driver gets an InputError
// of one line ("no NVIDIA driver on this machine: ..."), as does a driver that sees no GPU.
std::unique_ptr<GpuSampler> open_nvml_sampler();

// A session recorded by `perfcast monitor --csv` (or tools/device_session/record_monitor.sh). Rounds are the rows
// with the same time_s. InputError naming the line for a malformed row, a line longer than data/monitor.toml's
// max_line_bytes, time going backwards or values outside their ranges.
std::unique_ptr<GpuSampler> open_session_replay(const std::filesystem::path& csv);

// The session file's format: its header line, and one sample as a row (with its newline).
std::string session_csv_header();
std::string session_csv_row(const GpuSample& s);

}  // namespace perfcast
