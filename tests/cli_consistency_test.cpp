// Issue 14 item 2, "one consistent CLI", through the real binary: bare perfcast is advise with all its flags; one
// table of defaults for help and behaviour; --lang/--json/--html on every command that reports; --configs rows with
// a bad shape get a status and the run a summary and exit code; impossible what-ifs (power limits outside the
// board's range, INT8 convolutions in PyTorch eager, more GPUs than a server holds) refused with the reason;
// compare's id:count priced on whole instances; plan's shortlist; "does not fit" instead of a throughput; integer
// JSON counts; the Chinese report's headers and punctuation.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;

using perfcast::test::CliResult;
using perfcast::test::lines_of;
using perfcast::test::slurp;
using perfcast::test::write_text;

bool contains(const std::string& s, const std::string& piece) { return s.find(piece) != std::string::npos; }

class CliConsistencyTest : public perfcast::test::ScratchDirTest {
 protected:
  CliConsistencyTest() : ScratchDirTest("perfcast-consistency") {}

  nlohmann::json run_json(const std::string& args) const {
    const CliResult r = run(args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }
};

// ---------------------------------------------------------------- bare perfcast and defaults

TEST_F(CliConsistencyTest, BarePerfcastTakesEveryAdviseFlag) {
  const CliResult zh = run("--lang zh");
  ASSERT_EQ(zh.code, 0) << zh.err;
  EXPECT_TRUE(contains(zh.out, "perfcast 建议：nodule3d")) << zh.out.substr(0, 200);
  const nlohmann::json j = run_json("--json");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["baseline"]["model"], "nodule3d");
  const CliResult html = run("--html page.html");
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_TRUE(contains(slurp(dir_ / "page.html"), "<!DOCTYPE html>"));
  // The program's own help stays the program's.
  const CliResult help = run("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "advise")) << help.out;
}

TEST_F(CliConsistencyTest, AdviseKeepsItsScenarioWhenGpuOrRuntimeIsGiven) {
  // The default scenario (README): nodule3d training, batch 4, CT crops augmented on an 8-vCPU cloud host.
  const nlohmann::json bare = run_json("advise --json");
  const nlohmann::json p40 = run_json("advise --gpu tesla-p40 --runtime pytorch --json");
  for (const auto* j : {&bare, &p40}) {
    const auto& b = (*j)["baseline"];
    EXPECT_EQ(b["model"], "nodule3d");
    EXPECT_EQ(b["batch"], 4);
    EXPECT_EQ(b["runtime"], "pytorch");
    ASSERT_TRUE(b["input_pipeline"].is_object()) << "real-augmented data has an input pipeline";
    EXPECT_EQ(b["input_pipeline"]["host"], "cloud-8vcpu");
  }
  EXPECT_EQ(bare["baseline"]["gpu"], "gtx-1080-ti");
  EXPECT_EQ(p40["baseline"]["gpu"], "tesla-p40");
}

TEST_F(CliConsistencyTest, HelpTextSaysTheDefaultsThatRun) {
  const CliResult advise_help = run("advise --help");
  ASSERT_EQ(advise_help.code, 0);
  EXPECT_TRUE(contains(advise_help.out, "--model TEXT=nodule3d")) << advise_help.out;
  EXPECT_TRUE(contains(advise_help.out, "--gpu TEXT=gtx-1080-ti"));
  EXPECT_TRUE(contains(advise_help.out, "--data TEXT=real-augmented"));
  EXPECT_TRUE(contains(advise_help.out, "default 4 for nodule3d"));
  const CliResult predict_help = run("predict --help");
  EXPECT_TRUE(contains(predict_help.out, "--model TEXT=resnet50")) << predict_help.out;
  EXPECT_TRUE(contains(predict_help.out, "--data TEXT=synthetic"));
  EXPECT_TRUE(contains(predict_help.out, "default 64"));
  // README ("Your own models"): --model takes a zoo id, a config.json, an .onnx file or a PyTorch profiler trace,
  // on every command; the help named only the first three.
  for (const std::string cmd : {"predict", "advise", "compare", "plan", "export"}) {
    const CliResult h = run(cmd + " --help");
    EXPECT_TRUE(contains(h.out, "an .onnx file or a PyTorch profiler trace")) << cmd << ": " << h.out;
  }
  const nlohmann::json p = run_json("predict --json");
  EXPECT_EQ(p["model"], "resnet50");
  EXPECT_EQ(p["batch"], 64);
  EXPECT_TRUE(p["input_pipeline"].is_null());
}

// ---------------------------------------------------------------- --lang, --json, --html everywhere

TEST_F(CliConsistencyTest, EveryReportingCommandTakesLangJsonAndHtml) {
  const std::map<std::string, std::string> commands{
      {"predict", "predict --model resnet50"},
      {"advise", "advise --model resnet50"},
      {"compare", "compare --model resnet50 --gpu gtx-1080-ti,a100-sxm4-40gb"},
      {"plan", "plan --model resnet50 --deadline 24h --epochs 10"}};
  // A header each command's Chinese report translates (report/messages.cpp).
  const std::map<std::string, std::string> zh_header{
      {"predict", "吞吐量"}, {"advise", "算子类别"}, {"compare", "样本/秒"}, {"plan", "实例"}};
  for (const auto& [name, args] : commands) {
    SCOPED_TRACE(name);
    const CliResult zh = run(args + " --lang zh --html " + name + ".html");
    ASSERT_EQ(zh.code, 0) << zh.err;
    EXPECT_TRUE(contains(zh.out, zh_header.at(name))) << zh.out;
    const std::string page = slurp(dir_ / (name + ".html"));
    EXPECT_TRUE(contains(page, "<html lang=\"zh\">")) << page.substr(0, 200);
    const CliResult json = run(args + " --json --lang zh");
    ASSERT_EQ(json.code, 0) << json.err;
    EXPECT_FALSE(nlohmann::json::parse(json.out, nullptr, false).is_discarded()) << json.out.substr(0, 200);
    expect_refused(args + " --lang fr", {"language", "fr"});
  }
}

// ---------------------------------------------------------------- --configs and --out

TEST_F(CliConsistencyTest, OutWithoutConfigsIsAnError) {
  expect_refused("predict --out x.csv", {"--out", "--configs"});
  EXPECT_FALSE(fs::exists(dir_ / "x.csv"));
}

TEST_F(CliConsistencyTest, ConfigsRowWithAnExtraColumnGetsAStatusAndTheRunASummary) {
  write_text(dir_ / "extra.csv",
             "gpu,model,mode,batch\n"
             "gtx-1080-ti,resnet50,infer,8\n"
             "gtx-1080-ti,resnet50,infer,8,surplus\n"
             "gtx-1080-ti,resnet50,infer,16\n");
  const CliResult r = run("predict --configs extra.csv --out out.csv");
  EXPECT_EQ(r.code, 1) << "a failed row makes the exit code 1: " << r.err;
  EXPECT_EQ(r.err, "perfcast: 2 ok, 1 failed (3 rows)\n");
  const auto rows = lines_of(slurp(dir_ / "out.csv"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(rows[1].ends_with(",ok")) << rows[1];
  EXPECT_TRUE(contains(rows[2], "error: line 3: the row has more columns than the header")) << rows[2];
  EXPECT_TRUE(rows[3].ends_with(",ok")) << rows[3];
  // All rows fine: exit 0, still the summary.
  write_text(dir_ / "fine.csv", "gpu,model,mode,batch\ngtx-1080-ti,resnet50,infer,8\n");
  const CliResult ok = run("predict --configs fine.csv");
  EXPECT_EQ(ok.code, 0);
  EXPECT_EQ(ok.err, "perfcast: 1 ok, 0 failed (1 row)\n");
}

// ---------------------------------------------------------------- impossible what-ifs

TEST_F(CliConsistencyTest, PowerLimitOutsideTheBoardsRangeIsRefused) {
  // nvidia-smi -q on a GTX 1080 Ti: Min Power Limit 125 W, Max 300 W (data/gpus/gtx-1080-ti.toml).
  expect_refused("predict --gpu gtx-1080-ti --power-limit 50", {"50 W", "125 W", "300 W", "gtx-1080-ti"});
  expect_refused("predict --gpu gtx-1080-ti --power-limit 400", {"400 W", "300 W"});
  EXPECT_EQ(run("predict --gpu gtx-1080-ti --power-limit 150").code, 0);
  expect_refused("predict --gpu gtx-1080-ti --power-limit nan", {"--power-limit"});
  expect_refused("predict --gpu gtx-1080-ti --power-limit inf", {"--power-limit"});
  // A board without published figures: half its TDP to its TDP (RTX 3090, 350 W: 175-350 W), and it says so.
  expect_refused("predict --gpu rtx-3090 --power-limit 100", {"175 W", "350 W", "TDP"});
}

TEST_F(CliConsistencyTest, Int8ConvolutionsInPyTorchEagerAreRefusedNamingEnginesThatRunThem) {
  expect_refused("predict --gpu tesla-p40 --model resnet50 --mode infer --precision int8",
                 {"int8", "pytorch", "tensorrt"});
  EXPECT_EQ(run("predict --gpu tesla-p40 --model resnet50 --mode infer --precision int8 --runtime tensorrt").code, 0);
}

TEST_F(CliConsistencyTest, MoreGpusThanAServerHoldsAreRefused) {
  expect_refused("predict --gpus 64", {"64", "pcie3", "20"});
  expect_refused("predict --gpus 2147483647", {"--gpus"});
  expect_refused("predict --gpu v100-sxm2-16gb --gpus 9 --interconnect nvlink", {"nvlink", "8"});
  expect_refused("predict --nodes 100000", {"--nodes"});
  // DGX-2: 16 V100 on NVSwitch in one server.
  EXPECT_EQ(run("predict --gpu v100-sxm3-32gb --gpus 16 --interconnect nvswitch").code, 0);
}

// ---------------------------------------------------------------- compare and plan

TEST_F(CliConsistencyTest, CompareTakesIdCountAndPricesWholeInstances) {
  const nlohmann::json rows = run_json("compare --model resnet50 --gpu gtx-1080-ti:3,h100-sxm5-80gb --json");
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["gpus_per_node"], 3);
  EXPECT_EQ(rows[0]["gpus_total"], 3);
  // Three cards rent as the cheapest instance holding three: vast-4x-gtx-1080-ti ($0.60/h for 4).
  EXPECT_EQ(rows[0]["run"]["instance"], "vast-4x-gtx-1080-ti");
  EXPECT_EQ(rows[0]["run"]["gpus_paid"], 4);
  // Paid for the hours billed (vast.ai: data/cloud/providers.toml [default], whole minutes): at least the run's
  // hours, under a minute more.
  const double billed = rows[0]["run"]["billed_hours"].get<double>(), hours = rows[0]["run"]["hours"].get<double>();
  EXPECT_NEAR(rows[0]["run"]["usd_on_demand"].get<double>(), 0.60 * billed, 1e-9);
  EXPECT_GE(billed, hours);
  EXPECT_LT(billed, hours + 1.0 / 60);
  // One H100 SXM: the catalog rents them only in 8-GPU instances, so the whole instance is paid.
  EXPECT_EQ(rows[1]["gpus_per_node"], 1);
  EXPECT_EQ(rows[1]["run"]["gpus_paid"], 8);
  expect_refused("compare --gpu gtx-1080-ti:0", {"gtx-1080-ti:0"});
  expect_refused("compare --gpu gtx-1080-ti:x", {"gtx-1080-ti:x"});
}

TEST_F(CliConsistencyTest, PlanListsDifferentChoicesAndSearchesPrecisions) {
  const nlohmann::json j = run_json("plan --model resnet50 --batch 64 --deadline 72h --epochs 10 --json");
  ASSERT_TRUE(j["shortlist"].is_array());
  ASSERT_GT(j["meeting"].size(), j["shortlist"].size());
  std::map<std::string, int> per_gpu;
  bool not_fp32 = false;
  for (const auto& o : j["shortlist"]) {
    ++per_gpu[o["gpu"].get<std::string>()];
    not_fp32 |= o["precision"] != "fp32";
  }
  for (const auto& [gpu, n] : per_gpu) EXPECT_LE(n, 2) << gpu << ": at most its cheapest and its fastest";
  EXPECT_GE(per_gpu.size(), 5u);
  EXPECT_TRUE(not_fp32) << "without --precision, plan searches precisions (AMP on tensor-core GPUs)";
  // The text shows the shortlist: the first rows are not all one GPU type.
  const CliResult text = run("plan --model resnet50 --batch 64 --deadline 72h --epochs 10");
  ASSERT_EQ(text.code, 0);
  EXPECT_TRUE(contains(text.out, "lambda-8x-v100")) << text.out;
}

// ---------------------------------------------------------------- does not fit, JSON counts

TEST_F(CliConsistencyTest, ConfigurationsThatDoNotFitHaveNoThroughput) {
  // VGG-16 training at batch 512 needs far more than the GTX 1080 Ti's 11 GB.
  const CliResult text = run("predict --model vgg16 --batch 512");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "does not fit: needs")) << text.out;
  EXPECT_FALSE(contains(text.out, "samples/s")) << text.out;
  const nlohmann::json j = run_json("predict --model vgg16 --batch 512 --json");
  EXPECT_EQ(j["fits"], false);
  EXPECT_TRUE(j["throughput"]["samples_per_s"].is_null());
  EXPECT_TRUE(j["step_ms"].is_null());
  // Nor anything else of a step that cannot run, as the text says ("no throughput, step time or bottleneck"): no
  // bound, no timeline, no board power or energy per step. The kernels keep their costs.
  EXPECT_FALSE(contains(text.out, "bottleneck      ")) << text.out;
  EXPECT_TRUE(j["bottleneck"].is_null()) << j["bottleneck"].dump();
  EXPECT_TRUE(j["timeline"].is_array() && j["timeline"].empty()) << j["timeline"].dump();
  EXPECT_TRUE(j["power"].is_null()) << j["power"].dump();
  EXPECT_FALSE(j["ops"].empty());
  const CliResult zh = run("predict --model vgg16 --batch 512 --lang zh");
  EXPECT_TRUE(contains(zh.out, "放不下")) << zh.out;
  const CliResult cmp = run("compare --model vgg16 --batch 512 --gpu gtx-1080-ti");
  EXPECT_TRUE(contains(cmp.out, "does not fit")) << cmp.out;
  const CliResult adv = run("advise --model vgg16 --batch 512");
  EXPECT_TRUE(contains(adv.out, "Prediction: does not fit")) << adv.out;
}

