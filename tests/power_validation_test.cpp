// The board_power_w metric of validation files (data/validation/power.csv, session 31): measured average board power
// per GPU against PowerCost::avg_power_w.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "analysis/validate.h"
#include "analysis/what_if_pairs.h"
#include "core/error.h"
#include "device/catalog.h"
#include "report/validation_report.h"
#include "test_paths.h"

namespace perfcast {
namespace {

// Batch-1 FP16 decode of Llama 2 7B in eager PyTorch (64 new tokens after 256): a step whose host waits between
// kernels, so most of its time draws the clocks-up wait power.
PredictRequest eager_llama_decode(const std::string& gpu) {
  PredictRequest r;
  r.gpu = gpu;
  r.model = "llama-2-7b";
  r.runtime = "pytorch";
  r.mode = Mode::kDecode;
  r.precision = "fp16";
  r.batch = 1;
  r.seq = 64;
  r.context = 256;
  return r;
}

const std::string kPower = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/power.csv";

std::filesystem::path write_csv(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kHeader = "gpu,model,runtime,mode,precision,batch,n_gpus,data,metric,value,source,notes\n";

TEST(PowerValidation, EveryRowIsPredictedBetweenIdleAndTheBoardLimit) {
  // An average over a step cannot exceed the board's power limit (its rated TDP in data/gpus; no row sets
  // --power-limit) and cannot fall below what the board draws waiting. The H200's idle floor is a measurement:
  // nvidia-smi read 78 W at P0 with no process (data/device_sessions/2026-12-04-h200/nvidia-smi.txt).
  int rows = 0;
  predict_config_file(
      kPower,
      [&](RowResult&& res) {
        ASSERT_TRUE(res.prediction) << "line " << res.row.line << ": " << res.status;
        ASSERT_TRUE(res.prediction->power) << "line " << res.row.line;
        const PowerCost& pc = *res.prediction->power;
        const double tdp = find_gpu(res.row.gpu).tdp_w;
        EXPECT_GT(pc.avg_power_w, pc.wait_power_w) << "line " << res.row.line;
        EXPECT_LE(pc.avg_power_w, tdp) << "line " << res.row.line;
        if (res.row.gpu == "h200-sxm-141gb") {
          EXPECT_GT(pc.avg_power_w, 78.0) << "line " << res.row.line;
        }
        ++rows;
      },
      true);
  EXPECT_GE(rows, 10);
}

TEST(PowerValidation, TheMetricIsPredictedByTheAveragePower) {
  std::vector<double> avg;
  predict_config_file(
      kPower, [&](RowResult&& res) { avg.push_back(res.prediction->power->avg_power_w); }, true);
  const ValidationReport rep = validate_file(kPower);
  ASSERT_EQ(rep.rows.size(), avg.size());
  EXPECT_TRUE(rep.unpredicted.empty());
  for (std::size_t i = 0; i < avg.size(); ++i) {
    EXPECT_EQ(rep.rows[i].result.row.metric, "board_power_w");
    EXPECT_DOUBLE_EQ(rep.rows[i].predicted, avg[i]);
    // The interval regimes describe throughput residuals: a power row gets none.
    EXPECT_FALSE(rep.rows[i].inside.has_value());
    EXPECT_TRUE(rep.rows[i].regime.empty());
  }
}

TEST(PowerValidation, PowerFileStaysWithinItsRatchet) {
  // data/validation/power.csv at its first run (session 31): median APE 17.5%, mean 16.9% over 12 rows
  // (docs/calibration.md, 'Board power against measurements'). Raised in the open by h/power31b, which added 24
  // rows of batch-1 LLaMA generation from the ML.ENERGY Leaderboard with no model change: 38.7% / 34.2% over 36
  // rows ('Board power during LLM generation'). Lowered by h/power32, whose waits at P0 with the clocks up
  // (data/power.toml clocks_up_activity) read 35.4% / 31.6%; h/v100pw32's sm_70 power_clock_exponent (the V100
  // PCIe at its 250 W limit under full load) 34.6% / 29.2%. Lower these as the power model improves, never raise
  // them quietly.
  const ValidationReport rep = validate_file(kPower);
  EXPECT_EQ(rep.overall.rows, 36);
  EXPECT_LT(rep.overall.median_ape, 35.0);
  EXPECT_LT(rep.overall.mean_ape, 29.7);
  EXPECT_EQ(rep.overall.with_interval, 0);
}

TEST(PowerValidation, JsonRowsCarryTheTermsOfTheAverage) {
  // tools/power_regimes.py reads these terms to ask what a row's kernels would have to draw. The limit each row is
  // held to is the board's rated TDP (no row sets a power limit): A100 PCIe 40GB, V100 PCIe 32GB and P100 PCIe
  // 16GB 250 W, H200 SXM 700 W (NVIDIA datasheets; data/gpus). The busy share is a share of the step; the wait
  // power lies above the board at rest, the H200's at-rest reading being 78 W
  // (data/device_sessions/2026-12-04-h200/nvidia-smi.txt).
  const nlohmann::json j = validation_json(validate_file(kPower));
  ASSERT_EQ(j["rows"].size(), 36u);
  for (const auto& r : j["rows"]) {
    ASSERT_TRUE(r.contains("power_terms")) << r["line"];
    const auto& t = r["power_terms"];
    const std::string gpu = r["gpu"];
    if (gpu == "a100-pcie-40gb" || gpu == "v100-pcie-32gb" || gpu == "p100-pcie-16gb")
      EXPECT_DOUBLE_EQ(t["limit_w"].get<double>(), 250.0) << r["line"];
    if (gpu == "h200-sxm-141gb") {
      EXPECT_DOUBLE_EQ(t["limit_w"].get<double>(), 700.0);
      EXPECT_GT(t["wait_power_w"].get<double>(), 78.0);
    }
    EXPECT_GT(t["busy_share"].get<double>(), 0.0) << r["line"];
    EXPECT_LE(t["busy_share"].get<double>(), 1.0) << r["line"];
    EXPECT_LE(t["peak_power_w"].get<double>(), t["limit_w"].get<double>()) << r["line"];
  }
}

TEST(PowerValidation, WaitsInsideAStepDrawTheBoardWithItsClocksUp) {
  // This project's H200 recording (tests/data/monitor/h200-sxm-141gb_resnet50_amp_b128_gpu_nvidia-smi.csv): with no
  // process the board reads 78.5-78.7 W at 345 MHz; with a CUDA context open and no kernel running (0%
  // utilization) it keeps its 1980 MHz boost clock and reads 121.2-149.7 W. A batch-1 decode step in eager
  // PyTorch waits on the host between kernels, and those waits draw the second figure, not the first.
  const Prediction p = predict(eager_llama_decode("h200-sxm-141gb"));
  ASSERT_TRUE(p.power);
  EXPECT_GE(p.power->wait_power_w, 121.2);
  EXPECT_LE(p.power->wait_power_w, 149.7);
  EXPECT_GT(p.power->avg_power_w, p.power->wait_power_w);
}

// The clocks-up wait power on two boards other than the H200 it was derived from (data/power.toml
// clocks_up_activity), against nvidia-smi readings published of boards at P0 with a process holding memory and no kernel
// running: a Tesla V100-SXM2 32GB at 53 W of 300 W, 0% utilization, 20 GB in use (its neighbour, 100% busy with a
// spinning kernel, reads 66 W: the upper end here) (github.com/zai-org/GLM-130B issue #32, driver 470.82.01); an
// H100 80GB HBM3 (SXM5) at 109-145 W of 700 W, 0-4% utilization, 72.8 GB held by gpu-burn's own buffers
// (github.com/wilicc/gpu-burn issue #114, two nvidia-smi snapshots of its idle boards, driver 550.90.07).
TEST(PowerValidation, WaitPowerMatchesPublishedIdleAtP0Readings) {
  const auto wait_w = [](const std::string& gpu) {
    const Prediction p = predict(eager_llama_decode(gpu));
    EXPECT_TRUE(p.power) << gpu;
    return p.power ? p.power->wait_power_w : 0.0;
  };
  const double v100 = wait_w("v100-sxm2-32gb");
  EXPECT_GE(v100, 53.0);
  EXPECT_LE(v100, 66.0);
  const double h100 = wait_w("h100-sxm5-80gb");
  EXPECT_GE(h100, 109.0);
  EXPECT_LE(h100, 145.0);
}

TEST(PowerValidation, AV100PcieIsAtItsLimitUnderFp32TrainingAsZeusMeasured) {
  // The Zeus NSDI 2023 power trace (ml-energy/zeus@43297f65, examples/research_reproducibility/zeus_nsdi23/trace/
  // summary_power_v100.csv): a V100 PCIe training torchvision ResNet-50 FP32 on ImageNet at each power limit. At its
  // 250 W default the epoch's average board power is 220-227 W (batch 32-256; batch 128: 222.4 W, a power.csv row),
  // and lowering the limit still costs time: the epoch at 125 W takes 1.30-1.44x the 250 W one (batch 128: 1.43),
  // at 225 W 1.018-1.022x. So the board's full load at boost reaches its limit; the cube law from the SXM2 had put
  // it at 220 W, leaving the 125 W epoch at 1.18x and the 250 W power at 184 W (docs/calibration.md, session 32
  // h/v100pw32). Bands: the measured spread over batches, widened by the run-to-run spread of such traces (~5%).
  PredictRequest r;
  r.gpu = "v100-pcie-32gb";
  r.model = "resnet50_v1_5";
  r.runtime = "pytorch";
  r.runtime_version = "1.13";
  r.mode = Mode::kTrain;
  r.precision = "fp32";
  r.batch = 128;
  r.data = "real-augmented";
  r.host = "desktop-6c";
  r.conv_algo = "heuristic";
  const Prediction stock = predict(r);
  r.power_limit_w = 225;
  const Prediction at225 = predict(r);
  r.power_limit_w = 125;
  const Prediction at125 = predict(r);
  ASSERT_TRUE(stock.power);
  EXPECT_GT(stock.power->avg_power_w, 222.4 * 0.85);
  EXPECT_LE(stock.power->avg_power_w, 250.0);
  EXPECT_GE(stock.samples_per_s / at225.samples_per_s, 1.0);
  EXPECT_LE(stock.samples_per_s / at225.samples_per_s, 1.07);
  EXPECT_GE(stock.samples_per_s / at125.samples_per_s, 1.25);
  EXPECT_LE(stock.samples_per_s / at125.samples_per_s, 1.50);
}

TEST(PowerValidation, ValidateAndPredictAgreeOnEveryRow) {
  // `validate` reads an empty host column as data/defaults.toml's [unstated_in_measurements] host (desktop-6c),
  // `perfcast predict` without --host takes the current default host (cloud-genoa-16vcpu): the host's speed sets
  // the eager framework's dispatch time, so the two gave a host-bound row different powers (session 31 saw 119 W
  // from predict against 104.7 W from validate). A power row states its host and version, so the row's columns
  // read as a configurations file (predict's defaults) give the figure validate compares.
  for (const ConfigRow& row : read_config_csv(kPower, true)) {
    EXPECT_FALSE(row.host.empty()) << "line " << row.line;
    EXPECT_FALSE(row.runtime_version.empty()) << "line " << row.line;
  }
  std::vector<double> as_measured, as_configured;
  predict_config_file(
      kPower, [&](RowResult&& res) { as_measured.push_back(res.prediction->power->avg_power_w); }, true);
  predict_config_file(
      kPower, [&](RowResult&& res) { as_configured.push_back(res.prediction->power->avg_power_w); }, false);
  ASSERT_EQ(as_measured.size(), as_configured.size());
  for (std::size_t i = 0; i < as_measured.size(); ++i) EXPECT_DOUBLE_EQ(as_measured[i], as_configured[i]) << i;
}

TEST(PowerValidation, PowerRowsMakeNoWhatIfPair) {
  // Two rows of one setup at FP32 and AMP would be a precision pair if they measured throughput.
  const auto path =
      write_csv("perfcast_power_pairs.csv",
                std::string(kHeader) +
                    "v100-pcie-32gb,resnet50_v1_5,pytorch,train,fp32,64,1,synthetic,board_power_w,220,t,\n"
                    "v100-pcie-32gb,resnet50_v1_5,pytorch,train,amp,64,1,synthetic,board_power_w,230,t,\n");
  const ValidationReport rep = validate_file(path.string());
  EXPECT_EQ(rep.rows.size(), 2u);
  EXPECT_TRUE(rep.precision_pairs.empty());
  EXPECT_TRUE(what_if_pairs(rep).empty());
  std::filesystem::remove(path);
}

TEST(PowerValidation, AnUnknownMetricIsOneLineWithASuggestion) {
  const auto path = write_csv(
      "perfcast_power_metric.csv",
      std::string(kHeader) + "v100-pcie-32gb,resnet50_v1_5,pytorch,train,fp32,64,1,synthetic,board_power,220,t,\n");
  try {
    validate_file(path.string());
    ADD_FAILURE() << "an unknown metric was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown metric 'board_power'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'board_power_w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 2"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace perfcast
