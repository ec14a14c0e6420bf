// The perfcast binary on bad input: exit code 2, one "perfcast: error:" line on stderr, nothing on stdout,
// a "did you mean" hint for typos. Plus the listing commands, --batch max, --configs with a bad row and the
// keys of predict --json. Every case runs the real binary (PERFCAST_BINARY) in a scratch directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "issue_ids.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

using perfcast::test::CliResult;
using perfcast::test::first_words;
using perfcast::test::kIssueGpuIds;
using perfcast::test::kIssueModelIds;
using perfcast::test::lines_of;
using perfcast::test::slurp;
using perfcast::test::write_text;

// Splits one CSV line, honouring double quotes ("" inside quotes is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out{""};
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

class CliTest : public perfcast::test::ScratchDirTest {
 protected:
  CliTest() : ScratchDirTest("perfcast-cli") {}

  // Exit 2, nothing on stdout, exactly one stderr line starting "perfcast: error:" and containing each piece.
  void expect_input_error(const std::string& args, std::initializer_list<std::string> pieces = {}) const {
    SCOPED_TRACE("perfcast " + args);
    const CliResult r = run(args);
    EXPECT_EQ(r.code, 2) << "stderr: " << r.err;
    EXPECT_EQ(r.out, "") << "stdout must stay empty on errors";
    EXPECT_EQ(r.err.rfind("perfcast: error:", 0), 0u) << "stderr: " << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr must be exactly one line: " << r.err;
    EXPECT_EQ(r.err.back(), '\n');
    for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in: " << r.err;
  }

