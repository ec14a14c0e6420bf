// A CPU as the cost model sees it: cores, all-core clocks under vector load, SIMD and matrix units, memory
// channels and caches. Loaded from data/cpus/ (one socket per file; `<id>-2s` is the same part in a two-socket
// server).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace perfcast {

// What runs the step: a GPU (data/gpus) or the CPU itself (data/cpus).
enum class DeviceKind : unsigned char { kGpu, kCpu };

struct CpuSpec {
  std::string id;                 // catalog id, e.g. "xeon-platinum-8380"
  std::string name;               // marketing name
  std::string vendor;             // intel | amd
  std::string microarchitecture;  // broadwell, skylake-sp, ..., zen4
  std::string isa;                // widest vector ISA the libraries use: avx2 | avx512
  int sockets = 1;                // sockets in the system this entry describes (1, or 2 for "-2s")
  int max_sockets = 1;            // most sockets the part runs in (2 for two-socket Xeon/EPYC servers)
  int cores = 0;                  // per socket
  int threads = 0;                // per socket
  double base_clock_ghz = 0;
  double avx2_allcore_ghz = 0;    // all cores busy with AVX2 FMAs (the AVX2 licence clock where Intel has one)
  double avx512_allcore_ghz = 0;  // all cores busy with AVX-512 FMAs; 0 = no AVX-512
  double amx_allcore_ghz = 0;     // all cores busy with AMX tiles; 0 = no AMX
  int vector_bits = 0;            // width of one FMA unit's datapath (256 on Zen 4, which splits AVX-512 in two)
  int fma_units = 0;              // FMA pipes per core at that width
  bool avx512_bf16 = false;       // VDPBF16PS (Cooper Lake, Zen 4): BF16 pairs at twice the FP32 FMA rate
  bool vnni = false;              // VPDPBUSD (Cascade Lake on, Zen 4): INT8 quads at four times the FP32 FMA rate
  double amx_bf16_flops_per_clk = 0;  // per core; 0 = no AMX
  double amx_int8_ops_per_clk = 0;    // per core; 0 = no AMX
  int memory_channels = 0;        // per socket
  double memory_mt_s = 0;         // DIMM transfer rate (MT/s)
  std::string memory_type;        // DDR4, DDR5
  double memory_gb = 0;           // per socket, in the common configuration the file states
  double l2_bytes_per_core = 0;
  double l3_bytes = 0;            // per socket
  // L3 one core complex shares, where a socket's L3 is split between complexes (AMD's CCX / CCD: a core fills and
  // hits only its own complex's slice); 0 = one L3 shared by every core of the socket (Intel's mesh and ring).
  double l3_slice_bytes = 0;
  double tdp_w = 0;               // per socket
  // Data rate of the socket-to-socket links (UPI, QPI, xGMI), all links together, one direction, GB/s; only for
  // parts that run in two-socket servers (max_sockets = 2), 0 otherwise.
  double socket_link_gbps = 0;
  // Share of the channels' bandwidth the processes this entry describes get: 1 for the part as catalogued; 1 / k for
  // one of k processes pinned to the same socket and all streaming at once (cpu_instance_share).
  double memory_share = 1;
  // Pages follow their readers (PredictRequest::numa_pages "balanced"): each socket reads the weights its threads
  // use from its own node; false: they stay on the node of the thread that first wrote them.
  bool pages_balanced = false;
  std::string launch_date;
  double launch_price_usd = 0;    // per socket, 0 = not in the file
  std::map<std::string, std::string> sources;  // field -> where the value came from ("default" for the rest)
  std::string file;

  int total_cores() const { return cores * sockets; }
  // Peak DRAM bandwidth of all sockets: channels x MT/s x 8 bytes (times memory_share).
  double mem_bw_gbps() const { return memory_channels * memory_mt_s * 8.0 / 1000.0 * sockets * memory_share; }
  // Clock of the widest vector unit the libraries use under all-core load.
  double vector_clock_ghz() const { return avx512_allcore_ghz > 0 ? avx512_allcore_ghz : avx2_allcore_ghz; }
  // FP32 FLOPs per core per clock: FMA units x FP32 lanes x 2.
  double fp32_flops_per_clk() const { return fma_units * (vector_bits / 32.0) * 2.0; }
  // Dense peak of the precision's GEMM math in TFLOPS (TOPS for int8) over all sockets; 0 = not supported here.
  // fp32 on the FMA units; bf16 on AMX, else AVX512_BF16; int8 on AMX, else VNNI.
  double peak_tflops(std::string_view precision) const;
  // The unit that runs the precision's GEMMs: "avx2", "avx512", "avx512_bf16", "vnni", "amx" ("" = none).
  std::string_view math_unit(std::string_view precision) const;
  double l3_total_bytes() const { return l3_bytes * sockets; }
  // The L3 `cores` cores of one socket can fill, packed onto as few core complexes as they fit in: every slice they
  // touch (l3_bytes / slices cores share each), or the socket's whole L3 where it is one.
  double l3_reach_bytes(int cores) const;
  double l2_total_bytes() const { return l2_bytes_per_core * total_cores(); }
  std::string source_of(const std::string& field) const;
};

}  // namespace perfcast
