// Session 41's new-user walk-through (docs/calibration.md, "A new user's walk-through (session 41, h/qa41)"): what a
// GP102 owner met that was wrong, each held to an expectation from outside the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_paths.h"

namespace perfcast {
namespace {

using test::CliResult;
using test::lines_of;

bool contains(const std::string& s, const std::string& piece) { return s.find(piece) != std::string::npos; }

class Walkthrough41Test : public test::ScratchDirTest {
 protected:
  Walkthrough41Test() : ScratchDirTest("perfcast-qa41") {}
};

// `compare --batch max` (the default) picks each row's own largest batch; the text named only "batch max per GPU",
// so a reader could not see the batch that the row's throughput, step time and memory headroom belong to, which the
// JSON has (README: --json is the "same content"). Each row now prints its batch, equal to the JSON row's.
TEST_F(Walkthrough41Test, CompareTextShowsEachRowsBatch) {
  const std::string args = "compare --model resnet152 --gpu gtx-1080-ti,gtx-1080-ti:3,a100-sxm4-40gb";
  const CliResult text = run(args);
  ASSERT_EQ(text.code, 0) << text.err;
  const CliResult json = run(args + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto rows = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 3u);
  std::vector<std::string> table;
  bool header_has_batch = false;
  for (const auto& l : lines_of(text.out)) {
    if (l.rfind("device", 0) == 0) {
      std::istringstream ss(l);
      std::string word;
      while (ss >> word) header_has_batch |= word == "batch";
    }
    if (l.rfind("gtx-1080-ti ", 0) == 0 || l.rfind("a100-sxm4-40gb ", 0) == 0) table.push_back(l);
  }
  EXPECT_TRUE(header_has_batch) << text.out;
  ASSERT_EQ(table.size(), 3u) << text.out;
  for (std::size_t i = 0; i < 3; ++i) {
    // device, count, precision, batch: the fourth word of the row.
    std::istringstream ss(table[i]);
    std::string device, count, precision, batch;
    ss >> device >> count >> precision >> batch;
    EXPECT_EQ(device, rows[i]["gpu"].get<std::string>());
    EXPECT_EQ(batch, std::to_string(rows[i]["batch"].get<int>())) << table[i];
  }
  // The 1080 Ti (11 GB) and the A100 (40 GB) cannot share one largest batch: the column is not a constant.
  EXPECT_LT(rows[0]["batch"].get<int>(), rows[2]["batch"].get<int>());
}

// `--gpu my-card.toml` (README: "Add your own card"): values no board can have were taken silently. The 1080 Ti's
// shipped file with one value changed: a typo in the architecture name (it selects the Pascal-only collectives and
// the interval regime, so "pascla" moved the interval without a word), a TDP or a boost clock of 0 (power 0 W and
// energy 0 J per sample were printed), and an FP32 peak above what its CUDA cores can issue (one FMA, 2 FLOP, per
// core per clock: NVIDIA's 11.3 TFLOPS for the GTX 1080 Ti is 3584 x 2 x 1582 MHz).
TEST_F(Walkthrough41Test, OwnGpuFileWithImpossibleValuesIsRefused) {
  const std::string shipped = test::slurp(std::filesystem::path(PERFCAST_SOURCE_DIR) / "data" / "gpus" / "gtx-1080-ti.toml");
  ASSERT_FALSE(shipped.empty());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string t = shipped;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    const auto id = t.find("id = \"gtx-1080-ti\"");
    t.replace(id, std::string("id = \"gtx-1080-ti\"").size(), "id = \"my-card\"");
    test::write_text(dir_ / "card.toml", t);
  };
  with("architecture = \"pascal\"", "architecture = \"pascla\"");
  expect_refused("predict --gpu card.toml --model resnet50", {"'architecture'", "pascla", "6.1", "\"pascal\""});
  with("tdp_w = 250", "tdp_w = 0");
  expect_refused("predict --gpu card.toml --model resnet50", {"'tdp_w'", "positive"});
  with("boost_clock_mhz = 1582", "boost_clock_mhz = 0");
  expect_refused("predict --gpu card.toml --model resnet50", {"'boost_clock_mhz'", "positive"});
  with("fp32_tflops = 11.34", "fp32_tflops = 1e300");
  expect_refused("predict --gpu card.toml --model resnet50", {"'fp32_tflops'", "3584 x 2 x 1582 MHz = 11.34 TFLOPS"});
  // The same file as shipped, under its own id, is a card like the catalog's.
  with("tdp_w = 250", "tdp_w = 250");
  const CliResult ok = run("predict --gpu card.toml --model resnet50");
  EXPECT_EQ(ok.code, 0) << ok.err;
  // A folder on PERFCAST_GPU_PATH is read by the same rule.
  with("architecture = \"pascal\"", "architecture = \"pascla\"");
  std::filesystem::create_directory(dir_ / "cards");
  std::filesystem::rename(dir_ / "card.toml", dir_ / "cards" / "card.toml");
  const CliResult folder = test::run_perfcast(dir_, "gpus", "PERFCAST_GPU_PATH=" + (dir_ / "cards").string());
  EXPECT_EQ(folder.code, 2) << folder.err;
  EXPECT_TRUE(contains(folder.err, "pascla")) << folder.err;
}

// Every shipped GPU file keeps within the FMA bound above (a check on the rule's 5% slack, not on the model).
TEST_F(Walkthrough41Test, EveryShippedGpuPassesTheFmaBound) {
  const CliResult r = run("gpus");
  EXPECT_EQ(r.code, 0) << r.err;
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(PERFCAST_SOURCE_DIR) / "data" / "gpus"))
    files += e.path().extension() == ".toml";
  EXPECT_EQ(lines_of(r.out).size(), files);
}