  std::vector<std::string> entries_in_dir() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// ---------------------------------------------------------------- unknown ids and typos

TEST_F(CliTest, UnknownGpuSuggestsNearestId) {
  expect_input_error("predict --gpu gtx-1080ti", {"gtx-1080ti", "did you mean 'gtx-1080-ti'"});
}

TEST_F(CliTest, ProductNamesSuggestTheCatalogIdsTheyName) {
  // NVIDIA sells the T4 as "Tesla T4" (its catalog name), not the P4 one letter away; "A100" is four boards, and a
  // one-socket EPYC's id has no socket suffix (perfcast cpus).
  expect_input_error("predict --gpu tesla-t4", {"tesla-t4", "did you mean 't4'"});
  expect_input_error("predict --gpu a100",
                     {"did you mean one of 'a100-pcie-40gb', 'a100-pcie-80gb', 'a100-sxm4-40gb', 'a100-sxm4-80gb'"});
  expect_input_error("compare --device gtx-1080-ti,epyc-9654-1s", {"did you mean 'epyc-9654'"});
  expect_input_error("predict --device xeon-8380", {"'xeon-platinum-8380'"});
  // A typo in one word is not a shorter sibling's extra word: gtx-1080-tii is the Ti, not the GTX 1080.
  expect_input_error("predict --gpu gtx-1080-tii", {"did you mean 'gtx-1080-ti'"});
}

TEST_F(CliTest, BrandWordsAndAPlusSignAreReadAsTheCatalogSpellsThem) {
  // NVIDIA's product names carry brand words the catalog ids leave out ("Tesla V100", "NVIDIA A100"), and Intel's
  // "Xeon Platinum 8480+" is the catalog's xeon-platinum-8480plus (perfcast gpus, perfcast cpus).
  expect_input_error("predict --gpu tesla-v100", {"did you mean one of 'v100-pcie-16gb'", "'v100-sxm2-32gb'"});
  expect_input_error("predict --gpu tesla-a100", {"did you mean one of 'a100-pcie-40gb'", "'a100-sxm4-80gb'"});
  expect_input_error("predict --gpu tesla-p100", {"did you mean one of 'p100-pcie-16gb', 'p100-sxm2-16gb'?"});
  expect_input_error("predict --gpu nvidia-a100", {"did you mean one of 'a100-pcie-40gb'"});
  expect_input_error("predict --gpu nvidia-h100", {"did you mean one of 'h100-pcie-80gb', 'h100-sxm5-80gb'?"});
  for (const std::string bad : {"tesla-v100", "tesla-a100", "tesla-p100"}) {
    const CliResult r = run("predict --gpu " + bad);
    EXPECT_EQ(r.err.find("tesla-p40"), std::string::npos) << r.err;
  }
  expect_input_error("predict --device xeon-platinum-8480", {"did you mean 'xeon-platinum-8480plus'"});
  expect_input_error("predict --device xeon-platinum-8480+", {"'xeon-platinum-8480plus'"});
  // The cases that worked before stay: a brand word alone, a family, a maker's prefix, a typo.
  expect_input_error("predict --gpu nvidia-t4", {"did you mean 't4'"});
  expect_input_error("predict --gpu v100", {"did you mean one of 'v100-pcie-16gb'"});
  expect_input_error("predict --gpu h100", {"did you mean one of 'h100-pcie-80gb', 'h100-sxm5-80gb'?"});
  expect_input_error("predict --gpu a100-80gb", {"did you mean one of 'a100-pcie-80gb', 'a100-sxm4-80gb'?"});
  expect_input_error("predict --device amd-epyc-7763", {"did you mean 'epyc-7763'"});
  expect_input_error("predict --device intel-xeon-platinum-8380", {"did you mean 'xeon-platinum-8380'"});
  expect_input_error("predict --gpu quadro-rtx", {"did you mean one of 'quadro-rtx-6000', 'quadro-rtx-8000'?"});
  expect_input_error("predict --model resnet5", {"did you mean 'resnet50'"});
}

TEST_F(CliTest, AnchorsOnCompareOrPlanNameTheCommandsThatTakeThem) {
  // README, "Anchor on your own measurement": predict and advise take --measured / --measured-step.
  expect_input_error("compare --model resnet152 --gpu t4 --measured 120/s", {"--measured", "predict and advise"});
  expect_input_error("plan --model resnet152 --deadline 96h --measured-step=500ms",
                     {"--measured-step", "predict and advise"});
}

TEST_F(CliTest, MistypedFlagsGetTheNearestFlag) {
  // Swapped letters count as one edit: --modle is --model, not --mode.
  expect_input_error("predict --gpu gtx-1080-ti --modle resnet50", {"--modle", "did you mean '--model'"});
  expect_input_error("advise --lnag zh", {"--lnag", "did you mean '--lang'"});
}

TEST_F(CliTest, UnknownGpuFarFromAnyId) { expect_input_error("predict --gpu quantum-9000", {"quantum-9000"}); }

TEST_F(CliTest, UnknownModelSuggestsNearestId) {
  expect_input_error("predict --model resnet5", {"resnet5", "did you mean 'resnet50'"});
}

TEST_F(CliTest, TokenLoopAndServingFlagsOutsideTheirModesAreInputErrors) {
  // predict --help: --context is "decode: tokens already in the KV cache", --kv-precision the KV cache's, and
  // --request-rate, --engine, --slo-ttft ... are "--mode serve:" flags. A CNN's train or infer pass keeps no KV
  // cache and is no request stream: the flags would change nothing (the title still showed "context 128").
  expect_input_error("predict --model resnet50 --context 128", {"--context", "--mode train"});
  expect_input_error("predict --model resnet50 --mode infer --kv-precision fp8", {"--kv-precision", "--mode infer"});
  expect_input_error("predict --model resnet50 --request-rate 5", {"--request-rate", "--mode serve"});
  expect_input_error("predict --model bert_base --mode infer --engine vllm", {"--engine", "--mode serve"});
  expect_input_error("predict --model resnet50 --slo-ttft 100", {"--slo-ttft", "--mode serve"});
  // Given is given, whatever the value: --seed 1 and --length-dist fixed are the serve defaults, and still a flag
  // of another mode when typed with --mode train.
  expect_input_error("predict --model resnet50 --mode train --seed 1", {"--seed", "--mode serve"});
  expect_input_error("predict --model resnet50 --mode train --length-dist fixed", {"--length-dist", "--mode serve"});
  // Where they apply they still run.
  EXPECT_EQ(run("predict --gpu tesla-p40 --model llama-3-8b --runtime llama.cpp --mode generate --precision q4_k_m "
                "--context 512 --seq 128 --kv-precision q8_0")
                .code,
            0);
}

TEST_F(CliTest, StepFlagsInServeModeAreInputErrorsNamingTheServeFlag) {
  // predict --help: --batch is "samples per GPU per step", --seq "tokens per sample", --context "decode: tokens already
  // in the KV cache"; --mode serve takes a request stream instead (--max-batch, --input-len, --output-len). Given
  // there they changed nothing while the user read the report as theirs.
  const std::string serve =
      "predict --mode serve --gpu h100-sxm5-80gb --model llama-3-8b --input-len 512 --output-len 128 --request-rate 10 ";
  expect_input_error(serve + "--batch 8", {"--batch", "--mode serve", "--max-batch"});
  expect_input_error(serve + "--seq 100", {"--seq", "--mode serve", "--input-len", "--output-len"});
  expect_input_error(serve + "--context 4096", {"--context", "--mode serve", "--input-len"});
  expect_input_error(serve + "--lora-rank 8", {"--lora-rank", "--mode serve"});
  expect_input_error(serve + "--zero 1", {"--zero", "--mode serve"});
  expect_input_error(serve + "--measured 100", {"--measured", "--mode serve"});
  // What serve reads still runs: the KV-cache precision, the engine's link.
  EXPECT_EQ(run(serve + "--kv-precision fp8").code, 0);
  EXPECT_EQ(run(serve + "--interconnect pcie4").code, 0);
}

TEST_F(CliTest, BatchBesideATrainingLayoutIsAnInputError) {
  // predict --help: --micro-batch is "sequences per micro-batch per replica (default 1)", --global-batch "sequences
  // per optimizer step". --batch 8 beside --tp 2 predicted micro-batch 1 and global batch 4 as if it were absent.
  expect_input_error("predict --model llama-3-8b --gpu h100-sxm5-80gb --gpus 8 --tp 2 --precision amp-bf16 --batch 8",
                     {"--batch", "--micro-batch", "--global-batch"});
  expect_input_error("plan --layouts --gpu h100-sxm5-80gb --model llama-3-8b --gpus 8 --batch 8", {"--batch", "--micro-batch"});
  EXPECT_EQ(run("predict --model llama-3-8b --gpu h100-sxm5-80gb --gpus 8 --tp 2 --precision amp-bf16 --micro-batch 2").code, 0);
}

TEST_F(CliTest, LayoutFlagsOnAModelOutsideTheirFamilyNameTheFamilyFirst) {
  // The layout flags apply to decoder language models (predict --help, README); resnet50 is a vision model, so the
  // first error names that, not --micro-batch, whose advice would fail on the same model.
  const CliResult r = run("predict --model resnet50 --gpus 8 --zero 1 --batch 64");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("decoder language models"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--micro-batch"), std::string::npos) << r.err;
}

TEST_F(CliTest, OpShapeFlagsOfAnotherOpAreInputErrors) {
  // op --help: --conv-n is "conv2d batch", --heads "attention heads", --rows "elementwise/softmax/layernorm rows".
  // Given to another op they were ignored; the error names the flag and the op's own flags.
  expect_input_error("op --gpu gtx-1080-ti --op matmul --m 64 --n 64 --k 64 --conv-n 3", {"--conv-n", "--op matmul", "--k"});
  expect_input_error("op --gpu gtx-1080-ti --op softmax --rows 8 --cols 8 --heads 4", {"--heads", "--op softmax"});
  expect_input_error("op --gpu gtx-1080-ti --op conv2d --conv-n 1 --conv-c 3 --conv-h 8 --conv-w 8 --conv-k 8 --conv-r 3 "
                     "--conv-s 3 --m 4",
                     {"--m", "--op conv2d"});
  // A flag the op's cost does not read is not offered: the matmul model has no operand layout (cuBLAS runs the same
  // tiles for N and T), so --a-trans / --b-trans are unknown flags rather than accepted and ignored.
  for (const char* flag : {"--a-trans", "--b-trans"}) {
    const CliResult r = run(std::string("op --gpu gtx-1080-ti --op matmul --m 64 --n 64 --k 64 ") + flag);
    EXPECT_EQ(r.code, 2) << flag;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
    EXPECT_EQ(run("op --help").out.find(flag), std::string::npos) << flag;
  }
  // --cores is a CPU device's (the op then runs on that many of its cores); on a GPU it would be ignored.
  expect_input_error("op --gpu gtx-1080-ti --op matmul --m 64 --n 64 --k 64 --cores 4", {"--cores", "gtx-1080-ti"});
  expect_input_error("op --device xeon-platinum-8380 --op matmul --m 64 --n 64 --k 64 --power-limit 200",
                     {"--power-limit", "xeon-platinum-8380"});
  EXPECT_EQ(run("op --device xeon-platinum-8380 --op linear --m 20 --n 768 --k 768 --cores 4").code, 0);
  // The README's two op examples still run.
  EXPECT_EQ(run("op --gpu h100-sxm5-80gb --op matmul --m 8192 --n 8192 --k 8192 --precision bf16").code, 0);
  EXPECT_EQ(run("op --gpu gtx-1080-ti --op conv2d --conv-n 32 --conv-c 64 --conv-h 56 --conv-w 56 --conv-k 64 --conv-r 3 "
                "--conv-s 3 --pad-h 1 --pad-w 1 --direction bwd_filter")
                .code,
            0);
}

TEST_F(CliTest, TrainingOnAnInferenceEngineIsAnInputError) {
  // TensorRT and ONNX Runtime's CUDA EP build inference sessions only.
  expect_input_error("predict --model resnet50 --runtime tensorrt --mode train", {"tensorrt", "inference"});
  expect_input_error("predict --model bert_base_squad --runtime onnxruntime --mode train", {"onnxruntime"});
}

TEST_F(CliTest, PrecisionARuntimeDoesNotRunIsAnInputError) {
  // ONNX Runtime's CUDA EP does not run quantized INT8 kernels (optimum's GPU guide sends them to the TensorRT EP).
  expect_input_error("predict --model resnet50 --runtime onnxruntime --mode infer --precision int8",
                     {"int8", "onnxruntime"});
  // BVLC Caffe instantiates its layers for float and double only.
  expect_input_error("predict --model resnet50 --runtime caffe --precision amp", {"amp", "caffe"});
}

TEST_F(CliTest, UnknownPrecisionSuggestsNearest) {
  expect_input_error("predict --precision fp23", {"fp23", "did you mean 'fp32'"});
}

TEST_F(CliTest, UnknownRuntimeSuggestsNearest) {
  expect_input_error("predict --runtime pytorc", {"pytorc", "did you mean 'pytorch'"});
}

TEST_F(CliTest, UnknownCommandSuggestsNearest) {
  expect_input_error("predcit", {"predcit", "did you mean 'predict'"});
}

TEST_F(CliTest, UnknownMode) { expect_input_error("predict --mode trian", {"trian"}); }
// Every mode the --mode help lists is a candidate for the hint, serve included; case matters ("Train" is a typo).
TEST_F(CliTest, UnknownModeSuggestsNearest) {
  expect_input_error("predict --mode serv", {"'serv'", "did you mean 'serve'"});
  expect_input_error("predict --mode Train", {"'Train'", "did you mean 'train'"});
  expect_input_error("advise --mode decod", {"'decod'", "did you mean 'decode'"});
}

TEST_F(CliTest, UnknownOptimizer) { expect_input_error("predict --optimizer adamx9", {"adamx9"}); }

TEST_F(CliTest, UnknownFlag) { expect_input_error("predict --bogus-flag", {"--bogus-flag"}); }

// ---------------------------------------------------------------- numbers

TEST_F(CliTest, BatchZero) { expect_input_error("predict --batch 0", {"batch"}); }
TEST_F(CliTest, BatchNegative) { expect_input_error("predict --batch -1", {"batch"}); }
TEST_F(CliTest, BatchNotANumber) { expect_input_error("predict --batch abc", {"batch", "abc"}); }
TEST_F(CliTest, BatchTrailingGarbage) { expect_input_error("predict --batch 12x", {"batch", "12x"}); }
TEST_F(CliTest, SeqZero) { expect_input_error("predict --model bert_base --seq 0", {"seq"}); }
TEST_F(CliTest, SeqNotANumber) { expect_input_error("predict --model bert_base --seq long", {"seq", "long"}); }

// ---------------------------------------------------------------- precisions the hardware lacks

TEST_F(CliTest, Bf16OnPascalIsNotSupported) {
  expect_input_error("predict --gpu gtx-1080-ti --precision bf16", {"not supported on", "gtx-1080-ti"});
}

TEST_F(CliTest, Tf32OnVoltaIsNotSupported) {
  expect_input_error("predict --gpu v100-sxm2-16gb --precision tf32", {"not supported on", "v100-sxm2-16gb"});
}

TEST_F(CliTest, Fp8OnA100IsNotSupported) {
  // FP8 is inference-only, so ask for inference: the failure must be the missing FP8 hardware on sm_80.
  expect_input_error("predict --gpu a100-sxm4-40gb --mode infer --precision fp8", {"not supported on", "a100-sxm4-40gb"});
}

TEST_F(CliTest, Int8TrainingIsInferenceOnly) {
  expect_input_error("predict --gpu t4 --mode train --precision int8", {"inference only"});
}

// ---------------------------------------------------------------- files

TEST_F(CliTest, MissingConfigsFile) {
  expect_input_error("predict --configs no-such-file.csv", {"no-such-file.csv"});
}

TEST_F(CliTest, ConfigsWithUnterminatedQuote) {
  // Issue 14: a row the reader cannot split is that row's status (with its line), not a rejected file; the run
  // exits 1 with the summary.
  write_text(dir_ / "quote.csv", "gpu,model,mode,batch\ngtx-1080-ti,\"resnet50,infer,8\n");
  const CliResult r = run("predict --configs quote.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("error: line 2: a quoted field is not closed"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "perfcast: 0 ok, 1 failed (1 row)\n");
}

TEST_F(CliTest, ConfigsWithoutGpuColumn) {
  write_text(dir_ / "nogpu.csv", "model,mode,batch\nresnet50,infer,8\n");
  expect_input_error("predict --configs nogpu.csv", {"nogpu.csv", "gpu"});
}

// A mistyped column would be ignored and every row predicted at that setting's default (fp32 for a misspelt
// precision): the file is refused with the column named and the nearest known one, and no --out file is written.
// Columns that are no near miss (a measurement file's url or notes) stay allowed.
TEST_F(CliTest, ConfigsMistypedColumnSuggestsNearest) {
  write_text(dir_ / "typo.csv", "gpu,model,batch,precison\ngtx-1080-ti,resnet50,32,amp\n");
  const auto before = entries_in_dir();
  expect_input_error("predict --configs typo.csv --out predictions.csv", {"'precison'", "did you mean 'precision'"});
  EXPECT_EQ(entries_in_dir(), before);
  expect_input_error("validate typo.csv", {"'precison'", "did you mean 'precision'"});
  write_text(dir_ / "modle.csv", "gpu,modle,batch\ngtx-1080-ti,resnet50,32\n");
  expect_input_error("predict --configs modle.csv", {"'modle'", "did you mean 'model'"});
  write_text(dir_ / "extra.csv", "gpu,model,batch,url,role,my_comment\ngtx-1080-ti,resnet50,8,http://x,a,hi\n");
  EXPECT_EQ(run("predict --configs extra.csv").code, 0);
}

// README: each row of --configs is predicted from its columns ("columns of published.csv"). A request flag beside
// it (--gpus 4, --checkpointing, an ONNX model's --dim) changed no row and was silently dropped, while a row's
// error could even ask for the flag the user had just given ("pass --dim D=N"): refused with the flag named, and
// no --out file is written.
TEST_F(CliTest, ConfigsRefusesRequestFlagsItWouldIgnore) {
  write_text(dir_ / "rows.csv", "gpu,model,batch\ngtx-1080-ti,resnet50,8\n");
  const auto before = entries_in_dir();
  expect_input_error("predict --configs rows.csv --gpus 4 --out p.csv", {"--gpus", "--configs", "columns"});
  expect_input_error("predict --configs rows.csv --checkpointing", {"--checkpointing"});
  expect_input_error("predict --configs rows.csv --dim D=64", {"--dim"});
  expect_input_error("predict --configs rows.csv --gpu a100-sxm4-40gb", {"--gpu"});
  EXPECT_EQ(entries_in_dir(), before);
  // Where the CSV goes and the language stay allowed.
  EXPECT_EQ(run("predict --configs rows.csv --out p.csv --lang zh").code, 0);
}

TEST_F(CliTest, ValidateMissingFile) { expect_input_error("validate no-such-measurements.csv", {"no-such-measurements.csv"}); }

TEST_F(CliTest, GpuFileThatIsNotToml) {
  write_text(dir_ / "garbage.toml", "this is [[[ not toml at all\n\x01\x02\n");
  expect_input_error("predict --gpu garbage.toml", {"garbage.toml"});
}

TEST_F(CliTest, GpuFileMissingAField) {
  // A copy of a shipped GPU file without mem_bw_gbps (data/gpus/README.md: every key must be present).
  const std::string original = slurp(fs::path(PERFCAST_SOURCE_DIR) / "data" / "gpus" / "gtx-1080-ti.toml");
  ASSERT_FALSE(original.empty());
  std::string kept;
  for (const auto& line : lines_of(original))
    if (line.rfind("mem_bw_gbps", 0) != 0) kept += line + "\n";
  ASSERT_NE(kept.size(), original.size());
  write_text(dir_ / "incomplete.toml", kept);
  expect_input_error("predict --gpu incomplete.toml", {"incomplete.toml", "mem_bw_gbps"});
}

TEST_F(CliTest, OutIntoMissingDirectoryLeavesNothing) {
  write_text(dir_ / "ok.csv", "gpu,model,mode,batch\ngtx-1080-ti,resnet50,infer,8\n");
  const auto before = entries_in_dir();
  expect_input_error("predict --configs ok.csv --out no-such-dir/predictions.csv", {"no-such-dir"});
  EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));
  EXPECT_EQ(entries_in_dir(), before) << "a failed --out must not leave files behind";
}

TEST_F(CliTest, FailedConfigsLeavesNoOutFile) {
  // A file the reader rejects as a whole (no gpu column) writes nothing.
  write_text(dir_ / "quote.csv", "model,mode,batch\nresnet50,infer,8\n");
  const auto before = entries_in_dir();
  expect_input_error("predict --configs quote.csv --out predictions.csv");
  EXPECT_FALSE(fs::exists(dir_ / "predictions.csv"));
  EXPECT_EQ(entries_in_dir(), before);
}

TEST_F(CliTest, OutOntoAnExistingDirectoryLeavesNothing) {
  // An output path that names a directory: the temporary file must be cleaned up and the error be one line.
  write_text(dir_ / "ok.csv", "gpu,model,mode,batch\ngtx-1080-ti,resnet50,infer,8\n");
  fs::create_directory(dir_ / "taken");
  const auto before = entries_in_dir();
  expect_input_error("predict --configs ok.csv --out taken", {"taken"});
  EXPECT_EQ(entries_in_dir(), before) << "a failed --out must not leave files behind";
  EXPECT_TRUE(fs::is_empty(dir_ / "taken"));
}

TEST_F(CliTest, ConfigsRowWithTooFewColumns) {
  write_text(dir_ / "short.csv", "gpu,model,mode,batch\ngtx-1080-ti\n");
  const CliResult r = run("predict --configs short.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("error: line 2: the row has fewer columns than the header"), std::string::npos) << r.out;
}

TEST_F(CliTest, ConfigsEmptyFile) {
  write_text(dir_ / "empty.csv", "");
  expect_input_error("predict --configs empty.csv", {"empty.csv"});
}

TEST_F(CliTest, MissingOptionValue) { expect_input_error("predict --gpu", {"--gpu"}); }

TEST_F(CliTest, ValidateWithoutFile) { expect_input_error("validate"); }

TEST_F(CliTest, UnexpectedPositionalArgument) { expect_input_error("predict resnet50"); }

TEST_F(CliTest, Int8OnSm60IsNotSupported) {
  // CUDA Programming Guide: dp4a needs compute capability 6.1; P100 (6.0) has neither dp4a nor tensor cores.
  expect_input_error("predict --gpu p100-pcie-16gb --mode infer --precision int8", {"not supported on", "p100-pcie-16gb"});
}

TEST_F(CliTest, Fp8TrainingIsInferenceOnly) {
  expect_input_error("predict --gpu h100-sxm5-80gb --mode train --precision fp8", {"inference only"});
}

// ---------------------------------------------------------------- what must keep working

// The status column keeps the two kinds apart (README, "Batch and validation"): a typo or a bad value is an input
// error naming its line; a valid setup perfcast does not model (BF16 on Pascal: no BF16 tensor cores) is
// "unsupported:".
TEST_F(CliTest, ConfigsStatusTellsInputErrorsFromUnsupportedSetups) {
  write_text(dir_ / "kinds.csv",
             "gpu,model,mode,batch,precision\n"
             "gtx-1080-ti,resnet50,infer,8,bf16\n"
             "gtx-1080-ti,resnet50,infer,-3,fp32\n"
             "gtx-1080-ti,resnet5,infer,8,fp32\n");
  const CliResult r = run("predict --configs kinds.csv");
  ASSERT_EQ(r.code, 1) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  const auto header = csv_fields(lines[0]);
  const auto status_col = std::find(header.begin(), header.end(), "status") - header.begin();
  ASSERT_LT(static_cast<std::size_t>(status_col), header.size()) << lines[0];
  EXPECT_EQ(csv_fields(lines[1])[status_col].rfind("unsupported: ", 0), 0u) << lines[1];
  EXPECT_EQ(csv_fields(lines[2])[status_col].rfind("error: line 3: ", 0), 0u) << lines[2];
  EXPECT_EQ(csv_fields(lines[3])[status_col].rfind("error: line 4: ", 0), 0u) << lines[3];
  EXPECT_NE(csv_fields(lines[3])[status_col].find("resnet50"), std::string::npos) << lines[3];  // the suggestion
}

TEST_F(CliTest, ConfigsBadRowBecomesStatusOthersStillPredicted) {
  write_text(dir_ / "mixed.csv",
             "gpu,model,mode,batch\n"
             "quantum-9000,resnet50,infer,8\n"
             "gtx-1080-ti,resnet50,infer,8\n");
  const CliResult r = run("predict --configs mixed.csv");
  ASSERT_EQ(r.code, 1) << r.err;  // a row failed (issue 14: the exit code says so)
  EXPECT_EQ(r.err, "perfcast: 1 ok, 1 failed (2 rows)\n");
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  const auto header = csv_fields(lines[0]);
  const auto status_col = std::find(header.begin(), header.end(), "status") - header.begin();
  const auto gpu_col = std::find(header.begin(), header.end(), "gpu") - header.begin();
  ASSERT_LT(static_cast<std::size_t>(status_col), header.size()) << lines[0];
  ASSERT_LT(static_cast<std::size_t>(gpu_col), header.size()) << lines[0];
  bool saw_bad = false, saw_good = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto f = csv_fields(lines[i]);
    ASSERT_EQ(f.size(), header.size()) << lines[i];
    if (f[gpu_col] == "quantum-9000") {
      saw_bad = true;
      // A typo'd id is an input error (README: "error: line N"), not a setup perfcast does not model.
      EXPECT_EQ(f[status_col].rfind("error: line 2: ", 0), 0u) << lines[i];
      EXPECT_NE(f[status_col].find("quantum-9000"), std::string::npos) << lines[i];
    } else if (f[gpu_col] == "gtx-1080-ti") {
      saw_good = true;
      EXPECT_EQ(f[status_col], "ok") << lines[i];
    }
  }
  EXPECT_TRUE(saw_bad);
  EXPECT_TRUE(saw_good);
}

TEST_F(CliTest, BatchMaxFindsABatch) {
  const CliResult r = run("predict --gpu gtx-1080-ti --model resnet50 --batch max --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("batch"));
  ASSERT_TRUE(j["batch"].is_number_integer());
  EXPECT_GT(j["batch"].get<long long>(), 1);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
}

TEST_F(CliTest, GpusListsOneIdPerLine) {
  const CliResult r = run("gpus");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto ids = first_words(r.out);
  const std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), ids.size()) << "an id listed twice";
  EXPECT_EQ(unique.count(""), 0u) << "blank line or line without an id";
  for (const auto& id : kIssueGpuIds) EXPECT_EQ(unique.count(id), 1u) << "missing gpu " << id;
}

