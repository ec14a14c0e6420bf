// The kernel model against measured kernels (tests/data/kernels: a subsample of shared/kernels/neusight_train,
// PyTorch 2.1, FP32) and `perfcast op` as a user runs it. Thresholds are the kernel-level errors the fit reached
// (docs/kernel-model.md); lower them as the model improves, never raise them quietly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

#include "analysis/kernel_fit.h"
#include "analysis/single_op.h"
#include "analysis/tensor_gemm_fit.h"
#include "cli_runner.h"
#include "core/error.h"
#include "core/data_files.h"
#include "core/toml_reader.h"
#include "cost/cost_constants.h"
#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "import/measured_kernels.h"
#include "test_paths.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;
const fs::path kKernels = fs::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "kernels";

// The measured files' Device column -> catalog id: data/kernel_fit_setup.toml [devices], the map fit-kernels reads.
const std::map<std::string, std::string> kDevice = [] {
  std::map<std::string, std::string> ids;
  const toml::table setup = parse_toml_file(data_dir() / "kernel_fit_setup.toml");
  for (const auto& [device, id] : TomlFields(setup, "kernel_fit_setup.toml").table("devices"))
    ids[std::string(device.str())] = id.value_or(std::string{});
  return ids;
}();

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Large GEMMs (over 200 us measured: the harness's host floor and launch do not matter there) are predicted
// within 20% median over the five GPUs, and within 25% on each but the P4, whose long linear layers (several ms
// each) run at a third of its bmm rate: a 75 W passively cooled board slowing further as it heats, which one
// sustained clock per board does not follow (docs/kernel-model.md).
TEST(KernelModel, LargeMeasuredGemmsWithinTwentyPercent) {
  std::map<std::string, std::vector<double>> ape;
  std::map<std::string, OpContext> ctx;
  for (const char* op : {"bmm", "linear"})
    for (const auto& e : fs::directory_iterator(kKernels / op))
      for (const MeasuredKernel& k : read_measured_kernels(e.path().string())) {
        if (k.latency_us < 200) continue;
        const std::string id = kDevice.at(k.device);
        if (!ctx.count(id)) ctx.emplace(id, op_context(id, "pytorch", "fp32"));
        const double pred = predict_op(measured_op_spec(k), ctx.at(id)).cost.time_us;
        ape[id].push_back(std::abs(pred - k.latency_us) / k.latency_us);
      }
  ASSERT_EQ(ape.size(), 5u);
  std::vector<double> all;
  for (const auto& [id, v] : ape) {
    ASSERT_GE(v.size(), 30u) << id;
    EXPECT_LT(median(v), id == "tesla-p4" ? 0.40 : 0.25) << id << ": " << v.size() << " GEMMs";
    all.insert(all.end(), v.begin(), v.end());
  }
  EXPECT_LT(median(all), 0.20) << all.size() << " GEMMs";
}

// cuBLAS is column-major: PyTorch's bmm of row-major [B,M,K] x [B,K,N] runs as C^T = B^T A^T, so the first number of
// the kernel's tile runs along the output's columns. On Pascal cuBLAS runs only maxwell_sgemm_128x64_nn for bmm, and
// the measured rows (over 200 us) show it: few output rows (M < 64) cost a 64-row tile, few output columns (< 64) a
// 128-column one. Measured, not the model's own numbers: with the tile the other way round these rows were
// predicted 1.8-2x too slow and 0.6x too fast (docs/kernel-model.md, "cuBLAS tile orientation").
TEST(KernelModel, PascalBmmTileRunsAlongTheOutputColumns) {
  for (const char* file : {"Tesla_P4.csv.gz", "Tesla_P100-PCIE-16GB.csv.gz"}) {
    std::vector<double> few_rows, few_cols;
    std::optional<OpContext> ctx;
    for (const MeasuredKernel& k : read_measured_kernels((kKernels / "bmm" / file).string())) {
      if (k.latency_us < 200) continue;
      if (!ctx) ctx.emplace(op_context(kDevice.at(k.device), "pytorch", "fp32"));
      const OpSpec s = measured_op_spec(k);
      const double ratio = predict_op(s, *ctx).cost.time_us / k.latency_us;
      if (s.m < 64) few_rows.push_back(ratio);
      if (s.n < 64) few_cols.push_back(ratio);
    }
    ASSERT_GE(few_rows.size(), 10u) << file;
    ASSERT_GE(few_cols.size(), 10u) << file;
    EXPECT_NEAR(median(few_rows), 1.0, 0.25) << file << ": " << few_rows.size() << " rows with M < 64";
    EXPECT_NEAR(median(few_cols), 1.0, 0.25) << file << ": " << few_cols.size() << " rows with N < 64";
  }
}

// cuBLAS picks a kernel by the call's orientation: a linear layer's forward (x W^T) is a "tn" call, its input
// gradient (dY W) an "nn" call and its weight gradient (dY^T X) an "nt" call. On the P100 the measured tn calls
// (NeuSight linear rows, CUDA 12.1) ran only maxwell_sgemm_32x128/64x64/128x32_tn, every measured single nn call above
// the small-shape kernel maxwell_sgemm_128x64_nn, and published Pascal profiles name maxwell_sgemm_128x64_nt for nt
// calls (docs/calibration.md, session 34 h/dgrad34). A large square layer takes the 128x64 tile only backward.
TEST(KernelModel, PascalLinearBackwardRunsTheNnTile) {
  const OpContext ctx = op_context("p100-pcie-16gb", "pytorch", "fp32");
  OpSpec s;
  s.op = "linear", s.m = 4096, s.n = 4096, s.k = 4096, s.bias = false;
  const auto tile = [&](const char* direction) {
    s.direction = direction;
    const KernelCost c = predict_op(s, ctx).cost;
    return std::pair{c.tile_m, c.tile_n};
  };
  EXPECT_NE(tile("fwd"), (std::pair{128, 64}));
  EXPECT_EQ(tile("bwd_data"), (std::pair{128, 64}));
  EXPECT_EQ(tile("bwd_filter"), (std::pair{128, 64}));
}

// The measured T4 GEMMs run slower the longer the call (the NeuSight harness repeats each call 25 times back to back;
// docs/kernel-model.md, "Long kernels"), V100 GEMMs do not: `fit-kernels --soak` on the test subsample finds a
// soaked rate share well under 1 on the T4 and none on the V100.
TEST(KernelModel, SoakFitFindsTheLongCallSlowdownOnlyWhereMeasured) {
  KernelFitOptions o;
  o.kernels_dir = kKernels.string();
  o.leave_one_out = false;
  o.soak = true;
  o.max_evaluations = 1500;
  const KernelFit fit = fit_kernels(o);
  std::map<std::string, double> v;
  for (const FitParameter& p : fit.parameters) v[p.name] = p.value;
  ASSERT_TRUE(v.count("harness.soak_bmm.t4"));
  EXPECT_LT(std::min(v["harness.soak_bmm.t4"], v["harness.soak_linear.t4"]), 0.85);
  EXPECT_GT(v["harness.soak_bmm.v100-pcie-32gb"], 0.9);
}

// A GPU the model has no kernels of: the P100 and the V100, each held out of `fit-kernels` on the test subsample,
// predict their measured elementwise rows within 15% median, and softmax and LayerNorm within 25% (the P100's
// LayerNorm on the median ratio only, its in-sample error being 27%), against the measured latencies (shared/kernels/neusight_train). Half of these rows sit on the harness's host floor, which
// belongs to the measuring machine (the held-out board's host speed is read off its floor rows), the rest stream
// at the held-out architecture's published STREAM-like efficiency (architectures.toml) scaled by the fitted
// architectures' fitted/start ratio. With the fitted architectures' mean efficiency and the host speed at 1 they
// were 0.66x (P100) and 0.8x (V100) of the measured times, 22-47% median error (docs/kernel-model.md, "Leave one
// GPU out: the host floor").
TEST(KernelModel, HeldOutHbmGpusPredictMemoryBoundRowsAtTheirMeasuredTimes) {
  KernelFitOptions o;
  o.kernels_dir = kKernels.string();
  o.leave_out_archs = {"sm_60", "sm_70"};
  o.max_evaluations = 500;
  const KernelFit fit = fit_kernels(o);
  int checked = 0;
  for (const GroupError& e : fit.leave_one_gpu_out) {
    const bool elementwise = e.op == "elementwise_binary" || e.op == "elementwise_unary";
    if (!elementwise && e.op != "softmax" && e.op != "layernorm") continue;
    const double limit = elementwise ? 15 : 25;
    // The P100's LayerNorm rows spread by shape in sample too (27.5% median error at 1.06): their median ratio only.
    if (e.op != "layernorm" || e.gpu != "p100-pcie-16gb") {
      EXPECT_LT(e.median_ape, limit) << e.gpu << " " << e.op << ": median pred/meas " << std::exp(e.median_log_ratio);
    }
    EXPECT_NEAR(std::exp(e.median_log_ratio), 1.0, limit / 100) << e.gpu << " " << e.op;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// With the harness's per-call cost on the memory-bound classes as the host's launch (host speed x host_launch_us, in
// series with the kernel), the fitted DRAM efficiency is the rate the kernels stream at: on the V100 and the A100 40GB
// within the published STREAM-like figures, gpu-benches' gpu-stream (te42kyfo/gpu-benches@a7dc559c gpu-stream/v100.txt:
// scale 802, triad 814 of 900 GB/s; a100_40.txt: scale 1381, triad 1360 of 1555 GB/s) and Jia et al. 2018 (790-850
// of 900 GB/s on the V100), 0.87-0.94 and 0.85-0.90 here. The default fit (launch_us for every class) reads the
// ~15 us intercept of the long calls as rate and stays below them (0.80 and 0.78 in data/kernel_fit.toml).
// The fit starts host_launch_us at 25 us, away from the intercept, so that the rates are the fit's doing: held at 25
// the efficiencies are 0.98 and 0.94, above the published rates, and the value must leave its start to pass. No
// outside source gives the harness's per-call cost itself, so its value is not asserted (docs/calibration.md, session
// 41, h/fit41: from 5 us or 35 us the fit stays near its start, 6.9 and 28 us, outside the rates on both sides).
TEST(KernelModel, HostLaunchFitStreamsAtPublishedStreamRates) {
  KernelFitOptions o;
  o.kernels_dir = kKernels.string();
  o.leave_one_out = false;
  o.max_evaluations = 1500;
  o.host_launch_ops = std::vector<std::string>{"elementwise_binary", "elementwise_unary", "softmax", "layernorm"};
  o.start_host_launch_us = 25.0;
  const KernelFit fit = fit_kernels(o);
  std::map<std::string, double> v;
  const FitParameter* host_launch = nullptr;
  for (const FitParameter& p : fit.parameters) {
    v[p.name] = p.value;
    if (p.name == "harness.host_launch_us") host_launch = &p;
  }
  EXPECT_GT(v.at("sm_70.dram_efficiency"), 0.87);
  EXPECT_LT(v.at("sm_70.dram_efficiency"), 0.94);
  EXPECT_GT(v.at("sm_80.dram_efficiency"), 0.85);
  EXPECT_LT(v.at("sm_80.dram_efficiency"), 0.90);
  // The fit started where the test asked and moved the value off it.
  ASSERT_NE(host_launch, nullptr);
  EXPECT_EQ(host_launch->start, 25.0);
  EXPECT_LT(host_launch->value, 25.0 - 3.0);
  // A class name that is not one: the one-line error names the nearest.
  o.host_launch_ops = std::vector<std::string>{"elementwise_binry"};
  EXPECT_THROW(fit_kernels(o), InputError);
  // A start outside data/kernel_fit_setup.toml's host_launch_us bounds is an error, not silently clamped.
  o.host_launch_ops.reset();
  o.start_host_launch_us = 50.0;
  EXPECT_THROW(fit_kernels(o), InputError);
}

// Large elementwise kernels stream at the board's achievable DRAM bandwidth: adds of over 30M elements (360 MB
// and more) within 15% on every measured GPU but the P100, whose fitted bandwidth (one value for every size)
// sits below what its largest kernels reach: within 25% there.
TEST(KernelModel, LargeElementwiseKernelsAtTheMeasuredBandwidth) {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(kKernels / "add"))
    for (const MeasuredKernel& k : read_measured_kernels(e.path().string())) {
      if (k.b * k.m < 30'000'000) continue;
      OpSpec s;
      s.op = "elementwise", s.function = "add", s.rows = k.b, s.cols = k.m;
      const double pred = predict_op(s, op_context(kDevice.at(k.device), "pytorch", "fp32")).cost.time_us;
      EXPECT_NEAR(pred / k.latency_us, 1.0, k.device == "Tesla P100-PCIE-16GB" ? 0.25 : 0.15) << k.device << " " << k.b << "x" << k.m;
      ++checked;
    }
  EXPECT_GE(checked, 5);
}

// The conv algorithm a measured row ran, from kernel names as they appear in the NeuSight rows (cuDNN 8.9.2).
TEST(KernelModel, ReadsTheConvAlgorithmOffCudnnKernelNames) {
  EXPECT_EQ(cudnn_conv_algorithm(";void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(x);volta_sgemm_64x64_nn;"
                                 "void cudnn::winograd_nonfused::winogradForwardOutput4x4<float, float>(y)"),
            "winograd_nonfused");
  EXPECT_EQ(cudnn_conv_algorithm(";void cudnn::winograd::generateWinogradTilesKernel<0, float, float>(z);"
                                 "cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"),
            "winograd_fused");
  EXPECT_EQ(cudnn_conv_algorithm(";void fft2d_r2c_32x32<float, false, 0u, false>(a);volta_gcgemm_64x64_nt;void fft2d_c2r_32x32"),
            "fft");
  EXPECT_EQ(cudnn_conv_algorithm(";void cudnn::cnn::im2col4d_kernel<float, long>(b);void explicit_convolve_sgemm<float, int>(c)"),
            "gemm_im2col");
  EXPECT_EQ(cudnn_conv_algorithm(";void cask_cudnn_infer::computeOffsetsKernel(d);cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1"),
            "implicit_gemm");
}

// Without autotuning (PyTorch's default cudnn.benchmark = False) perfcast runs cuDNN's heuristic rules: on every
// measured GPU they name the algorithm cuDNN 8.9.2 ran (read off the kernel names) on most convolutions, where the
// fastest-algorithm choice matched on under half of them (docs/kernel-model.md).
TEST(KernelModel, UntunedConvolutionsRunTheAlgorithmCudnnRan) {
  std::map<std::string, std::pair<int, int>> agree;  // device -> (same, rows)
  for (const auto& e : fs::directory_iterator(kKernels / "conv"))
    for (const MeasuredKernel& k : read_measured_kernels(e.path().string())) {
      OpContext ctx = op_context(kDevice.at(k.device), "pytorch", "fp32");
      ctx.runtime.conv_autotune = false;
      const OpSpec s = measured_op_spec(k);
      std::string chose(predict_op(s, ctx).cost.algorithm);
      if (chose == "gemm") chose = "implicit_gemm";
      auto& [same, rows] = agree[k.device];
      same += chose == cudnn_conv_algorithm(k.kernels);
      ++rows;
    }
  EXPECT_EQ(agree.size(), 5u);
  for (const auto& [device, a] : agree) EXPECT_GT(a.first, a.second / 2) << device << ": " << a.first << " of " << a.second;
}

TEST(KernelModel, NamesWhatBoundsAKernel) {
  const OpContext v100 = op_context("v100-pcie-32gb", "pytorch", "fp32");
  OpSpec big;
  big.op = "matmul", big.m = big.n = big.k = 4096;
  EXPECT_EQ(bound_name(predict_op(big, v100).cost.bound), "cuda_compute");
  OpSpec stream;
  stream.op = "elementwise", stream.rows = 8192, stream.cols = 8192;
  EXPECT_EQ(bound_name(predict_op(stream, v100).cost.bound), "dram_bandwidth");
  OpSpec tiny;
  tiny.op = "elementwise", tiny.rows = 1, tiny.cols = 64;
  EXPECT_EQ(bound_name(predict_op(tiny, v100).cost.bound), "latency");
}

// A 70 W T4 cannot hold its 1590 MHz boost with every SM busy on FP32 FMAs (its datasheet TDP over 40 SMs);
// the 250 W V100 PCIe can.
TEST(KernelModel, LowPowerBoardsRunLargeGemmsBelowBoost) {
  OpSpec big;
  big.op = "matmul", big.m = big.n = big.k = 4096;
  EXPECT_LT(predict_op(big, op_context("t4", "pytorch", "fp32")).cost.clock_factor, 0.9);
  EXPECT_GT(predict_op(big, op_context("a100-pcie-40gb", "pytorch", "fp32")).cost.clock_factor, 0.95);
}

// cuBLAS's SGEMM kernels put a split-K GEMM's K slices on grid.z and reduce them in place or in a separate
// splitKreduce_kernel pass; a batched GEMM's grid.z is its batch. Rows from shared/kernels/neusight_train/linear:
// A100, 197 x 752 -> 211, ampere_sgemm_32x32_sliced1x4_tn on a 7 x 7 x 8 grid, no reduce pass; P100, 230 x 143 -> 4,
// maxwell_sgemm_128x32_tn on 1 x 8 x 2 and a splitKreduce_kernel.
TEST(KernelModel, ReadsCublasSplitKOffTheGrid) {
  MeasuredKernel inplace;
  inplace.op = MeasuredOp::kLinear, inplace.grid_z = 8, inplace.kernels = ";ampere_sgemm_32x32_sliced1x4_tn";
  EXPECT_EQ(cublas_split_k(inplace), 8);
  MeasuredKernel reduce;
  reduce.op = MeasuredOp::kLinear, reduce.grid_z = 2;
  reduce.kernels = ";maxwell_sgemm_128x32_tn;void splitkreduce_kernel<32, 16, int, float, float, float, float, true, true, false>(x)";
  EXPECT_EQ(cublas_split_k(reduce), 2);
  MeasuredKernel batched;
  batched.op = MeasuredOp::kBmm, batched.grid_z = 12, batched.kernels = ";volta_sgemm_128x64_nn";
  EXPECT_EQ(cublas_split_k(batched), 1);
  MeasuredKernel no_grid;
  no_grid.op = MeasuredOp::kLinear;
  EXPECT_EQ(cublas_split_k(no_grid), 1);
}

// Two plain GEMMs measured on all five GPUs (shared/kernels/neusight_train/linear): 62 rows x 30000 -> 2 fills one
// or two CTAs, and cuBLAS split K on every GPU (grid.z 40-120, with a splitKreduce_kernel pass); 112 rows x 120 -> 14
// is as small but shallow, and cuBLAS split on none (grid.z 1; no measured linear row with K < 128 was split on any
// GPU). perfcast makes the same choice on each.
TEST(KernelModel, SplitsKWhereCublasDidOnEveryMeasuredGpu) {
  OpSpec deep;
  deep.op = "linear", deep.m = 62, deep.k = 30000, deep.n = 2;
  OpSpec shallow;
  shallow.op = "linear", shallow.m = 112, shallow.k = 120, shallow.n = 14;
  for (const char* gpu : {"p100-pcie-16gb", "tesla-p4", "v100-pcie-32gb", "t4", "a100-pcie-40gb"}) {
    const OpContext ctx = op_context(gpu, "pytorch", "fp32");
    EXPECT_GT(predict_op(deep, ctx).cost.split_k, 1) << gpu;
    EXPECT_EQ(predict_op(shallow, ctx).cost.split_k, 1) << gpu;
  }
}

// cuBLAS's SGEMMs split grids past one wave: NeuSight's V100 PCIe linear row B = 1, M = 16, N = 40949 (in), K = 5472
// (out) (PyTorch 2.1, CUDA 12.1; shared/kernels/neusight_train/linear) ran volta_sgemm_64x32_sliced1x4_tn on an
// 86 x 1 x 7 grid (1625 us): 86 tiles, just over one wave of the 80 SMs, and K in 7 slices. perfcast splits K as
// deeply as cuBLAS did (within 2).
TEST(KernelModel, SplitsKPastOneWaveAsCublasDidOnTheV100) {
  OpSpec wide;
  wide.op = "linear", wide.m = 16, wide.k = 40949, wide.n = 5472;
  const OpContext ctx = op_context("v100-pcie-32gb", "pytorch", "fp32");
  EXPECT_NEAR(predict_op(wide, ctx).cost.split_k, 7, 2);
}

// The partial-sum cost of a cuBLAS SGEMM's split-K ([gemm] split_k_partial_bytes_cublas_cuda, off in the shipped
// data: tried in session 32, not kept). The same measured V100 row as above (16 x 40949 -> 5472, 7 slices, 1625 us;
// shared/kernels/neusight_train/linear) moves 7 x 16 x 5472 x 8 bytes of partials, a few microseconds at the V100's
// DRAM rate: charged by that traffic the kernel lands within 15% of the measured time, where the flat
// split_k_overhead share of the rate puts it past it.
TEST(KernelModel, SplitKPartialSumsCostTheirTrafficOnTheV100) {
  const DeviceSpec device = find_gpu("v100-pcie-32gb");
  const ArchitectureProfile& arch = architecture_of(device);
  CostConstants flat = cost_constants();
  flat.split_k_partial_bytes_cublas_cuda = 0;
  CostConstants traffic = flat;
  traffic.split_k_partial_bytes_cublas_cuda = 8;
  MatmulGeometry g;
  g.m = 16, g.n = 5472, g.k = 40949;
  const double flops = 2.0 * 16 * 5472 * 40949, bytes = 4.0 * (16.0 * 40949 + 40949.0 * 5472 + 16.0 * 5472);
  const KernelCost on = KernelCostModel(device, arch, traffic).gemm(g, Pipe::kFp32, flops, bytes, 1, 1, GemmLibrary::kCublas);
  const KernelCost off = KernelCostModel(device, arch, flat).gemm(g, Pipe::kFp32, flops, bytes, 1, 1, GemmLibrary::kCublas);
  EXPECT_GT(on.split_k, 1);
  EXPECT_NEAR(on.time_us / 1625.0, 1.0, 0.15);
  EXPECT_GT(off.time_us, on.time_us);
}

class OpCli : public test::ScratchDirTest {};

TEST_F(OpCli, ConfigsGiveEveryRowAStatusAndASummary) {
  test::write_text(dir_ / "ops.csv",
                   "gpu,op,precision,direction,m,n,k,a_trans,b_trans,batch_count,conv_n,conv_c,conv_h,conv_w,conv_k,"
                   "conv_r,conv_s,pad_h,pad_w,stride_h,stride_w,rows,cols\n"
                   "gtx-1080-ti,matmul,fp32,fwd,1024,1024,1024,N,N,1,,,,,,,,,,,,,\n"
                   "gtx-1080-ti,conv2d,fp32,bwd_filter,,,,,,,32,64,56,56,64,3,3,1,1,1,1,,\n"
                   "gtx-1080-ti,matmul,bf16,fwd,1024,1024,1024,N,N,1,,,,,,,,,,,,,\n"
                   "gtx-1080-tii,matmul,fp32,fwd,1024,1024,1024,N,N,1,,,,,,,,,,,,,\n"
                   "gtx-1080-ti,softmax,fp32,fwd,,,,,,,,,,,,,,,,,,4096,1024\n");
  const auto r = run("op --configs ops.csv --out out.csv");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("3 ok, 2 failed"), std::string::npos) << r.err;
  const auto lines = test::lines_of(test::slurp(dir_ / "out.csv"));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[0].find("predicted_us,algorithm,bound,status"), std::string::npos);
  EXPECT_TRUE(lines[1].ends_with(",ok"));
  EXPECT_NE(lines[3].find("unsupported:"), std::string::npos);
  EXPECT_NE(lines[4].find("did you mean 'gtx-1080-ti'"), std::string::npos);
}

