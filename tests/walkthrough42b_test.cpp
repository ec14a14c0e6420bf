// Session 42's new-user walk-through (docs/calibration.md, "A new user's walk-through (session 42, h/qa42)"): what a
// GP102 owner met that was wrong, each held to an expectation from outside the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/api.h"
#ifdef PERFCAST_HAVE_HTTPLIB
#include "cli/web_server.h"
#endif
#include "cli_runner.h"
#include "core/error.h"
#include "test_paths.h"

namespace perfcast {
namespace {

using test::CliResult;

bool contains(const std::string& s, const std::string& piece) { return s.find(piece) != std::string::npos; }

class Walkthrough42bTest : public test::ScratchDirTest {
 protected:
  Walkthrough42bTest() : ScratchDirTest("perfcast-qa42b") {}
  std::filesystem::path write_file(const std::string& name, const std::string& text) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
};

// README: `--measured` "shows it beside the prediction". A slow measurement (a 7B model decoding from host memory at
// 0.04 tokens/s, a fine-tune at 0.5 samples/s) was echoed as "0.0" and "0.5" with the what-ifs scaled from it shown
// to one decimal: the user's own number must come back as given.
TEST_F(Walkthrough42bTest, MeasuredRateBelowOneIsEchoedAsGiven) {
  const CliResult decode = run("predict --gpu gtx-1080-ti --model llama-2-7b --mode decode --measured 0.04/s");
  ASSERT_EQ(decode.code, 0) << decode.err;
  EXPECT_TRUE(contains(decode.out, "0.0400 tokens/s")) << decode.out;
  const CliResult advise = run("advise --gpu gtx-1080-ti --model resnet152 --batch 32 --measured 0.25/s");
  ASSERT_EQ(advise.code, 0) << advise.err;
  EXPECT_TRUE(contains(advise.out, "you measured")) << advise.out;
  EXPECT_TRUE(contains(advise.out, "0.250 samples/s")) << advise.out;
  EXPECT_TRUE(contains(advise.out, "From your measured 0.250 samples/s")) << advise.out;
}

// LoRA on Llama 2 7B at advise's default batch of 64 does not fit a 24 GB P40 (6.7 B frozen weights in FP16 are
// 12.6 GiB before any activation); checkpointing then fits a batch below 64, which the "why" column called "frees
// room for batch 26 (from 64)": room for fewer samples is not more room. The reason must name a batch no larger than
// the JSON row's and not claim a larger one.
TEST_F(Walkthrough42bTest, CheckpointingBelowTheAskedBatchIsNotCalledALargerBatch) {
  const std::string args = "advise --gpu tesla-p40 --model llama-2-7b --mode train --lora-rank 8 --precision amp --seq 512";
  const CliResult json = run(args + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  bool seen = false;
  for (const auto& st : j["strategies"]) {
    if (st["id"] != "checkpointing+larger-batch" || !st["applicable"].get<bool>()) continue;
    seen = true;
    const auto batch = st["batch"].get<std::int64_t>();
    ASSERT_LT(batch, 64);
    const std::string reason = st["reason"].get<std::string>();
    EXPECT_FALSE(contains(reason, "frees room")) << reason;
    EXPECT_TRUE(contains(reason, "batch " + std::to_string(batch))) << reason;
  }
  EXPECT_TRUE(seen) << json.out.substr(0, 400);
}

// The one-line-error rule (docs: "Bad input: one-line error naming the problem, exit code 2"): a value flag given
// twice, or left without its value before the next flag, was answered in CLI11's words ("--batch: At Most 1 required
// but received 2"; `--batch --gpus 2` as "The following argument was not expected: 2", naming neither flag).
TEST_F(Walkthrough42bTest, ValueFlagGivenTwiceOrWithoutValueIsNamed) {
  const std::string base = "predict --gpu gtx-1080-ti --model resnet50 ";
  for (const std::string& tail : {std::string("--batch 32 --batch 64"), std::string("--batch=32 --batch 64")})
    expect_refused(base + tail, {"--batch", "2 times"});
  for (const std::string& tail : {std::string("--batch --gpus 2"), std::string("--gpus 2 --batch")})
    expect_refused(base + tail, {"--batch takes a value"});
}

// README ("Web app, API and Python"): the API takes the CLI's flags; its answers' keys are snake_case
// (`request_rate`-style), so a client writes `request_rate` for `--request-rate`. The refusal (the rule: "a suggestion
// for typos") names the flag meant.
TEST_F(Walkthrough42bTest, ApiFlagWrittenInSnakeCaseSuggestsItsHyphenatedName) {
  try {
    api::predict(nlohmann::json{{"gpu", "gtx-1080-ti"}, {"model", "resnet50"}, {"data_loader_workers", 8}});
    ADD_FAILURE() << "data_loader_workers was accepted";
  } catch (const InputError& e) {
    // No such flag in either spelling: no suggestion of one.
    EXPECT_FALSE(contains(e.what(), "did you mean")) << e.what();
  }
  try {
    api::predict(nlohmann::json{{"gpu", "gtx-1080-ti"}, {"model", "llama-2-7b"}, {"mode", "serve"},
                                {"request_rate", 1}});
    ADD_FAILURE() << "request_rate was accepted";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "did you mean 'request-rate'?")) << e.what();
  }
}

// ResNet-50's run is an ImageNet epoch (1,281,167 images) with no flag. When compare's only row cannot run (30 GTX
// 1080 Ti in one PCIe server, beyond the 20 data/scale_limits.toml allows), its title said "no run size (give
// --dataset-size)", sending the user after a flag that changes nothing.
TEST_F(Walkthrough42bTest, CompareWithNoRowPredictedDoesNotAskForADatasetSize) {
  const CliResult r = run("compare --model resnet50 --gpu gtx-1080-ti:30");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string title = r.out.substr(0, r.out.find('\n'));
  EXPECT_FALSE(contains(title, "--dataset-size")) << title;
  EXPECT_TRUE(contains(r.out, "unsupported")) << r.out;
}

// README ("Your own models"): `perfcast export --model ID --onnx OUT.onnx` writes "a zoo model or a config.json's
// graph"; `perfcast --help` and `export --help` said "a zoo model" alone.
TEST_F(Walkthrough42bTest, ExportHelpNamesTheConfigJsonItTakes) {
  for (const std::string& args : {std::string("--help"), std::string("export --help")}) {
    const CliResult r = run(args);
    ASSERT_EQ(r.code, 0) << r.err;
    std::string line;
    std::istringstream lines(r.out);
    bool found = false;
    while (std::getline(lines, line))
      if (contains(line, "ONNX file")) {
        found = true;
        EXPECT_TRUE(contains(line, "config.json")) << line;
      }
    EXPECT_TRUE(found) << r.out;
  }
}

// RFC 4180 has no empty record: an empty line in a CSV is no row. Files saved by editors and spreadsheets end in blank
// lines (LF or CRLF), which `predict --configs` counted as failed rows ("2 ok, 3 failed", exit 1) and `validate` as
// rows not predicted. A row that does lack columns stays an error.
TEST_F(Walkthrough42bTest, BlankLinesOfAConfigurationsFileAreNoRows) {
  const auto blank = write_file("blank.csv",
                                "gpu,model,batch\r\ngtx-1080-ti,resnet50,64\r\n\r\ntitan-xp,resnet50,32\r\n\n  \n");
  const CliResult r = run("predict --configs " + blank.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "2 ok, 0 failed")) << r.err;
  EXPECT_FALSE(contains(r.out, "error:")) << r.out;
  const auto short_row = write_file("short.csv", "gpu,model,batch\ngtx-1080-ti,resnet50\n\n");
  const CliResult s = run("predict --configs " + short_row.string());
  EXPECT_EQ(s.code, 1) << s.err;
  EXPECT_TRUE(contains(s.out, "line 2: the row has fewer columns than the header")) << s.out;
}

