// The published measurements are a test: the error on them must stay under thresholds that only go down.
// Thresholds were set from the measured error when this test was written (see docs/validation.md) with a small
// margin; lower them as the model improves, never raise them quietly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <filesystem>

#include "analysis/intervals.h"
#include "analysis/predict.h"
#include "analysis/validate.h"
#include "import/config_csv.h"
#include "report/validation_report.h"
#include "test_paths.h"

namespace perfcast {
namespace {

const std::string kPublished = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/published.csv";

TEST(Validation, SingleGpuSyntheticRowsMeetTheAccuracyTargets) {
  const ValidationReport rep = validate_file(kPublished);
  // Issue targets: median APE <= 12%, mean <= 18%, >= 95% predicted to fit. Ratchets below.
  // The issue's scope: single-GPU synthetic-data rows; the llama.cpp rows belong to the LLM tests.
  std::vector<const ValidationRow*> scope;
  for (const auto& r : rep.rows)
    if (r.result.prediction->request.data == "synthetic" && r.result.prediction->request.runtime != "llama.cpp")
      scope.push_back(&r);
  const ErrorStats s = error_stats(scope);
  EXPECT_GE(s.rows, 270) << "CNN rows of torch7, mxnet, tensorflow and tensorflow-xla must all be predicted";
  // Ratchets: session 2 9.0% / 15.8%; session 4 10.1% / 17.3% after non-fused Winograd became F(2x2,3x3), the
  // tile cuDNN's kernel names show (docs/calibration.md: the Torch7 VGG rows lose, the TF GeForce rows and every
  // check set gain). Plus a margin. Issue 2's targets were 12% / 18%: with kernel values fitted to measured
  // kernels instead of these rows (session 7) the file is about 12.2% / 18.5%, and judges them out of sample.
  // Session 7: the GPU kernel values are fitted to measured kernels (docs/kernel-model.md), no longer set by hand
  // against these rows; the ratchet moved to what the fitted model reaches out of sample (docs/calibration.md).
  EXPECT_LE(s.median_ape, 12.6);
  EXPECT_LE(s.mean_ape, 19.2);
  EXPECT_GE(s.fits, 0.99);
}

TEST(Validation, RealDataRowsMeetTheInputPipelineTarget) {
  // Issue 4 target: median APE <= 15% on the real and real-augmented rows. Ratchets below.
  const ValidationReport rep = validate_file(kPublished);
  for (const char* data : {"real", "real-augmented"}) {
    const ErrorStats& s = rep.by_data.at(data);
    EXPECT_GE(s.rows, 24) << data;
    EXPECT_LE(s.median_ape, 12.0) << data;
    EXPECT_GE(s.fits, 0.99) << data;
  }
}

TEST(Validation, EveryRowWithinTwoXExceptTheKnownBrokenRun) {
  const ValidationReport rep = validate_file(kPublished);
  for (const auto& r : rep.rows) {
    const auto& row = r.result.row;
    // Lambda's TF 2.3 A100 SXM4 VGG16 amp run measured 70 img/s, 5x slower than the fp32 run of the same
    // machine (364 img/s) and below a GTX 1080 Ti; the 2, 4 and 8 GPU runs scale it linearly. No hardware
    // explanation exists: it is a software pathology of that build, kept in the data, excluded here only.
    if (row.gpu == "a100-sxm4-40gb" && row.model == "vgg16" && row.mode == "train" && row.precision == "amp") continue;
    EXPECT_GE(r.ratio, 0.5) << row.gpu << " " << row.model << " " << row.runtime << " " << row.mode << " " << row.precision;
    EXPECT_LE(r.ratio, 2.0) << row.gpu << " " << row.model << " " << row.runtime << " " << row.mode << " " << row.precision;
  }
}

TEST(Validation, GpuGroupsHaveNoRunawayBias) {
  // No GPU may be off by more than 20% in its median signed error: a sign that a per-architecture constant
  // is wrong rather than a per-row scatter.
  const ValidationReport rep = validate_file(kPublished);
  for (const auto& [gpu, s] : rep.by_gpu) EXPECT_LE(std::abs(s.median_signed), 20.0) << gpu;
}

// data/validation/check_pytorch.csv: published single-GPU PyTorch measurements (u39kun/deep-learning-benchmark,
// NVIDIA DeepLearningExamples, Lambda's PyTorch benchmarks), gathered after the model was calibrated on the
// TensorFlow/Torch7/MXNet rows of published.csv. Two model changes were made with it in view (GP102 FP16 runs
// in FP32 on half storage; eager attention's elementwise kernels), both from how the kernels run, not fitted.
const std::string kPytorch = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_pytorch.csv";

TEST(Validation, PytorchCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(kPytorch);
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 110);
  // Ratchet: session 3 10.3%, session 4 9.4% (non-fused Winograd F(2x2,3x3)), session 5 8.8% (eager optimizers'
  // passes and launches), plus a margin.
  // Session 7: the GPU kernel values are fitted to measured kernels (docs/kernel-model.md), no longer set by hand
  // against these rows; the ratchet moved to what the fitted model reaches out of sample (docs/calibration.md).
  EXPECT_LE(s.median_ape, 12.9);
  // Session 8 (issue 13): the per-op host costs measured in profiler traces (docs/host-trace-fit.md) brought the
  // host-bound batch-1 rows in: mean 22.1 -> 14.5%, every row within 2x.
  EXPECT_LE(s.mean_ape, 15.5);
  EXPECT_GE(s.within_2x, 0.99);
}

// A file listed in data/interval_setup.toml fresh_calibration_files sets the interval width, so validate says its
// coverage is in sample. Only the file name decides: a calibration file's rows copied under a listed name (here
// eval_gpu_fresh.csv, whose own rows stay unread) are flagged, the same rows under their own name are not.
TEST(Validation, FreshCalibrationFileCoverageIsMarkedInSample) {
  const ValidationReport own = validate_file(kPytorch);
  EXPECT_FALSE(own.interval_in_sample);
  EXPECT_EQ(validation_json(own)["interval_in_sample"], false);
  EXPECT_EQ(validation_summary_text(own).find("in sample"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / "perfcast_in_sample_test";
  std::filesystem::create_directories(dir);
  const auto copy = dir / "eval_gpu_fresh.csv";
  std::filesystem::copy_file(kPytorch, copy, std::filesystem::copy_options::overwrite_existing);
  const ValidationReport listed = validate_file(copy.string());
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(listed.interval_in_sample);
  EXPECT_EQ(validation_json(listed)["interval_in_sample"], true);
  ASSERT_GT(listed.overall.with_interval, 0);
  EXPECT_NE(validation_summary_text(listed).find("(in sample: this file calibrates the interval width)"),
            std::string::npos);
}

TEST(Validation, Gp102PytorchRowsWithinTwoXIncludingHalfPrecision) {
  // model.half() on a GTX 1080 Ti runs at 1.1-1.3x its FP32 speed (u39kun); a model that costs FP16 math at
  // the 1/64 native rate predicts 30x too slow.
  const ValidationReport rep = validate_file(kPytorch);
  int seen = 0;
  for (const auto& r : rep.rows) {
    if (r.result.row.gpu != "gtx-1080-ti") continue;
    ++seen;
    EXPECT_GE(r.ratio, 0.5) << r.result.row.model << " " << r.result.row.mode << " " << r.result.row.precision;
    EXPECT_LE(r.ratio, 2.0) << r.result.row.model << " " << r.result.row.mode << " " << r.result.row.precision;
  }
  EXPECT_GE(seen, 15);
}

// data/validation/check_recent.csv: GPUs and engines never used to set a constant (H100 PCIe, RTX 4090, L4, L40S,
// T4, A10, A100 80GB; PyTorch, TensorFlow, MXNet, TensorRT). Its known misses are listed in docs/validation.md.
TEST(Validation, RecentGpuCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_recent.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 100);
  // Ratchet: session 3 15.8%. Session 4 raised it once, to 21.0% + a margin, and says why: its 62 BERT rows
  // measure SQuAD question-answering models (their notes say so) and now use bert_*_squad instead of the
  // pre-training graph, whose 30522-way MLM decoder had hidden
  // over-predictions (TensorRT INT8 on T4, FP16 on the L4, TF32 BERT training, TF2's inference harness).
  // Session 5: Turing's INT8 tensor rate capped like its FP16 one (sm_75 tensor_int8_ops_per_clk_sm), 19.6%.
  EXPECT_LE(s.median_ape, 20.5);
}

// data/validation/check_llm.csv: published llama.cpp and TensorRT-LLM runs on GPUs the LLM model was never
// checked against (the llama.cpp rows of published.csv are all Tesla P40).
TEST(Validation, LlmCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_llm.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 75);
  // Ratchet at session 3's figure (12.4%) plus a margin.
  // Session 7: the GPU kernel values are fitted to measured kernels (docs/kernel-model.md), no longer set by hand
  // against these rows; the ratchet moved to what the fitted model reaches out of sample (docs/calibration.md).
  // Session 27: the RTX 4090's published device-local copy rate as its DRAM efficiency (10.6 -> 7.9%).
  EXPECT_LE(s.median_ape, 10.5);
  EXPECT_GE(s.fits, 0.99);
}

// data/validation/check_pascal.csv: more GP102/GP104 measurements (DLInfBench, Dell's TensorRT 2.0 P40 study,
// llama.cpp P40 prefill) never used to set a constant. Known misses in docs/validation.md.
TEST(Validation, PascalCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_pascal.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 50);
  // Ratchet: session 3 31.2%; session 4 24.2% (blocking input copies, TF 1.2 NHWC transposes except its
  // cuBLAS 1x1 path, non-fused Winograd F(2x2,3x3), MXNet's cuDNN 5 generation at 0.70), plus a margin.
  EXPECT_LE(s.median_ape, 26.0);
  // Session 13: the Dell P40 TensorRT 2.0 INT8 batch-1 rows (594 and 791 img/s measured) were 4x too fast; with
  // the dp4a kernels costed as the non-split implicit GEMMs TensorRT runs, mean 28.7 -> 22.5%, plus a margin.
  // Session 37: TensorRT's INT8 fully connected layers on sm_61 through the 128-row int8x4 convolution tile (AlexNet
  // b1 +184% -> +67%), mean 17.1 -> 14.5%, plus a margin.
  EXPECT_LE(s.mean_ape, 16.0);
}