// A misspelt column would be passed through and every row costed at that setting's default (fp32 for a
// misspelt precision): the file is refused with the column and the nearest one named, exit 2, no --out file.
TEST_F(OpCli, ConfigsMistypedColumnSuggestsNearest) {
  test::write_text(dir_ / "typo.csv", "gpu,op,m,n,k,precison\ngtx-1080-ti,matmul,64,64,64,fp16\n");
  const auto r = run("op --configs typo.csv --out out.csv");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("'precison'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'precision'"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.csv"));
}

// Each --configs row is costed from its own columns (docs/kernel-model.md): --precision fp16 or --gpu beside it
// changed no row and the CSV came back at the file's settings. Refused with the flag named, exit 2, no --out file.
TEST_F(OpCli, ConfigsRefusesFlagsItWouldIgnore) {
  test::write_text(dir_ / "ops.csv", "gpu,op,m,n,k\ngtx-1080-ti,matmul,1024,1024,1024\n");
  for (const std::string flag : {"--precision fp16", "--gpu a100-sxm4-40gb", "--m 64"}) {
    const auto r = run("op --configs ops.csv --out out.csv " + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find(flag.substr(0, flag.find(' '))), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("does not apply with --configs"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "out.csv"));
  }
  EXPECT_EQ(run("op --configs ops.csv --out out.csv").code, 0);
}

TEST_F(OpCli, FitKernelsLeaveOutNamesAMeasuredArchitecture) {
  const auto r = run("fit-kernels --kernels " + kKernels.string() + " --no-leave-one-out --leave-out sm_08");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("did you mean 'sm_80'"), std::string::npos) << r.err;
}

