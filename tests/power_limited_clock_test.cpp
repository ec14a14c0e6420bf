// The power model's clock for power-limited boards taken as unseen (their fitted sustained clock removed, as
// `perfcast fit-kernels --leave-out` and every board without measured kernels see them), against published
// sustained FP32 GEMM rates of the same boards: github.com/zzc0721/torch-performance-test-data (the project's
// test.py: torch.mm of random square n x n matrices, n = 1024-10240, 30 calls back to back per size).
//
// Expectations from outside the code, set before comparing:
// - Tesla T4 (70 W): the database's best FP32 rate over the five sizes, 4.17 TFLOPS (Google Colab, PyTorch 2.8.0)
//   and 4.43 (Kaggle, PyTorch 2.6.0), database.md at commit 078586871da31ad6aaaf6fa43bc4ec3f284b151d. Turing's SGEMM
//   efficiency is fitted on NeuSight's T4 and V100 kernels, so the rate itself is the check: the T4 at boost would
//   run ~7 TFLOPS.
// - Tesla P4 (75 W) against Tesla P40 (250 W), the same GP10x SM: P4 at n = 8192, 4.01 TFLOPS (issue #9, PyTorch
//   2.2.2+cu121, stock clocks; 4.13 with the clock raised to 1500 MHz: the power limit, not the clock setting,
//   holds it), P40 10.07 TFLOPS (database.md, best of the five sizes, PyTorch 2.8.0). torch.mm is an "nn" cuBLAS
//   call, which on Pascal runs maxwell_sgemm_128x64_nn (docs/calibration.md, session 33 h/gp102gemm33); the power
//   model's GP10x clock under that load is not checked here, so the ratio of the two boards is the check: it is
//   their clocks' ratio times their SM and peak ratio, the efficiency cancels.
// - Tesla T4 FP16 tensor-core GEMM: "about 24" TFLOPS for cuBLAS 4096 x 4096 x 4096 run 100 times back to back,
//   which NVIDIA's moderator attributes to the 70 W power cap (forums.developer.nvidia.com/t/264462); the tensor
//   pipe's clock, which no constant here was set from.
// - NVIDIA A10 (150 W, GA102): a large FP32 GEMM (3456 x 4096 x 4096) runs 12.47 TFLOPS in CUTLASS 2.9's
//   two-stage SIMT kernel cutlass_simt_sgemm_128x128_8x2 built with CUDA 11.2, and a CUTLASS maintainer answers
//   that "around 20 tflops should be possible" with deeper pipelines, never the 31.2 of the datasheet
//   (github.com/NVIDIA/cutlass/issues/941). A library SGEMM sits between the two; the power model set from an A40
//   (data/architectures.toml [sm_86] sm_power_w) had left the A10 at its boost clock, 21 TFLOPS.
// - RTX A6000 (300 W, GA102) with its [measured] table set aside, as a GA10x board without one: 23.92 TFLOPS, the
//   database's best of the five sizes (database.md at 078586871da31ad6aaaf6fa43bc4ec3f284b151d).
// - RTX A4000 (140 W, GA104) and A40 (300 W, GA102), test fixtures in tests/data/gpus (not catalog boards): the
//   same database's issues #97 (RTX A4000, PyTorch 2.8.0+cu129, a virtual machine) and #185 (A40, 2.11.0+cu128) time
//   torch.mm at n = 8192 / 10240 in FP32, TF32, FP16 and BF16; the rates are read from
//   data/published_kernels/fp32_kernels.csv (role `fixture`), not written here. Not all of them are out of sample.
//   The FP32 rows are not: [sm_86] sm_power_w was read from an A40 held at its 300 W under an FP32 FMA load
//   (gpu-benches), so the A40 FP32 rows nearly hold by construction, and the A4000 FP32 rows chose
//   power_clock_exponent (docs/calibration.md scans 1.0 / 1.2 / 1.5 / 2.0 against them and keeps sm_89's 1.2), so
//   the FP32 rows and the A4000 / A40 FP32 ratio are derivation checks. Only the tensor-pipe rows (TF32, FP16, BF16)
//   are out of sample: tensor_power_fraction is the RTX A6000's.
// The band is the one of tests/published_fp32_kernels_test.cpp (0.75-1.33x: reruns of one board in the same
// database spread by up to ~20%).
#include <gtest/gtest.h>
#include <libfccp/csv.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/single_op.h"
#include "test_paths.h"