TEST_F(CliConsistencyTest, AnInferenceThatDoesNotFitIsNotToldToCheckpoint) {
  // Llama 2 7B's 6.74 G parameters (Touvron et al. 2023) take 12.6 GiB in FP16, more than a GTX 1080 Ti's 11 GB.
  // Activation checkpointing recomputes saved activations in backward; an inference pass has no backward, so the
  // hint names only what could make it fit (the advisor says the same: "only applies to training").
  const CliResult gen = run("predict --gpu gtx-1080-ti --model llama-2-7b --mode generate --precision fp16 --seq 128");
  ASSERT_EQ(gen.code, 0) << gen.err;
  EXPECT_TRUE(contains(gen.out, "does not fit: needs")) << gen.out;
  EXPECT_FALSE(contains(gen.out, "--checkpointing")) << gen.out;
  EXPECT_TRUE(contains(gen.out, "lower precision")) << gen.out;
  const CliResult zh = run("predict --gpu gtx-1080-ti --model llama-2-7b --mode generate --precision fp16 --seq 128 --lang zh");
  EXPECT_FALSE(contains(zh.out, "--checkpointing")) << zh.out;
  // Nor told --batch max: the batch is already 1 and the weights alone exceed the card, so no batch fits.
  EXPECT_FALSE(contains(gen.out, "--batch max")) << gen.out;
  EXPECT_FALSE(contains(zh.out, "--batch max")) << zh.out;
  // An inference that fits at a smaller batch keeps it: VGG-16 at batch 4096 (224x224 activations alone, 4096 x
  // 3 x 224^2 x 4 B = 2.3 GiB for the input, far more for its 13 layers' outputs).
  const CliResult big = run("predict --model vgg16 --mode infer --batch 4096");
  EXPECT_TRUE(contains(big.out, "does not fit: needs")) << big.out;
  EXPECT_TRUE(contains(big.out, "--batch max")) << big.out;
  // Training keeps the lever: VGG-16 at batch 512 on the same card.
  const CliResult train = run("predict --model vgg16 --batch 512");
  EXPECT_TRUE(contains(train.out, "--checkpointing")) << train.out;
}