// English counts one row in the singular: `validate` said "validated 1 rows", `predict --configs` "(1 rows)".
TEST_F(Walkthrough42bTest, OneRowIsCountedInTheSingular) {
  const auto one = write_file("one.csv", "gpu,model,batch,value,metric\ngtx-1080-ti,resnet50,64,190,samples_per_s\n");
  const CliResult v = run("validate " + one.string());
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(contains(v.out, "validated 1 row of")) << v.out;
  EXPECT_TRUE(contains(v.out, "0 rows not predicted")) << v.out;
  const CliResult p = run("predict --configs " + one.string());
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(contains(p.err, "(1 row)")) << p.err;
}

// /dev/null exists (POSIX: a character device every system has); `trace /dev/null` answered "no such file", which
// sends the user hunting for a typo. A missing file keeps its line.
TEST_F(Walkthrough42bTest, TraceOfADeviceSaysItIsNotARegularFile) {
  expect_refused("trace /dev/null", {"/dev/null", "not a regular file"});
  expect_refused("trace missing.json", {"missing.json", "no such file"});
}

// A price's date says when it was read (data/cloud/prices.toml: "as the providers published them on the date given";
// every shipped one is YYYY-MM). A month 13 or a word is no date, yet a price file took them; `--version` names the
// newest date compared as text, which "yesterday" would win. ISO 8601 calendar dates: months 01-12, days 01-31.
TEST_F(Walkthrough42bTest, PriceFileDatesAreCalendarMonthsOrDays) {
  const auto file = [&](const std::string& date) {
    return write_file("p.toml", "[[instance]]\nid = \"x\"\nprovider = \"vast.ai\"\ngpu = \"gtx-1080-ti\"\ngpus = 1\n"
                                "interconnect = \"pcie3\"\non_demand_usd_per_hour = 0.15\non_demand_date = \"" +
                                    date + "\"\non_demand_source = \"a listing\"\n");
  };
  for (const std::string& bad : {"yesterday", "2099-13", "2022-06-32", "22-06"}) {
    file(bad);
    expect_refused("plan --model resnet50 --deadline 24h --prices p.toml", {"on_demand_date", bad});
  }
  for (const std::string& good : {"2022-06", "2022-06-30"}) {
    file(good);
    const CliResult r = run("plan --model resnet50 --deadline 24h --prices p.toml");
    EXPECT_EQ(r.code, 0) << good << ": " << r.err;
  }
}

