// Three features checked against figures from outside the code:
//   1. framework versions (--runtime-version, [[version]] rules in data/runtimes/): when TF32 became the default
//      in TensorFlow and PyTorch, from their release notes;
//   2. tensor-core 1x1 convolutions: in NHWC a 1x1 convolution is exactly a GEMM (cuDNN implicit GEMM), so it
//      must cost what the equivalent GEMM costs, while a 3x3 convolution gathers shifted tiles and costs more;
//   3. the Turing FP32-accumulate tensor cap: Lambda Labs' 'RTX 2080 Ti Deep Learning Benchmarks with
//      TensorFlow' (2019) measured TITAN RTX against RTX 2080 Ti.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/batch_predict.h"
#include "analysis/predict.h"
#include "cli_runner.h"
#include "core/error.h"
#include "cost/kernel_cost.h"
#include "cost/op_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/builder.h"
#include "import/config_csv.h"
#include "import/serving_csv.h"
#include "runtime/runtime_profile.h"
#include "test_paths.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- 1. runtime versions

TEST(RuntimeVersion, ComparesDottedVersionsNumerically) {
  // Version numbers are compared part by part as numbers (semantic versioning): 1.15 is newer than 1.9,
  // and a missing part counts as 0 (2.4 is 2.4.0).
  EXPECT_GT(compare_versions("1.15", "1.9"), 0);
  EXPECT_LT(compare_versions("1.9", "1.15"), 0);
  EXPECT_EQ(compare_versions("2.4", "2.4.0"), 0);
}

TEST(RuntimeVersion, MalformedVersionIsAnInputError) {
  EXPECT_THROW(at_version(find_runtime("tensorflow"), "abc"), InputError);
}

TEST(RuntimeVersion, TensorflowXlaTf32ArrivedIn24) {
  // TF 2.4.0 release notes: TF32 on Ampere enabled by default; TF <= 2.3 runs fp32 as FP32. NVIDIA's TF 1.15
  // builds for Ampere (nvidia-tensorflow 1.15.x+nv, release notes 20.06) enable TF32 by default too.
  const RuntimeProfile& xla = find_runtime("tensorflow-xla");
  EXPECT_FALSE(at_version(xla, "2.3").tf32_conv_default);
  EXPECT_TRUE(at_version(xla, "2.4").tf32_conv_default);
  EXPECT_TRUE(at_version(xla, "1.15.4").tf32_conv_default);
}

TEST(RuntimeVersion, TensorflowTf32ArrivedIn24) {
  // TF 2.4.0 release notes, as above.
  const RuntimeProfile& tf = find_runtime("tensorflow");
  EXPECT_FALSE(at_version(tf, "2.3").tf32_conv_default);
  EXPECT_TRUE(at_version(tf, "2.5").tf32_conv_default);
}

TEST(RuntimeVersion, PytorchTf32Defaults) {
  // PyTorch 1.7 added TF32 (allow_tf32 flags, both on); PyTorch 1.12 release notes: matmul TF32 off by default
  // (torch.backends.cuda.matmul.allow_tf32 = False), cuDNN convolutions keep TF32.
  const RuntimeProfile& pt = find_runtime("pytorch");
  EXPECT_TRUE(at_version(pt, "1.10").tf32_matmul_default);
  EXPECT_FALSE(at_version(pt, "1.12").tf32_matmul_default);
  EXPECT_FALSE(at_version(pt, "1.6").tf32_conv_default);
}

TEST(RuntimeVersion, PytorchZeroThreeRanCuda9Cublas) {
  // PyTorch 0.3.0 shipped CUDA 7.5 / 8.0 / 9.0 builds (its install list), and only CUDA 9 runs sm_70 code: a 0.3 run
  // on a V100 linked CUDA 9's cuBLAS, the library DeepBench timed. 0.4 and later also shipped 9.2 / 10.x builds.
  const RuntimeProfile& pt = find_runtime("pytorch");
  EXPECT_TRUE(at_version(pt, "0.3").cublas_cuda9_tensor_grid);
  EXPECT_FALSE(at_version(pt, "0.4").cublas_cuda9_tensor_grid);
  EXPECT_FALSE(at_version(pt, "2.9").cublas_cuda9_tensor_grid);
}