// data/validation/check_hostbound.csv: PyTorch eager inference at batch 1-64 from the eager baselines of AITemplate
// (A100), Poros (A10) and PaddlePaddle's Paddle-TRT page (Tesla P4); most rows at batch <= 8 wait on the host.
TEST(Validation, HostBoundCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_hostbound.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 74);
  // Ratchet at the figure when the file was added (session 12: median 12.7%, within 2x 98.6%) plus a margin.
  EXPECT_LE(s.median_ape, 14.5);
  EXPECT_GE(s.within_2x, 0.95);
}

// data/validation/check_timm.csv: timm's published benchmark files (RTX 3090 / RTX 4090, 20 models, AMP inference
// and training, eager and torch.compile).
TEST(Validation, TimmCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_timm.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 110);
  // Ratchet at session 3's figure (20.4%) plus a margin.
  // Session 7: the GPU kernel values are fitted to measured kernels (docs/kernel-model.md), no longer set by hand
  // against these rows; the ratchet moved to what the fitted model reaches out of sample (docs/calibration.md).
  // Session 13: 1x1 stride-1 convolutions on NCHW tensors run as GEMMs without layout transposes (24.6 -> 17.8%).
  // Session 22: the RTX 3090's own published torch.mm rates and GA102's stream fraction (17.7 -> 13.7%).
  // Session 27: the RTX 4090's published device-local copy rate as its DRAM efficiency (13.3 -> 9.9%).
  EXPECT_LE(s.median_ape, 12.0);
  EXPECT_GE(s.fits, 0.99);
}

