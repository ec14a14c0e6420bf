// GPU files with a [measured] table (tools/calibrate): parsed, validated, and used in place of the
// architecture defaults. Expectations follow from the definitions in data/gpus/README.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/predict.h"
#include "core/error.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "test_paths.h"

namespace perfcast {
namespace {

std::filesystem::path with_measured(const std::string& table, const std::string& name) {
  std::ifstream in(std::string(PERFCAST_SOURCE_DIR) + "/data/gpus/gtx-1080-ti.toml");
  std::stringstream text;
  text << in.rdbuf();
  std::string body = text.str();
  const std::string id_line = "id = \"gtx-1080-ti\"";
  body.replace(body.find(id_line), id_line.size(), "id = \"gtx-1080-ti-measured\"");
  const auto path = std::filesystem::temp_directory_path() / ("perfcast-measured-" + name + ".toml");
  std::ofstream(path) << body << "\n[measured]\n" << table;
  return path;
}

TEST(MeasuredProfile, OverridesTheArchitectureDefaultsItNames) {
  const DeviceSpec d = load_device_file(with_measured("gemm_efficiency_cuda = 0.95\ndram_efficiency = 0.6\n"
                                                      "device_name = \"NVIDIA GeForce GTX 1080 Ti\"\n", "override"));
  ASSERT_TRUE(d.measured.has_value());
  const ArchitectureProfile defaults = architecture_of(d);
  const ArchitectureProfile a = architecture_for(d);
  EXPECT_DOUBLE_EQ(a.gemm_efficiency_cuda, 0.95);
  EXPECT_DOUBLE_EQ(a.dram_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(a.kernel_floor_us, defaults.kernel_floor_us) << "keys the table omits keep their defaults";
  EXPECT_NE(d.measured->source.find("GTX 1080 Ti"), std::string::npos);
}

TEST(MeasuredProfile, PredictionsFollowTheMeasuredEfficiencies) {
  // A card measured with less DRAM bandwidth than the architecture default is slower on a step with
  // memory-bound kernels, and the prediction says its efficiencies were measured.
  PredictRequest r;
  r.model = "resnet50";
  r.gpu = "gtx-1080-ti";
  const Prediction base = predict(r);
  r.gpu = with_measured("dram_efficiency = 0.5\n", "slow").string();
  const Prediction slow = predict(r);
  EXPECT_LT(slow.samples_per_s, base.samples_per_s);
  bool noted = false;
  for (const auto& n : slow.notes) noted = noted || n.find("measured on this card") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(MeasuredProfile, ValuesOutsideTheirRangeAreInputErrorsNamingTheKey) {
  for (const std::string bad : {"dram_efficiency = 1.8\n", "gemm_efficiency_cuda = 0\n", "kernel_floor_us = \"fast\"\n"}) {
    try {
      load_device_file(with_measured(bad, "bad"));
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("measured."), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace perfcast