TEST_F(OpCli, OneGemmWithItsTileAndBound) {
  const auto r = run("op --gpu h100-sxm5-80gb --op matmul --m 8192 --n 8192 --k 8192 --precision bf16 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"bound\": \"tensor_compute\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"tile\""), std::string::npos);
  const auto bad = run("op --gpu h100-sxm5-80gb --op matmul --m 0 --n 8 --k 8");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(test::lines_of(bad.err).size(), 1u) << bad.err;
}


// GP102 has no tensor cores; INT8 runs dp4a at 4x the FP32 rate (CUDA programming guide, cc 6.1), so a large INT8
// GEMM on a GTX 1080 Ti is 2-4x faster than the same FP32 GEMM (DeepBench's INT8 inference GEMMs), and BF16 is
// refused with the reason.
TEST(KernelModel, Gp102RunsInt8OnDp4aAndRefusesBf16) {
  OpSpec g;
  g.op = "matmul", g.m = g.n = g.k = 4096;
  const double fp32 = predict_op(g, op_context("gtx-1080-ti", "pytorch", "fp32")).cost.time_us;
  const OpPrediction int8 = predict_op(g, op_context("gtx-1080-ti", "pytorch", "int8"));
  EXPECT_EQ(int8.cost.pipe, Pipe::kDp4a);
  EXPECT_GT(fp32 / int8.cost.time_us, 2.0);
  EXPECT_LT(fp32 / int8.cost.time_us, 4.2);
  EXPECT_THROW(op_context("gtx-1080-ti", "pytorch", "bf16"), UnsupportedError);
}


