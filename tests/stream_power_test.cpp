// Board power of a memory-bound kernel (analysis/power.cpp, data/power.toml [memory_kernel_sm_activity]) against
// published nvidia-smi readings of boards streaming DRAM: gpu-benches' roofline kernel at 0.25 flop/byte
// (github.com/te42kyfo/gpu-benches at e4e93a37819713515af27e0ffd8ae379df9a115b, gpu-roofline/*.txt), kept in
// data/power.toml [stream_readings] (perfcast does not read them).
// A consistency check, not held-out evidence: these readings set the per-architecture values, so the test says that
// the power report, with its own idle, DRAM and full-load terms and the bandwidth the cost model gives the kernel,
// charges a streaming kernel what those boards drew.
#include <gtest/gtest.h>

#include <string>

#include "analysis/predict.h"
#include "analysis/single_op.h"
#include "core/data_files.h"
#include "core/toml_reader.h"
#include "test_paths.h"

namespace perfcast {
namespace {

// A large FP32 elementwise add alone on the board for one step; the board power the report charges it.
double stream_power_w(const std::string& gpu) {
  const OpContext ctx = op_context(gpu, "pytorch", "fp32");
  OpSpec spec;
  spec.op = "elementwise";
  spec.function = "add";
  spec.rows = 16384;
  spec.cols = 16384;  // three 1 GiB tensors: ramp and launch are noise beside the transfer
  const OpPrediction op = predict_op(spec, ctx);
  EXPECT_EQ(op.cost.bound, Bound::kMemory) << gpu;
  Prediction p;
  p.request.gpu = gpu;
  p.request.batch = 1;
  p.device = ctx.device;
  OpCost entry;
  entry.cost = op.cost;
  p.step.entries.push_back(entry);
  p.step_us = op.cost.time_us;
  apply_power(p);
  EXPECT_TRUE(p.power.has_value()) << gpu;
  return p.power ? p.power->avg_power_w : 0;
}

// The mean of the boards' readings in data/power.toml [stream_readings.<arch>].
double published_stream_w(const std::string& arch) {
  const toml::table power = parse_toml_file(data_dir() / "power.toml");
  const auto* readings = power["stream_readings"][arch]["board_w"].as_array();
  EXPECT_TRUE(readings && !readings->empty()) << arch;
  if (!readings || readings->empty()) return 0;
  double sum = 0;
  for (const auto& w : *readings) sum += w.value<double>().value_or(0);
  return sum / static_cast<double>(readings->size());
}

TEST(StreamPower, MemoryBoundKernelsDrawWhatPublishedStreamsRead) {
  // alex_a100_40.txt: eight A100 SXM4 40GB.
  const double a100 = published_stream_w("sm_80");
  EXPECT_NEAR(stream_power_w("a100-sxm4-40gb"), a100, 0.06 * a100);
  // alex_a40.txt: eight A40 (a test fixture: no catalog file).
  const double a40 = published_stream_w("sm_86");
  EXPECT_NEAR(stream_power_w(std::string(PERFCAST_SOURCE_DIR) + "/tests/data/gpus/a40.toml"), a40, 0.06 * a40);
  // h200.txt: one H200 (the cost model streams it faster than the reading's bandwidth: 12 W more DRAM power).
  const double h200 = published_stream_w("sm_90");
  EXPECT_NEAR(stream_power_w("h200-sxm-141gb"), h200, 0.06 * h200);
}

}  // namespace
}  // namespace perfcast
