// perfcast's single-kernel GEMM predictions against published large-GEMM rates on GPUs without measured kernels
// in shared/kernels (data/published_kernels/fp32_kernels.csv: square torch.mm, PyTorch 2.7-2.9, CUDA 12.8).
//
// The band is a prior, set before comparing: published reruns of one board and library spread by up to ~20%
// (RTX 4090 FP32 torch.mm 46.5-56.0 TFLOPS in the same database; the A100 PCIe 40GB 15.5-17.6 between n = 4096
// and 8192 in one run), and the library here is CUDA 12.8's cuBLAS where the kernel fit saw PyTorch 2.1's. So a
// prediction within 0.75-1.33x of the published rate passes. Only rows marked `check` are tested: the `derive`
// rows set sm_89's power constants and sm_90's SGEMM efficiency (docs/calibration.md, 'Ada and Hopper FP32
// kernels, session 16'), so passing on them would say nothing.
#include <gtest/gtest.h>

#include <libfccp/csv.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/single_op.h"

namespace perfcast {
namespace {

namespace fs = std::filesystem;

struct PublishedRate {
  std::string gpu, precision, statistic, role;
  long m = 0, n = 0, k = 0;
  double tflops = 0;
};

std::vector<PublishedRate> read_rates() {
  const fs::path csv = fs::path(PERFCAST_SOURCE_DIR) / "data" / "published_kernels" / "fp32_kernels.csv";
  io::CSVReader<8, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(csv.string());
  in.read_header(io::ignore_extra_column, "gpu", "precision", "m", "n", "k", "statistic", "tflops", "role");
  std::vector<PublishedRate> out;
  PublishedRate r;
  while (in.read_row(r.gpu, r.precision, r.m, r.n, r.k, r.statistic, r.tflops, r.role)) out.push_back(r);
  return out;
}

double predicted_tflops(const PublishedRate& r) {
  OpSpec g;
  g.op = "matmul", g.m = r.m, g.n = r.n, g.k = r.k;
  const OpPrediction p = predict_op(g, op_context(r.gpu, "pytorch", r.precision));
  return 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) * static_cast<double>(r.k) / (p.cost.time_us * 1e6);
}

// H100 PCIe (a 350 W board: its SMs draw more than that at boost under a large SGEMM), the L4's FP16 GEMMs (72 W,
// the power model's clock on the tensor pipe, which no derive row touched), and the measured architectures' A100
// and V100 under a newer cuBLAS.
TEST(PublishedFp32Kernels, CheckRowsWithinPriorBand) {
  int checked = 0;
  for (const PublishedRate& r : read_rates()) {
    if (r.role != "check" || r.statistic != "at_shape") continue;
    ++checked;
    const double ratio = predicted_tflops(r) / r.tflops;
    EXPECT_GT(ratio, 0.75) << r.gpu << " " << r.precision << " " << r.m << "x" << r.n << "x" << r.k;
    EXPECT_LT(ratio, 1.33) << r.gpu << " " << r.precision << " " << r.m << "x" << r.n << "x" << r.k;
  }
  EXPECT_GE(checked, 6);
}

}  // namespace
}  // namespace perfcast