TEST_F(CliConsistencyTest, AdviseScaleOutLineSaysWhatHoldsTheGainBelowItsEfficiency) {
  // The default scenario's host prepares augmented CT crops for ~30 samples/s (README); N GPUs at a gradient
  // exchange efficiency E give N x E of one GPU unless something else caps them. A line that prints "scaling
  // efficiency 95%" beside a 5.8x gain on 8 GPUs must say what took the rest.
  const nlohmann::json j = run_json("advise --json");
  int lines = 0, capped = 0;
  for (const auto& st : j["strategies"]) {
    if (st["category"] != "scale-out" || !st["applicable"].get<bool>()) continue;
    ++lines;
    const std::string reason = st["reason"];
    const int gpus = std::stoi(st["id"].get<std::string>().substr(std::string("gpus:").size()));
    const auto at = reason.find("scaling efficiency ");
    ASSERT_NE(at, std::string::npos) << reason;
    const double efficiency = std::stod(reason.substr(at + std::string("scaling efficiency ").size())) / 100.0;
    const double speedup = st["speedup"];
    if (speedup < 0.95 * gpus * efficiency) {
      ++capped;
      EXPECT_TRUE(contains(reason, "input pipeline")) << reason;
    }
  }
  EXPECT_GE(lines, 2);
  EXPECT_GE(capped, 1) << "8 GPUs need more than the host's ~30 samples/s";
  const CliResult zh = run("advise --lang zh");
  EXPECT_TRUE(contains(zh.out, "受主机输入流水线限制")) << zh.out;
}

