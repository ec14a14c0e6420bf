// Little's law for DRAM streams: bytes in flight = bandwidth x latency. data/architectures.toml's dram_latency_ns
// is read off published occupancy scans of a read kernel (github.com/te42kyfo/gpu-benches, cuda-stream and
// gpu-stream: 2 blocks of blockSize threads per SM, one 8-byte load per thread) at blockSize 64 (1 KB per SM).
// The same law must then give the scans' read bandwidth at blockSize 128 (2 KB per SM, still far below the DRAM
// peak), on the board the latency came from and on a second board of the architecture that did not set it.
#include <gtest/gtest.h>

#include <string>

#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "test_paths.h"

namespace perfcast {
namespace {

struct ScanPoint {
  std::string gpu;     // catalog id (or a tests/data/gpus file) with the scanned board's SM count
  double read_gbps;    // published read bandwidth at blockSize 128
  const char* source;  // the scan
};

double little_gbps(const DeviceSpec& device) {
  const KernelCostModel km(device, architecture_of(device));
  // blockSize 128 = 4 warps a block, 2 blocks per SM, 32 lanes x 8 bytes = 256 bytes per warp in flight.
  return km.in_flight_bytes_per_us(4, 256, 2) / 1e3;
}

TEST(DramLittleLaw, LatencyFromOccupancyScansGivesTheirBandwidthAtTwiceTheBytes) {
  const ScanPoint points[] = {
      {"a100-sxm4-80gb", 325, "cuda-stream/a100_80.txt"},
      {"a100-pcie-40gb", 304, "gpu-stream/a100_40.txt (not used for sm_80's latency)"},
      {"h100-pcie-80gb", 368, "cuda-stream/h100_pcie.txt"},
      {"v100-pcie-16gb", 262, "gpu-stream/v100.txt"},
      {"l40s", 615, "gpu-stream/l40.txt (L40: AD102 with the L40S's 142 SMs)"},
  };
  for (const auto& p : points) {
    const DeviceSpec device = find_gpu(p.gpu);
    const double gbps = little_gbps(device);
    EXPECT_NEAR(gbps / p.read_gbps, 1.0, 0.12) << p.gpu << ": Little's law " << gbps << " GB/s, " << p.source
                                               << " " << p.read_gbps << " GB/s";
  }
  const DeviceSpec a40 = find_gpu(std::string(PERFCAST_SOURCE_DIR) + "/tests/data/gpus/a40.toml");
  EXPECT_NEAR(little_gbps(a40) / 304.0, 1.0, 0.12) << "A40, gpu-stream/a40.txt";
}

TEST(DramLittleLaw, NoCapWithoutALatencyMeasurement) {
  // sm_61 (Pascal GP10x) has no published occupancy scan in data/architectures.toml.
  const DeviceSpec p40 = find_gpu("tesla-p40");
  const KernelCostModel km(p40, architecture_of(p40));
  EXPECT_EQ(km.in_flight_bytes_per_us(1, 512), 0.0);
}

}  // namespace
}  // namespace perfcast
