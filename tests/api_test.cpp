// The in-process API (src/cli/api.h) promises the command line's own answer: for the same flags its string is
// byte for byte what `perfcast <command> ... --json` prints, and a bad input throws the InputError whose message
// the binary prints after "perfcast: error: ". Checked against the binary itself, run as a user runs it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/api.h"
#include "cli_runner.h"
#include "core/error.h"
#include "test_paths.h"

namespace perfcast {
namespace {

class ApiTest : public test::ScratchDirTest {
 protected:
  ApiTest() : ScratchDirTest("perfcast-api") {}

  // The binary's stdout for `perfcast <args> --json` (it must succeed).
  std::string cli_json(const std::string& args) {
    const test::CliResult r = run(args + " --json");
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    return r.out;
  }
  // The binary's error message for `perfcast <args> --json`, without its "perfcast: error: " prefix and newline.
  std::string cli_error(const std::string& args) {
    const test::CliResult r = run(args + " --json");
    EXPECT_EQ(r.code, 2) << args;
    const std::string prefix = "perfcast: error: ";
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
    return r.err.size() > prefix.size() ? r.err.substr(prefix.size(), r.err.size() - prefix.size() - 1) : r.err;
  }
};

TEST_F(ApiTest, EachCommandAnswersAsTheCommandLine) {
  EXPECT_EQ(api::predict({{"gpu", "a100-sxm4-40gb"}, {"model", "bert_base"}, {"batch", 16}, {"precision", "amp"}}),
            cli_json("predict --gpu a100-sxm4-40gb --model bert_base --batch 16 --precision amp"));
  EXPECT_EQ(api::advise({{"gpu", "gtx-1080-ti"}, {"model", "resnet50"}, {"batch", 32}}),
            cli_json("advise --gpu gtx-1080-ti --model resnet50 --batch 32"));
  EXPECT_EQ(api::compare({{"gpu", "gtx-1080-ti:3,a100-sxm4-40gb"}, {"model", "resnet152"}}),
            cli_json("compare --gpu gtx-1080-ti:3,a100-sxm4-40gb --model resnet152"));
  EXPECT_EQ(api::plan({{"model", "resnet50"}, {"deadline", "24h"}, {"max-gpus", 8}}),
            cli_json("plan --model resnet50 --deadline 24h --max-gpus 8"));
  EXPECT_EQ(api::op({{"gpu", "v100-sxm2-16gb"}, {"op", "matmul"}, {"m", 4096}, {"n", 4096}, {"k", 4096}, {"precision", "fp16"}}),
            cli_json("op --gpu v100-sxm2-16gb --op matmul --m 4096 --n 4096 --k 4096 --precision fp16"));
  const std::string csv = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_pascal.csv";
  ASSERT_TRUE(std::filesystem::exists(csv)) << csv;
  EXPECT_EQ(api::validate({{"file", csv}}), cli_json("validate '" + csv + "'"));
  const std::string cpu = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/cpu.csv";
  EXPECT_EQ(api::validate({{"file", {csv, cpu}}}), cli_json("validate '" + csv + "' '" + cpu + "'"));
}

TEST_F(ApiTest, FlagsTakeTheCommandLinesForms) {
  // Leading dashes are optional, true is a bare flag, false and null leave it out, an array repeats it, and an
  // argv vector is the command line itself.
  const std::string expected = cli_json("predict --model resnet50 --batch 16 --checkpointing --channels-last");
  EXPECT_EQ(api::predict({{"--model", "resnet50"}, {"batch", "16"}, {"checkpointing", true}, {"channels-last", true},
                          {"cuda-graphs", false}, {"dataset", nullptr}}),
            expected);
  EXPECT_EQ(api::run_json("predict", std::vector<std::string>{"--model", "resnet50", "--batch", "16", "--checkpointing",
                                                              "--channels-last"}),
            expected);
}

TEST_F(ApiTest, BadInputThrowsTheCommandLinesMessage) {
  const auto message = [](const nlohmann::json& options) {
    try {
      api::predict(options);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{"gpu", "gtx-1080-tj"}}), cli_error("predict --gpu gtx-1080-tj"));
  EXPECT_EQ(message({{"model", "resnet50"}, {"batch", "-3"}}), cli_error("predict --model resnet50 --batch=-3"));
  EXPECT_EQ(message({{"gpux", "a100-sxm4-40gb"}}), cli_error("predict --gpux a100-sxm4-40gb"));
  // A value that starts with dashes stays the flag's value, never another flag.
  EXPECT_NE(message({{"gpu", "--html=/tmp/x"}}).find("unknown device '--html=/tmp/x'"), std::string::npos);
  EXPECT_THROW(api::run_json("serve", nlohmann::json::object()), InputError);
  EXPECT_THROW(api::predict({{"Bad Name", 1}}), InputError);
  EXPECT_THROW(api::predict(nlohmann::json::array()), InputError);
}

TEST_F(ApiTest, ABareDeadlineNamesNoCommandLineFlag) {
  // A Python caller writes deadline=24, not --deadline 24: the message names the deadline and its units, no flag.
  try {
    api::plan({{"model", "resnet50"}, {"deadline", 24}, {"epochs", 90}});
    FAIL() << "a bare number was taken as a deadline";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deadline '24' has no unit"), std::string::npos) << what;
    EXPECT_EQ(what.find("--deadline"), std::string::npos) << what;
  }
}

TEST_F(ApiTest, HtmlIsThePageTheCommandWrites) {
  const std::string page = api::run_html("predict", {{"model", "resnet50"}, {"batch", 8}});
  const test::CliResult r = run("predict --model resnet50 --batch 8 --html page.html");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(page, test::slurp(dir_ / "page.html"));
}

TEST_F(ApiTest, ServeRefusesABadPortInOneLine) {
  const test::CliResult r = run("serve --port 70000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "perfcast: error: --port takes a whole number (digits only) from 0 to 65535, got '70000'\n");
}

}  // namespace
}  // namespace perfcast