TEST_F(CliConsistencyTest, SmallPerSampleFiguresAreNotPrintedAsZero) {
  // facebookresearch/dlrm's Criteo Kaggle config (dlrm_small) does ~3 MFLOP per training sample (bottom MLP 13-512-256-64-16, top
  // MLP 367-512-256-1: ~0.47 M multiply-adds forward): 0.00 GFLOP and 0.00 J per sample would read as nothing at all.
  const CliResult r = run("predict --gpu tesla-p40 --model dlrm_small --batch 2048");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, " 0.00 GFLOP")) << r.out;
  EXPECT_FALSE(contains(r.out, " 0.00 J per sample")) << r.out;
}

TEST_F(CliConsistencyTest, TensorRtHalfPrecisionOnPascalRunsTheFp32Engine) {
  // TensorRT builds FP16 kernels only on GPUs with fast FP16 (an NVIDIA engineer, NVIDIA/TensorRT issue 1908: on
  // sm_61 "fp16 is supported but not enabled in TRT due to they are not high performance"; Paddle-TRT on a GTX 1080 Ti:
  // "use FP32 instead"). A GP102 owner asking for FP16 or mixed precision gets the FP32 engine: same time, same memory.
  const std::string base = "predict --gpu gtx-1080-ti --model resnet152 --mode infer --runtime tensorrt --batch 64 --json";
  const nlohmann::json fp32 = run_json(base);
  for (const char* half : {"fp16", "amp"}) {
    const nlohmann::json h = run_json(base + " --precision " + half);
    EXPECT_DOUBLE_EQ(h["throughput"]["samples_per_s"].get<double>(), fp32["throughput"]["samples_per_s"].get<double>()) << half;
    EXPECT_DOUBLE_EQ(h["memory"]["total_bytes"].get<double>(), fp32["memory"]["total_bytes"].get<double>()) << half;
    EXPECT_TRUE(contains(h["precision_note"].get<std::string>(), "fast FP16")) << h["precision_note"];
  }
  // So advise shows amp with no gain there (at most 1.00x, with the note); INT8 (dp4a, 4x the FP32 rate) gains over 2x.
  const nlohmann::json adv = run_json("advise --gpu gtx-1080-ti --model resnet152 --mode infer --runtime tensorrt --batch 64 --json");
  bool saw_int8 = false;
  for (const auto& st : adv["strategies"]) {
    if (st["id"] == "amp" && st["applicable"].get<bool>()) {
      EXPECT_LE(st["speedup"].get<double>(), 1.0 + 1e-9) << st.dump();
    }
    if (st["id"] == "int8" && st["applicable"].get<bool>()) saw_int8 = st["speedup"].get<double>() > 2.0;
  }
  EXPECT_TRUE(saw_int8);
  // A GPU with tensor cores keeps its FP16 engine: a T4's FP16 tensor peak is 8x its FP32 peak (65 / 8.1 TFLOPS).
  const std::string t4 = "predict --gpu t4 --model resnet152 --mode infer --runtime tensorrt --batch 64 --json";
  EXPECT_GT(run_json(t4 + " --precision fp16")["throughput"]["samples_per_s"].get<double>(),
            1.5 * run_json(t4)["throughput"]["samples_per_s"].get<double>());
}