// The same files measure channels-last against NCHW: timm's RTX 4090 AMP inference files, eager, NHWC at batch 512
// against NCHW at batch 1024 (both far past the point where throughput stops growing with batch). Measured
// speedups 1.08-1.23 for the convolutional models; NCHW pays transposes only around tensor-core convolutions
// that are not 1x1 GEMMs (data/runtimes/pytorch.toml nchw_tensor_core_transposes).
TEST(Validation, TimmChannelsLastSpeedupsFollowTheMeasuredPairs) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_timm.csv");
  std::map<std::string, const ValidationRow*> nchw, nhwc;
  for (const auto& r : rep.rows) {
    const ConfigRow& c = r.result.row;
    if (c.gpu != "rtx-4090" || c.runtime != "pytorch" || c.mode != "infer" || !r.result.prediction) continue;
    if (c.layout == "nhwc" && c.batch == "512") nhwc[c.model] = &r;
    if (c.layout.empty() && c.batch == "1024") nchw[c.model] = &r;
  }
  std::vector<double> gaps;
  for (const auto& [model, a] : nchw) {
    const auto b = nhwc.find(model);
    if (b == nhwc.end() || model.rfind("vit", 0) == 0) continue;  // ViT has one convolution: nothing to compare
    const double measured = *b->second->result.row.measured / *a->result.row.measured;
    const double predicted = b->second->predicted / a->predicted;
    gaps.push_back(std::abs(predicted - measured));
    EXPECT_LE(std::abs(predicted - measured), 0.2) << model << ": measured " << measured << ", predicted " << predicted;
  }
  ASSERT_GE(gaps.size(), 15u);
  std::sort(gaps.begin(), gaps.end());
  // Before the 1x1 rule every 1x1 convolution was transposed: median gap 0.20, NCHW predicted 1.28-1.42x slower.
  EXPECT_LE(gaps[gaps.size() / 2], 0.12);
}