// A large square HGEMM on the V100 (FP16 inputs, FP32 accumulate on tensor cores): torch.matmul at n = 8192 measures
// 95 TFLOPS on a V100 16GB in NGC PyTorch 22.07 (github.com/mli/transformers-benchmarks README@04df81d0, the best of
// n = 128-8192). gemm_efficiency_tensor comes from CUDA 9-era HGEMMs (83-90 TFLOPS), so the prediction may sit below
// the CUDA 11.7 figure, by no more than 15%, and not above it.
TEST(KernelModel, V100LargeHgemmNearItsPublishedRate) {
  OpSpec g;
  g.op = "matmul", g.m = g.n = g.k = 8192;
  const OpPrediction p = predict_op(g, op_context("v100-sxm2-16gb", "pytorch", "fp16"));
  const double tflops = 2.0 * 8192.0 * 8192.0 * 8192.0 / (p.cost.time_us * 1e6);
  EXPECT_GT(tflops, 95.0 * 0.85);
  EXPECT_LT(tflops, 95.0);
}

// cuDNN 7.0's first tensor-core forward convolutions on a V100, as nvprof timed them
// (github.com/tensorflow/tensorflow/issues/15897, 2018-01-10: TensorFlow built with CUDA 9 and cuDNN 7, NCHW FP16,
// batch 16 of 256x256 images, 3x3 SAME filters, kernel averages over 301 calls):
// volta_fp16_s884cudnn_fp16_256x64_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1 ran the 64 -> 128 channel layer in
// 2.6493 ms (58 TFLOPS) and volta_fp16_s884cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1 the 128 -> 64
// one in 2.3749 ms (65 TFLOPS). The issue names no board; taken as the V100 SXM2 16GB, the common V100 of early 2018
// (a V100 PCIe runs the same 80 SMs at 1380 instead of 1530 MHz). The conv kernels alone (TensorFlow's runtime costs
// no layout transposes into the op) are predicted within 25%: the forward tensor-core rate of the cuDNN 7 era is not
// what makes V100 half-precision training steps slower than predicted (docs/calibration.md, session 25).
TEST(KernelModel, V100CudnnSevenHalfConvForwardNearPublishedKernels) {
  const OpContext ctx = op_context("v100-sxm2-16gb", "tensorflow", "fp16");
  for (const auto& [c_in, c_out, measured_us] : {std::tuple{64, 128, 2649.3}, std::tuple{128, 64, 2374.9}}) {
    OpSpec c;
    c.op = "conv2d";
    c.conv_n = 16, c.conv_c = c_in, c.conv_h = c.conv_w = 256, c.conv_k = c_out, c.conv_r = c.conv_s = 3;
    c.pad_h = c.pad_w = 1;
    const OpPrediction p = predict_op(c, ctx);
    EXPECT_EQ(p.cost.pipe, Pipe::kTcFp16Fp32Acc) << c_in << " -> " << c_out;
    EXPECT_GT(p.cost.time_us, measured_us / 1.25) << c_in << " -> " << c_out;
    EXPECT_LT(p.cost.time_us, measured_us * 1.25) << c_in << " -> " << c_out;
  }
}

