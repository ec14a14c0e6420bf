// The defaults a request gets (data/defaults.toml, each runtime's default_version) are today's, checked against
// the release notes that say what a current release does; a measurement row that leaves its setup empty keeps the
// setup the validation files were gathered against.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "device/host_profile.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

// PyTorch 2.0 release notes: scaled_dot_product_attention, zero_grad(set_to_none=True) and foreach optimizers by
// default; TF 2.4 release notes: TF32 on by default. A current release has all of them.
TEST(Defaults, RuntimesDefaultToACurrentRelease) {
  const RuntimeProfile& pt = find_runtime("pytorch");
  EXPECT_GE(compare_versions(pt.default_version, "2.0"), 0);
  EXPECT_TRUE(pt.fused_attention);
  EXPECT_EQ(pt.zero_grad_kernels_per_tensor, 0);
  EXPECT_GT(pt.optimizer_tensors_per_launch, 1);
  EXPECT_FALSE(pt.tf32_matmul_default);  // off since PyTorch 1.12 (release notes)
  // 1.x keeps the older behaviour through the version rules.
  const RuntimeProfile old = at_version(pt, "1.13");
  EXPECT_FALSE(old.fused_attention);
  EXPECT_EQ(old.zero_grad_kernels_per_tensor, 1);
  EXPECT_EQ(old.optimizer_tensors_per_launch, 1);
  for (const char* tf : {"tensorflow", "tensorflow-xla"}) {
    const RuntimeProfile& t = find_runtime(tf);
    EXPECT_GE(compare_versions(t.default_version, "2.4"), 0) << tf;
    EXPECT_TRUE(t.tf32_conv_default && t.tf32_matmul_default) << tf;
    EXPECT_FALSE(at_version(t, "2.3").tf32_available) << tf;
    EXPECT_TRUE(at_version(t, "1.15").tf32_conv_default) << tf;  // NVIDIA's TF 1.15 builds (release notes 20.06)
  }
}

// The default host is a cloud GPU instance share, not the 2016 desktop of the lambdal logs.
TEST(Defaults, HostIsACloudInstance) {
  EXPECT_NE(default_host().id, "desktop-6c");
  EXPECT_EQ(default_host().id.rfind("cloud-", 0), 0u) << default_host().id;
  EXPECT_EQ(&host_or_default(""), &default_host());
  EXPECT_EQ(host_or_default("desktop-6c").id, "desktop-6c");
}

// A validation row with an empty host and runtime_version predicts as one that names desktop-6c and PyTorch 1.13
// (data/defaults.toml [unstated_in_measurements]); a configurations file without measurements takes today's defaults.
TEST(Defaults, MeasurementRowsKeepTheirUnstatedSetup) {
  const auto dir = std::filesystem::temp_directory_path() / "perfcast_defaults_test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "rows.csv";
  {
    std::ofstream out(file);
    out << "gpu,model,runtime,mode,precision,batch,data,metric,value,host,runtime_version\n"
           "a100-sxm4-40gb,resnet50,pytorch,train,fp32,32,synthetic,samples_per_s,100,,\n"
           "a100-sxm4-40gb,resnet50,pytorch,train,fp32,32,synthetic,samples_per_s,100,desktop-6c,1.13\n";
  }
  std::vector<double> measured, configs;
  predict_config_file(file, [&](RowResult&& r) { measured.push_back(r.prediction->samples_per_s); }, true);
  predict_config_file(file, [&](RowResult&& r) { configs.push_back(r.prediction->samples_per_s); }, false);
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_DOUBLE_EQ(measured[0], measured[1]);
  ASSERT_EQ(configs.size(), 2u);
  PredictRequest today;
  today.gpu = "a100-sxm4-40gb";
  today.batch = 32;
  EXPECT_DOUBLE_EQ(configs[0], predict(today).samples_per_s);
  EXPECT_NE(configs[0], configs[1]);  // the old setup is not today's
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace perfcast