// README: `--measured-step 120ms` is a step time. A step too short for the card (ResNet-152 at batch 32 in 400 us on
// a 1080 Ti would be 5,450 TFLOP/s) was refused with "check the unit (samples per second; /min or /h ...)", the
// units of --measured, which --measured-step refuses.
TEST_F(Walkthrough42bTest, ImpossibleMeasuredStepNamesStepTimeUnits) {
  expect_refused("advise --gpu gtx-1080-ti --model resnet152 --batch 32 --measured-step 400us",
                 {"--measured-step 400us", "ms, s or us"});
  const CliResult r = run("advise --gpu gtx-1080-ti --model resnet152 --batch 32 --measured-step 400us");
  EXPECT_FALSE(contains(r.err, "samples per second")) << r.err;
}

// LoRA on Llama 2 7B at batch 64 does not fit a P40; gradient accumulation is refused with --lora-rank, so advise's
// only fitting what-if was checkpointing at batch 26, while `predict --batch max` runs batch 3 without recomputing
// the forward pass (a checkpointed step does the forward twice: about 4/3 of the work per sample, Chen et al. 2016).
// The largest batch that fits must be offered, and it must not be slower than the checkpointed one.
TEST_F(Walkthrough42bTest, AdviseOffersTheLargestBatchThatFitsWhenAccumulationIsRefused) {
  const std::string args = "--gpu tesla-p40 --model llama-2-7b --mode train --lora-rank 8 --precision amp --seq 512";
  const CliResult most = run("predict " + args + " --batch max --json");
  ASSERT_EQ(most.code, 0) << most.err;
  const auto most_batch = nlohmann::json::parse(most.out)["batch"].get<std::int64_t>();
  const CliResult json = run("advise " + args + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const nlohmann::json* smaller = nullptr;
  const nlohmann::json* checkpointed = nullptr;
  for (const auto& st : j["strategies"]) {
    if (st["id"] == "smaller-batch") smaller = &st;
    if (st["id"] == "checkpointing+larger-batch") checkpointed = &st;
  }
  ASSERT_NE(smaller, nullptr) << json.out.substr(0, 400);
  EXPECT_TRUE((*smaller)["applicable"].get<bool>());
  EXPECT_EQ((*smaller)["batch"].get<std::int64_t>(), most_batch);
  ASSERT_NE(checkpointed, nullptr);
  EXPECT_GE((*smaller)["samples_per_s"].get<double>(), (*checkpointed)["samples_per_s"].get<double>());
}

// `perfcast op --device CPU` costs one op by the CPU path (session 36, docs/cpus.md), but README and docs/cpus.md said
// op refuses a CPU, and the refusal a CPU id gets where a GPU is needed listed "predict, compare and advise" only.
TEST_F(Walkthrough42bTest, RefusingACpuIdNamesEveryCommandThatTakesOne) {
  const CliResult op = run("op --device xeon-e5-2690-v4-2s --op matmul --m 512 --n 512 --k 512");
  EXPECT_EQ(op.code, 0) << op.err;
  const std::string trace =
      (std::filesystem::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "kineto" / "sampled_rank-1.json.gz").string();
  expect_refused("trace " + trace + " --device xeon-e5-2690-v4-2s", {"is a CPU"});
  const CliResult t = run("trace " + trace + " --device xeon-e5-2690-v4-2s");
  EXPECT_TRUE(contains(t.err, "predict, advise, compare and op")) << t.err;
}

// NVIDIA sells the TITAN Xp (GP102, 3840 cores, 548 GB/s) and the TITAN X (Pascal) (3584 cores, 480 GB/s) as two
// cards. A Titan Xp owner typing `titanxp` or `titan_xp` was pointed to titan-x-pascal, the other card, which
// happens to come first in the catalog and also contains the letters.
TEST_F(Walkthrough42bTest, TitanXpTypedWithoutItsHyphenSuggestsTheTitanXp) {
  for (const std::string typed : {"titanxp", "titan_xp", "TitanXp"})
    expect_refused("predict --model resnet50 --gpu " + typed, {"did you mean 'titan-xp'?"});
}

// Spreadsheets save "CSV UTF-8" with a byte-order mark (EF BB BF, Unicode's U+FEFF) before the header; a session
// recorded by `monitor --csv` and opened and saved there was refused ("the header lacks column 'time_s' ... found
// '\ufefftime_s'"). The mark is no part of the header: the replay reads as the file without it.
TEST_F(Walkthrough42bTest, MonitorReplayReadsASessionSavedWithAByteOrderMark) {
  const std::string plain = test::slurp(std::filesystem::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "monitor" /
                                        "h200-sxm-141gb_resnet50_amp_b128_host.csv");
  write_file("plain.csv", plain);
  write_file("bom.csv", "\xEF\xBB\xBF" + plain);
  const CliResult a = run("monitor --replay plain.csv");
  const CliResult b = run("monitor --replay bom.csv");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  const auto after_title = [](const std::string& out) { return out.substr(out.find('\n')); };
  EXPECT_EQ(after_title(a.out), after_title(b.out));
}

// The same byte-order mark on a serving benchmark file (`validate` on llm_serving.csv's format) hid its first column
// ("has no column 'engine'"), and its summary counted "1 rows".
TEST_F(Walkthrough42bTest, ServingValidationReadsAByteOrderMarkAndCountsOneRow) {
  const std::string csv =
      "engine,gpu,model,precision,tp,pp,input_len,output_len,num_requests,request_rate,length_dist,metric,measured\n"
      "vllm,a100-sxm4-80gb,llama-2-7b,fp16,1,1,128,128,100,,fixed,output_tokens_per_s,2000\n";
  write_file("plain.csv", csv);
  write_file("bom.csv", "\xEF\xBB\xBF" + csv);
  const CliResult a = run("validate plain.csv");
  const CliResult b = run("validate bom.csv");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_TRUE(contains(a.out, "1 row, 0 not predicted")) << a.out;
}

#ifdef PERFCAST_HAVE_HTTPLIB
// socket(7): with SO_REUSEPORT set on both sockets, a second server may bind a port another one is listening on and
// the kernel splits the connections between them. cpp-httplib sets it by default, so a second `perfcast serve
// --port 8080` started beside a forgotten one said "serving" and answered half the requests with the old one's
// binary and data. A port in use must be refused (README: "cannot listen ... address in use").
TEST(Walkthrough42bServe, ASecondServerOnAPortInUseIsRefused) {
  cli::WebServer first({"127.0.0.1", 0, 0});
  const int port = first.bind();
  ASSERT_GT(port, 0);
  cli::WebServer second({"127.0.0.1", port, 0});
  try {
    second.bind();
    ADD_FAILURE() << "a second server bound port " << port;
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot listen")) << e.what();
  }
}
#endif  // PERFCAST_HAVE_HTTPLIB

}  // namespace
}  // namespace perfcast