// data/validation/check_frameworks.csv: ONNX Runtime (CUDA EP) and JAX rows gathered in session 4 for those profiles,
// which were set from documentation. Known misses in docs/validation.md.
TEST(Validation, FrameworksCheckSetStaysWithinItsRatchet) {
  const ValidationReport rep =
      validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/check_frameworks.csv");
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  const ErrorStats s = error_stats(all);
  EXPECT_GE(s.rows, 45);
  EXPECT_TRUE(rep.unpredicted.empty());
  // Ratchet at session 4's figure (19.3%) plus a margin.
  EXPECT_LE(s.median_ape, 21.0);
}

TEST(Validation, NoEvaluationFileReadsOneMeasurementTwice) {
  // data/validation/README.md: each evaluation row is one measurement. Two rows of one file with the same setup (every
  // input column and the metric: import/config_csv.h setup_key) read at the same place of the same source are one
  // measurement counted twice, which would weight its setup double in every figure. Rows of one setup from two
  // places (two runs, two revisions of a README, two model variants perfcast reads as one shape) are two
  // measurements and stay.
  namespace fs = std::filesystem;
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PERFCAST_SOURCE_DIR) / "data/validation")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".csv" || name.rfind("eval_", 0) != 0) continue;
    ++files;
    std::map<std::string, int> first_line;
    for (const auto& r : read_config_csv(entry.path(), true)) {
      if (!r.error.empty()) continue;
      const auto [it, inserted] = first_line.emplace(setup_key(r, {}) + "\n" + r.source, r.line);
      if (!inserted) ADD_FAILURE() << name << " line " << r.line << " reads the measurement of line " << it->second;
    }
  }
  EXPECT_GT(files, 50u);
}

