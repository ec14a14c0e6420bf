// One context check for every path (session 35): a sequence past a model's context is refused the same way by
// predict in each mode, compare, advise, predict --configs, serving, the training layouts and export, for zoo ids,
// config.json files and ONNX files. The contexts are the published ones: Llama 2 4096 tokens (Touvron et al. 2023,
// Table 1; max_position_embeddings of meta-llama/Llama-2-7b-hf), GPT-2 1024 learned positions (n_positions of the
// released hparams), BERT 512 learned positions (Devlin et al. 2019; max_position_embeddings of bert-base-uncased),
// DistilBERT 512 (distilbert-base-uncased), GPT-Neo 2048 learned positions (EleutherAI/gpt-neo-125M).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "analysis/predict.h"
#include "cli_runner.h"
#include "core/error.h"
#include "import/model_source.h"
#include "predict_error.h"
#include "test_paths.h"

namespace perfcast {
namespace {

const std::string kSource = PERFCAST_SOURCE_DIR;
const std::string kHf = kSource + "/data/models/hf/";
const std::string kFixtures = kSource + "/tests/data/hf/";

PredictRequest request(const std::string& model, std::int64_t seq, Mode mode = Mode::kTrain) {
  PredictRequest r;
  r.gpu = "h100-sxm5-80gb";
  r.model = model;
  r.mode = mode;
  r.precision = mode == Mode::kTrain || mode == Mode::kInfer ? "amp-bf16" : "fp16";
  r.batch = 1;
  r.seq = seq;
  return r;
}

using predict_test::error_of;

TEST(ContextLimit, EveryModeRefusesLlama2Past4096) {
  for (const Mode mode : {Mode::kTrain, Mode::kInfer, Mode::kPrefill}) {
    const std::string e = error_of(request("llama-2-7b", 8192, mode));
    EXPECT_NE(e.find("beyond its context of 4096"), std::string::npos) << mode_string(mode) << ": " << e;
    EXPECT_NE(e.find("--max-positions 8192"), std::string::npos) << e;
  }
  PredictRequest decode = request("llama-2-7b", 200, Mode::kDecode);
  decode.context = 4000;  // 4200 positions
  EXPECT_NE(error_of(decode).find("--context 4000 + --seq 200 = 4200 positions"), std::string::npos) << error_of(decode);
  decode.context = 3896;  // exactly 4096
  EXPECT_EQ(error_of(decode), "");
  // The same model and sequence through the training layouts: the same message.
  PredictRequest layout = request("llama-2-7b", 8192);
  layout.gpus = 2;
  layout.tensor_parallel = 2;
  EXPECT_EQ(error_of(layout), error_of(request("llama-2-7b", 8192)));
  // --max-positions names the longer context: predicted.
  PredictRequest longer = request("llama-2-7b", 8192);
  longer.max_positions = 8192;
  EXPECT_GT(predict(longer).samples_per_s, 0);
  EXPECT_EQ(error_of(request("llama-2-7b", 4096)), "");
}

TEST(ContextLimit, ATensorRtLlmEngineRunsTheSequenceItWasBuiltFor) {
  // TensorRT-LLM's builder takes max_seq_len from the build (trtllm-build --max_seq_len) and only warns past
  // max_position_embeddings (tensorrt_llm/builder.py _init_max_seq_len; data/engine_context.toml): its published
  // Llama-70B runs of input 128, output 4096 went past Llama 2's 4096. vLLM refuses past its config's context.
  PredictRequest r = request("llama-2-7b", 4096, Mode::kGenerate);
  r.context = 128;
  r.runtime = "tensorrt-llm";
  const Prediction p = predict(r);
  EXPECT_TRUE(std::any_of(p.notes.begin(), p.notes.end(), [](const std::string& n) {
    return n.find("run at 4224 positions") != std::string::npos && n.find("max_seq_len") != std::string::npos;
  }));
  r.runtime = "vllm";
  EXPECT_NE(error_of(r).find("beyond its context of 4096"), std::string::npos) << error_of(r);
  // A learned table is a hard limit for an engine too.
  PredictRequest gpt2 = request("gpt2", 1000, Mode::kGenerate);
  gpt2.context = 100;
  gpt2.runtime = "tensorrt-llm";
  EXPECT_NE(error_of(gpt2).find("learned position table"), std::string::npos) << error_of(gpt2);
}

TEST(ContextLimit, ConfigFilesStateTheirContext) {
  // The zoo's Llama 2 is its config: the config file gives the same refusal, naming the file.
  const std::string e = error_of(request(kHf + "llama-2-7b.json", 8192));
  EXPECT_NE(e.find("beyond its context of 4096"), std::string::npos) << e;
  EXPECT_NE(e.find("--max-positions"), std::string::npos) << e;
}

TEST(ContextLimit, LearnedPositionTablesAreHardLimits) {
  // transformers' lookup past a learned table fails: --max-positions cannot extend one.
  for (const auto& [model, rows] : std::initializer_list<std::pair<std::string, std::int64_t>>{
           {"gpt2", 1024}, {"gpt2_medium", 1024}, {"bert_base", 512}, {"bert_large_squad", 512},
           {kHf + "bert-base-uncased.json", 512}, {kFixtures + "distilbert-base-uncased.json", 512},
           {kFixtures + "gpt-neo-125m.json", 2048}}) {
    const std::string e = error_of(request(model, rows + 1));
    EXPECT_NE(e.find("beyond its context of " + std::to_string(rows)), std::string::npos) << model << ": " << e;
    EXPECT_NE(e.find("learned position table"), std::string::npos) << e;
    EXPECT_EQ(error_of(request(model, rows)), "") << model;
  }
}

TEST(ContextLimit, AnOnnxExportOfBertReadsItsPositionTable) {
  // tests/data/onnx/hf_bert_base_opset14.onnx: transformers' BertEmbeddings as exported, position_ids a [1, 512]
  // buffer sliced to the sequence, then a Gather from the [512, H] table.
  const std::string onnx = kSource + "/tests/data/onnx/hf_bert_base_opset14.onnx";
  ImportOptions at_128;
  at_128.seq = 128;
  const ModelSource m = resolve_model(onnx, at_128);
  EXPECT_EQ(m.max_positions, 512);
  EXPECT_TRUE(m.learned_positions);
  const std::string e = error_of(request(onnx, 1024));
  EXPECT_NE(e.find("beyond its context of 512"), std::string::npos) << e;
  EXPECT_EQ(error_of(request(onnx, 512)), "");
}

TEST(ContextLimit, ModelsWithoutAStatedContextAreNotChecked) {
  // T5-style relative position buckets (switch-base-8) have no table to run out of.
  EXPECT_EQ(resolve_model(kHf + "switch-base-8.json").max_positions, 0);
}

class ContextLimitCli : public test::ScratchDirTest {};

TEST_F(ContextLimitCli, OneLineExitTwoFromEveryCommand) {
  for (const std::string& cmd :
       {std::string("predict --gpu h100-sxm5-80gb --model llama-2-7b --seq 8192"),
        std::string("predict --gpu h100-sxm5-80gb --model llama-2-7b --seq 8192 --tp 2 --gpus 2"),
        std::string("predict --gpu h100-sxm5-80gb --model llama-2-7b --mode decode --context 8000 --seq 500"),
        std::string("advise --gpu h100-sxm5-80gb --model llama-2-7b --seq 8192"),
        std::string("compare --model llama-2-7b --seq 8192 --gpu h100-sxm5-80gb,a100-sxm4-80gb"),
        std::string("export --model llama-2-7b --seq 8192 --onnx out.onnx")}) {
    const auto r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
    EXPECT_EQ(test::lines_of(r.err).size(), 1u) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("context of 4096"), std::string::npos) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("--max-positions"), std::string::npos) << cmd << "\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.onnx"));
  const auto ok = run("predict --gpu h100-sxm5-80gb --model llama-2-7b --seq 8192 --max-positions 8192 --batch 1");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

}  // namespace
}  // namespace perfcast
