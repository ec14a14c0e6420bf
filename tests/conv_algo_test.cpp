// How cuDNN convolution algorithms are chosen is an explicit input (--conv-algo, the conv_algo column), with each
// runtime's documented default when neither names it. Expectations from outside the code:
//   - the defaults: torch.backends.cudnn.benchmark = False (PyTorch docs), cudnn.torch's cudnn.benchmark = false
//     (soumith/cudnn.torch README), Caffe2's exhaustive_search = 0 (conv_op_cudnn.cc); TF_CUDNN_USE_AUTOTUNE = true
//     (tensorflow/core/util/use_cudnn.cc), MXNET_CUDNN_AUTOTUNE_DEFAULT = 1 (MXNet env var docs), TensorRT's builder
//     times tactics, XLA's --xla_gpu_autotune_level defaults to 4, ORT's cudnn_conv_algo_search = EXHAUSTIVE;
//   - autotuning times every algorithm and keeps the fastest, so no layer or step is slower than the heuristic's
//     choice (cudnnFindConvolutionForwardAlgorithm returns the algorithms sorted by measured time);
//   - cuDNN 8.9's heuristic on a Tesla P4 (sm_61) runs 3x3 convolutions with 16-63 input channels as implicit GEMM
//     (62-93% of the measured kernel names, shared/kernels/neusight_train/conv), where Winograd is faster.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/advisor.h"
#include "analysis/batch_predict.h"
#include "analysis/op_batch.h"
#include "cli_runner.h"
#include "core/error.h"
#include "report/prediction_report.h"
#include "runtime/runtime_profile.h"

