// Eager PyTorch's separate convolution-bias pass and the GeForce half-rate FP32-accumulate convolution rate (both
// data switches, shipped off: docs/calibration.md). Expectations from outside the code:
//   - aten/src/ATen/native/Convolution.cpp (ConvBackend::Cudnn) calls cuDNN without the bias and then runs
//     output.add_(bias); the H200 device session's PyTorch 2.11 profile of VGG-16 FP32 inference
//     (data/device_sessions/2026-12-04-h200/kernels_main.txt) shows 39 such elementwise launches in 3 forwards, one per
//     biased convolution (VGG-16 has 13, Simonyan & Zisserman 2015), while torch.compile peels the bias into the
//     next pointwise kernel (torch/_inductor/kernel/conv.py) and launches none;
//   - timm's published RTX 4090 AMP inference of VGG-16, compiled at batch 256 and eager channels-last at batch 512:
//     two rows of the calibration file check_timm.csv (read from it below), the rows the switches were built from.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "import/config_csv.h"
#include "test_paths.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;

// `text` with its one `from` replaced by `to`; the test fails when `from` is not there once.
std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "not found: " << from;
  if (at == std::string::npos) return text;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "found twice: " << from;
  return text.replace(at, from.size(), to);
}

class ConvBiasPassTest : public test::ScratchDirTest {
 protected:
  ConvBiasPassTest() : ScratchDirTest("perfcast-convbias") {}
  // A copy of the shipped data/ with the eager bias pass on and, when `gather`, the GeForce convolution rate too.
  fs::path data_with_switches(bool gather) const {
    const fs::path data = dir_ / (gather ? "data_both" : "data_bias");
    fs::copy(fs::path(PERFCAST_SOURCE_DIR) / "data", data, fs::copy_options::recursive);
    const fs::path runtime = data / "runtimes" / "pytorch.toml";
    test::write_text(runtime, replace_once(test::slurp(runtime), "\nconv_bias_separate_pass = false",
                                           "\nconv_bias_separate_pass = true"));
    if (gather) {
      const fs::path cost = data / "cost_model.toml";
      test::write_text(cost, replace_once(test::slurp(cost), "\nconv_gather_hidden_at_reduced_rate = false",
                                          "\nconv_gather_hidden_at_reduced_rate = true"));
    }
    return data;
  }
  nlohmann::json predict(const std::string& args, const fs::path& data = {}) const {
    const std::string env =
        "env -u PERFCAST_GPU_PATH" + (data.empty() ? std::string() : " PERFCAST_DATA=" + data.string());
    const test::CliResult r = test::run_perfcast(dir_, "predict --json " + args, env);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }
};

TEST_F(ConvBiasPassTest, EagerPyTorchLaunchesOneBiasAddPerBiasedConvolution) {
  const fs::path data = data_with_switches(false);
  const std::string vgg =
      "--gpu h200-sxm-141gb --model vgg16 --mode infer --precision fp32 --batch 64 --conv-algo autotune";
  const nlohmann::json off = predict(vgg + " --runtime pytorch");
  const nlohmann::json on = predict(vgg + " --runtime pytorch", data);
  ASSERT_TRUE(off.contains("kernel_launches") && on.contains("kernel_launches"));
  EXPECT_EQ(on["kernel_launches"].get<double>() - off["kernel_launches"].get<double>(), 13.0)
      << "the H200 profile: 39 bias adds in 3 forwards of VGG-16's 13 biased convolutions";
  EXPECT_GT(on["step_ms"].get<double>(), off["step_ms"].get<double>());
  // torch.compile peels the bias into the ReLU's kernel: nothing changes there.
  const nlohmann::json compiled_off = predict(vgg + " --runtime pytorch-compile");
  const nlohmann::json compiled_on = predict(vgg + " --runtime pytorch-compile", data);
  EXPECT_EQ(compiled_on["kernel_launches"], compiled_off["kernel_launches"]);
  EXPECT_DOUBLE_EQ(compiled_on["step_ms"].get<double>(), compiled_off["step_ms"].get<double>());
}

TEST_F(ConvBiasPassTest, BothSwitchesGiveTimmsCompiledOverEagerVggRatioOnTheRtx4090) {
  const fs::path data = data_with_switches(true);
  const std::string vgg =
      "--gpu rtx-4090 --model vgg16 --mode infer --precision amp --conv-algo autotune --host desktop-6c";
  const double compiled =
      predict(vgg + " --runtime pytorch-compile --batch 256", data)["throughput"]["samples_per_s"].get<double>();
  const double eager =
      predict(vgg + " --runtime pytorch --channels-last --batch 512", data)["throughput"]["samples_per_s"]
          .get<double>();
  ASSERT_GT(eager, 0);
  double measured_compiled = 0, measured_eager = 0;
  for (const auto& r : read_config_csv(fs::path(PERFCAST_SOURCE_DIR) / "data/validation/check_timm.csv", true)) {
    if (r.gpu != "rtx-4090" || r.model != "vgg16" || r.precision != "amp" || !r.measured) continue;
    if (r.runtime == "pytorch-compile" && r.batch == "256") measured_compiled = *r.measured;
    if (r.runtime == "pytorch" && r.layout == "nhwc" && r.batch == "512") measured_eager = *r.measured;
  }
  ASSERT_GT(measured_compiled, 0);
  ASSERT_GT(measured_eager, 0);
  // Within 15% of the published ratio (1.32).
  const double published = measured_compiled / measured_eager;
  EXPECT_NEAR(compiled / eager, published, 0.15 * published) << compiled << " / " << eager;
  // A full-rate FP32-accumulate part keeps conv_efficiency_tensor: the A100's compiled VGG-16 does not move.
  const std::string a100 =
      "--gpu a100-sxm4-40gb --model vgg16 --mode infer --precision amp --batch 256 --runtime pytorch-compile";
  EXPECT_DOUBLE_EQ(predict(a100, data)["step_ms"].get<double>(), predict(a100)["step_ms"].get<double>());
}

}  // namespace
}  // namespace perfcast
