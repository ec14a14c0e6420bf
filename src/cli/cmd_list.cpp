// perfcast gpus | cpus | models | runtimes: one entry per line, id first; --json for details.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "device/catalog.h"
#include "device/cpu_catalog.h"
#include "import/zoo/zoo.h"
#include "report/prediction_report.h"
#include "runtime/runtime_profile.h"

namespace perfcast::cli {

Command list_gpus_command() {
  return {"gpus", "list the GPU catalog, one id per line", [](CLI::App& app) {
            auto json = std::make_shared<bool>(false);
            app.add_flag("--json", *json, "details as JSON");
            return std::function<int()>([json] {
              if (*json) {
                nlohmann::json j = nlohmann::json::array();
                for (const auto& d : gpu_catalog()) {
                  nlohmann::json g{{"id", d.id},
                                   {"name", d.name},
                                   {"architecture", d.architecture},
                                   {"chip", d.chip},
                                   {"compute_capability", d.compute_capability},
                                   {"sm_count", d.sm_count},
                                   {"cuda_cores", d.cuda_cores},
                                   {"base_clock_mhz", d.base_clock_mhz},
                                   {"boost_clock_mhz", d.boost_clock_mhz},
                                   {"memory_gb", d.memory_gb},
                                   {"memory_type", d.memory_type},
                                   {"memory_bus_bits", d.memory_bus_bits},
                                   {"mem_bw_gbps", d.mem_bw_gbps},
                                   {"l2_bytes", rounded_count_json(d.l2_bytes)},
                                   {"smem_per_sm_bytes", rounded_count_json(d.smem_per_sm_bytes)},
                                   {"tdp_w", d.tdp_w},
                                   {"pcie_gen", d.pcie_gen},
                                   {"pcie_lanes", d.pcie_lanes},
                                   {"nvlink_gbps", d.nvlink_gbps},
                                   {"launch_date", d.launch_date},
                                   {"launch_price_usd", d.launch_price_usd},
                                   {"file", d.file}};
                  for (int i = 0; i < kPipeCount; ++i)
                    g[std::string(pipe_peak_key(static_cast<Pipe>(i)))] = d.peak_tflops[i];
                  g["sources"] = d.sources;
                  g["measured"] = d.measured ? nlohmann::json(d.measured->source) : nlohmann::json(nullptr);
                  j.push_back(g);
                }
                std::cout << j.dump(2) << "\n";
                return 0;
              }
              for (const auto& d : gpu_catalog())
                std::cout << fmt::format("{:<18} {:<40} sm_{} {:>5.0f} GB {:>6.0f} GB/s {:>6.1f} FP32 TFLOPS{}\n", d.id,
                                         d.name, d.sm_version, d.memory_gb, d.mem_bw_gbps, d.peak(Pipe::kFp32),
                                         d.measured ? "  (measured efficiencies)" : "");
              return 0;
            });
          }};
}

Command list_cpus_command() {
  return {"cpus", "list the CPU catalog, one id per line (use an id with --device)", [](CLI::App& app) {
            auto json = std::make_shared<bool>(false);
            app.add_flag("--json", *json, "details as JSON");
            return std::function<int()>([json] {
              if (*json) {
                nlohmann::json j = nlohmann::json::array();
                for (const auto& c : cpu_catalog())
                  j.push_back({{"id", c.id},
                               {"name", c.name},
                               {"vendor", c.vendor},
                               {"microarchitecture", c.microarchitecture},
                               {"isa", c.isa},
                               {"sockets", c.sockets},
                               {"cores_per_socket", c.cores},
                               {"threads_per_socket", c.threads},
                               {"base_clock_ghz", c.base_clock_ghz},
                               {"avx2_allcore_ghz", c.avx2_allcore_ghz},
                               {"avx512_allcore_ghz", c.avx512_allcore_ghz},
                               {"amx_allcore_ghz", c.amx_allcore_ghz},
                               {"vector_bits", c.vector_bits},
                               {"fma_units", c.fma_units},
                               {"avx512_bf16", c.avx512_bf16},
                               {"vnni", c.vnni},
                               {"amx_bf16_flops_per_clk", c.amx_bf16_flops_per_clk},
                               {"amx_int8_ops_per_clk", c.amx_int8_ops_per_clk},
                               {"fp32_tflops", c.peak_tflops("fp32")},
                               {"bf16_tflops", c.peak_tflops("bf16")},
                               {"int8_tops", c.peak_tflops("int8")},
                               {"memory_channels_per_socket", c.memory_channels},
                               {"memory_mt_s", c.memory_mt_s},
                               {"memory_type", c.memory_type},
                               {"mem_bw_gbps", c.mem_bw_gbps()},
                               {"memory_gb", c.memory_gb * c.sockets},
                               {"l2_bytes_per_core", rounded_count_json(c.l2_bytes_per_core)},
                               {"l3_bytes", rounded_count_json(c.l3_total_bytes())},
                               {"tdp_w", c.tdp_w * c.sockets},
                               {"launch_date", c.launch_date},
                               {"file", c.file},
                               {"sources", c.sources}});
                std::cout << j.dump(2) << "\n";
                return 0;
              }
              for (const auto& c : cpu_catalog())
                std::cout << fmt::format("{:<26} {:<40} {:>4} cores {:>6.0f} GB/s {:>6.2f} FP32 TFLOPS {:>7.1f} BF16 {:>7.1f} INT8\n",
                                         c.id, c.name, c.total_cores(), c.mem_bw_gbps(), c.peak_tflops("fp32"),
                                         c.peak_tflops("bf16"), c.peak_tflops("int8"));
              return 0;
            });
          }};
}

Command list_models_command() {
  return {"models", "list the model zoo, one id per line", [](CLI::App& app) {
            auto json = std::make_shared<bool>(false);
            app.add_flag("--json", *json, "details as JSON");
            return std::function<int()>([json] {
              if (*json) {
                nlohmann::json j = nlohmann::json::array();
                for (const auto& m : zoo()) {
                  const Graph g = m.build(ModelOptions{1, 0});
                  j.push_back({{"id", m.id},
                               {"family", m.family},
                               {"description", m.description},
                               {"citation", m.citation},
                               {"sequence", m.sequence},
                               {"default_seq", m.default_seq},
                               {"params", g.params()}});
                }
                std::cout << j.dump(2) << "\n";
                return 0;
              }
              for (const auto& m : zoo()) std::cout << fmt::format("{:<16} {:<13} {}\n", m.id, m.family, m.description);
              return 0;
            });
          }};
}

Command list_runtimes_command() {
  return {"runtimes", "list runtime profiles, one id per line", [](CLI::App&) {
            return std::function<int()>([] {
              for (const auto& r : runtime_catalog()) std::cout << fmt::format("{:<16} {}\n", r.id, r.name);
              return 0;
            });
          }};
}

}  // namespace perfcast::cli
