// The first walk-through's leftovers (docs/calibration.md, session 37): notes that name only what applies, token
// modes in tokens/s, and a scaling column that says when its one-GPU baseline is not the run one GPU makes.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/plan.h"
#include "analysis/predict.h"
#include "schedule/embedding_placement.h"
#include "cli_runner.h"

namespace perfcast {
namespace {

PredictRequest fp32_on_a100(const std::string& model, const std::string& runtime) {
  PredictRequest r;
  r.model = model;
  r.gpu = "a100-sxm4-80gb";
  r.runtime = runtime;
  r.mode = Mode::kInfer;
  r.precision = "fp32";
  r.batch = 8;
  return r;
}

TEST(PrecisionNote, NamesOnlyTheOpKindsTheGraphHas) {
  // PyTorch: torch.backends.cudnn.allow_tf32 defaults to True, torch.backends.cuda.matmul.allow_tf32 to False since
  // 1.12 (PyTorch docs, "TensorFloat-32 (TF32) on Ampere devices"). BERT-base has no convolution layer (Devlin et al.
  // 2018: embeddings, self-attention and feed-forward layers), so PyTorch's fp32 BERT runs nothing as TF32.
  const Prediction bert = predict(fp32_on_a100("bert_base", "pytorch"));
  EXPECT_EQ(bert.precision_note.find("convolution"), std::string::npos) << bert.precision_note;
  EXPECT_TRUE(bert.precision_note_code.id.empty()) << bert.precision_note_code.id;
  // ResNet-50 is convolutions: the note stays.
  const Prediction resnet = predict(fp32_on_a100("resnet50", "pytorch"));
  EXPECT_NE(resnet.precision_note.find("convolutions as TF32"), std::string::npos) << resnet.precision_note;
  // TensorFlow runs both as TF32 by default (TF 2.4 release notes): BERT's note names its matmuls alone.
  const Prediction tf_bert = predict(fp32_on_a100("bert_base", "tensorflow"));
  EXPECT_NE(tf_bert.precision_note.find("matmuls as TF32"), std::string::npos) << tf_bert.precision_note;
  EXPECT_EQ(tf_bert.precision_note.find("convolution"), std::string::npos) << tf_bert.precision_note;
}

TEST(CompareScaling, ShardedTablesAreNotScaledAgainstAHostMemoryGpu) {
  // dlrm's tables hold 89.5 GiB (Criteo Terabyte cardinalities x 128 x 4 bytes); an A100 SXM4 80GB holds 80 GB
  // (NVIDIA datasheet): one such GPU keeps them in host memory and reads them over PCIe, eight shard them in HBM.
  // The eight GPUs' efficiency against one GPU with their placement is no claim about the one GPU that exists.
  PredictRequest base;
  base.model = "dlrm";
  base.precision = "amp";
  base.batch = 8192;
  const auto rows = compare(base, parse_gpu_counts("a100-sxm4-80gb,a100-sxm4-80gb:8"), RunSize{4e9, 1},
                            default_price_catalog(), data_parallel_options(base));
  ASSERT_TRUE(rows[0].prediction && rows[1].prediction) << rows[0].status << rows[1].status;
  EXPECT_TRUE(reads_tables_from_host(rows[0].prediction->step));
  EXPECT_FALSE(rows[0].scaling_baseline_differs);
  EXPECT_FALSE(reads_tables_from_host(rows[1].prediction->step));
  EXPECT_TRUE(rows[1].scaling_baseline_differs);
  EXPECT_DOUBLE_EQ(rows[1].one_gpu_samples_per_s, rows[0].prediction->samples_per_s);
  // A model with no tables keeps its efficiency column.
  PredictRequest resnet;
  resnet.model = "resnet50";
  const auto plain = compare(resnet, parse_gpu_counts("a100-sxm4-80gb:8"), RunSize{0, 1}, default_price_catalog(),
                             data_parallel_options(resnet));
  ASSERT_TRUE(plain[0].prediction) << plain[0].status;
  EXPECT_FALSE(plain[0].scaling_baseline_differs);
}

class UxCliTest : public test::ScratchDirTest {
 protected:
  UxCliTest() : ScratchDirTest("perfcast-ux") {}
};

TEST_F(UxCliTest, CompareSaysTokensPerSecondForDecode) {
  // --mode decode generates --seq tokens per sequence (perfcast predict --help): a row's tokens/s is its
  // sequences/s times --seq, and its ms per token the time per output token predict prints.
  const test::CliResult json = run("compare --model llama-2-7b --mode decode --seq 64 --gpu a100-sxm4-80gb --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out)[0];
  const double tokens_per_s = j["tokens_per_s"].get<double>();
  EXPECT_NEAR(tokens_per_s, 64 * j["samples_per_s"].get<double>(), 1e-6 * tokens_per_s);
  EXPECT_GT(j["time_per_output_token_ms"].get<double>(), 0);
  const test::CliResult text = run("compare --model llama-2-7b --mode decode --seq 64 --gpu a100-sxm4-80gb");
  ASSERT_EQ(text.code, 0) << text.err;
  const std::string header = text.out.substr(text.out.find("device"), text.out.find('\n', text.out.find("device")) -
                                                                          text.out.find("device"));
  EXPECT_NE(header.find("tokens/s"), std::string::npos) << header;
  EXPECT_NE(header.find("ms/token"), std::string::npos) << header;
  EXPECT_EQ(header.find("samples/s"), std::string::npos) << header;
}

TEST_F(UxCliTest, CompareScalingColumnSaysNotApplicableForHostTables) {
  // dlrm's 89.5 GiB of tables do not fit one A100 SXM4 80GB (80 GB, NVIDIA datasheet).
  const test::CliResult text =
      run("compare --model dlrm --precision amp --batch 8192 --gpu a100-sxm4-80gb,a100-sxm4-80gb:8");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("scaling n/a: one GPU holds the embedding tables in host memory"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace perfcast
