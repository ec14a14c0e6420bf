// Hostile values of every number flag (src/cli/number_flags.h): NaN, infinity, a negative, an empty value, a number
// past a double's range, a hexadecimal one and trailing garbage are each refused as bad input naming the flag, with
// no report and no file written (README, "Bad input": one line, exit code 2). Each flag is run with every value in
// process (cli/command.h's run_command_line, as the API runs it) and with one of them through the binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/number_flags.h"
#include "cli_runner.h"
#include "core/error.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kHostile = {"nan", "inf", "-1", "", "1e999", "0x10", "12abc"};

// A command whose report would be written to FILE (replaced by the scratch file) and the number flag tried on it.
struct FlagCase {
  std::vector<std::string> command;
  std::string flag;
  std::vector<std::string> valid_words = {};  // values of kHostile the flag takes ("inf": --request-rate)
};

std::vector<FlagCase> flag_cases() {
  const std::vector<std::string> predict = {"predict", "--model", "resnet50", "--html", "FILE"};
  const std::vector<std::string> serve = {"predict", "--mode", "serve", "--model", "llama-3-8b", "--gpu",
                                          "h100-sxm5-80gb", "--html", "FILE"};
  const std::vector<std::string> compare = {"compare", "--model", "resnet50", "--html", "FILE"};
  const std::vector<std::string> plan = {"plan", "--model", "resnet50", "--deadline", "24h", "--html", "FILE"};
  const std::vector<std::string> op = {"op", "--gpu", "a100-sxm4-40gb", "--op", "matmul", "--html", "FILE"};
  const auto with = [](std::vector<std::string> words, std::initializer_list<std::string> more) {
    words.insert(words.end(), more);
    return words;
  };
  std::vector<FlagCase> cases;
  for (const char* flag : {"--batch", "--seq", "--seq-mean", "--context", "--max-positions", "--lora-rank",
                           "--host-cores", "--instances", "--cores", "--gpus", "--nodes", "--power-limit",
                           "--grad-accum", "--tp", "--pp", "--dp", "--ep", "--cp", "--vpp", "--zero", "--micro-batch",
                           "--global-batch", "--train-tokens", "--pue"})
    cases.push_back({predict, flag});
  cases.push_back({predict, "--dim"});  // name=value: the value is the number
  cases.push_back({with(serve, {"--output-len", "64"}), "--input-len"});
  cases.push_back({with(serve, {"--input-len", "64"}), "--output-len"});
  for (const char* flag : {"--num-requests", "--prefix-cache-hit", "--max-batch", "--seed", "--slo-ttft", "--slo-tpot"})
    cases.push_back({with(serve, {"--input-len", "64", "--output-len", "64"}), flag});
  cases.push_back({with(serve, {"--input-len", "64", "--output-len", "64"}), "--request-rate", {"inf"}});
  for (const char* flag : {"--dataset-size", "--epochs", "--pue"}) cases.push_back({compare, flag});
  for (const char* flag : {"--budget", "--dataset-size", "--epochs", "--efficiency-threshold", "--max-gpus", "--top",
                           "--pue"})
    cases.push_back({plan, flag});
  cases.push_back({with(op, {"--n", "64", "--k", "64"}), "--m"});
  cases.push_back({with(op, {"--m", "64", "--n", "64", "--k", "64"}), "--batch-count"});
  cases.push_back({with(op, {"--m", "64", "--n", "64", "--k", "64"}), "--power-limit"});
  cases.push_back({{"export", "--model", "resnet50", "--onnx", "FILE"}, "--batch"});
  cases.push_back({{"export", "--model", "bert_base", "--onnx", "FILE"}, "--seq"});
  cases.push_back({{"trace", "no-such-trace.json", "--html", "FILE"}, "--top"});
  for (const char* flag : {"--count", "--interval", "--duration"})
    cases.push_back({{"monitor", "--csv", "FILE"}, flag});
  cases.push_back({{"fit-kernels", "--kernels", "no-such-folder", "--out", "FILE"}, "--rows-per-group"});
  cases.push_back({{"fit-kernels", "--kernels", "no-such-folder", "--out", "FILE"}, "--max-evaluations"});
  cases.push_back({{"fit-kernels", "--kernels", "no-such-folder", "--out", "FILE"}, "--start-host-launch"});
  cases.push_back({{"serve"}, "--port"});
  cases.push_back({{"op", "--device", "xeon-platinum-8380", "--op", "matmul", "--m", "64", "--n", "64", "--k", "64"},
                   "--cores"});
  return cases;
}

class NumberFlagsTest : public test::ScratchDirTest {
 protected:
  NumberFlagsTest() : ScratchDirTest("perfcast-number-flags") {}
  fs::path file() const { return dir_ / "out.file"; }
  // The command line of `c` with `value` given to its flag ("--flag=value", so that "-1" is the flag's value).
  std::vector<std::string> words(const FlagCase& c, const std::string& value) const {
    std::vector<std::string> w = {"perfcast"};
    for (const auto& word : c.command) w.push_back(word == "FILE" ? file().string() : word);
    w.push_back(c.flag + "=" + (c.flag == "--dim" ? "seq=" : "") + value);
    return w;
  }
};