TEST_F(CliTest, ModelsListsOneIdPerLine) {
  const CliResult r = run("models");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto ids = first_words(r.out);
  const std::set<std::string> unique(ids.begin(), ids.end());
  EXPECT_EQ(unique.size(), ids.size()) << "an id listed twice";
  EXPECT_EQ(unique.count(""), 0u) << "blank line or line without an id";
  for (const auto& id : kIssueModelIds) EXPECT_EQ(unique.count(id), 1u) << "missing model " << id;
}

void expect_prediction_keys(const nlohmann::json& j) {
  ASSERT_TRUE(j.contains("throughput"));
  ASSERT_TRUE(j["throughput"].contains("samples_per_s"));
  EXPECT_TRUE(j["throughput"]["samples_per_s"].is_number());
  EXPECT_GT(j["throughput"]["samples_per_s"].get<double>(), 0);
  ASSERT_TRUE(j["throughput"].contains("tokens_per_s"));
  for (const char* k : {"step_ms", "params", "flops_per_sample"}) {
    ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_TRUE(j[k].is_number()) << k;
    EXPECT_GT(j[k].get<double>(), 0) << k;
  }
  ASSERT_TRUE(j.contains("memory"));
  for (const char* k : {"total_bytes", "capacity_bytes"}) {
    ASSERT_TRUE(j["memory"].contains(k)) << k;
    EXPECT_TRUE(j["memory"][k].is_number()) << k;
  }
  ASSERT_TRUE(j["memory"].contains("fits"));
  EXPECT_TRUE(j["memory"]["fits"].is_boolean());
  ASSERT_TRUE(j.contains("bottleneck"));
  ASSERT_TRUE(j["bottleneck"].contains("primary"));
  EXPECT_TRUE(j["bottleneck"]["primary"].is_string());
  ASSERT_TRUE(j.contains("ops"));
  ASSERT_TRUE(j["ops"].is_array());
  ASSERT_FALSE(j["ops"].empty());
  for (const auto& op : j["ops"]) {
    for (const char* k : {"name", "kind", "bound"}) {
      ASSERT_TRUE(op.contains(k)) << k << " in " << op.dump();
      EXPECT_TRUE(op[k].is_string()) << k;
    }
    for (const char* k : {"flops", "bytes", "time_ms"}) {
      ASSERT_TRUE(op.contains(k)) << k << " in " << op.dump();
      EXPECT_TRUE(op[k].is_number()) << k;
    }
  }
}