TEST(RuntimeVersion, Cuda9CublasGridCostsDeepBenchSmallN) {
  // DeepBench README@a5a2b60f (cuBLAS of CUDA 9.0, V100, FP16 inputs, FP32 math): M=1760 N=128 K=1760 ran in
  // 74 us (10.7 TFLOPS), M=3072 N=128 K=1024 (A transposed) in 43 us. With the CUDA 9 grid rule a V100 costs
  // both within 1.3x of the measured time; without it (the architecture's own rule, later libraries) both run
  // at under half of it.
  const DeviceSpec v100 = find_gpu("v100-sxm2-16gb");
  const ArchitectureProfile& own = architecture_of(v100);
  const ArchitectureProfile cuda9 = with_cuda9_tensor_grid(own);
  EXPECT_GT(cuda9.cublas_tensor_ctas_per_sm, 1.0);
  const auto cost = [&](const ArchitectureProfile& a, std::int64_t m, std::int64_t n, std::int64_t k) {
    const KernelCostModel km(v100, a);
    const double flops = 2.0 * m * n * k, bytes = 2.0 * (m * k + k * n + m * n);
    return km.gemm(MatmulGeometry{1, m, n, k, false, false}, *a.math_pipe("fp16"), flops, bytes, 1.0, 1,
                   GemmLibrary::kCublas).time_us;
  };
  const struct { std::int64_t m, n, k; double measured_us; } rows[] = {{1760, 128, 1760, 74.0}, {3072, 128, 1024, 43.0}};
  for (const auto& r : rows) {
    EXPECT_GT(cost(cuda9, r.m, r.n, r.k), r.measured_us / 1.3) << r.m << "x" << r.n << "x" << r.k;
    EXPECT_LT(cost(cuda9, r.m, r.n, r.k), r.measured_us * 1.3) << r.m << "x" << r.n << "x" << r.k;
    EXPECT_LT(cost(own, r.m, r.n, r.k), r.measured_us / 2) << r.m << "x" << r.n << "x" << r.k;
  }
}

TEST(RuntimeVersion, NotesNeverChangeAPrediction) {
  // Issue 13: every input is an explicit column; free-text notes describe the setup and are never read. Rows of
  // every validation file predict the same with their notes replaced by text naming other versions.
  for (const auto& entry : std::filesystem::directory_iterator(std::string(PERFCAST_SOURCE_DIR) + "/data/validation")) {
    if (entry.path().extension() != ".csv" || is_serving_measurements(entry.path())) continue;  // no notes read there
    std::vector<ConfigRow> rows = read_config_csv(entry.path(), true);
    std::vector<ConfigRow> renoted = rows;
    for (auto& r : renoted) r.notes = "TensorFlow 1.0; PyTorch 0.4; MXNet 0.9; TensorRT 5.0; system X_TF1_2";
    const auto a = predict_rows(rows);
    const auto b = predict_rows(renoted);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].prediction.has_value(), b[i].prediction.has_value()) << entry.path() << " row " << i;
      if (a[i].prediction) {
        EXPECT_EQ(a[i].prediction->step_us, b[i].prediction->step_us) << entry.path() << " row " << i;
      }
    }
  }
}

PredictRequest a100_resnet50_fp32(const std::string& runtime_version) {
  PredictRequest r;
  r.gpu = "a100-sxm4-40gb";
  r.model = "resnet50";
  r.runtime = "tensorflow-xla";
  r.runtime_version = runtime_version;
  r.mode = Mode::kTrain;
  r.precision = "fp32";
  r.batch = 64;
  return r;
}

