// The HTML pages with charts (report/chart_page.h, docs/charts.md). Expectations come from what a page must be for a
// reader and for `perfcast serve`: one file with no external resource, exactly the command's --json inside it (one
// source for tables, charts and scripts), text from the input never able to end a <script> element, labels in the
// report's language, the roofline's ceilings from the GPU's datasheet, and the CLI's output-file rules on every
// command that takes --html. tests/browser/pages.mjs checks the drawn marks in Chromium.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/predict.h"
#include "cli_runner.h"
#include "report/chart_library.h"
#include "report/chart_page.h"
#include "report/prediction_report.h"
#include "test_paths.h"

namespace perfcast {
namespace {

using nlohmann::json;

// The text of <script type="application/json" id="...">...</script>, parsed.
json embedded(const std::string& page, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const auto a = page.find(open);
  EXPECT_NE(a, std::string::npos) << id;
  if (a == std::string::npos) return nullptr;
  const auto b = page.find("</script>", a);
  return json::parse(page.substr(a + open.size(), b - a - open.size()));
}

TEST(ChartPage, EmbedsTheDataOnceAndNoInputCanEndTheScript) {
  const json data = {{"model", "</script><script>alert(1)</script>"}, {"note", "a & b <c>"}};
  const std::string page = render_chart_page(ChartPage::kPredict, data, Lang::kEn, "t </script>", "<p>tables</p>");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos) << "input text stays inside the JSON";
  EXPECT_EQ(embedded(page, "perfcast-data"), data) << "the JSON reads back unchanged";
  EXPECT_NE(page.find("<title>t &lt;/script&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("<p>tables</p>"), std::string::npos);
  // Self-contained: no script, style sheet or image is loaded from anywhere.
  for (const char* external : {"<script src", "<link", "<img", "<iframe", "https://cdn", "@import"})
    EXPECT_EQ(page.find(external), std::string::npos) << external;
}

TEST(ChartPage, ChartsOrANoteInThePagesLanguage) {
  const std::string zh = render_chart_page(ChartPage::kAdvise, json::object(), Lang::kZh, "标题", "");
  EXPECT_NE(zh.find("<html lang=\"zh\">"), std::string::npos);
  if (kChartLibraryAvailable) {
    EXPECT_NE(zh.find("data-page=\"advise\""), std::string::npos);
    EXPECT_EQ(embedded(zh, "perfcast-labels").at("roofline"), "屋顶线（按计算单元与精度）");
    EXPECT_NE(zh.find("Plot"), std::string::npos) << "the library is inlined";
  } else {
    // A build without node_modules: tables only, said in one line, and no script but the data.
    EXPECT_NE(zh.find("此版本未包含图表"), std::string::npos);
    EXPECT_EQ(zh.find("<script>"), std::string::npos);
  }
}

PredictRequest resnet50_on_gp102() {
  PredictRequest r;
  r.gpu = "gtx-1080-ti";
  r.model = "resnet50";
  r.mode = Mode::kTrain;
  r.batch = 32;
  return r;
}

TEST(ChartPage, RooflineCeilingsAreTheDatasheetPeaks) {
  const json j = prediction_json(predict(resnet50_on_gp102()));
  // GTX 1080 Ti: 3584 CUDA cores x 2 FLOP x 1582 MHz = 11.34 TFLOPS FP32, 484 GB/s GDDR5X (NVIDIA's specifications).
  EXPECT_DOUBLE_EQ(j.at("roofline").at("dram_gbps").get<double>(), 484.0);
  EXPECT_NEAR(j.at("roofline").at("peak_tflops").at("fp32").get<double>(), 11.34, 0.01);
  // sm_61 has no tensor cores: every op of an FP32 step runs on the FP32 pipe.
  for (const auto& op : j.at("ops")) EXPECT_EQ(op.at("pipe"), "fp32") << op.at("name");
}

TEST(ChartPage, TimelineLanesEndWhereTheStepsHostAndGpuTimesSay) {
  const json j = prediction_json(predict(resnet50_on_gp102()));
  double gpu_end = 0, host_end = 0;
  std::vector<std::string> gpu_phases;
  for (const auto& s : j.at("timeline")) {
    EXPECT_LE(s.at("start_ms").get<double>(), s.at("end_ms").get<double>());
    if (s.at("lane") == "gpu") {
      gpu_end = s.at("end_ms").get<double>();
      gpu_phases.push_back(s.at("phase"));
    }
    if (s.at("lane") == "host") host_end = s.at("end_ms").get<double>();
  }
  EXPECT_NEAR(gpu_end, j.at("gpu_busy_ms").get<double>(), 1e-6);
  EXPECT_NEAR(host_end, j.at("host_dispatch_ms").get<double>(), 1e-6);
  // A training step: forward, then backward in reverse, then the update.
  ASSERT_GE(gpu_phases.size(), 3u);
  EXPECT_EQ(gpu_phases.front(), "forward");
  EXPECT_EQ(gpu_phases.back(), "update");
}

class ChartPageCli : public test::ScratchDirTest {
 protected:
  ChartPageCli() : ScratchDirTest("perfcast-chart-page") {}
};

// Every command with --html: the page holds exactly what --json prints, and a bad path is a one-line error that
// writes nothing.
TEST_F(ChartPageCli, EveryCommandsPageHoldsItsJson) {
  const std::string trace = std::string(PERFCAST_SOURCE_DIR) + "/tests/data/kineto/benchmark_simple_add_trace.json.gz";
  const std::string csv = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_pascal.csv";
  for (const std::string& args :
       {std::string("predict --gpu gtx-1080-ti --model resnet18 --batch 16"),
        std::string("compare --model resnet18 --gpu gtx-1080-ti,a100-sxm4-40gb:2"),
        std::string("plan --model resnet18 --deadline 48h"), "validate " + csv, "trace " + trace,
        std::string("op --gpu a100-sxm4-40gb --m 1024 --n 1024 --k 1024 --precision fp16"),
        std::string("predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --engine vllm --input-len 512 "
                    "--output-len 64 --request-rate 4")}) {
    const test::CliResult page = run(args + " --html page.html");
    ASSERT_EQ(page.code, 0) << args << ": " << page.err;
    const test::CliResult js = run(args + " --json");
    ASSERT_EQ(js.code, 0) << args << ": " << js.err;
    EXPECT_EQ(embedded(test::slurp(dir_ / "page.html"), "perfcast-data"), json::parse(js.out)) << args;

    const test::CliResult bad = run(args + " --html no-such-dir/page.html");
    EXPECT_EQ(bad.code, 2) << args;
    EXPECT_EQ(test::lines_of(bad.err).size(), 1u) << args << ": " << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "no-such-dir")) << args;
  }
}

}  // namespace
}  // namespace perfcast