// A price file (`plan --prices`, `compare --prices`) is a list of rentable servers; an instance of 30 GPUs on PCIe 3
// was planned as one server (30 GPUs scaling at 94%) while `--gpus 30` on PCIe is refused, since more than 20 GPUs do
// not share one server's PCIe tree (data/scale_limits.toml's sources: Supermicro SYS-6049GP-TRT holds 20). The same
// bound now holds for both.
TEST_F(Walkthrough41Test, PriceFileInstanceLargerThanAServerIsRefused) {
  const auto instance = [&](int gpus) {
    test::write_text(dir_ / "prices.toml", "[[instance]]\nid = \"big-box\"\nprovider = \"vast.ai\"\ngpu = \"gtx-1080-ti\"\n"
                                            "gpus = " + std::to_string(gpus) + "\ninterconnect = \"pcie3\"\n"
                                            "on_demand_usd_per_hour = 3.0\non_demand_date = \"2022-06\"\n"
                                            "on_demand_source = \"test\"\n");
  };
  expect_refused("predict --gpu gtx-1080-ti --model resnet50 --gpus 30", {"--gpus 30", "pcie3", "20 GPUs"});
  instance(30);
  expect_refused("plan --model resnet50 --deadline 24h --prices prices.toml", {"big-box", "'gpus'", "30", "pcie3", "20 GPUs"});
  expect_refused("compare --model resnet50 --gpu gtx-1080-ti --prices prices.toml", {"big-box", "'gpus'", "20 GPUs"});
  // Twenty single-width cards on one PCIe tree do exist (SYS-6049GP-TRT): that instance is planned.
  instance(20);
  const CliResult ok = run("plan --model resnet50 --deadline 24h --prices prices.toml");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// `plan --epochs 1e-30` planned a run of 0 samples ("799 options meet the deadline", every time "under 1 s" and
// every energy 0.0 kWh): a number the flag's rule (positive, finite) let through but that names no run. ImageNet-1k's
// training set is 1,281,167 images (Russakovsky et al. 2015), so 1e-30 epochs of it is far below one sample.
TEST_F(Walkthrough41Test, ARunOfLessThanOneSampleIsRefused) {
  expect_refused("plan --model resnet50 --deadline 24h --epochs 1e-30", {"--epochs 1e-30", "1281167 samples", "less than one"});
  expect_refused("compare --model resnet50 --gpu gtx-1080-ti --epochs 1e-30", {"--epochs 1e-30", "less than one"});
  expect_refused("plan --model resnet50 --deadline 24h --dataset-size 1 --epochs 0.5", {"0.5 samples", "less than one"});
  // A tenth of an epoch is a run people make (a learning-rate finder, a smoke test): still planned.
  const CliResult tenth = run("plan --model resnet50 --deadline 24h --epochs 0.1");
  EXPECT_EQ(tenth.code, 0) << tenth.err;
  EXPECT_TRUE(contains(tenth.out, "run: 128117 samples")) << tenth.out.substr(0, 300);
}

// A training step that does not fit at batch 1 was told "try --batch max", which then fails ("does not fit ... even at
// batch 1"). What can help depends on what holds the memory: Llama 2 7B has 6.74 B parameters (Touvron et al. 2023),
// 25.1 GiB in FP32, more than a Tesla P40's 24 GB; GPT-2 XL's 1.56 B (Radford et al. 2019) with Adam's two moments
// are 16 bytes a parameter, 23 GiB, past a GTX 1080 Ti's 11 GB before any activation; LoRA on Llama 2 7B in AMP at
// 4096 tokens is activations, which checkpointing frees (it then fits on the P40).
TEST_F(Walkthrough41Test, TrainingThatFitsAtNoBatchIsNotToldToTryBatchMax) {
  const auto rest = [&](const std::string& args) {
    const CliResult r = run("predict " + args);
    EXPECT_EQ(r.code, 0) << r.err;
    for (const auto& l : lines_of(r.out))
      if (contains(l, "no throughput, step time or bottleneck")) return l;
    ADD_FAILURE() << "no 'no throughput' line in: " << r.out;
    return std::string();
  };
  const std::string lora_fp32 = rest("--gpu tesla-p40 --model llama-2-7b --mode train --lora-rank 8 --batch 1 --seq 512");
  EXPECT_FALSE(contains(lora_fp32, "--batch max")) << lora_fp32;
  EXPECT_TRUE(contains(lora_fp32, "weights alone")) << lora_fp32;
  const std::string adam = rest("--gpu gtx-1080-ti --model gpt2_xl --mode train --batch 1 --seq 128");
  EXPECT_FALSE(contains(adam, "--batch max")) << adam;
  EXPECT_FALSE(contains(adam, "--checkpointing")) << adam;
  EXPECT_TRUE(contains(adam, "optimizer state")) << adam;
  const std::string long_seq =
      rest("--gpu tesla-p40 --model llama-2-7b --mode train --lora-rank 8 --batch 1 --seq 4096 --precision amp");
  EXPECT_FALSE(contains(long_seq, "--batch max")) << long_seq;
  EXPECT_TRUE(contains(long_seq, "--checkpointing")) << long_seq;
  const CliResult fixed =
      run("predict --gpu tesla-p40 --model llama-2-7b --mode train --lora-rank 8 --batch 1 --seq 4096 --precision amp "
          "--checkpointing --json");
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  EXPECT_TRUE(nlohmann::json::parse(fixed.out)["fits"].get<bool>());
  // At a batch above 1, --batch max is still the first thing to try (ResNet-152 at 64 on 11 GB).
  EXPECT_TRUE(contains(rest("--gpu gtx-1080-ti --model resnet152 --batch 64"), "--batch max"));
}

// LoRA on Llama 2 7B at 4096 tokens on a Tesla P40 printed "throughput 0.0 samples/s (160 tokens/s)": one sample is
// 4096 tokens, so 160 tokens/s is 160 / 4096 = 0.039 samples/s, which one decimal rounded to nothing. The text
// throughput now keeps three significant digits below 1 and equals tokens/s / seq to them; predict and advise alike.
TEST_F(Walkthrough41Test, ASlowStepsThroughputIsNotPrintedAsZero) {
  const std::string args = "--gpu tesla-p40 --model llama-2-7b --mode train --lora-rank 8 --batch 1 --seq 4096 "
                           "--precision amp --checkpointing";
  const CliResult text = run("predict " + args);
  ASSERT_EQ(text.code, 0) << text.err;
  const CliResult json = run("predict " + args + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const double tokens_per_s = j["throughput"]["tokens_per_s"].get<double>();
  std::string shown;
  for (const auto& l : lines_of(text.out))
    if (l.rfind("  throughput", 0) == 0) {
      std::istringstream ss(l);
      std::string word;
      ss >> word >> shown;
    }
  ASSERT_FALSE(shown.empty()) << text.out;
  EXPECT_NE(std::stod(shown), 0.0) << text.out;
  EXPECT_NEAR(std::stod(shown), tokens_per_s / 4096, 0.0005 * tokens_per_s / 4096 + 1e-4) << shown;
  const CliResult advice = run("advise " + args);
  ASSERT_EQ(advice.code, 0) << advice.err;
  EXPECT_FALSE(contains(advice.out, "throughput 0.0 samples/s")) << advice.out.substr(0, 600);
}

// `monitor --replay` of a session file cut after its header (a job killed before the first sample) printed an empty
// table with exit 0, and with --compare "0 GPUs ran the job where the prediction is for 1": a file with no sample
// holds nothing to replay, so it is bad input (one line, exit 2), as a file without a header already was.
TEST_F(Walkthrough41Test, ASessionWithoutSamplesIsRefused) {
  const std::string recorded = test::slurp(std::filesystem::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "monitor" /
                                           "h200-sxm-141gb_resnet50_amp_b128_host.csv");
  const auto lines = lines_of(recorded);
  ASSERT_GE(lines.size(), 3u);
  ASSERT_EQ(lines[1].rfind("time_s,gpu,", 0), 0u) << lines[1];
  test::write_text(dir_ / "cut.csv", lines[0] + "\n" + lines[1] + "\n");
  expect_refused("monitor --replay cut.csv", {"cut.csv", "no samples"});
  expect_refused("monitor --replay cut.csv --compare --gpu h200-sxm-141gb --model resnet50_v1_5 --precision amp --batch 128",
                 {"no samples"});
  // One sample is a session.
  test::write_text(dir_ / "one.csv", lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n");
  const CliResult one = run("monitor --replay one.csv");
  EXPECT_EQ(one.code, 0) << one.err;
}

// A profiler trace whose step lasts 1e300 us (or starts at 1e300 us) was summarised with a step time of 300 digits
// and "idle 100%". Kineto writes whole microseconds since the epoch (about 1.7e15 in 2024); a double holds them
// exactly up to 2^53, and no event outlasts the longest run perfcast plans. One line, exit 2, naming the event. The
// recorded trace itself (tests/data/kineto, rank 1 of a 128-GPU run) reads as before.
TEST_F(Walkthrough41Test, TraceEventTimesNoProfilerWritesAreRefused) {
  const CliResult base =
      run("trace '" + (std::filesystem::path(PERFCAST_SOURCE_DIR) / "tests/data/kineto/sampled_rank-1.json.gz").string() + "'");
  ASSERT_EQ(base.code, 0) << base.err;
  const auto trace = [&](const std::string& step) {
    test::write_text(dir_ / "t.json",
                     "{\"schemaVersion\": 1, \"traceEvents\": [" + step +
                         ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sgemm\", \"pid\": 0, \"tid\": 7, \"ts\": 10, "
                         "\"dur\": 500, \"args\": {\"device\": 0, \"stream\": 7}}]}");
  };
  const std::string step = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, )";
  trace(step + R"("ts": 0, "dur": 1e300})");
  expect_refused("trace t.json", {"ProfilerStep#1", "'dur'", "1e+300", "max_deadline_hours"});
  expect_refused("predict --gpu gtx-1080-ti --model t.json", {"ProfilerStep#1", "'dur'"});
  trace(step + R"("ts": 1e300, "dur": 1000})");
  expect_refused("trace t.json", {"ProfilerStep#1", "'ts'", "2^53"});
  trace(step + R"("ts": 1682725898079484, "dur": 1000})");
  const CliResult ok = run("trace t.json");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(contains(ok.out, "1.00 ms")) << ok.out;
}

// `perfcast op --precision fp16` on a GTX 1080 Ti printed the same time as fp32 and nothing on why, where a GP102 owner
// expects the FP16 pipe at 1/64 of FP32 (CUDA C Programming Guide, arithmetic instructions table: compute capability
// 6.1 issues 2 FP16 results per clock per SM against 128 FP32) or twice FP32. predict says how the precision runs;
// op now says it too, in text and JSON.
TEST_F(Walkthrough41Test, OpSaysHowFp16RunsOnGp102) {
  const std::string args = "op --gpu gtx-1080-ti --op matmul --m 4096 --n 4096 --k 4096 --precision fp16";
  const CliResult text = run(args);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "64x below FP32")) << text.out;
  const CliResult json = run(args + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(contains(j["precision_note"].get<std::string>(), "fp32")) << j.dump();
  EXPECT_EQ(j["roofline"]["pipe"], "fp32");
  // fp32 on the same card needs no note.
  const CliResult plain = run("op --gpu gtx-1080-ti --op matmul --m 4096 --n 4096 --k 4096 --precision fp32 --json");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_TRUE(nlohmann::json::parse(plain.out)["precision_note"].is_null());
}

// `validate` scored a measured 1e308 samples/s of ResNet-50 training on a GTX 1080 Ti as a 100% error, where
// `predict --measured 1e308/s` is refused: at 23 GFLOP per training image (3 x 2 x 3.86 G multiply-adds, He et al.
// 2016) it implies ~1e297 TFLOP/s against the card's 11.3 TFLOPS FP32. Such a row is now left unpredicted with the
// reason; a row at a real rate beside it (Lambda's 1080 Ti logs: about 200 images/s) is validated as before.
TEST_F(Walkthrough41Test, ValidateLeavesOutARateNoDeviceCanReach) {
  const std::string header = lines_of(test::slurp(std::filesystem::path(PERFCAST_SOURCE_DIR) / "data" / "validation" /
                                                  "check_pascal.csv"))[0];
  const std::string row = "gtx-1080-ti,resnet50,pytorch,train,fp32,64,,1,synthetic,,samples_per_s,";
  const std::string rest = ",test,,,,,,,,,\n";
  test::write_text(dir_ / "rows.csv", header + "\n" + row + "1e308" + rest + row + "200" + rest);
  const CliResult r = run("validate rows.csv --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"].size(), 1u) << r.out.substr(0, 400);
  EXPECT_TRUE(contains(j.dump(), "beyond what the devices can compute")) << r.out.substr(0, 400);
  test::write_text(dir_ / "bad.csv", header + "\n" + row + "1e308" + rest);
  expect_refused("validate bad.csv", {"beyond what the devices can compute"});
}

}  // namespace
}  // namespace perfcast