TEST(RuntimeVersion, Tf23RunsFp32WithoutTf32OnA100) {
  // A100 datasheet: TF32 tensor 156 TFLOPS against FP32 19.5 TFLOPS (8x). TF 2.3 predates TF32 (TF 2.4 release
  // notes), so its fp32 ResNet-50 training runs on CUDA cores and must be clearly slower: at least 1.5x after the
  // memory-bound kernels that TF32 does not speed up.
  const Prediction tf32 = predict(a100_resnet50_fp32(""));
  const Prediction tf23 = predict(a100_resnet50_fp32("2.3"));
  EXPECT_EQ(tf23.request.runtime_version, "2.3");
  EXPECT_GT(tf32.samples_per_s, 1.5 * tf23.samples_per_s) << tf32.samples_per_s << " vs " << tf23.samples_per_s;
}

TEST(RuntimeVersion, Tf23BuiltAgainstCudnn8KeepsFp32) {
  // TF 2.3 built against CUDA 11 / cuDNN 8 (Lambda's A100 rows) still ran FP32 convolutions as FP32:
  // tensorflow/tensorflow#39764 gave 2.3 an unexported TF32 switch that is off (core/platform/tf32_utils.cc,
  // tf32_allowed{false}) and made cuda_dnn.cc pick CUDNN_FMA_MATH, which forbids TF32, while it is off; the
  // default became true only for 2.4 (tensorflow/community RFC 20200903-tensor-float-32-default). Patch releases
  // of 2.3 follow 2.3, and the first 2.4 release turns both convolutions and matmuls to TF32.
  for (const char* id : {"tensorflow", "tensorflow-xla"}) {
    const RuntimeProfile& rt = find_runtime(id);
    for (const char* v : {"2.3", "2.3.1", "2.3.4"}) {
      const RuntimeProfile at = at_version(rt, v);
      EXPECT_FALSE(at.tf32_conv_default) << id << " " << v;
      EXPECT_FALSE(at.tf32_matmul_default) << id << " " << v;
    }
    EXPECT_TRUE(at_version(rt, "2.4.0").tf32_conv_default) << id;
    EXPECT_TRUE(at_version(rt, "2.4.0").tf32_matmul_default) << id;
  }
}

TEST(RuntimeVersion, Tf32SwitchDoesNotMoveVolta) {
  // cuDNN 8 cudnnMathType_t: on GPUs before the A100, CUDNN_DEFAULT_MATH and CUDNN_FMA_MATH behave the same, and
  // Volta has no TF32 pipe, so a V100 FP32 run is the same under TF 2.3 (TF32 off) and TF 2.5 (TF32 on).
  PredictRequest r = a100_resnet50_fp32("2.3");
  r.gpu = "v100-sxm2-16gb";
  r.runtime = "tensorflow";
  const Prediction tf23 = predict(r);
  r.runtime_version = "2.5";
  const Prediction tf25 = predict(r);
  EXPECT_DOUBLE_EQ(tf23.samples_per_s, tf25.samples_per_s);
}

TEST(RuntimeVersion, Tf32PrecisionNeedsAVersionThatHasIt) {
  // TF 2.4 release notes: TF32 execution is new in 2.4, so TF 2.3 cannot be asked for it; PyTorch gained
  // allow_tf32 in 1.7. Asking is an UnsupportedError that names the runtime and version, not a silent fp32 run.
  PredictRequest r = a100_resnet50_fp32("2.3");
  r.precision = "tf32";
  try {
    predict(r);
    ADD_FAILURE() << "TF 2.3 accepted --precision tf32";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("2.3"), std::string::npos) << e.what();
    EXPECT_EQ(e.reason().id, "precision.runtime_version");
  }
  r.runtime_version = "2.4";
  EXPECT_GT(predict(r).samples_per_s, 0);
  r.runtime = "pytorch";
  r.runtime_version = "1.6";
  EXPECT_THROW(predict(r), UnsupportedError);
}

class RuntimeVersionFiles : public test::ScratchDirTest {
 protected:
  RuntimeVersionFiles() : ScratchDirTest("perfcast-runtime-version") {}
};