TEST_F(NumberFlagsTest, EveryHostileValueIsBadInputNamingTheFlag) {
  std::ostringstream report;
  std::ostream* previous = cli::set_report_out(&report);
  for (const FlagCase& c : flag_cases()) {
    for (const std::string& value : kHostile) {
      if (std::find(c.valid_words.begin(), c.valid_words.end(), value) != c.valid_words.end()) continue;
      SCOPED_TRACE(c.flag + "=" + value + " on " + c.command.front());
      std::string message;
      try {
        cli::run_command_line(words(c, value));
        ADD_FAILURE() << "accepted";
      } catch (const InputError& e) {
        message = e.what();
      }
      EXPECT_NE(message.find(c.flag), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(report.str(), "");
      EXPECT_FALSE(fs::exists(file()));
    }
  }
  cli::set_report_out(previous);
}

TEST_F(NumberFlagsTest, TheBinaryAnswersInOneLineWithExitCodeTwo) {
  // One hostile value per flag, in turn, through the binary and the shell.
  std::size_t i = 0;
  for (const FlagCase& c : flag_cases()) {
    std::string value;
    do value = kHostile[i++ % kHostile.size()];
    while (std::find(c.valid_words.begin(), c.valid_words.end(), value) != c.valid_words.end());
    std::string args;
    for (const auto& w : words(c, value)) if (w != "perfcast") args += "'" + w + "' ";
    SCOPED_TRACE(args);
    const test::CliResult r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(file()));
  }
}

TEST_F(NumberFlagsTest, PlainNumbersPastWhatTheFlagMeansAreBadInput) {
  // Values each flag's parser reads as numbers but that the run cannot mean: a request rate so low that arrival
  // times swamp the step times (data/limits.toml min_request_rate), more training tokens than any training set
  // (max_dataset_samples), a measurement in hexadecimal or with a leading space (std::stod's reading), a PUE for a
  // parallel training layout, which reports no energy.
  const std::vector<std::string> serve = {"predict", "--mode", "serve", "--model", "llama-3-8b", "--gpu",
                                          "h100-sxm5-80gb", "--input-len", "64", "--output-len", "64"};
  const auto with = [](std::vector<std::string> words, std::initializer_list<std::string> more) {
    words.insert(words.begin(), "perfcast");
    words.insert(words.end(), more);
    return words;
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {with(serve, {"--request-rate=1e-300"}), "--request-rate"},
      {with({"predict", "--model", "llama-2-7b", "--gpu", "h100-sxm5-80gb", "--tp", "2"}, {"--train-tokens=1e308"}),
       "--train-tokens"},
      {with({"predict", "--model", "resnet50"}, {"--measured=0x10/s"}), "--measured"},
      {with({"predict", "--model", "resnet50"}, {"--measured-step= 120ms"}), "--measured-step"},
      {with({"predict", "--model", "llama-2-7b", "--gpu", "h100-sxm5-80gb", "--tp", "2"}, {"--pue=1.2"}), "--pue"},
  };
  std::ostringstream report;
  std::ostream* previous = cli::set_report_out(&report);
  for (const auto& [words, flag] : cases) {
    SCOPED_TRACE(words.back());
    std::string message;
    try {
      cli::run_command_line(words);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(flag), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(report.str(), "");
  cli::set_report_out(previous);
}

TEST(NumberFlags, PlainDecimalNumbersAreRead) {
  // What a user types for a number is read as it reads: a point, an exponent, leading zeros.
  EXPECT_EQ(cli::number_flag("1.5", "--x"), 1.5);
  EXPECT_EQ(cli::number_flag(".5", "--x"), 0.5);
  EXPECT_EQ(cli::number_flag("1e12", "--x"), 1e12);
  EXPECT_EQ(cli::number_flag("2E-3", "--x"), 2e-3);
  EXPECT_EQ(cli::count_flag("007", "--x", 1), 7);
  EXPECT_EQ(cli::count_flag("0", "--x", 0), 0);
  // A TCP port is 16 bits; a seed takes all 64.
  EXPECT_EQ(cli::count_flag("65535", "--port", 0, 65535), 65535);
  EXPECT_THROW(cli::count_flag("65536", "--port", 0, 65535), InputError);
  EXPECT_EQ(cli::whole_number_flag("18446744073709551615", "--seed", 0, UINT64_MAX), UINT64_MAX);
  // A whole number is digits only: the exponent, sign and point a real number may carry are refused.
  for (const char* bad : {"1e3", "+5", "2.0", "5 ", " 5", "99999999999999999999"})
    EXPECT_THROW(cli::count_flag(bad, "--x", 0), InputError) << bad;
  for (const char* bad : {"+1", " 1", "1 ", "1e", "1e+", ".", "1..2", "infinity", "0x1p3", "1e-999"})
    EXPECT_THROW(cli::number_flag(bad, "--x"), InputError) << bad;
  // --pue is facility energy / IT energy (The Green Grid): 1 is a facility with no overhead, and the 2.5 average of
  // the Uptime Institute's first survey (2007) is a real one; 1e308 made the facility energy infinite.
  EXPECT_EQ(cli::pue_flag("1"), 1.0);
  EXPECT_EQ(cli::pue_flag("2.5"), 2.5);
  EXPECT_THROW(cli::pue_flag("0.99"), InputError);
  EXPECT_THROW(cli::pue_flag("1e308"), InputError);
}

}  // namespace
}  // namespace perfcast