// Small-N HGEMMs on tensor cores are slow for their work: Baidu DeepBench's V100 training GEMMs (README@a5a2b60f,
// cuBLAS of CUDA 9.0, FP16 inputs, FP32 math) ran M=1760 N=128 K=1760 in 74 us (10.7 TFLOPS) and M=2560 N=64
// K=2560 in 83 us (10.1 TFLOPS), where a model whose grids fill the SMs predicts 41-55 TFLOPS. The grid rule fitted
// by fit-tensor-gemm (a CTA alone reaches part of its SM, split-K or not) reaches every published small-N row
// within 1.5x, each predicted by the rule fitted without it (docs/kernel-model.md, "Tensor-core GEMMs with few CTAs").
TEST(KernelModel, TensorGemmRuleReachesDeepBenchV100SmallN) {
  const fs::path csv = fs::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "tensor_gemm.csv";
  const TensorGemmFit fit = fit_tensor_gemm(read_published_gemms(csv.string()));
  EXPECT_EQ(fit.sm_version, 70);
  int small = 0;
  for (const auto& r : fit.rows) {
    if (!r.gemm.fitted()) continue;
    ++small;
    EXPECT_GT(r.held_out_us, r.gemm.time_us / 1.5) << r.gemm.m << "x" << r.gemm.n << "x" << r.gemm.k;
    EXPECT_LT(r.held_out_us, r.gemm.time_us * 1.5) << r.gemm.m << "x" << r.gemm.n << "x" << r.gemm.k;
  }
  EXPECT_EQ(small, 4);
}