TEST_F(CliConsistencyTest, JsonCountsAreIntegers) {
  const nlohmann::json j = run_json("predict --model resnet50 --json");
  EXPECT_TRUE(j["kernel_launches"].is_number_integer()) << j["kernel_launches"];
  EXPECT_TRUE(j["batch"].is_number_integer());
  ASSERT_FALSE(j["ops"].empty());
  for (const auto& op : j["ops"]) EXPECT_TRUE(op["launches"].is_number_integer()) << op.dump();
  EXPECT_TRUE(contains(run("predict --model resnet50 --json").out, "\"kernel_launches\": ")) << "as an integer";
  // Bytes and FLOPs are counts too (README): whole numbers, rounded where the model computes an expectation.
  EXPECT_TRUE(j["flops_per_sample"].is_number_integer()) << j["flops_per_sample"];
  for (const auto& [key, value] : j["memory"].items()) {
    if (key.ends_with("_bytes")) {
      EXPECT_TRUE(value.is_number_integer()) << key << " " << value;
    }
  }
  for (const auto& op : j["ops"])
    EXPECT_TRUE(op["flops"].is_number_integer() && op["bytes"].is_number_integer()) << op.dump();
  const nlohmann::json adv = run_json("advise --model resnet50 --mode infer --json");
  for (const auto& st : adv["strategies"]) {
    if (st.contains("memory_delta_bytes")) {
      EXPECT_TRUE(st["memory_delta_bytes"].is_number_integer()) << st.dump();
    }
  }
  for (const auto& c : adv["breakdown"])
    EXPECT_TRUE(c["flops"].is_number_integer() && c["bytes"].is_number_integer()) << c.dump();
  const nlohmann::json op = run_json("op --gpu a100-sxm4-40gb --op matmul --m 1000 --n 1000 --k 1000 --json");
  ASSERT_TRUE(op["flops"].is_number_integer()) << op.dump();
  EXPECT_EQ(op["flops"].get<std::int64_t>(), 2000000000) << "2 m n k";
}

