// Measured what-ifs (`perfcast validate --pairs`, analysis/what_if_pairs.h): pairs of rows that differ in one input,
// their measured ratios from the files' own values, the pair counts the validation READMEs publish, and issue 13's
// what-if figures on the calibration files, whose thresholds only go down.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/validate.h"
#include "analysis/what_if_pairs.h"
#include "cli_runner.h"

namespace perfcast {
namespace {

const std::string kValidation = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/";

std::vector<const WhatIfPair*> of(const std::vector<WhatIfPair>& pairs, const std::string& varied) {
  std::vector<const WhatIfPair*> v;
  for (const auto& p : pairs)
    if (p.varied == varied) v.push_back(&p);
  return v;
}

TEST(WhatIfPairs, MeasuredRatiosAreTheRowsOwnValues) {
  const auto dir = std::filesystem::temp_directory_path() / "perfcast_what_if_pairs_test";
  std::filesystem::create_directories(dir);
  const auto csv = dir / "pairs.csv";
  {
    std::ofstream out(csv);
    out << "gpu,model,runtime,mode,precision,batch,seq,n_gpus,interconnect,data,optimizer_step,metric,value\n"
           "v100-sxm2-16gb,resnet50,pytorch,train,fp32,64,,1,,synthetic,yes,samples_per_s,400\n"
           "v100-sxm2-16gb,resnet50,pytorch,train,amp,64,,1,,synthetic,yes,samples_per_s,1000\n"
           "v100-sxm2-16gb,resnet50,pytorch,train,amp,128,,1,,synthetic,yes,samples_per_s,1100\n"
           "v100-sxm2-16gb,resnet50,pytorch,train,fp32,64,,8,nvlink,synthetic,yes,samples_per_s,2560\n";
  }
  const auto pairs = what_if_pairs(validate_file(csv.string()), "pairs.csv");
  // One same-batch precision pair (fp32 64 -> amp 64): 1000 / 400.
  const auto precision = of(pairs, "precision");
  ASSERT_EQ(precision.size(), 1u);
  EXPECT_DOUBLE_EQ(precision[0]->measured, 2.5);
  // The 8-GPU fp32 row against the 1-GPU one: 2560 / (8 x 400) = 0.8.
  const auto gpus = of(pairs, "gpus");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(gpus[0]->measured_efficiency, 0.8);
  EXPECT_EQ(gpus[0]->to, "8");
  // With the batch free the setup holds two amp rows (64 and 128) for one fp32 row: ambiguous, no pair.
  EXPECT_TRUE(of(pairs, "precision+batch").empty());
  std::filesystem::remove_all(dir);
}

TEST(WhatIfPairs, FindsTheMultiGpuRowsTheReadmesCount) {
  // data/validation/README.md and docs/scale-out-validation.md: 88 multi-GPU rows of check_scaling.csv and 744 of
  // published_scaling.csv, each with its 1-GPU row.
  EXPECT_EQ(of(what_if_pairs(validate_file(kValidation + "check_scaling.csv"), "s"), "gpus").size(), 88u);
  EXPECT_EQ(of(what_if_pairs(validate_file(kValidation + "published_scaling.csv"), "s"), "gpus").size(), 744u);
}

TEST(WhatIfPairs, OneFileWithoutPairsIsAnInputError) {
  const auto dir = std::filesystem::temp_directory_path() / "perfcast_what_if_pairs_cli";
  std::filesystem::create_directories(dir);
  const auto r = test::run_perfcast(dir, "validate '" + kValidation + "check_scaling.csv' '" + kValidation +
                                             "check_pytorch.csv'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("several files or a folder only with --pairs"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfcast
