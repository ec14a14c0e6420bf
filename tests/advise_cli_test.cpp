// `perfcast` and `perfcast advise` as a user runs them (issue 4 items 4 and 5): no arguments prints the default
// advice (nodule3d training on a GP102 card), --json carries the same content, --lang zh translates the text
// but keeps the JSON keys, and a bad language is a one-line error. Every case runs the real binary
// (PERFCAST_BINARY) in a scratch directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

using perfcast::test::CliResult;
using perfcast::test::lines_of;

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

class AdviseCliTest : public perfcast::test::ScratchDirTest {
 protected:
  AdviseCliTest() : ScratchDirTest("perfcast-advise") {}

  nlohmann::json run_json(const std::string& args) const {
    const CliResult r = run(args);
    EXPECT_EQ(r.code, 0) << "perfcast " << args << ": " << r.err;
    EXPECT_EQ(r.err, "");
    try {
      return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "perfcast " << args << " printed no JSON: " << e.what() << "\n" << r.out;
      return nlohmann::json::object();
    }
  }
};

bool has_line_starting(const std::string& text, const std::string& word) {
  for (const auto& line : lines_of(text)) {
    const auto start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, word.size(), word) == 0) return true;
  }
  return false;
}

bool has_input_pipeline(const nlohmann::json& prediction) {
  return prediction.contains("input_pipeline") && !prediction["input_pipeline"].is_null();
}

// ---------------------------------------------------------------- the main job

TEST_F(AdviseCliTest, NoArgumentsPrintsTheDefaultAdvice) {
  // Issue 4 item 5: `perfcast` alone trains the lung-nodule 3D CNN on a GP102 card and prints the advice.
  const CliResult r = run("");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("nodule3d"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gtx-1080-ti"), std::string::npos) << r.out;
  EXPECT_TRUE(has_line_starting(r.out, "Verdict")) << r.out;
  // Issue 4 item 4: a legend for terms.
  EXPECT_TRUE(has_line_starting(r.out, "Legend")) << r.out;
}

TEST_F(AdviseCliTest, AdviseWithoutFlagsIsTheSameDefault) {
  const CliResult bare = run("");
  const CliResult advise = run("advise");
  ASSERT_EQ(advise.code, 0) << advise.err;
  EXPECT_EQ(advise.out, bare.out);
}

TEST_F(AdviseCliTest, AdviseTakesTheSameFlagsAndDefaultsAsPredict) {
  // Issue 4 item 4: `perfcast advise` with the same flags as `predict`; the default scenario is for no flags.
  // So the baseline of `advise` with flags must be the prediction of `predict` with the same flags.
  const std::string flags = "--gpu gtx-1080-ti --model resnet50";
  const nlohmann::json predicted = run_json("predict " + flags + " --json");
  const nlohmann::json advice = run_json("advise " + flags + " --json");
  ASSERT_TRUE(advice.contains("baseline"));
  const nlohmann::json& base = advice["baseline"];
  EXPECT_EQ(base.value("batch", 0), predicted.value("batch", 0));
  EXPECT_EQ(has_input_pipeline(base), has_input_pipeline(predicted));
  EXPECT_EQ(base["batch"], predicted["batch"]);
  EXPECT_EQ(base["precision"], predicted["precision"]);
  EXPECT_EQ(base["runtime"], predicted["runtime"]);
  EXPECT_EQ(base["mode"], predicted["mode"]);
  EXPECT_DOUBLE_EQ(base["throughput"]["samples_per_s"].get<double>(),
                   predicted["throughput"]["samples_per_s"].get<double>());
}

// ---------------------------------------------------------------- JSON

void expect_advice_keys(const nlohmann::json& j) {
  ASSERT_TRUE(j.contains("verdict"));
  ASSERT_TRUE(j["verdict"].is_string());
  EXPECT_FALSE(j["verdict"].get<std::string>().empty());
  ASSERT_TRUE(j.contains("baseline"));
  ASSERT_TRUE(j["baseline"].contains("throughput"));
  ASSERT_TRUE(j["baseline"]["throughput"].contains("samples_per_s"));
  ASSERT_TRUE(j["baseline"]["throughput"]["samples_per_s"].is_number());
  EXPECT_GT(j["baseline"]["throughput"]["samples_per_s"].get<double>(), 0);
  ASSERT_TRUE(j.contains("breakdown"));
  ASSERT_TRUE(j["breakdown"].is_array());
  ASSERT_FALSE(j["breakdown"].empty());
  for (const auto& c : j["breakdown"]) {
    for (const char* k : {"op_class", "bound"}) {
      ASSERT_TRUE(c.contains(k)) << k << " in " << c.dump();
      EXPECT_TRUE(c[k].is_string()) << k;
    }
    ASSERT_TRUE(c.contains("share")) << c.dump();
    EXPECT_TRUE(c["share"].is_number());
  }
  ASSERT_TRUE(j.contains("strategies"));
  ASSERT_TRUE(j["strategies"].is_array());
  ASSERT_FALSE(j["strategies"].empty());
  for (const auto& s : j["strategies"]) {
    ASSERT_TRUE(s.contains("id")) << s.dump();
    ASSERT_TRUE(s.contains("applicable")) << s.dump();
    ASSERT_TRUE(s.contains("reason")) << s.dump();
    EXPECT_TRUE(s["id"].is_string()) << s.dump();
    EXPECT_TRUE(s["applicable"].is_boolean()) << s.dump();
    ASSERT_TRUE(s["reason"].is_string()) << s.dump();
    EXPECT_FALSE(s["reason"].get<std::string>().empty()) << s.dump();
    if (s["applicable"].get<bool>()) {
      ASSERT_TRUE(s.contains("speedup")) << s.dump();
      EXPECT_TRUE(s["speedup"].is_number()) << s.dump();
    }
  }
}

TEST_F(AdviseCliTest, JsonCarriesVerdictBaselineBreakdownAndStrategies) {
  const nlohmann::json j = run_json("advise --json");
  expect_advice_keys(j);
}

TEST_F(AdviseCliTest, JsonOfTheDefaultScenarioNamesIt) {
  const nlohmann::json j = run_json("advise --json");
  ASSERT_TRUE(j.contains("baseline"));
  EXPECT_EQ(j["baseline"].value("model", ""), "nodule3d");
  EXPECT_EQ(j["baseline"].value("gpu", ""), "gtx-1080-ti");
  EXPECT_EQ(j["baseline"].value("mode", ""), "train");
}

// ---------------------------------------------------------------- languages

TEST_F(AdviseCliTest, ChineseText) {
  const CliResult r = run("advise --lang zh");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("结论"), std::string::npos) << r.out;  // "verdict"
  EXPECT_FALSE(has_line_starting(r.out, "Verdict")) << "the verdict heading must be translated";
}

TEST_F(AdviseCliTest, ChineseJsonKeepsTheKeys) {
  // Issue 4 item 4: --lang zh gives the report text in Chinese; table keys stay stable.
  const nlohmann::json en = run_json("advise --json");
  const nlohmann::json zh = run_json("advise --lang zh --json");
  expect_advice_keys(zh);
  EXPECT_EQ(keys_of(zh), keys_of(en));
  EXPECT_EQ(keys_of(zh["baseline"]), keys_of(en["baseline"]));
  ASSERT_EQ(zh["strategies"].size(), en["strategies"].size());
  for (std::size_t i = 0; i < en["strategies"].size(); ++i) {
    EXPECT_EQ(keys_of(zh["strategies"][i]), keys_of(en["strategies"][i]));
    EXPECT_EQ(zh["strategies"][i]["id"], en["strategies"][i]["id"]) << "strategy ids are keys, not text";
    EXPECT_EQ(zh["strategies"][i]["applicable"], en["strategies"][i]["applicable"]);
  }
  ASSERT_EQ(zh["breakdown"].size(), en["breakdown"].size());
  for (std::size_t i = 0; i < en["breakdown"].size(); ++i) {
    EXPECT_EQ(zh["breakdown"][i]["op_class"], en["breakdown"][i]["op_class"]);
    EXPECT_EQ(zh["breakdown"][i]["bound"], en["breakdown"][i]["bound"]);
  }
  EXPECT_DOUBLE_EQ(zh["baseline"]["throughput"]["samples_per_s"].get<double>(),
                   en["baseline"]["throughput"]["samples_per_s"].get<double>());
}

TEST_F(AdviseCliTest, UnknownLanguageIsAOneLineError) {
  const CliResult r = run("advise --lang fr");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "stdout must stay empty on errors";
  EXPECT_EQ(r.err.rfind("perfcast: error:", 0), 0u) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("fr"), std::string::npos) << r.err;
}

TEST_F(AdviseCliTest, UnknownHostIsAOneLineErrorWithASuggestion) {
  const CliResult r = run("advise --host cloud-8cpu");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("did you mean 'cloud-8vcpu'"), std::string::npos) << r.err;
}

}  // namespace

namespace {

class AdviseGpuCountTest : public perfcast::test::ScratchDirTest {
 protected:
  AdviseGpuCountTest() : ScratchDirTest("perfcast-advise-count") {}
};

}  // namespace

// Session 39's walk-through: with --gpus 3 on GP102 cards, "gpu:h100-sxm5-80gb 8.20x" read as one H100 beating three
// 1080 Tis eightfold; the strategy keeps the request's three GPUs. Its line says so, and its throughput is predict's
// for three of that card (the README: "advise and predict agree on the same flags").
TEST_F(AdviseGpuCountTest, AnotherGpuKeepsTheCountAndSaysIt) {
  const CliResult a = run("advise --gpu gtx-1080-ti --model resnet152 --precision amp --gpus 3 --json");
  ASSERT_EQ(a.code, 0) << a.err;
  const auto j = nlohmann::json::parse(a.out);
  int seen = 0;
  for (const auto& s : j["strategies"]) {
    if (s["category"] != "hardware" || !s["applicable"].get<bool>()) continue;
    ++seen;
    EXPECT_EQ(s["reason"].get<std::string>().rfind("3 x ", 0), 0u) << s["reason"];
    const std::string gpu = s["gpu"];
    const CliResult p = run("predict --gpu " + gpu + " --model resnet152 --precision amp --gpus 3 --json");
    ASSERT_EQ(p.code, 0) << p.err;
    const double predicted = nlohmann::json::parse(p.out)["throughput"]["samples_per_s"];
    EXPECT_NEAR(s["samples_per_s"].get<double>(), predicted, 1e-6 * predicted) << gpu;
  }
  EXPECT_GT(seen, 0);
  // The titles of advise and predict name the count too (review of session 39: "on gtx-1080-ti ... 252.5
  // samples/s" read as one card's throughput), in both languages; one card is named without a count.
  for (const std::string cmd : {"advise", "predict"}) {
    const CliResult three = run(cmd + " --gpu gtx-1080-ti --model resnet152 --precision amp --gpus 3");
    ASSERT_EQ(three.code, 0) << three.err;
    EXPECT_NE(three.out.substr(0, three.out.find('\n')).find(" on 3 x gtx-1080-ti ("), std::string::npos) << three.out;
    const CliResult zh = run(cmd + " --gpu gtx-1080-ti --model resnet152 --precision amp --gpus 3 --lang zh");
    ASSERT_EQ(zh.code, 0) << zh.err;
    EXPECT_NE(zh.out.substr(0, zh.out.find('\n')).find("3 x gtx-1080-ti"), std::string::npos) << zh.out;
    const CliResult single = run(cmd + " --gpu gtx-1080-ti --model resnet152 --precision amp");
    ASSERT_EQ(single.code, 0) << single.err;
    EXPECT_NE(single.out.substr(0, single.out.find('\n')).find(" on gtx-1080-ti ("), std::string::npos) << single.out;
  }
  // One GPU: no count in front of the card's name.
  const CliResult one = run("advise --gpu gtx-1080-ti --model resnet152 --precision amp --json");
  ASSERT_EQ(one.code, 0) << one.err;
  for (const auto& s : nlohmann::json::parse(one.out)["strategies"])
    if (s["category"] == "hardware" && s["applicable"].get<bool>())
      EXPECT_EQ(s["reason"].get<std::string>().rfind("NVIDIA ", 0), 0u) << s["reason"];
}

// Session 39's walk-through: ResNet-50 inference on a GTX 1080 Ti printed "Strategies: the software ones combined
// first" over a table with no combined row (TensorRT + INT8 alone; nothing gains beside it), which the JSON's
// empty `combinations` shows. The heading says what the table holds, in both languages.
TEST_F(AdviseGpuCountTest, StrategiesHeadingSaysWhetherACombinationLeads) {
  const std::string alone = "advise --gpu gtx-1080-ti --model resnet50 --mode infer --batch 32";
  const CliResult j = run(alone + " --json");
  ASSERT_EQ(j.code, 0) << j.err;
  ASSERT_TRUE(nlohmann::json::parse(j.out)["combinations"].empty());
  const CliResult text = run(alone);
  EXPECT_EQ(text.out.find("combined first"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Strategies: each alone"), std::string::npos) << text.out;
  const CliResult zh = run(alone + " --lang zh");
  EXPECT_EQ(zh.out.find("首行为软件策略的组合"), std::string::npos) << zh.out;
  // The default scenario combines torch.compile with AMP: its heading keeps "combined first".
  const CliResult def = run("advise");
  ASSERT_EQ(def.code, 0) << def.err;
  ASSERT_FALSE(nlohmann::json::parse(run("advise --json").out)["combinations"].empty());
  EXPECT_NE(def.out.find("combined first"), std::string::npos) << def.out;
}