TEST_F(CliConsistencyTest, AdviseOffersTensorRtWithTheInt8ItMakesPossible) {
  // Eager PyTorch has no CUDA INT8 convolutions, TensorRT builds an INT8 engine on dp4a (sm_61: 4 INT8 dot-product
  // lanes per FP32 lane; a 1080 Ti / P40's datasheet: 47 INT8 TOPS against 11.3 FP32 TFLOPS). The pair is what pays
  // most on a GP102, and must rank above TensorRT alone; FP16 with TensorRT on sm_61 runs the FP32 engine, so no
  // TensorRT half pair is offered there.
  const nlohmann::json adv =
      run_json("advise --gpu gtx-1080-ti --model resnet152 --mode infer --runtime pytorch --batch 64 --json");
  double pair = 0, alone = 0;
  for (const auto& st : adv["strategies"]) {
    if (!st["applicable"].get<bool>()) continue;
    const std::string id = st["id"];
    if (id == "tensorrt + int8") {
      pair = st["speedup"].get<double>();
      EXPECT_TRUE(contains(st["reason"].get<std::string>(), "calibration")) << st.dump();  // its cost is stated
    }
    if (id == "tensorrt") alone = st["speedup"].get<double>();
    EXPECT_FALSE(id == "tensorrt + fp16" || id == "tensorrt + amp") << st.dump();
  }
  ASSERT_GT(alone, 1.0);
  EXPECT_GT(pair, 2.0 * alone) << "dp4a's INT8 rate is 4x FP32";
  // On a T4 the same rule offers INT8 (tensor cores, 130 TOPS) and FP16 (65 TFLOPS) engines, both far above its 8.1
  // FP32 TFLOPS, and both above TensorRT alone.
  const nlohmann::json t4 = run_json("advise --gpu t4 --model resnet152 --mode infer --runtime pytorch --batch 64 --json");
  double t4_alone = 0, t4_int8 = 0, t4_fp16 = 0;
  for (const auto& st : t4["strategies"]) {
    if (!st["applicable"].get<bool>()) continue;
    if (st["id"] == "tensorrt") t4_alone = st["speedup"].get<double>();
    if (st["id"] == "tensorrt + int8") t4_int8 = st["speedup"].get<double>();
    if (st["id"] == "tensorrt + fp16") t4_fp16 = st["speedup"].get<double>();
  }
  EXPECT_GT(t4_fp16, 1.5 * t4_alone);
  EXPECT_GT(t4_int8, 1.5 * t4_alone);
}

