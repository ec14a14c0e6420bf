// Measured what-ifs (`perfcast validate --pairs`, analysis/what_if_pairs.h): pairs of rows that differ in one input,
// their measured ratios from the files' own values, the pair counts the validation READMEs publish, and issue 13's
// what-if figures on the calibration files, whose thresholds only go down.
#include "analysis/what_if_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/validate.h"
#include "cli_runner.h"
#include "import/config_csv.h"
#include "test_paths.h"

namespace perfcast {
namespace {

TEST(SetupKey, EveryReaderColumnIsInTheKeyOrExcluded) {
  // Leaving a column out of the key changes it exactly when the key holds that column (each column adds one field):
  // every column the reader takes is either in the key or named in kSetupKeyExclusions, never both, never neither.
  const ConfigRow row;
  const std::string full = setup_key(row, {});
  const std::vector<std::string_view> cols(kReaderColumns.begin(), kReaderColumns.end());
  for (const auto name : cols) {
    const bool excluded =
        std::find(kSetupKeyExclusions.begin(), kSetupKeyExclusions.end(), name) != kSetupKeyExclusions.end();
    EXPECT_EQ(setup_key(row, {name}) != full, !excluded) << name;
  }
  for (const auto name : kSetupKeyExclusions) EXPECT_NE(std::find(cols.begin(), cols.end(), name), cols.end()) << name;
  for (const auto name : kPrecisionPairSkip) EXPECT_NE(std::find(cols.begin(), cols.end(), name), cols.end()) << name;
  // A setup differs from another in the metric and the model, not in the notes.
  ConfigRow other = row;
  other.notes = "another note";
  EXPECT_EQ(setup_key(other, {}), full);
  other.model = "resnet50";
  EXPECT_NE(setup_key(other, {}), full);
}

const std::string kValidation = std::string(PERFCAST_SOURCE_DIR) + "/data/validation/";

// The measured what-ifs of a configurations file holding `csv`, written to a fresh temporary folder `name`.
std::vector<WhatIfPair> pairs_of_csv(const std::string& name, const std::string& csv) {
  const auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::create_directories(dir);
  const auto path = dir / (name + ".csv");
  std::ofstream(path) << csv;
  auto pairs = what_if_pairs(validate_file(path.string()));
  std::filesystem::remove_all(dir);
  return pairs;
}

// The pairs that vary `varied`, as pointers into `pairs`.
std::vector<const WhatIfPair*> of(const std::vector<WhatIfPair>& pairs, const std::string& varied) {
  std::vector<const WhatIfPair*> v;
  for (const auto& p : pairs)
    if (p.varied == varied) v.push_back(&p);
  return v;
}
// Not on a temporary: its pointers would dangle once the full expression ends. A range-for does not extend the
// life of a temporary argument of its range expression before C++23, so `for (p : of(pairs_of_csv(...), ...))`
// read freed memory, which failed as std::bad_alloc in some fresh processes (docs/calibration.md, session 35).
std::vector<const WhatIfPair*> of(std::vector<WhatIfPair>&& pairs, const std::string& varied) = delete;

// The precision pairs of a small CSV, by value.
std::vector<WhatIfPair> precision_pairs_of_csv(const std::string& name, const std::string& csv) {
  const std::vector<WhatIfPair> pairs = pairs_of_csv(name, csv);
  std::vector<WhatIfPair> v;
  for (const auto* p : of(pairs, "precision")) v.push_back(*p);
  return v;
}

TEST(WhatIfPairs, MeasuredRatiosAreTheRowsOwnValues) {
  const auto pairs =
      pairs_of_csv("perfcast_what_if_pairs_test",
                   "gpu,model,runtime,mode,precision,batch,seq,n_gpus,interconnect,data,optimizer_step,metric,value\n"
                   "v100-sxm2-16gb,resnet50,pytorch,train,fp32,64,,1,,synthetic,yes,samples_per_s,400\n"
                   "v100-sxm2-16gb,resnet50,pytorch,train,amp,64,,1,,synthetic,yes,samples_per_s,1000\n"
                   "v100-sxm2-16gb,resnet50,pytorch,train,amp,128,,1,,synthetic,yes,samples_per_s,1100\n"
                   "v100-sxm2-16gb,resnet50,pytorch,train,fp32,64,,8,nvlink,synthetic,yes,samples_per_s,2560\n");
  // One same-batch precision pair (fp32 64 -> amp 64): 1000 / 400.
  const auto precision = of(pairs, "precision");
  ASSERT_EQ(precision.size(), 1u);
  EXPECT_DOUBLE_EQ(precision[0]->measured, 2.5);
  // The 8-GPU fp32 row against the 1-GPU one: 2560 / (8 x 400) = 0.8.
  const auto gpus = of(pairs, "gpus");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(gpus[0]->measured_efficiency, 0.8);
  EXPECT_EQ(gpus[0]->to, "8");
  // With the batch free the setup holds two amp rows (64 and 128) for one fp32 row: ambiguous, no pair.
  EXPECT_TRUE(of(pairs, "precision+batch").empty());
}

TEST(WhatIfPairs, ALayoutChosenByPrecisionStillPairs) {
  // NVIDIA's DeepLearningExamples ResNet-50 runs AMP channels-last and FP32 NCHW (configs.yml sets memory_format nhwc
  // only under AMP; main.py defaults to nchw): its published what-if is "AMP in NHWC against FP32 in NCHW". Where a
  // setup also has AMP in NCHW, that row is the fp32 row's pair and the NHWC one is a layout what-if, not a precision
  // one.
  const auto all =
      pairs_of_csv("perfcast_what_if_pairs_layout",
                   "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,layout\n"
                   "t4,resnet50_v1_5,pytorch,infer,fp32,32,,1,real,,samples_per_s,420,nchw\n"
                   "t4,resnet50_v1_5,pytorch,infer,amp,32,,1,real,,samples_per_s,1128,nhwc\n"
                   "t4,resnet50_v1_5,pytorch,infer,fp32,64,,1,real,,samples_per_s,430,nchw\n"
                   "t4,resnet50_v1_5,pytorch,infer,amp,64,,1,real,,samples_per_s,900,nchw\n"
                   "t4,resnet50_v1_5,pytorch,infer,amp,64,,1,real,,samples_per_s,1150,nhwc\n");
  const auto pairs = of(all, "precision");
  ASSERT_EQ(pairs.size(), 2u);
  for (const auto* p : pairs)
    EXPECT_DOUBLE_EQ(p->measured, p->batch == "32" ? 1128.0 / 420.0 : 900.0 / 430.0) << "batch " << p->batch;
}

TEST(WhatIfPairs, RowsTimedOrTunedDifferentlyAreNotOneSetup) {
  // A what-if varies one input. Two runs whose cuDNN algorithms were chosen differently (cudnn.benchmark on against
  // cuDNN's heuristic) or that were timed by different loops (MLPerf's LoadGen against the runtime's own) differ in
  // more than the precision, so they make no pair; the same runs under one setting do.
  const auto pairs = precision_pairs_of_csv(
      "perfcast_what_if_pairs_setup",
      "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,conv_algo,harness\n"
      "t4,resnet50_v1_5,pytorch,infer,fp32,32,,1,synthetic,,samples_per_s,420,autotune,\n"
      "t4,resnet50_v1_5,pytorch,infer,amp,32,,1,synthetic,,samples_per_s,1128,heuristic,\n"
      "t4,resnet50_v1_5,pytorch,infer,fp32,64,,1,synthetic,,samples_per_s,430,,mlperf-singlestream\n"
      "t4,resnet50_v1_5,pytorch,infer,amp,64,,1,synthetic,,samples_per_s,900,,\n"
      "t4,resnet50_v1_5,pytorch,infer,fp32,128,,1,synthetic,,samples_per_s,440,heuristic,\n"
      "t4,resnet50_v1_5,pytorch,infer,amp,128,,1,synthetic,,samples_per_s,1200,heuristic,\n");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].batch, "128");
  EXPECT_DOUBLE_EQ(pairs[0].measured, 1200.0 / 440.0);
}