// The same few-CTA rule holds for a later cuBLAS: triton-lang/triton#1648 (2023-05-10) times torch.matmul FP16
// squares on a V100 32GB under CUDA 11.7 (Triton's do_bench: L2 flushed, CUDA events around each call), and the
// squares whose 128x128 grid holds fewer CTAs than the SMs (n = 384-1024) run at 7-52 TFLOPS, where a model whose
// grids fill the SMs predicts 0.35-0.8 of their time. fit-tensor-gemm on these rows alone gives 3.0 CTAs per SM
// (data/published_kernels/README.md), half a CTA per SM below the CUDA 9.0 fit (3.5), each row predicted within
// 1.35x by the rule fitted without it, and the
// squares from 1152 up stay within 1.25x of the grid-filling model (docs/calibration.md, session 32, h/v100p32).
TEST(KernelModel, TensorGemmRuleFromCuda117SquaresMatchesCuda9) {
  const fs::path csv = fs::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "tensor_gemm_cuda11.csv";
  const TensorGemmFit fit = fit_tensor_gemm(read_published_gemms(csv.string()));
  EXPECT_EQ(fit.sm_version, 70);
  EXPECT_GE(fit.ctas_per_sm, 2.5);
  EXPECT_LE(fit.ctas_per_sm, 3.75);
  EXPECT_GT(fit.before_error, 0.4);   // without the rule: 1.6x-2x too fast on the small grids
  EXPECT_LT(fit.held_out_error, 0.1);
  int small = 0;
  for (const auto& r : fit.rows) {
    const auto shape = std::to_string(r.gemm.m) + "^3";
    if (!r.gemm.fitted()) {
      if (r.gemm.m >= 1152) {
        EXPECT_GT(r.before_us, r.gemm.time_us / 1.25) << shape;
        EXPECT_LT(r.before_us, r.gemm.time_us * 1.25) << shape;
      }
      continue;
    }
    ++small;
    EXPECT_GT(r.held_out_us, r.gemm.time_us / 1.35) << shape;
    EXPECT_LT(r.held_out_us, r.gemm.time_us * 1.35) << shape;
  }
  EXPECT_EQ(small, 6);
}

