// perfcast-calibrate: measures this machine's CUDA GPU and writes a perfcast GPU file: the base catalog file's
// text with a new id and name, then a [measured] table of the fractions of its datasheet figures the card
// reached, which perfcast uses in place of data/architectures.toml's defaults. See README.md beside this file.
// Any error (arguments, base file, device, CUDA) is one line on stderr and exit code 2, and writes nothing.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/output_file.h"
#include "gpu_measurements.h"

namespace fs = std::filesystem;
using perfcast::calibrate::CalibrationError;

namespace {

constexpr const char* kTool = "perfcast-calibrate 1";  // bump when a measurement changes meaning

// The base catalog file: its text, copied unchanged, and the datasheet figures the measurements are divided by.
struct BaseFile {
  std::string text;
  std::string id, name, compute_capability;
  int sm_count = 0;
  double fp32_tflops = 0, tc_fp16_fp32acc_tflops = 0, mem_bw_gbps = 0, boost_clock_mhz = 0;
};

BaseFile read_base(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CalibrationError(fmt::format("cannot read the base file {}", path.string()));
  BaseFile b;
  b.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  toml::table t;
  try {
    t = toml::parse(b.text, path.string());
  } catch (const toml::parse_error& e) {
    throw CalibrationError(fmt::format("{} line {}: {}", path.string(), e.source().begin.line, e.description()));
  }
  const auto text = [&](const char* key) {
    if (auto v = t[key].value<std::string>()) return *v;
    throw CalibrationError(fmt::format("{}: no string '{}' (is it a perfcast GPU file?)", path.string(), key));
  };
  const auto number = [&](const char* key) {
    if (auto v = t[key].value<double>()) return *v;
    throw CalibrationError(fmt::format("{}: no number '{}' (is it a perfcast GPU file?)", path.string(), key));
  };
  if (t.contains("measured"))
    throw CalibrationError(
        fmt::format("{} already has a [measured] table: start from the catalog file in data/gpus/", path.string()));
  b.id = text("id");
  b.name = text("name");
  b.compute_capability = text("compute_capability");
  b.sm_count = static_cast<int>(number("sm_count"));
  b.fp32_tflops = number("fp32_tflops");
  b.tc_fp16_fp32acc_tflops = number("tc_fp16_fp32acc_tflops");
  b.mem_bw_gbps = number("mem_bw_gbps");
  b.boost_clock_mhz = number("boost_clock_mhz");
  if (b.fp32_tflops <= 0 || b.mem_bw_gbps <= 0)
    throw CalibrationError(fmt::format("{}: fp32_tflops and mem_bw_gbps must be positive", path.string()));
  return b;
}

// A TOML basic string.
std::string toml_string(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += fmt::format("\\{}", c);
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      q += fmt::format("\\u{:04X}", int(c));
    else
      q += c;
  }
  return q + "\"";
}

// Whether a line (leading blanks removed) assigns the bare key `key`.
bool assigns(std::string_view line, std::string_view key) {
  if (!line.starts_with(key)) return false;
  line.remove_prefix(key.size());
  const auto next = line.find_first_not_of(" \t");
  return next != std::string_view::npos && line[next] == '=';
}

// The base text with its top-level id and name lines replaced; every other line, comments included, unchanged.
// Top-level keys are the ones before the first [table] header.
std::string with_measured_identity(const BaseFile& b, const fs::path& path) {
  std::istringstream in(b.text);
  std::string out, line;
  bool top_level = true;
  int replaced = 0;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    const std::string_view s = first == std::string::npos ? "" : std::string_view(line).substr(first);
    if (s.starts_with('[')) top_level = false;
    if (top_level && assigns(s, "id")) {
      line = "id = " + toml_string(b.id + "-measured");
      ++replaced;
    } else if (top_level && assigns(s, "name")) {
      line = "name = " + toml_string(b.name + " (measured)");
      ++replaced;
    }
    out += line + "\n";
  }
  if (replaced != 2)
    throw CalibrationError(
        fmt::format("{}: expected one top-level `id = ...` and one `name = ...` line, found {} "
                    "between them",
                    path.string(), replaced));
  return out;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &local);
  return buf;
}

// One `key = value   # comment` line, comments aligned as in the README's schema.
std::string entry(const std::string& key_value, const std::string& comment) {
  return fmt::format("{:<31} # {}\n", key_value, comment);
}