TEST(WhatIfPairs, APlainValidateJoinsOnlyOneSetupsAmpAndFp32Rows) {
  // `perfcast validate FILE` summarises the file's precision what-ifs. NVIDIA DeepLearningExamples' TF BERT-large
  // pre-training table on one DGX-2 GPU (check_scaling.csv) lists FP32 only at sequence 512 (11.67 seq/s at batch 8)
  // and AMP at 128 (188.04 at batch 64): two sequence lengths, not a what-if, so they make no pair. Of the ResNet-50
  // rows at batch 64 and 128 each amp row pairs with the fp32 row at its own batch.
  const auto dir = std::filesystem::temp_directory_path() / "perfcast_amp_what_ifs";
  std::filesystem::create_directories(dir);
  const auto path = dir / "amp_what_ifs.csv";
  std::ofstream(path)
      << "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value\n"
         "v100-sxm3-32gb,bert_large,tensorflow-xla,train,fp32,8,512,1,synthetic,yes,samples_per_s,11.67\n"
         "v100-sxm3-32gb,bert_large,tensorflow-xla,train,amp,64,128,1,synthetic,yes,samples_per_s,188.04\n"
         "v100-sxm2-16gb,resnet50,pytorch,train,fp32,64,,1,synthetic,yes,samples_per_s,400\n"
         "v100-sxm2-16gb,resnet50,pytorch,train,fp32,128,,1,synthetic,yes,samples_per_s,410\n"
         "v100-sxm2-16gb,resnet50,pytorch,train,amp,128,,1,synthetic,yes,samples_per_s,1100\n"
         "v100-sxm2-16gb,resnet50,pytorch,train,amp,64,,1,synthetic,yes,samples_per_s,1000\n";
  const ValidationReport rep = validate_file(path.string());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(rep.precision_pairs.size(), 2u);
  for (const auto& x : rep.precision_pairs) {
    EXPECT_EQ(x.model, "resnet50");
    EXPECT_EQ(x.varied, "precision");  // the same batch
    EXPECT_DOUBLE_EQ(x.measured, x.batch == "64" ? 1000.0 / 400.0 : 1100.0 / 410.0);
  }
  // The plain validate's pairs are the precision pairs `perfcast validate --pairs` counts for the file.
  ASSERT_EQ(rep.precision_target.count("precision"), 1u);
  EXPECT_EQ(rep.precision_target.at("precision").pairs, 2);
}