// The same rule on Ampere: an A100's cuBLAS column of the Triton matmul tutorial (triton-lang/triton#3551, torch.matmul
// FP16 squares, data/published_kernels/tensor_gemm_sm80.csv). The squares whose 128x128 grid holds fewer CTAs than
// the 108 SMs (n = 384-1280) run at 11-158 TFLOPS, where a grid-filling model predicts 0.34-0.81 of their time;
// fit-tensor-gemm gives 3.5 CTAs per SM (not set in data/architectures.toml: as the model splits K today, it would
// charge deep-K GEMMs with few output tiles the part-idle rate; docs/calibration.md). Every square from n = 384 is
// within 1.4x of its measured time under the fitted rule: the band of the published data itself, whose neighbouring sizes
// zigzag by 10-25% (n = 1792: 173 TFLOPS between 180 and 209) and whose second A100 run of the same tutorial
// (triton-lang/triton#7085) differs by up to 10% at one size (docs/calibration.md, session 38, h/a100h38).
TEST(KernelModel, TensorGemmRuleFromA100SquaresFitsSmallGrids) {
  const fs::path csv = fs::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "tensor_gemm_sm80.csv";
  const TensorGemmFit fit = fit_tensor_gemm(read_published_gemms(csv.string()));
  EXPECT_EQ(fit.sm_version, 80);
  EXPECT_GE(fit.ctas_per_sm, 2.5);
  EXPECT_LE(fit.ctas_per_sm, 4.5);
  EXPECT_GT(fit.before_error, 0.4);  // without the rule: about 2x too fast on the small grids
  EXPECT_LT(fit.held_out_error, 0.2);
  int small = 0;
  for (const auto& r : fit.rows) {
    const auto shape = std::to_string(r.gemm.m) + "^3";
    if (r.gemm.fitted()) {
      ++small;
      EXPECT_GT(r.held_out_us, r.gemm.time_us / 1.4) << shape;
      EXPECT_LT(r.held_out_us, r.gemm.time_us * 1.4) << shape;
    }
    if (r.gemm.m < 384) continue;  // n = 256: 4 CTAs in a few us, the timer's floor
    EXPECT_GT(r.fitted_us, r.gemm.time_us / 1.4) << shape;
    EXPECT_LT(r.fitted_us, r.gemm.time_us * 1.4) << shape;
  }
  EXPECT_EQ(small, 8);
}

// A guard for switching the few-CTA rule on for sm_80, not a measurement of this GEMM: BERT-base's weight gradient
// at 320 x 384 tokens (768 x 768 x 122880, FP16, 36 output tiles of 128 x 128 for the 108 SMs) is held to a rate
// no lower than the same source's largest one-wave square (n = 1280, 100 CTAs, K = 1280: 157.5 TFLOPS published,
// tensor_gemm_sm80.csv), within that source's 1.4x band: a bound carried over from another shape, since no measured
// cuBLAS time of a deep-K few-tile half GEMM on sm_80 was found. Whether cuBLAS splits K there is not settled
// (cublasLt's configurations carry SPLITK_NUM; pytorch/pytorch#164766 adds the switch for split-K reductions, and
// #153095 notes that the 1 MiB default cuBLASLt workspace tends to prevent them), so the test leaves the kernel's
// choice alone. Unsplit under the rule as fit-tensor-gemm fits it (3.5 CTAs per SM, split-K off) the GEMM would run
// at about 58 TFLOPS (docs/calibration.md, session 39, h/splitk39).
TEST(KernelModel, DeepKFewTileA100HalfGemmIsNotChargedThePartIdleRate) {
  const fs::path csv = fs::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "tensor_gemm_sm80.csv";
  double one_wave_tflops = 0;
  for (const auto& r : read_published_gemms(csv.string()))
    if (r.m == 1280 && r.n == 1280 && r.k == 1280) one_wave_tflops = 2.0 * 1280.0 * 1280.0 * 1280.0 / (r.time_us * 1e6);
  ASSERT_GT(one_wave_tflops, 150.0);  // 157.5 TFLOPS as published
  OpSpec g;
  g.op = "matmul", g.m = g.n = 768, g.k = 122880;
  const OpPrediction p = predict_op(g, op_context("a100-sxm4-40gb", "pytorch", "fp16"));
  const double tflops = 2.0 * 768.0 * 768.0 * 122880.0 / (p.cost.time_us * 1e6);
  EXPECT_GT(tflops, one_wave_tflops / 1.4);
}