// ---------------------------------------------------------------- the Chinese report

TEST_F(CliConsistencyTest, ChineseAdviceHasChineseHeadersAndFullWidthPunctuation) {
  const CliResult zh = run("advise --model resnet50 --lang zh");
  const CliResult en = run("advise --model resnet50 --lang en");
  ASSERT_EQ(zh.code, 0) << zh.err;
  for (const char* header : {"算子类别", "瓶颈", "屋顶线", "策略", "加速比", "原因"})
    EXPECT_TRUE(contains(zh.out, header)) << header;
  for (const char* english : {"op_class", "roofline", "speedup", "strategy "}) EXPECT_FALSE(contains(zh.out, english)) << english;
  const auto zh_lines = lines_of(zh.out), en_lines = lines_of(en.out);
  // The verdict and the summary: full-width colon, comma and parentheses, and the same numbers as in English.
  const auto line_starting = [](const std::vector<std::string>& lines, const std::string& start) {
    for (const auto& l : lines)
      if (l.rfind(start, 0) == 0) return l;
    return std::string();
  };
  const std::string verdict = line_starting(zh_lines, "结论："), summary = line_starting(zh_lines, "预测：");
  ASSERT_FALSE(verdict.empty()) << zh.out;
  ASSERT_FALSE(summary.empty()) << zh.out;
  EXPECT_TRUE(verdict.ends_with("。"));
  for (const std::string& l : {verdict, summary}) {
    EXPECT_FALSE(contains(l, ": ")) << l;
    EXPECT_FALSE(contains(l, ", ")) << l;
    EXPECT_FALSE(contains(l, " (")) << l;
  }
  const std::string en_summary = line_starting(en_lines, "Prediction:");
  ASSERT_FALSE(en_summary.empty());
  for (const char* number_end : {" samples/s", " ms", " GiB / "}) {
    const auto at = en_summary.find(number_end);
    ASSERT_NE(at, std::string::npos) << en_summary;
    const std::string number = en_summary.substr(en_summary.rfind(' ', at - 1) + 1, at - en_summary.rfind(' ', at - 1) - 1);
    EXPECT_TRUE(contains(summary, number)) << "'" << number << "' of the English summary is missing: " << summary;
  }
}

}  // namespace