TEST(WhatIfPairs, EachRunsBatchPairsAcrossTheLayoutItsPrecisionChose) {
  // NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md@291f0d02, DGX-1 16GB, 1 GPU
  // (check_pytorch.csv lines 40-41): FP32 367 img/s at batch 112 in NCHW, AMP 1200 at batch 256 channels-last
  // (configs.yml picks batch and memory format by precision). The setup holds one row of each, so with the batch
  // free the two rows are its precision pair although their layouts differ (import/config_csv.h kPrecisionPairSkip).
  const auto all =
      pairs_of_csv("perfcast_what_if_pairs_own_batch",
                   "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,layout,host,conv_algo\n"
                   "v100-sxm2-16gb,resnet50_v1_5,pytorch,train,fp32,112,,1,real,,samples_per_s,367,,dgx1,autotune\n"
                   "v100-sxm2-16gb,resnet50_v1_5,pytorch,train,amp,256,,1,real,,samples_per_s,1200,nhwc,dgx1,autotune\n");
  const auto pairs = of(all, "precision+batch");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0]->from, "fp32 b112");
  EXPECT_DOUBLE_EQ(pairs[0]->measured, 1200.0 / 367.0);
}

TEST(WhatIfPairs, FindsTheMultiGpuRowsTheReadmesCount) {
  // data/validation/README.md and docs/scale-out-validation.md: 88 multi-GPU rows of check_scaling.csv and 744 of
  // published_scaling.csv, each with its 1-GPU row.
  const auto check = what_if_pairs(validate_file(kValidation + "check_scaling.csv"));
  EXPECT_EQ(of(check, "gpus").size(), 88u);
  const auto published = what_if_pairs(validate_file(kValidation + "published_scaling.csv"));
  EXPECT_EQ(of(published, "gpus").size(), 744u);
}

