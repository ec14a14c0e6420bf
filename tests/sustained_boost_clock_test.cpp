// GPU Boost past the rated clock (data/gpus/*.toml sustained_boost_clock_mhz, docs/calibration.md session 31
// h/geforce31). Expectations from outside the code:
// - Tom's Hardware's review of the Gigabyte Aorus GeForce RTX 2080 Ti Xtreme 11G measured its TU102 averaging
//   1830 MHz through three runs of Metro: Last Light; that board's rated boost is 1770 MHz, the reference RTX 2080 Ti's
//   1545 MHz (NVIDIA), so the reference board's datum is 1545 + (1830 - 1770) = 1605 MHz.
// - A board whose file carries no review figure (the Quadro RTX 8000) keeps its rated boost as the ceiling.
// - A board whose efficiencies were measured on the card (the RTX 3090's [measured] torch.mm table) already carries
//   the clock it ran at: a review clock added to it must not move it.
// - The board's power limit still holds: at a lower --power-limit the clock falls below the rated boost.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "analysis/predict.h"
#include "cli_runner.h"
#include "core/error.h"
#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/catalog.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;

double light_clock(const DeviceSpec& d) {
  const ArchitectureProfile arch = architecture_for(d);
  return KernelCostModel(d, arch).clock_factor(0.0);
}

TEST(SustainedBoostClock, Rtx2080TiCarriesTheReviewMarginOverItsReferenceBoost) {
  const DeviceSpec d = find_gpu("rtx-2080-ti");
  EXPECT_DOUBLE_EQ(d.boost_clock_mhz, 1545);
  EXPECT_DOUBLE_EQ(d.sustained_boost_clock_mhz, 1545 + (1830 - 1770));
  EXPECT_FALSE(d.source_of("sustained_boost_clock_mhz").empty());
  // A light kernel runs at the review clock; the whole board at full load draws less than its 250 W there too.
  EXPECT_NEAR(light_clock(d), 1605.0 / 1545.0, 1e-9);
}

TEST(SustainedBoostClock, BoardWithoutTheDatumKeepsItsRatedBoost) {
  const DeviceSpec d = find_gpu("quadro-rtx-8000");
  EXPECT_EQ(d.sustained_boost_clock_mhz, 0);
  EXPECT_EQ(d.clock_ceiling(), 1.0);
  EXPECT_DOUBLE_EQ(light_clock(d), 1.0);
}

TEST(SustainedBoostClock, MeasuredBoardIgnoresAReviewClock) {
  DeviceSpec d = find_gpu("rtx-3090");
  ASSERT_TRUE(d.measured.has_value());
  const double before = light_clock(d);
  d.sustained_boost_clock_mhz = 1900;
  EXPECT_DOUBLE_EQ(light_clock(d), before);
}

TEST(SustainedBoostClock, PowerLimitStillHoldsTheClock) {
  DeviceSpec d = find_gpu("rtx-2080-ti");
  d.tdp_w = 125;  // half the reference limit: a full-load kernel cannot keep even the rated boost
  const ArchitectureProfile arch = architecture_for(d);
  EXPECT_LT(KernelCostModel(d, arch).compute_clock_factor(), 1.0);
}

// The power report's clock (the kernels' clocks averaged over their busy time) follows the same ceiling: above the
// rated boost on the 2080 Ti, whose ResNet-50 training step draws less than its 250 W; at most 1 on the Quadro.
TEST(SustainedBoostClock, PowerReportFollowsTheCeiling) {
  for (const auto& [gpu, ceiling] : {std::pair<std::string, double>{"rtx-2080-ti", 1605.0 / 1545.0}, {"quadro-rtx-8000", 1.0}}) {
    PredictRequest r;
    r.gpu = gpu, r.model = "resnet50", r.mode = Mode::kTrain, r.batch = 64;
    const Prediction p = predict(r);
    ASSERT_TRUE(p.power) << gpu;
    EXPECT_LE(p.power->clock_factor, ceiling + 1e-9) << gpu;
    EXPECT_LE(p.power->peak_power_w, p.device.tdp_w + 1e-9) << gpu;
    if (ceiling > 1) EXPECT_GT(p.power->clock_factor, 1.0) << gpu;
  }
}

class SustainedBoostFile : public test::ScratchDirTest {
 protected:
  SustainedBoostFile() : ScratchDirTest("perfcast-boost") {}
};

TEST_F(SustainedBoostFile, ClockBelowTheBaseClockIsRefusedByName) {
  std::string text = test::slurp(fs::path(PERFCAST_SOURCE_DIR) / "data" / "gpus" / "rtx-2080-ti.toml");
  const auto at = text.find("sustained_boost_clock_mhz = 1605");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("sustained_boost_clock_mhz = 1605").size(), "sustained_boost_clock_mhz = 900");
  const fs::path file = dir_ / "slow.toml";
  test::write_text(file, text);
  try {
    load_device_file(file);
    FAIL() << "a sustained clock below the base clock must not load";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sustained_boost_clock_mhz"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace perfcast