TEST_F(RuntimeVersionFiles, CsvColumnIsHonouredAndNotInherited) {
  // The runtime_version column (documented in src/import/config_csv.h) wins; a row with an empty cell and no
  // version in its notes has none.
  const fs::path file = dir_ / "configs.csv";
  test::write_text(file,
                   "gpu,model,runtime,mode,precision,batch,runtime_version,notes\n"
                   "a100-sxm4-40gb,resnet50,tensorflow-xla,train,fp32,64,2.3,\n"
                   "a100-sxm4-40gb,resnet50,tensorflow-xla,train,fp32,64,,\n");
  const std::vector<ConfigRow> rows = read_config_csv(file, false);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].runtime_version, "2.3");
  EXPECT_EQ(request_from_row(rows[0]).runtime_version, "2.3");
  EXPECT_EQ(rows[1].runtime_version, "");
}

TEST_F(RuntimeVersionFiles, RowsWithoutTheColumnDoNotInheritAVersion) {
  // Regression: fast-cpp-csv-parser does not assign columns missing from the file, so a row must not keep the
  // version the previous row named; and a version named only in the notes is not read (issue 13).
  const fs::path file = dir_ / "configs.csv";
  test::write_text(file,
                   "gpu,model,runtime,mode,precision,batch,runtime_version,notes\n"
                   "a100-sxm4-40gb,resnet50,tensorflow,train,fp32,64,2.3,\"TensorFlow 2.3 (tf_cnn_benchmarks, CUDA 11.0)\"\n"
                   "gtx-1080-ti,resnet50,tensorflow,train,fp32,64,,\"TensorFlow 1.0; CUDA 8.0; cuDNN 5.1\"\n"
                   "gtx-1080-ti,resnet50,tensorflow,train,fp32,64,,\n");
  const std::vector<ConfigRow> rows = read_config_csv(file, false);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].runtime_version, "2.3");
  EXPECT_EQ(rows[1].runtime_version, "");
  EXPECT_EQ(rows[2].runtime_version, "");
}

TEST_F(RuntimeVersionFiles, CliRejectsAMalformedVersionOnOneLine) {
  // README / src/README.md: bad flag values are an InputError, printed on one line, exit code 2.
  const test::CliResult r = run("predict --runtime-version x2");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(test::lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("x2"), std::string::npos) << r.err;
}

// ---------------------------------------------------------------- 2. tensor-core 1x1 convolutions

// Forward time of the first op of `kind` in a one-op graph on v100-sxm2-16gb, AMP, TensorFlow (NHWC on tensor
// cores: no layout transposes).
double forward_us(const Graph& g, OpKind kind) {
  static const DeviceSpec device = find_gpu("v100-sxm2-16gb");
  const ArchitectureProfile& arch = architecture_of(device);
  const KernelCostModel kernels(device, arch);
  const RuntimeProfile& runtime = find_runtime("tensorflow");
  const PrecisionPlan plan = resolve_precision("amp", device, arch, runtime, "", true);
  EXPECT_TRUE(is_tensor_pipe(plan.conv_pipe));
  EXPECT_TRUE(is_tensor_pipe(plan.matmul_pipe));
  const CostContext ctx{kernels, runtime, plan, true};
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    if (g.ops[i].kind == kind) return cost_op(g.ops, i, Phase::kForward, ctx).cost.time_us;
  ADD_FAILURE() << "no op of that kind";
  return 0;
}

constexpr std::int64_t kBatch = 32;

// Convolution 256 -> 256 channels on 56x56 (a ResNet-50 stage-1 width), kernel k x k, same padding.
Graph conv_graph(std::int64_t k) {
  GraphBuilder b("conv", kBatch);
  const Tensor x = b.input({256, 56, 56});
  b.conv(x, 256, {k}, {1}, {k / 2});
  return b.finish();
}

// The convolution's implicit GEMM: [N*56*56, 256*k*k] x [256*k*k, 256].
Graph gemm_graph(std::int64_t k) {
  GraphBuilder b("gemm", kBatch);
  const Tensor x = b.input({56 * 56, 256 * k * k});
  b.linear(x, 256, false);
  return b.finish();
}