namespace perfcast {
namespace {

// Square torch.mm rate (TFLOPS) perfcast gives in this context.
double square_rate(const OpContext& ctx, long n) {
  OpSpec g;
  g.op = "matmul", g.m = n, g.n = n, g.k = n;
  const OpPrediction p = predict_op(g, ctx);
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / (p.cost.time_us * 1e6);
}

// The same for a board with no fitted sustained clock (FP32 unless named).
double unseen_rate(const std::string& gpu, long n, const std::string& precision = "fp32") {
  OpContext ctx = op_context(gpu, "pytorch", precision);
  ctx.device.sustained_clock_factor = 0;
  ctx.device.sustained_clock_tdp_w = 0;
  return square_rate(ctx, n);
}

double best_of_square(const std::string& gpu) {
  double best = 0;
  for (long n : {1024L, 2048L, 4096L, 8192L, 10240L}) best = std::max(best, unseen_rate(gpu, n));
  return best;
}

TEST(PowerLimitedClock, UnseenT4SustainsItsPublishedSgemmRate) {
  const double predicted = best_of_square("t4");
  for (double published : {4.17, 4.43}) {
    EXPECT_GT(predicted / published, 0.75) << predicted;
    EXPECT_LT(predicted / published, 1.33) << predicted;
  }
}

TEST(PowerLimitedClock, UnseenT4HalfPrecisionGemmUnderItsPowerCap) {
  const double predicted = unseen_rate("t4", 4096, "fp16");
  EXPECT_GT(predicted / 24.0, 0.75) << predicted;
  EXPECT_LT(predicted / 24.0, 1.33) << predicted;
}

TEST(PowerLimitedClock, UnseenP4AgainstP40FollowsThePublishedRates) {
  const double published = 4.01 / 10.07;
  const double predicted = unseen_rate("tesla-p4", 8192) / best_of_square("tesla-p40");
  EXPECT_GT(predicted / published, 0.75) << predicted;
  EXPECT_LT(predicted / published, 1.33) << predicted;
}

TEST(PowerLimitedClock, A10SgemmBetweenThePublishedCutlassRates) {
  const double predicted = unseen_rate("a10", 4096);
  EXPECT_GT(predicted, 12.47);
  EXPECT_LT(predicted, 20.0);
}

TEST(PowerLimitedClock, UnseenRtxA6000SustainsItsPublishedSgemmRate) {
  OpContext ctx = op_context("rtx-a6000", "pytorch", "fp32");
  ctx.device.measured.reset();
  double best = 0;
  for (long n : {1024L, 2048L, 4096L, 8192L, 10240L}) best = std::max(best, square_rate(ctx, n));
  EXPECT_GT(best / 23.92, 0.75) << best;
  EXPECT_LT(best / 23.92, 1.33) << best;
}

// A100-PCIE-40GB (250 W): the same database's issue #108 (PyTorch 2.8.0+cu128) times torch.mm at FP16 197.51 /
// 205.66, BF16 215.26 / 211.72 and TF32 97.32 / 102.05 TFLOPS at n = 8192 / 10240, against 241.49 / 234.14 / 108.32
// at n = 4096 (each n is 30 calls back to back; only the long sizes hold the board at its limit). The board keeps
// its fitted sustained clock (1.0, from NeuSight's FP32 kernels) for FP32 work, but a tensor-core GEMM is held by
// its 250 W as an unseen board's would be. The 400 W SXM4 board keeps its boost clock under the same GEMM (database
// best FP16 258.74 TFLOPS on an A100 SXM4 80GB, 266.04 on an A800 SXM4: above the PCIe board's sustained rate).
double catalog_rate(const std::string& gpu, long n, const std::string& precision) {
  return square_rate(op_context(gpu, "pytorch", precision), n);
}

// A derivation check, not evidence: these six long-size rows set [sm_80] tensor_power_fraction (their geometric
// mean), so passing says only that the model carries the derivation through; the SXM4 test below is the held-out one.
TEST(PowerLimitedClock, A100PcieTensorGemmHeldByItsPowerLimitAtTheLongSizes) {
  const struct {
    const char* precision;
    long n;
    double published;
  } rows[] = {{"fp16", 8192, 197.51}, {"fp16", 10240, 205.66}, {"bf16", 8192, 215.26},
              {"bf16", 10240, 211.72}, {"tf32", 8192, 97.32},   {"tf32", 10240, 102.05}};
  for (const auto& r : rows) {
    const double predicted = catalog_rate("a100-pcie-40gb", r.n, r.precision);
    // Within 10% of the sustained rate: under the at-boost rate (232 / 116 TFLOPS) the model had before.
    EXPECT_GT(predicted / r.published, 0.9) << r.precision << " " << r.n << ": " << predicted;
    EXPECT_LT(predicted / r.published, 1.1) << r.precision << " " << r.n << ": " << predicted;
  }
  // FP32 (CUDA cores, TF32 off) keeps the fitted clock: 17.56 TFLOPS published at n = 8192.
  const double fp32 = catalog_rate("a100-pcie-40gb", 8192, "fp32");
  EXPECT_GT(fp32 / 17.56, 0.9) << fp32;
  EXPECT_LT(fp32 / 17.56, 1.1) << fp32;
}

// Held out (no row of the 400 W boards set anything): the SXM4 stays at its boost clock under the same FP16 GEMM,
// and its rate sits in the published band's 0.75-1.33x prior (tests/published_fp32_kernels_test.cpp) around the
// database's best A100 SXM4 80GB figure, 258.74 TFLOPS.
TEST(PowerLimitedClock, A100Sxm4KeepsItsBoostClockUnderTheSameTensorGemm) {
  OpSpec g;
  g.op = "matmul", g.m = 8192, g.n = 8192, g.k = 8192;
  EXPECT_DOUBLE_EQ(predict_op(g, op_context("a100-sxm4-80gb", "pytorch", "fp16")).cost.clock_factor, 1.0);
  const double sxm4 = catalog_rate("a100-sxm4-80gb", 8192, "fp16");
  const double pcie = catalog_rate("a100-pcie-40gb", 8192, "fp16");
  EXPECT_GT(sxm4, 1.05 * pcie);
  EXPECT_GT(sxm4 / 258.74, 0.75) << sxm4;
  EXPECT_LT(sxm4 / 258.74, 1.33) << sxm4;
}

// The same derivation on Hopper ([sm_90] tensor_power_fraction, session 28): the H100 PCIe (350 W) long-size torch.mm
// rows of github.com/zzc0721/torch-performance-test-data/issues/95 (PyTorch 2.9.0+cu128) set the fraction as their
// geometric mean, so this is a derivation check: the model carries it through to each row within 10%, where the
// at-boost rate it had before (507 / 495 TFLOPS FP16 and BF16, 253 / 248 TF32) was up to 16% above FP16's.
TEST(PowerLimitedClock, H100PcieTensorGemmHeldByItsPowerLimitAtTheLongSizes) {
  const struct {
    const char* precision;
    long n;
    double published;
  } rows[] = {{"fp16", 8192, 437.07}, {"fp16", 10240, 449.65}, {"bf16", 8192, 492.84},
              {"bf16", 10240, 471.79}, {"tf32", 8192, 240.43},  {"tf32", 10240, 225.65}};
  for (const auto& r : rows) {
    const double predicted = catalog_rate("h100-pcie-80gb", r.n, r.precision);
    EXPECT_GT(predicted / r.published, 0.9) << r.precision << " " << r.n << ": " << predicted;
    EXPECT_LT(predicted / r.published, 1.1) << r.precision << " " << r.n << ": " << predicted;
  }
  OpSpec g;
  g.op = "matmul", g.m = 8192, g.n = 8192, g.k = 8192;
  EXPECT_LT(predict_op(g, op_context("h100-pcie-80gb", "pytorch", "fp16")).cost.clock_factor, 0.95);
}

// Held out (no row of these boards set anything): the 700 W H100 SXM5 keeps its boost clock under the same FP16 GEMM
// and sits in the prior band around issue #79's H100 80GB HBM3 rate (736.19 TFLOPS at n = 8192, PyTorch 2.7.0); the
// H800 PCIe, the same 350 W PCIe board with a cut interconnect, runs FP16 470.26 / 462.26 and BF16 499.46 / 487.22
// TFLOPS at n = 8192 / 10240 (issue #112, PyTorch 2.8.0), which the H100 PCIe's power-held rate is compared with.
TEST(PowerLimitedClock, H100Sxm5KeepsItsBoostClockAndTheH800PcieIsHeldAsTheH100Pcie) {
  OpSpec g;
  g.op = "matmul", g.m = 8192, g.n = 8192, g.k = 8192;
  EXPECT_DOUBLE_EQ(predict_op(g, op_context("h100-sxm5-80gb", "pytorch", "fp16")).cost.clock_factor, 1.0);
  const double sxm5 = catalog_rate("h100-sxm5-80gb", 8192, "fp16");
  EXPECT_GT(sxm5 / 736.19, 0.75) << sxm5;
  EXPECT_LT(sxm5 / 736.19, 1.33) << sxm5;
  const struct {
    const char* precision;
    long n;
    double published;
  } h800[] = {{"fp16", 8192, 470.26}, {"fp16", 10240, 462.26}, {"bf16", 8192, 499.46}, {"bf16", 10240, 487.22}};
  for (const auto& r : h800) {
    const double predicted = catalog_rate("h100-pcie-80gb", r.n, r.precision);
    EXPECT_GT(predicted / r.published, 0.9) << r.precision << " " << r.n << ": " << predicted;
    EXPECT_LT(predicted / r.published, 1.1) << r.precision << " " << r.n << ": " << predicted;
  }
}

// The prior band around a published rate (0.75-1.33x, the one of tests/published_fp32_kernels_test.cpp).
void expect_in_prior_band(double predicted, double published, const std::string& what) {
  EXPECT_GT(predicted / published, 0.75) << what << ": " << predicted << " against " << published;
  EXPECT_LT(predicted / published, 1.33) << what << ": " << predicted << " against " << published;
}

// The `fixture` rows of data/published_kernels/fp32_kernels.csv: boards without a catalog file, named by their
// fixture in tests/data/gpus (gpu `NAME-fixture` is tests/data/gpus/NAME.toml).
struct FixtureRate {
  std::string name, precision;  // name: the fixture file's stem
  long n = 0;
  double tflops = 0;
};

std::string fixture_file(const std::string& name) {
  return (std::filesystem::path(PERFCAST_SOURCE_DIR) / "tests" / "data" / "gpus" / (name + ".toml")).string();
}

std::vector<FixtureRate> fixture_rates() {
  const std::filesystem::path csv =
      std::filesystem::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "fp32_kernels.csv";
  io::CSVReader<7, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(csv.string());
  in.read_header(io::ignore_extra_column, "gpu", "precision", "m", "n", "k", "tflops", "role");
  std::vector<FixtureRate> out;
  std::string gpu, precision, role;
  long m = 0, n = 0, k = 0;
  double tflops = 0;
  const std::string suffix = "-fixture";
  while (in.read_row(gpu, precision, m, n, k, tflops, role)) {
    if (role != "fixture") continue;
    EXPECT_TRUE(m == n && n == k) << gpu << ": square torch.mm rows only";
    EXPECT_TRUE(gpu.size() > suffix.size() && gpu.ends_with(suffix)) << gpu;
    out.push_back({gpu.substr(0, gpu.size() - suffix.size()), precision, n, tflops});
  }
  return out;
}

// GA10x boards without a [measured] table, held at their limit by the sm_86 power constants: the A4000 and A40
// fixtures at the published long sizes (FP32 on the CUDA cores, TF32 / FP16 / BF16 on the tensor pipe), and the two
// boards' FP32 ratio at each size, where the SGEMM efficiency cancels (as the P4 / P40 test above). The FP32 rows and
// the ratio check the derivation (sm_power_w from an A40, power_clock_exponent chosen on the A4000 FP32 rows); the
// tensor-pipe rows are the held-out ones.
TEST(PowerLimitedClock, Ga10xFixtureBoardsSustainTheirPublishedLongGemmRates) {
  const std::vector<FixtureRate> rows = fixture_rates();
  std::map<long, std::map<std::string, double>> fp32;  // n -> fixture name -> published FP32 rate
  for (const FixtureRate& r : rows) {
    const std::string what = r.name + " " + r.precision + " " + std::to_string(r.n);
    expect_in_prior_band(catalog_rate(fixture_file(r.name), r.n, r.precision), r.tflops, what);
    if (r.precision == "fp32") fp32[r.n][r.name] = r.tflops;
  }
  EXPECT_GE(rows.size(), 16u);
  const std::string a4000 = "rtx-a4000", a40 = "a40";
  int ratios = 0;
  for (const auto& [n, by_board] : fp32) {
    if (!by_board.contains(a4000) || !by_board.contains(a40)) continue;
    const double predicted = catalog_rate(fixture_file(a4000), n, "fp32") / catalog_rate(fixture_file(a40), n, "fp32");
    expect_in_prior_band(predicted, by_board.at(a4000) / by_board.at(a40), "A4000 / A40 FP32 at " + std::to_string(n));
    ++ratios;
  }
  EXPECT_EQ(ratios, 2);
}

// Tesla P100 SXM2 (300 W, 1480 MHz) against P100 PCIe (250 W, 1303 MHz), the same GP100 with 56 SMs: torch.mm FP32
// at n = 8192 / 10240 runs 9.50 / 9.49 TFLOPS on the SXM2 (torch-performance-test-data issue #180, PyTorch 2.7.0
// cu128) and 8.12 / 7.97 and 8.63 / 8.56 on two PCIe boards (issues #164, #177, the same PyTorch): the SXM2 is the
// faster board by 10-19%, as its higher clock and limit say. The rows are in data/published_kernels/fp32_kernels.csv
// (role `check`); the SXM2 has no fitted sustained clock, so the power model alone sets its clock.
TEST(PowerLimitedClock, P100Sxm2OutrunsThePcieBoardUnderALongSgemm) {
  // The published rates of each board by size, read from the csv (two PCIe boards give two rates per size).
  std::map<long, std::vector<double>> sxm2, pcie;
  const std::filesystem::path csv =
      std::filesystem::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "fp32_kernels.csv";
  io::CSVReader<4, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(csv.string());
  in.read_header(io::ignore_extra_column, "gpu", "precision", "n", "tflops");
  std::string gpu, precision;
  long n = 0;
  double tflops = 0;
  while (in.read_row(gpu, precision, n, tflops)) {
    if (precision != "fp32") continue;
    if (gpu == "p100-sxm2-16gb") sxm2[n].push_back(tflops);
    if (gpu == "p100-pcie-16gb") pcie[n].push_back(tflops);
  }
  int sizes = 0;
  for (const auto& [size, rates] : sxm2) {
    if (!pcie.contains(size)) continue;
    ++sizes;
    // The published SXM2 / PCIe band at this size (1.10-1.19 over the two PCIe boards), loosened by the tolerance of
    // this file's other checks (expect_in_prior_band: 0.75-1.33 of the published figure). The loosened lower end
    // (0.75 x 1.10) falls below 1, so the published order (the SXM2 is the faster board at every size) bounds it.
    const auto [slow, fast] = std::minmax_element(pcie.at(size).begin(), pcie.at(size).end());
    const auto [sxm2_low, sxm2_high] = std::minmax_element(rates.begin(), rates.end());
    const double low = *sxm2_low / *fast, high = *sxm2_high / *slow;
    const double ratio = catalog_rate("p100-sxm2-16gb", size, "fp32") / catalog_rate("p100-pcie-16gb", size, "fp32");
    EXPECT_GT(ratio, 1.0) << size;
    EXPECT_LT(ratio, 1.33 * high) << size << ": published " << low << "-" << high;
  }
  EXPECT_EQ(sizes, 2);
}

}  // namespace
}  // namespace perfcast