int run(int argc, char** argv) {
  CLI::App app{
      "perfcast-calibrate: measure this machine's GPU and write a perfcast GPU file with a [measured] "
      "table (use it with perfcast predict --gpu FILE)"};
  std::string base_arg, out_arg;
  int device = 0;
  app.add_option("--base", base_arg, "catalog file of this card's model, e.g. data/gpus/gtx-1080-ti.toml")->required();
  app.add_option("--out", out_arg, "GPU file to write, e.g. my-card.toml")->required();
  app.add_option("--device", device, "CUDA device index")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw CalibrationError(e.what());
  }

  // Everything that can be wrong with the inputs is checked before any measuring.
  const fs::path base_path = base_arg, out = out_arg;
  const BaseFile base = read_base(base_path);
  const std::string identity = with_measured_identity(base, base_path);
  // perfcast's rules for output files (src/core/output_file.h): a new path or a regular file, links followed.
  perfcast::check_output_path(out);
  if (fs::exists(out) && fs::equivalent(out, base_path))
    throw CalibrationError("--out is the base file: write the measured profile to a new file");

  namespace cal = perfcast::calibrate;
  const cal::DeviceInfo dev = cal::query_device(device);
  const std::string dev_sm = fmt::format("{}{}", dev.cc_major, dev.cc_minor);
  std::string base_sm = base.compute_capability;
  std::erase(base_sm, '.');
  if (dev.sm_count != base.sm_count || dev_sm != base_sm)
    throw CalibrationError(
        fmt::format("device {} is {} (sm_{}, {} SMs) but {} is {} (sm_{}, {} SMs): pass the "
                    "catalog file of this card's model",
                    device, dev.name, dev_sm, dev.sm_count, base_path.string(), base.name, base_sm, base.sm_count));
  fmt::print("{}: device {} {} (sm_{}, {} SMs, {:.1f} GiB), {}\n", kTool, device, dev.name, dev_sm, dev.sm_count,
             dev.memory_gib, dev.driver);
  std::fflush(stdout);

  std::string measured = "\n[measured]\n";
  measured += fmt::format(
      "# Written by {}: fractions of this file's datasheet figures at boost clock that this\n"
      "# card reached; perfcast uses them in place of data/architectures.toml's defaults.\n",
      kTool);
  std::vector<std::string> warnings;
  const auto add = [&](const char* key, double fraction, const std::string& how, const std::string& figures) {
    fmt::print("  {:<24} {:.3f}  {}\n", key, fraction, figures);
    std::fflush(stdout);
    measured += entry(fmt::format("{} = {:.3f}", key, fraction), how + ": " + figures);
    // perfcast's loader takes fractions up to 1.2; more means the base file's datasheet figure is off.
    if (fraction > 1.2) warnings.push_back(fmt::format("{} = {:.3f} is above 1.2: check the base file", key, fraction));
  };

  // Large square SGEMM: what perfcast's FP32 GEMMs and convolutions reach at their best shape.
  const cal::GemmResult sgemm = cal::measure_sgemm(device);
  add("gemm_efficiency_cuda", sgemm.tflops / base.fp32_tflops, "cuBLAS SGEMM, best of M=N=K in {4096, 8192}",
      fmt::format("{:.2f} TFLOPS at N={} / fp32_tflops {:g}", sgemm.tflops, sgemm.size, base.fp32_tflops));

  // The same on tensor cores, as mixed precision runs it; no key on cards without tensor cores.
  if (base.tc_fp16_fp32acc_tflops > 0) {
    const cal::GemmResult hgemm = cal::measure_tensor_gemm(device);
    add("gemm_efficiency_tensor", hgemm.tflops / base.tc_fp16_fp32acc_tflops,
        "cublasGemmEx FP16 inputs, FP32 accumulate (CUBLAS_COMPUTE_32F), best of M=N=K in {4096, 8192}",
        fmt::format("{:.1f} TFLOPS at N={} / tc_fp16_fp32acc_tflops {:g}", hgemm.tflops, hgemm.size,
                    base.tc_fp16_fp32acc_tflops));
  }

  // Streaming bandwidth: what every memory-bound kernel (elementwise, normalization, optimizer) is held to.
  const double gbps = cal::measure_copy_gbps();
  add("dram_efficiency", gbps / base.mem_bw_gbps, "streaming copy kernel, 1 GiB arrays: (bytes read + written) / time",
      fmt::format("{:.0f} GB/s / mem_bw_gbps {:g}", gbps, base.mem_bw_gbps));

  // The shortest a kernel can take: bounds the many tiny kernels of small batches.
  const double floor_us = cal::measure_launch_us();
  const double queued_us = cal::measure_queued_launch_us();
  // perfcast adds the host's dispatch cost and the gap between kernels from the runtime profile, so the floor
  // it wants is the GPU time of one tiny kernel when the host runs ahead: the queued figure.
  fmt::print("  {:<24} {:.1f} us  (one launch with a sync, host round trip: {:.1f} us, not written)\n",
             "kernel_floor_us", queued_us, floor_us);
  measured += entry(fmt::format("kernel_floor_us = {:.1f}", queued_us),
                    "empty kernels queued back to back without a sync, GPU time per kernel");

  if (sgemm.sm_clock_mhz) {
    fmt::print("  {:<24} {:.0f} MHz  (boost_clock_mhz {:g})\n", "sustained_clock_mhz", *sgemm.sm_clock_mhz,
               base.boost_clock_mhz);
    measured +=
        entry(fmt::format("sustained_clock_mhz = {:.0f}", *sgemm.sm_clock_mhz),
              fmt::format("SM clock read with NVML during the SGEMM run (boost_clock_mhz {:g})", base.boost_clock_mhz));
  } else {
    fmt::print("  {:<24} not measured (NVML missing at build time, or it could not read the clock)\n",
               "sustained_clock_mhz");
  }
  measured += "device_name = " + toml_string(dev.name) + "\n";
  measured += "driver = " + toml_string(dev.driver) + "\n";
  measured += "tool = " + toml_string(kTool) + "\n";
  measured += "date = " + toml_string(today()) + "\n";

  perfcast::write_output_file(out, identity + measured);
  for (const auto& w : warnings) fmt::print(stderr, "perfcast-calibrate: warning: {}\n", w);
  fmt::print("wrote {}: perfcast predict --gpu {} ...\n", out.string(), out.string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "perfcast-calibrate: error: " << e.what() << "\n";
    return 2;
  }
}