TEST(TensorCoreConv, PointwiseConvolutionCostsItsGemm) {
  // cuDNN / NVIDIA DL performance guide ('Convolutional Layers User's Guide'): in NHWC a 1x1 convolution is a
  // GEMM of M = N*H*W, N = C_out, K = C_in; it must cost what that GEMM costs (within 10%).
  const double conv = forward_us(conv_graph(1), OpKind::kConv);
  const double gemm = forward_us(gemm_graph(1), OpKind::kMatmul);
  ASSERT_GT(gemm, 0);
  EXPECT_NEAR(conv / gemm, 1.0, 0.10) << conv << " us vs " << gemm << " us";
}

TEST(TensorCoreConv, ThreeByThreeConvolutionIsSlowerThanItsGemm) {
  // Same FLOPs as its implicit GEMM (K = 9*C_in), but each filter tap gathers a shifted input tile, so the
  // convolution runs below the GEMM's rate (same guide: implicit-GEMM convolutions reach less than plain GEMMs).
  const double conv = forward_us(conv_graph(3), OpKind::kConv);
  const double gemm = forward_us(gemm_graph(3), OpKind::kMatmul);
  EXPECT_GT(conv, gemm) << conv << " us vs " << gemm << " us";
}

// ---------------------------------------------------------------- 3. Turing FP32-accumulate tensor cap

TEST(TuringTensorCap, PipePeakOfFullRateBoardIsCapped) {
  // Datasheets: TITAN RTX 130.5 TFLOPS FP16 tensor with FP32 accumulate (full rate); RTX 2080 Ti 53.8 (GeForce
  // half rate). The cap applies only to boards the SM cannot feed at their datasheet rate.
  const DeviceSpec titan = find_gpu("titan-rtx");
  const DeviceSpec ti = find_gpu("rtx-2080-ti");
  const KernelCostModel titan_k(titan, architecture_of(titan));
  const KernelCostModel ti_k(ti, architecture_of(ti));
  EXPECT_LT(titan_k.pipe_peak(Pipe::kTcFp16Fp32Acc), 130.5);
  EXPECT_NEAR(ti_k.pipe_peak(Pipe::kTcFp16Fp32Acc), 53.8, 0.05);
}

// Geometric mean over Lambda's six models of TITAN RTX / RTX 2080 Ti training throughput.
double titan_over_2080ti(const std::string& precision) {
  struct Case {
    const char* model;
    std::int64_t batch;
  };
  const Case cases[] = {{"resnet50", 64}, {"resnet152", 32}, {"inception_v3", 64},
                        {"inception_v4", 32}, {"vgg16", 64}, {"alexnet", 512}};
  double log_sum = 0;
  for (const auto& c : cases) {
    PredictRequest r;
    r.model = c.model;
    r.batch = c.batch;
    r.runtime = "tensorflow";
    r.mode = Mode::kTrain;
    r.precision = precision;
    r.gpu = "titan-rtx";
    const double titan = predict(r).samples_per_s;
    r.gpu = "rtx-2080-ti";
    const double ti = predict(r).samples_per_s;
    log_sum += std::log(titan / ti);
  }
  return std::exp(log_sum / 6.0);
}

TEST(TuringTensorCap, LambdaTitanRtxOver2080TiFp16) {
  // Lambda Labs, 'RTX 2080 Ti Deep Learning Benchmarks with TensorFlow' (2019): RTX 2080 Ti = 0.71 x TITAN RTX
  // in FP16 training, i.e. TITAN RTX at 1.41x, averaged over ResNet-50/152, Inception v3/v4, VGG-16, AlexNet.
  const double ratio = titan_over_2080ti("amp");
  EXPECT_GE(ratio, 1.30) << "geometric mean " << ratio;
  EXPECT_LE(ratio, 1.52) << "geometric mean " << ratio;
}

TEST(TuringTensorCap, LambdaTitanRtxOver2080TiFp32) {
  // Same article: RTX 2080 Ti = 0.87 x TITAN RTX in FP32 training, i.e. TITAN RTX at 1.15x.
  const double ratio = titan_over_2080ti("fp32");
  EXPECT_GE(ratio, 1.08) << "geometric mean " << ratio;
  EXPECT_LE(ratio, 1.22) << "geometric mean " << ratio;
}