// Session 39's walk-through: predict's text names the layout of a data-parallel run ("3 GPUs (1 x 3), ddp: ring over
// pcie3") where its JSON's scale_out had the GPU total only; the README promises the same content in --json. The
// GTX 1080 Ti is a PCIe 3.0 x16 board (NVIDIA's specifications), so three of them in one server talk over pcie3;
// two nodes add the network asked for.
TEST_F(CliConsistencyTest, ScaleOutJsonNamesTheLayoutTheTextPrints) {
  const CliResult text = run("predict --gpu gtx-1080-ti --model resnet152 --precision amp --gpus 3");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("3 GPUs (1 x 3)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("over pcie3"), std::string::npos) << text.out;
  const nlohmann::json one = run_json("predict --gpu gtx-1080-ti --model resnet152 --precision amp --gpus 3 --json");
  EXPECT_EQ(one["scale_out"]["gpus_total"], 3);
  EXPECT_EQ(one["scale_out"]["nodes"], 1);
  EXPECT_EQ(one["scale_out"]["gpus_per_node"], 3);
  EXPECT_EQ(one["scale_out"]["interconnect"], "pcie3");
  EXPECT_TRUE(one["scale_out"]["network"].is_null());
  // The text names every part of the exposed time the JSON lists that is not zero, in the same milliseconds, the
  // largest first, so that the parts it names add up to the exposed total it prints (review of session 39: the
  // 3.56 ms of compute slowed by overlapping communication was left out).
  const auto& parts = one["scale_out"]["exposed_parts_ms"];
  double named_sum = 0;
  for (const auto& [name, ms] : parts.items())
    if (ms.get<double>() > 0) {
      named_sum += ms.get<double>();
      EXPECT_NE(text.out.find(fmt::format("{:.2f} ms", ms.get<double>())), std::string::npos) << name << "\n" << text.out;
    }
  EXPECT_NEAR(named_sum, one["scale_out"]["exposed_comm_ms"].get<double>(), 0.01);
  ASSERT_GT(parts["stragglers"].get<double>(), parts["bucket_copies"].get<double>());
  EXPECT_NE(text.out.find(fmt::format("({:.2f} ms of it waiting for the slowest GPU, ", parts["stragglers"].get<double>())),
            std::string::npos)
      << text.out;
  const nlohmann::json two =
      run_json("predict --gpu gtx-1080-ti --model resnet152 --precision amp --gpus 4 --nodes 2 --network 100gbe --json");
  EXPECT_EQ(two["scale_out"]["gpus_total"], 8);
  EXPECT_EQ(two["scale_out"]["nodes"], 2);
  EXPECT_EQ(two["scale_out"]["gpus_per_node"], 4);
  EXPECT_EQ(two["scale_out"]["network"], "100gbe");
}