// Hopper's large squares against the grid-filling model (no few-CTA rule on sm_90: the H100 fit, 6.75 CTAs per SM
// without split-K, makes its own source's large grids 1.3-2.4x too slow): an H100's cuBLAS column of the same
// tutorial (triton-lang/triton#3672, data/published_kernels/tensor_gemm_sm90.csv) from n = 2176 up is within 1.3x
// of [sm_90] gemm_efficiency_tensor's model, the band of the column's own zigzag (533, 433, 616 TFLOPS at
// n = 2560, 2688, 2816).
TEST(KernelModel, HopperLargeSquaresMatchTensorEfficiency) {
  const fs::path csv = fs::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "tensor_gemm_sm90.csv";
  const TensorGemmFit fit = fit_tensor_gemm(read_published_gemms(csv.string()));
  EXPECT_EQ(fit.sm_version, 90);
  int large = 0;
  for (const auto& r : fit.rows) {
    if (r.gemm.m != r.gemm.n || r.gemm.m < 2176) continue;
    ++large;
    const auto shape = std::to_string(r.gemm.m) + "^3";
    EXPECT_GT(r.before_us, r.gemm.time_us / 1.3) << shape;
    EXPECT_LT(r.before_us, r.gemm.time_us * 1.3) << shape;
  }
  EXPECT_EQ(large, 8);
}

// The published-timings reader refuses what it cannot use, as input errors.
TEST(KernelModel, PublishedGemmTimingsRejectBadFiles) {
  EXPECT_THROW(read_published_gemms("no/such/file.csv"), InputError);
  const fs::path bad = fs::temp_directory_path() / "perfcast_published_gemm_bad.csv";
  {
    std::ofstream out(bad);
    out << "gpu,precision,m,n,k,time_us,role,source\nv100-sxm2-16gb,fp16,64,0,64,10,small_grid,x\n";
  }
  EXPECT_THROW(read_published_gemms(bad.string()), InputError);
  fs::remove(bad);
}

// Small convolutions are slow for their work: cuDNN's fused Winograd kernel at batch 1-4 runs a few CTAs of 32
// output channels x 128 pixels, each stepping through every input channel at the latency of its loads, not at the
// SM's math rate (batch-1 rows measure 100-1000 us). Costed with the algorithm cuDNN ran, the measured batch 1-4
// fused-Winograd convolutions are predicted at over 0.55 of their measured time on the median, and not above it
// (the rate-only model of session 11: 0.3-0.5; docs/kernel-model.md, session 12). Raise the floor as it improves.
TEST(KernelModel, SmallBatchFusedWinogradRunsAtItsLoopLatency) {
  std::vector<double> ratio;
  for (const auto& e : fs::directory_iterator(kKernels / "conv"))
    for (const MeasuredKernel& k : read_measured_kernels(e.path().string())) {
      if (k.b > 4 || cudnn_conv_algorithm(k.kernels) != "winograd_fused") continue;
      OpContext ctx = op_context(kDevice.at(k.device), "pytorch", "fp32");
      ctx.runtime.conv_autotune = false;
      ctx.forced_conv_algorithm = "winograd_fused";
      ratio.push_back(predict_op(measured_op_spec(k), ctx).cost.time_us / k.latency_us);
    }
  ASSERT_GE(ratio.size(), 30u);
  EXPECT_GT(median(ratio), 0.55) << ratio.size() << " convolutions";
  EXPECT_LT(median(ratio), 1.1) << ratio.size() << " convolutions";
}


// cuDNN's CUDA-core implicit-GEMM forward kernels are named by their tile (cudnn_infer_volta_scudnn_128x64_relu_*):
// every such measured convolution of the subsample is costed on a tile of the name's 128 output pixels, the
// kernel's own, never a smaller tile that would fill the SMs better (docs/kernel-model.md, session 17).
TEST(KernelModel, ImplicitGemmConvolutionsRunCudnnsPixelTile) {
  int rows = 0;
  for (const auto& e : fs::directory_iterator(kKernels / "conv"))
    for (const MeasuredKernel& k : read_measured_kernels(e.path().string())) {
      const std::size_t at = k.kernel.find("scudnn_");
      if (at == std::string::npos || k.kernel.find("winograd") != std::string::npos) continue;
      // PyTorch's FP32 default on Ampere is TF32 convolutions (cudnn.allow_tf32); the harness turned it off, so the
      // A100 rows are not the CUDA-core kernels this context costs.
      if (k.device.find("A100") != std::string::npos) continue;
      const int named_m = std::stoi(k.kernel.substr(at + 7));
      OpContext ctx = op_context(kDevice.at(k.device), "pytorch", "fp32");
      ctx.runtime.conv_autotune = false;
      ctx.forced_conv_algorithm = "gemm";
      EXPECT_EQ(predict_op(measured_op_spec(k), ctx).cost.tile_m, named_m) << k.device << " " << k.kernel;
      ++rows;
    }
  EXPECT_GE(rows, 20);
}

}  // namespace
}  // namespace perfcast