// A [[version]] rule may set a number, not only a switch: Paddle 2.0-2.3 ran the legacy dygraph, whose per-op
// scheduling the 2.4.0 release note says the new dynamic graph made more than 50% faster for over 90% of APIs.
TEST(RuntimeVersion, VersionRulesSetNumbersToo) {
  const RuntimeProfile paddle = find_runtime("paddle");
  EXPECT_GE(at_version(paddle, "2.3").host_overhead_per_kernel_us,
            1.5 * at_version(paddle, "2.4").host_overhead_per_kernel_us);
  EXPECT_DOUBLE_EQ(at_version(paddle, "2.6").host_overhead_per_kernel_us, paddle.host_overhead_per_kernel_us);
}

// cuDNN's kernels are the same whichever framework calls them: DLInfBench's MXNet (a mid-2017 0.x build),
// PyTorch 0.1.12 and TensorFlow 1.2.1 runs on the GTX 1080 Ti all linked cuDNN 5.1.10 (RESULT_GTX1080Ti.md), so
// MXNet 0.x takes the library rate PyTorch 0.1.12 and TF 1.2.1 take, and the same as MXNet 1.x.
TEST(RuntimeVersion, Mxnet0xRunsCudnnAtTheRateOtherFrameworksGetFromTheSameCudnn) {
  const RuntimeProfile mxnet = find_runtime("mxnet");
  EXPECT_DOUBLE_EQ(at_version(mxnet, "0.10").library_efficiency,
                   at_version(find_runtime("pytorch"), "0.1.12").library_efficiency);
  EXPECT_DOUBLE_EQ(at_version(mxnet, "0.10").library_efficiency,
                   at_version(find_runtime("tensorflow"), "1.2.1").library_efficiency);
  EXPECT_DOUBLE_EQ(at_version(mxnet, "0.7").library_efficiency, at_version(mxnet, "1.7").library_efficiency);
}

// TF 1.2 (before grappler's layout pass ran by default) computes a Conv2D on NHWC tensors in NCHW, with a
// transpose of its input and output around each call (tensorflow/core/kernels/conv_ops.cc); the same graph
// in NCHW has none. Newer TF (and NCHW graphs) pay nothing.
TEST(RuntimeVersion, OldTensorflowTransposesEveryNhwcConvolution) {
  EXPECT_TRUE(at_version(find_runtime("tensorflow"), "1.2.1").nhwc_conv_transposes);
  EXPECT_FALSE(at_version(find_runtime("tensorflow"), "1.15").nhwc_conv_transposes);
  PredictRequest r;
  r.model = "resnet50";
  r.gpu = "gtx-1080-ti";
  r.runtime = "tensorflow";
  r.mode = Mode::kInfer;
  r.batch = 32;
  r.runtime_version = "1.2.1";
  const Prediction nchw = predict(r);
  r.channels_last = true;
  const Prediction nhwc = predict(r);
  // Each transpose reads and writes the convolution's input and output once more: more DRAM traffic, and two
  // more kernels per convolution, except the 1x1 stride-1 ones TF runs as a cuBLAS GEMM in NHWC. ResNet-50 v1
  // (He et al. 2016, stride in the first 1x1) has 53 convolutions: the 7x7 stem, 16 3x3, and 36 1x1 of which 6
  // have stride 2 (the first 1x1 and the projection of stages 2-4): 1 + 16 + 6 = 23 are transposed.
  EXPECT_GT(nhwc.step.bytes, nchw.step.bytes * 1.05);
  EXPECT_NEAR(nhwc.step.launches - nchw.step.launches, 2.0 * 23, 1.0);
  EXPECT_LT(nhwc.samples_per_s, nchw.samples_per_s);
  r.runtime_version = "1.15";
  EXPECT_DOUBLE_EQ(predict(r).step.bytes, [&] {
    PredictRequest q = r;
    q.channels_last = false;
    return predict(q).step.bytes;
  }()) << "fp32 on Pascal after the layout pass: NHWC and NCHW run the same kernels";
}

}  // namespace
}  // namespace perfcast