TEST(Validation, EvaluationGpuRowsFromSessionFortyStateTheirHost) {
  // data/defaults.toml [unstated_in_measurements]: a measurement row that leaves `host` empty is predicted on the
  // host of the validation files' early era (desktop-6c, a 6-core desktop), so that frozen files keep their
  // predictions. Session 39 found that this starves the input pipeline of a multi-GPU server whose row left the
  // host out. Every GPU row of an evaluation file frozen from session 40 on states its host (the gatherer picks the
  // nearest data/hosts profile for a server the catalog lacks and says so in the notes); the older files stay as
  // frozen. The session is read from any `eval_..._sNN[a-z].csv` name; an evaluation file with no session in its
  // name is one of the files named before sessions were (listed), so a new one cannot slip past the rule.
  namespace fs = std::filesystem;
  const std::regex session_rx(R"(eval_.*_s(\d+)[a-z]?\.csv)");
  const std::set<std::string> unnumbered = {"eval_cpu.csv", "eval_cpu_fresh.csv", "eval_gpu_fresh.csv",
                                            "eval_llm_parallel.csv", "eval_recsys.csv", "eval_torchvision_b12.csv"};
  std::size_t numbered = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(PERFCAST_SOURCE_DIR) / "data/validation")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".csv" || name.rfind("eval_", 0) != 0) continue;
    std::smatch m;
    if (!std::regex_match(name, m, session_rx)) {
      EXPECT_TRUE(unnumbered.contains(name)) << name << ": an evaluation file's name carries its session (eval_gpu_sNN.csv)";
      continue;
    }
    ++numbered;
    if (std::stoi(m[1].str()) < 40) continue;
    for (const auto& r : read_config_csv(entry.path(), true))
      if (r.error.empty() && r.host.empty() && !is_cpu_device(r.gpu))
        ADD_FAILURE() << name << " line " << r.line << " states no host";
  }
  EXPECT_GT(numbered, 50u);
}

// Evaluation rows of data/validation (eval_* files but the calibration-class ones of data/interval_setup.toml
// eval_named_calibration_files) whose `key` equals a calibration row's and whose measured value is within `tolerance`
// (a share of the evaluation row's) of it, as {"file line N" of the evaluation row, the same of the calibration row}.
std::vector<std::pair<std::string, std::string>> evaluation_rows_matching_calibration(
    const std::function<std::string(const ConfigRow&)>& key, double tolerance) {
  namespace fs = std::filesystem;
  const std::vector<std::string> named = interval_setup().eval_named_calibration_files;
  const std::set<std::string> calibration_named(named.begin(), named.end());
  std::multimap<std::string, std::pair<double, std::string>> calibration;
  std::vector<std::pair<std::string, ConfigRow>> evaluation;
  for (const auto& entry : fs::directory_iterator(fs::path(PERFCAST_SOURCE_DIR) / "data/validation")) {
    if (entry.path().extension() != ".csv") continue;
    const std::string name = entry.path().filename().string();
    for (auto& r : read_config_csv(entry.path(), true)) {
      if (!r.error.empty() || !r.measured) continue;
      const std::string at = name + " line " + std::to_string(r.line);
      if (name.rfind("eval_", 0) == 0 && !calibration_named.contains(name)) evaluation.emplace_back(at, std::move(r));
      else calibration.emplace(key(r), std::pair{*r.measured, at});
    }
  }
  EXPECT_GT(evaluation.size(), 1000u);
  std::vector<std::pair<std::string, std::string>> matches;
  for (const auto& [at, r] : evaluation) {
    const auto [lo, hi] = calibration.equal_range(key(r));
    for (auto it = lo; it != hi; ++it)
      if (std::abs(it->second.first - *r.measured) <= tolerance * std::abs(*r.measured))
        matches.emplace_back(at, it->second.second);
  }
  return matches;
}

TEST(Validation, NoEvaluationRowRepeatsACalibrationRow) {
  // data/validation/README.md: a file is calibration or evaluation, never both. One measurement copied into both
  // (the same source read at another address) would make an evaluation row in-sample. The key is the setup: the same
  // GPU, model, mode, precision, batch, GPU count and metric; the measured figures agree within 0.5%, so that a copy
  // written at another rounding (1990 against 1990.02) is caught too.
  const auto key = [](const ConfigRow& r) {
    std::string k;
    for (const std::string* f : {&r.gpu, &r.model, &r.mode, &r.precision, &r.batch, &r.seq, &r.n_gpus, &r.parallel,
                                 &r.metric})
      k += *f + '\x1f';
    return k;
  };
  // Known, frozen before this check existed (session 37) and left as frozen: eval_gpu_s32.csv line 33 (DeepLearningExamples'
  // copy of the TensorRT BERT demo, T4 BERT-large FP16 b128 s128, 264.85/s) and check_recent.csv line 7 (the TensorRT
  // demo's own README, 265.1/s) are likely one measurement published in two repositories.
  const std::set<std::string> known = {"eval_gpu_s32.csv line 33"};
  for (const auto& [at, calibration_at] : evaluation_rows_matching_calibration(key, 0.005))
    if (!known.contains(at)) ADD_FAILURE() << at << " repeats " << calibration_at;
}