namespace perfcast {
namespace {

TEST(ConvAlgo, EachRuntimeTakesItsDocumentedDefault) {
  for (const char* id : {"pytorch", "pytorch-compile", "torchscript", "torch7", "caffe2"})
    EXPECT_FALSE(find_runtime(id).conv_autotune) << id << ": its documented default is cuDNN's heuristic";
  for (const char* id : {"tensorflow", "tensorflow-xla", "jax", "mxnet", "tensorrt", "onnxruntime", "cntk", "nvcaffe"})
    EXPECT_TRUE(find_runtime(id).conv_autotune) << id << ": its documented default times the algorithms";
  // Every runtime says where its default comes from.
  for (const char* id : {"pytorch", "pytorch-compile", "torchscript", "torch7", "caffe2", "tensorflow", "tensorflow-xla",
                         "jax", "mxnet", "tensorrt", "onnxruntime"})
    EXPECT_TRUE(find_runtime(id).sources.count("conv_autotune")) << id << " has no source for conv_autotune";
}

TEST(ConvAlgo, EmptyMeansTheRuntimesDefaultAndANamedValueWins) {
  const RuntimeProfile& pt = find_runtime("pytorch");
  const RuntimeProfile& tf = find_runtime("tensorflow");
  EXPECT_FALSE(conv_autotune_for("", pt));
  EXPECT_TRUE(conv_autotune_for("", tf));
  EXPECT_TRUE(conv_autotune_for("autotune", pt));
  EXPECT_FALSE(conv_autotune_for("heuristic", tf));
}

TEST(ConvAlgo, UnknownValueNamesTheNearest) {
  try {
    check_conv_algo("autotun");
    FAIL() << "a typo must be an input error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'autotun'"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean 'autotune'"), std::string::npos) << what;
  }
  EXPECT_THROW(check_conv_algo("on"), InputError);
}

// One configurations row: ResNet-50 inference at batch 32 on a GTX 1080 Ti in FP32, as nicklhy/DLInfBench ran it.
ConfigRow resnet50_row(const std::string& conv_algo) {
  ConfigRow row;
  row.gpu = "gtx-1080-ti";
  row.model = "resnet50";
  row.runtime = "pytorch";
  row.mode = "infer";
  row.precision = "fp32";
  row.batch = "32";
  row.conv_algo = conv_algo;
  return row;
}

TEST(ConvAlgo, TheColumnChangesTheAlgorithmsThePredictionShows) {
  const Prediction tuned = predict(request_from_row(resnet50_row("autotune")));
  const Prediction heuristic = predict(request_from_row(resnet50_row("heuristic")));
  const Prediction unstated = predict(request_from_row(resnet50_row("")));
  const nlohmann::json jt = prediction_json(tuned), jh = prediction_json(heuristic), ju = prediction_json(unstated);
  EXPECT_EQ(jt["conv_algo"], "autotune");
  EXPECT_EQ(jh["conv_algo"], "heuristic");
  EXPECT_EQ(ju["conv_algo"], "heuristic") << "PyTorch's default: torch.backends.cudnn.benchmark = False";
  // The per-op table names each convolution's forward algorithm; at least one layer changes with the column.
  ASSERT_EQ(jt["ops"].size(), jh["ops"].size());
  int convs = 0, changed = 0;
  for (std::size_t i = 0; i < jt["ops"].size(); ++i) {
    if (jt["ops"][i]["kind"] != "conv") continue;
    ++convs;
    ASSERT_TRUE(jt["ops"][i].contains("algorithm")) << jt["ops"][i].dump();
    ASSERT_TRUE(jh["ops"][i].contains("algorithm")) << jh["ops"][i].dump();
    if (jt["ops"][i]["algorithm"] != jh["ops"][i]["algorithm"]) ++changed;
  }
  EXPECT_EQ(convs, 53) << "ResNet-50: the stem, 16 bottlenecks of three and 4 projection shortcuts (He et al. 2016)";
  EXPECT_GT(changed, 0);
  // The autotuner keeps the fastest it timed: never slower than the heuristic's choice.
  EXPECT_GE(tuned.samples_per_s, heuristic.samples_per_s);
  EXPECT_DOUBLE_EQ(unstated.samples_per_s, heuristic.samples_per_s);
}

TEST(ConvAlgo, ABadCellIsThatRowsError) {
  EXPECT_THROW(request_from_row(resnet50_row("benchmark")), InputError);
}

TEST(ConvAlgo, OpConfigsColumnChangesTheAlgorithmColumn) {
  // A Tesla P4 (sm_61) 3x3 convolution with 32 input channels: cuDNN's heuristic runs it as implicit GEMM (the
  // measured kernel names), the autotuner finds a faster transform algorithm.
  const std::string head = "gpu,op,precision,direction,conv_n,conv_c,conv_h,conv_w,conv_k,conv_r,conv_s,pad_h,pad_w,conv_algo\n";
  const std::string shape = "tesla-p4,conv2d,fp32,fwd,32,32,56,56,32,3,3,1,1,";
  const OpBatchResult r = predict_op_configs(head + shape + "heuristic\n" + shape + "autotune\n");
  ASSERT_EQ(r.ok, 2) << r.csv;
  std::istringstream in(r.csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> algorithm;
  std::vector<double> us;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    ASSERT_GE(f.size(), 18u) << line;
    us.push_back(std::stod(f[14]));
    algorithm.push_back(f[15]);
  }
  ASSERT_EQ(algorithm.size(), 2u);
  EXPECT_EQ(algorithm[0].rfind("winograd", 0), std::string::npos) << "the heuristic's choice here is implicit GEMM: "
                                                                   << algorithm[0];
  EXPECT_NE(algorithm[0], algorithm[1]);
  EXPECT_LE(us[1], us[0]) << "the autotuner keeps the fastest";
  const OpBatchResult bad = predict_op_configs(head + shape + "autotun\n");
  EXPECT_EQ(bad.failed, 1);
  EXPECT_NE(bad.csv.find("did you mean"), std::string::npos) << bad.csv;
}

// advise offers benchmark mode where the convolutions take cuDNN's heuristic, and never as a slowdown: the autotuner
// keeps the fastest algorithm it timed.
TEST(ConvAlgo, AdviseOffersBenchmarkModeOnlyWhereTheHeuristicRuns) {
  const auto strategy = [](const Advice& a) -> const StrategyResult* {
    for (const auto& st : a.strategies)
      if (st.id == "cudnn-benchmark") return &st;
    return nullptr;
  };
  PredictRequest r = request_from_row(resnet50_row(""));
  const Advice pt = advise(r);
  const StrategyResult* on = strategy(pt);
  ASSERT_NE(on, nullptr);
  ASSERT_TRUE(on->applicable) << on->reason;
  EXPECT_GE(on->speedup, 1.0);
  EXPECT_EQ(on->request.conv_algo, "autotune");
  r.runtime = "tensorflow";  // TF_CUDNN_USE_AUTOTUNE defaults to true
  const Advice tf_advice = advise(r);
  const StrategyResult* tf = strategy(tf_advice);
  ASSERT_NE(tf, nullptr);
  EXPECT_FALSE(tf->applicable);
  EXPECT_EQ(tf->reason_code.id, "conv_algo.already_autotuned");
}

class ConvAlgoCli : public test::ScratchDirTest {
 protected:
  ConvAlgoCli() : ScratchDirTest("perfcast-conv-algo") {}
  void expect_input_error(const std::string& args, const std::vector<std::string>& pieces) const {
    SCOPED_TRACE("perfcast " + args);
    const test::CliResult r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in " << r.err;
  }
};

TEST_F(ConvAlgoCli, UnknownValueIsAOneLineErrorWithASuggestion) {
  expect_input_error("predict --model resnet50 --conv-algo autotun", {"autotun", "did you mean 'autotune'"});
  expect_input_error("compare --model resnet50 --gpu gtx-1080-ti,t4 --conv-algo heuristc",
                     {"heuristc", "did you mean 'heuristic'"});
  expect_input_error("advise --conv-algo on", {"'on'", "autotune", "heuristic"});
  expect_input_error("op --gpu t4 --op conv2d --conv-n 8 --conv-c 64 --conv-h 56 --conv-w 56 --conv-k 64 --conv-r 3 "
                     "--conv-s 3 --pad-h 1 --pad-w 1 --conv-algo fastest",
                     {"fastest"});
}

TEST_F(ConvAlgoCli, ACpuHasNoCudnnAlgorithmChoice) {
  expect_input_error("predict --device core-i7-8700 --model resnet50 --mode infer --batch 1 --conv-algo autotune",
                     {"--conv-algo", "core-i7-8700"});
}

TEST_F(ConvAlgoCli, PredictJsonSaysWhichChoiceWasCosted) {
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--runtime pytorch", "heuristic"},
           {"--runtime pytorch --conv-algo autotune", "autotune"},
           {"--runtime tensorflow", "autotune"},
           {"--runtime tensorflow --conv-algo heuristic", "heuristic"}}) {
    const test::CliResult r = run("predict --gpu gtx-1080-ti --model resnet50 --batch 32 --json " + args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["conv_algo"], expected) << args;
  }
}

}  // namespace
}  // namespace perfcast