TEST_F(CliTest, PredictJsonKeysForCnn) {
  const CliResult r = run("predict --gpu gtx-1080-ti --model resnet50 --batch 32 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  expect_prediction_keys(j);
  EXPECT_TRUE(j["throughput"]["tokens_per_s"].is_null()) << "resnet50 is not a sequence model";
}

TEST_F(CliTest, PredictJsonKeysForSequenceModel) {
  const CliResult r = run("predict --gpu a100-sxm4-80gb --model bert_base --batch 8 --seq 128 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto j = nlohmann::json::parse(r.out);
  expect_prediction_keys(j);
  ASSERT_TRUE(j["throughput"]["tokens_per_s"].is_number()) << "bert_base reports tokens/s";
  // Each sample is --seq tokens.
  EXPECT_NEAR(j["throughput"]["tokens_per_s"].get<double>(), j["throughput"]["samples_per_s"].get<double>() * 128,
              j["throughput"]["tokens_per_s"].get<double>() * 1e-9);
}

TEST_F(CliTest, TrainingUpdateFlags) {
  // Without a flag the runtime decides: TensorFlow's ApplyAdam is one fused kernel, PyTorch's default is not.
  const auto update = [&](const std::string& args) {
    const CliResult r = run("predict --mode train --json " + args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["update"];
  };
  EXPECT_TRUE(update("--runtime tensorflow")["fused"].get<bool>());
  EXPECT_FALSE(update("--runtime pytorch")["fused"].get<bool>());
  EXPECT_TRUE(update("--runtime pytorch --fused-optimizer")["fused"].get<bool>());
  EXPECT_FALSE(update("--runtime tensorflow --unfused-optimizer")["fused"].get<bool>());
  EXPECT_EQ(update("--grad-accum 4")["grad_accum"].get<int>(), 4);
  expect_input_error("predict --fused-optimizer --unfused-optimizer", {"--fused-optimizer", "--unfused-optimizer"});
  for (const char* bad : {"0", "abc", "2.5", "10000000"})
    expect_input_error(std::string("predict --grad-accum ") + bad);
  expect_input_error("predict --mode infer --grad-accum 2", {"--grad-accum"});
  EXPECT_EQ(run("predict --gpus 4 --mode train --strategy horovod --fp16-grads --hierarchical").code, 0);
}

TEST_F(CliTest, ConfigurationColumnsForTheUpdate) {
  write_text(dir_ / "c.csv",
             "gpu,model,mode,batch,fused_optimizer,grad_accum\n"
             "gtx-1080-ti,resnet50,train,32,yes,4\n"
             "gtx-1080-ti,resnet50,train,32,sometimes,\n"
             "gtx-1080-ti,resnet50,train,32,,0\n"
             "gtx-1080-ti,resnet50,train,32,,\n");
  const CliResult r = run("predict --configs c.csv");
  ASSERT_EQ(r.code, 1) << r.err;  // two rows failed
  EXPECT_EQ(r.err, "perfcast: 2 ok, 2 failed (4 rows)\n");
  const auto rows = lines_of(r.out);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_NE(rows[1].find(",ok"), std::string::npos) << rows[1];
  EXPECT_NE(rows[2].find("fused_optimizer must be yes or no"), std::string::npos) << rows[2];
  EXPECT_NE(rows[3].find("gradient accumulation"), std::string::npos) << rows[3];
  EXPECT_NE(rows[4].find(",ok"), std::string::npos) << rows[4];
}

}  // namespace