TEST(Validation, NoEvaluationRowIsAnotherRunOfACalibrationSetup) {
  // The session-40 review: a second run of one system's setup (NVIDIA's MLPerf Inference submission of one A100 PCIe
  // 80GB, ResNet-50 and BERT-Large Offline INT8 at the same batch, one round apart) is not a new measurement of a new
  // setup: its prediction is the calibration row's, chosen with that row in view, and its value agrees within a few
  // percent. The key is every input column but the runtime version and the host (what a later round changes); the
  // values agree within 5%. Rows that match are listed here, with why each stays in its frozen file.
  // Each was frozen before this check existed and stays in its file (the file table of data/validation/README.md):
  //   - eval_gpu_s40b.csv lines 2 and 5: MLPerf v2.1's A100-PCIe-80GBx1_TRT ResNet-50 and BERT-99 Offline, and
  //     mlperf_inference.csv lines 4 and 9 (v3.0, the same system name);
  //   - eval_gpu_s24b.csv lines 3, 5 and 7: MLPerf v0.7's A100-PCIex1_TRT ResNet-50 Offline and SingleStream and
  //     BERT-99 Offline, and mlperf_inference.csv lines 2, 13 and 7 (v1.0, the same system name);
  //   - eval_gpu_s24b.csv line 17: a user's tf_cnn_benchmarks ResNet-50 FP32 batch 64 on a GTX 1080 Ti, and lambdal's
  //     run of the same benchmark (published.csv line 216, published_scaling.csv line 920): another machine;
  //   - eval_gpu_s29b.csv line 2 and published.csv line 348: llama.cpp Llama-2-7B Q4_0 decode on an RTX 3090, posted
  //     by one developer in two pull requests of one repository;
  //   - eval_gpu_s32.csv lines 21 and 33: DeepLearningExamples' copy of the TensorRT BERT demo on a T4, and the demo's
  //     own README (check_recent.csv lines 3 and 7).
  const std::set<std::string> known = {"eval_gpu_s40b.csv line 2", "eval_gpu_s40b.csv line 5",
                                       "eval_gpu_s24b.csv line 3",  "eval_gpu_s24b.csv line 5",
                                       "eval_gpu_s24b.csv line 7",  "eval_gpu_s24b.csv line 17",
                                       "eval_gpu_s29b.csv line 2",  "eval_gpu_s32.csv line 21",
                                       "eval_gpu_s32.csv line 33"};
  const std::vector<std::string_view> skip = {"runtime_version", "host"};
  std::set<std::string> seen;
  for (const auto& [at, calibration_at] :
       evaluation_rows_matching_calibration([&](const ConfigRow& r) { return setup_key(r, skip); }, 0.05)) {
    if (known.contains(at)) seen.insert(at);
    else ADD_FAILURE() << at << " runs the setup of " << calibration_at << " again";
  }
  EXPECT_EQ(seen, known) << "a listed row no longer matches: take it off the list";
}

