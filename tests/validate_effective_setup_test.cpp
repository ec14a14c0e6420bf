// `perfcast validate --json` names the setup each row was predicted with where `perfcast predict` would take
// another default: a validation row that leaves `host` or `runtime_version` empty takes data/defaults.toml
// [unstated_in_measurements] (host desktop-6c, PyTorch 1.13: the defaults of the files' era, as that section's
// sources say), while predict's flags default to the current [defaults] host. The row says so, and predict given the
// row's columns plus that host and version repeats the row's prediction.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace perfcast {
namespace {

class ValidateEffectiveSetup : public test::ScratchDirTest {};

TEST_F(ValidateEffectiveSetup, RowsCarryTheHostAndVersionTheyTookFromTheUnstatedDefaults) {
  test::write_text(dir_ / "rows.csv",
                   "gpu,model,runtime,mode,precision,batch,n_gpus,data,metric,value,source,runtime_version,host\n"
                   "a100-sxm4-40gb,resnet50,pytorch,train,amp,64,1,synthetic,,1300,test row,,\n"
                   "a100-sxm4-40gb,resnet50,pytorch,train,amp,64,1,synthetic,,1300,test row,2.1,cloud-genoa-16vcpu\n");
  const auto v = run("validate rows.csv --json");
  ASSERT_EQ(v.code, 0) << v.err;
  const auto rows = nlohmann::json::parse(v.out).at("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("host"), "desktop-6c");
  EXPECT_EQ(rows[0].at("runtime_version"), "1.13");
  EXPECT_EQ(rows[0].at("filled_from_unstated"), nlohmann::json::array({"host", "runtime_version"}));
  EXPECT_EQ(rows[1].at("host"), "cloud-genoa-16vcpu");
  EXPECT_EQ(rows[1].at("runtime_version"), "2.1");
  EXPECT_TRUE(rows[1].at("filled_from_unstated").empty());
  // predict with the row's columns and the setup it names gives the row's prediction.
  const auto p = run("predict --gpu a100-sxm4-40gb --model resnet50 --runtime pytorch --mode train --precision amp "
                     "--batch 64 --data synthetic --host " + rows[0].at("host").get<std::string>() +
                     " --runtime-version " + rows[0].at("runtime_version").get<std::string>() + " --json");
  ASSERT_EQ(p.code, 0) << p.err;
  const double predicted = nlohmann::json::parse(p.out).at("throughput").at("samples_per_s").get<double>();
  EXPECT_NEAR(predicted, rows[0].at("predicted").get<double>(), 1e-6 * predicted);
}

}  // namespace
}  // namespace perfcast