TEST(WhatIfPairs, PublishedAmpSpeedupOfResNet50InferenceOnTheV100) {
  // NVIDIA DeepLearningExamples PyTorch/Classification/ConvNets/resnet50v1.5/README.md (NGC 21.03, DGX-1 V100 16GB,
  // inference at batch 256): FP32 1261 img/s (NCHW), AMP 3382 img/s (channels-last), a 2.68x gain. The predicted gain
  // stays within 15%.
  const auto pairs = precision_pairs_of_csv(
      "perfcast_what_if_pairs_amp",
      "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,layout,host,conv_algo\n"
      "v100-sxm2-16gb,resnet50_v1_5,pytorch,infer,fp32,256,,1,real,,samples_per_s,1261,nchw,dgx1,autotune\n"
      "v100-sxm2-16gb,resnet50_v1_5,pytorch,infer,amp,256,,1,real,,samples_per_s,3382,nhwc,dgx1,autotune\n");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_NEAR(pairs[0].measured, 3382.0 / 1261.0, 1e-9);
  EXPECT_NEAR(pairs[0].predicted / pairs[0].measured, 1.0, 0.15) << "predicted " << pairs[0].predicted;
}

TEST(WhatIfPairs, HalfModelTrainingOnPascalGainsLittle) {
  // u39kun/deep-learning-benchmark README@02ef7436, PyTorch 0.3.0 on a GTX 1080 Ti, batch 16, forward + backward
  // (no optimizer step): ResNet-152 77.52 img/s in 32-bit, 82.69 in 16-bit (model.half()), a 1.07x gain. GP102
  // computes the half convolutions in FP32, and half batch norm leaves cuDNN for PyTorch's own kernels, so the
  // predicted gain stays within 15% of the published one. The two rows are also in check_pytorch.csv (calibration),
  // so this guards a calibrated behaviour rather than judging out of sample.
  const auto pairs = precision_pairs_of_csv(
      "perfcast_what_if_pairs_pascal_half",
      "gpu,model,runtime,mode,precision,batch,seq,n_gpus,data,optimizer_step,metric,value,host,runtime_version,conv_algo\n"
      "gtx-1080-ti,resnet152,pytorch,train,fp32,16,,1,synthetic,no,samples_per_s,77.52,desktop-6c,0.3,autotune\n"
      "gtx-1080-ti,resnet152,pytorch,train,fp16,16,,1,synthetic,no,samples_per_s,82.69,desktop-6c,0.3,autotune\n");
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_NEAR(pairs[0].predicted / pairs[0].measured, 1.0, 0.15) << "predicted " << pairs[0].predicted;
}

TEST(WhatIfPairs, PrecisionPairsOnTheCalibrationFilesDoNotGetWorse) {
  // Issue 13's precision what-if (same model, GPU and batch; targets: median ratio error <= 10%, at most 1 pair in 20
  // on the wrong side of a 15% gain) over the calibration files that hold such pairs. Session 13: 66 pairs, median
  // 13.0%, 6 wrong side (docs/calibration.md); then 13.9% once 1x1 convolutions ran without layout transposes
  // (h/lightconv: AMP steps lose transposes FP32 NCHW never paid, and most pairs already over-predict the half-
  // precision gain). Raised openly to 14.0 in that merge, said in the session-13 closing note; the bounds only go
  // down from here.
  std::vector<WhatIfPair> all;
  for (const char* f : {"check_frameworks.csv", "check_pascal.csv", "check_pytorch.csv", "check_recent.csv",
                        "check_scaling.csv", "eval_recsys.csv", "recsys_calibration.csv"}) {
    const auto p = what_if_pairs(validate_file(kValidation + f));
    all.insert(all.end(), p.begin(), p.end());
  }
  const auto precision = of(all, "precision");
  const WhatIfPairStats s = what_if_pair_stats(precision, what_if_pair_setup());
  EXPECT_EQ(s.pairs, 66);
  // 12.8 in session 18 (half batch norm off cuDNN in PyTorch). Raised openly to 13.2 in session 23: the
  // DeepLearningExamples BERT rows now say they ran apex amp O2 (amp_o2, read from run_squad.py), which moved the
  // median 12.7 -> 13.3% through the O2 model; torch.autocast's casts (on since then) bring it to 13.18%
  // (docs/calibration.md, session 23).
  EXPECT_LE(s.median_error_pct, 13.2);
  EXPECT_LE(s.wrong_side, 6);
}

}  // namespace
}  // namespace perfcast