TEST(Validation, EvaluationFilesPredictEveryRow) {
  // data/validation/README.md: eval_*.csv files are frozen evaluation data. No threshold here (a ratchet would
  // invite tuning against them); every row must be predicted, and the figures are reported in docs/validation.md.
  const std::pair<const char*, std::size_t> files[] = {
      {"eval_torchvision_b12.csv", 84u}, {"eval_gpu_fresh.csv", 61u}, {"eval_cpu_fresh.csv", 2u},
      {"eval_gpu_s12.csv", 38u}, {"eval_cpu_s12.csv", 12u}, {"eval_gpu_s13.csv", 26u},
      {"eval_gpu_s16.csv", 34u}, {"eval_gpu_s17.csv", 30u}, {"eval_gpu_s18.csv", 42u},
      {"eval_gpu_s18b.csv", 16u}, {"eval_gpu_s19.csv", 20u}, {"eval_gpu_s20.csv", 16u},
      {"eval_gpu_s21.csv", 25u}, {"eval_cpu_s21.csv", 16u},
      {"eval_gpu_s22.csv", 33u}, {"eval_gpu_s23.csv", 38u}, {"eval_gpu_s24.csv", 11u},
      {"eval_gpu_s24b.csv", 25u}, {"eval_gpu_s25.csv", 55u},
      {"eval_gpu_s26.csv", 29u}, {"eval_gpu_s26b.csv", 34u},
      {"eval_gpu_s27.csv", 38u}, {"eval_gpu_s27b.csv", 33u}, {"eval_cpu_s27.csv", 2u},
      {"eval_gpu_s27c.csv", 42u}, {"eval_gpu_s28.csv", 11u}, {"eval_gpu_s28c.csv", 18u},
      {"eval_gpu_s28b.csv", 17u}, {"eval_cpu_s28.csv", 6u},
      {"eval_gpu_s28d.csv", 4u}, {"eval_gpu_s29.csv", 15u},
      {"eval_gpu_s29b.csv", 3u}, {"eval_cpu_s29.csv", 2u}, {"eval_gpu_s29c.csv", 16u},
      {"eval_gpu_s30.csv", 42u},
      {"eval_gpu_s30b.csv", 5u},
      {"eval_gpu_s30c.csv", 26u},
      {"eval_gpu_s31.csv", 34u},
      {"eval_gpu_s31b.csv", 25u},
      {"eval_gpu_s31c.csv", 14u},
      {"eval_gpu_s32.csv", 39u},
      {"eval_gpu_s32b.csv", 3u},
      {"eval_gpu_s32c.csv", 18u},
      {"eval_gpu_s33.csv", 8u},
      {"eval_gpu_s33b.csv", 20u},
      {"eval_gpu_s33c.csv", 32u},
      {"eval_gpu_s34.csv", 20u},
      {"eval_gpu_s34b.csv", 3u},
      {"eval_cpu_s34.csv", 22u},
      {"eval_gpu_s35.csv", 24u},
      {"eval_gpu_s35b.csv", 9u},
      {"eval_gpu_s36.csv", 56u},
      {"eval_cpu_s36.csv", 5u},
      {"eval_gpu_s36b.csv", 10u},
      {"eval_gpu_s37b.csv", 5u},
      {"eval_gpu_s37.csv", 1u},
      {"eval_gpu_s37c.csv", 33u},
      {"eval_gpu_s38.csv", 10u},
      {"eval_cpu_s38.csv", 4u},
      {"eval_gpu_s38b.csv", 11u},
      {"eval_gpu_s39.csv", 14u},
      {"eval_gpu_s39b.csv", 24u},
      {"eval_gpu_s39c.csv", 15u},
      {"eval_gpu_s40.csv", 15u},
      {"eval_gpu_s40c.csv", 9u},
      {"eval_gpu_s41.csv", 15u},
      {"eval_gpu_s41b.csv", 35u},
      {"eval_gpu_s41c.csv", 22u},
      {"eval_gpu_s42b.csv", 11u},
      {"eval_gpu_s42c.csv", 16u},
      {"eval_gpu_s42.csv", 14u},
      {"eval_gpu_s40b.csv", 16u}};
  for (const auto& [file, rows] : files) {
    const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/" + file);
    EXPECT_EQ(rep.rows.size(), rows) << file;
    for (const auto& r : rep.rows) EXPECT_TRUE(r.result.prediction.has_value()) << file << ": " << r.result.status;
    // A refused row is not in rep.rows: name its reason (the message only, no predicted figure).
    for (const auto& u : rep.unpredicted) ADD_FAILURE() << file << " line " << u.row.line << " (" << u.row.model << " on " << u.row.gpu << "): " << u.status;
  }
}

}  // namespace
}  // namespace perfcast
