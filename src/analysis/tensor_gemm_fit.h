// Fits cuBLAS's tensor-core grid rule (CTAs an SM needs for its full tensor rate, split-K or not) of one
// architecture to published half-precision GEMM timings (data/published_kernels/tensor_gemm.csv).
#pragma once

#include <string>
#include <vector>

namespace perfcast {

// One published GEMM timing.
struct PublishedGemm {
  std::string gpu, precision, role, source;
  long long m = 0, n = 0, k = 0;
  double time_us = 0;
  bool fitted() const { return role == "small_grid"; }  // large_grid rows are reported, not fitted
};

// Reads a published-timings CSV (columns gpu, precision, m, n, k, time_us, role, source); InputError when malformed.
std::vector<PublishedGemm> read_published_gemms(const std::string& path);

struct TensorGemmFitRow {
  PublishedGemm gemm;
  double before_us = 0;   // without the rule (every grid fills the SMs, split-K allowed)
  double fitted_us = 0;   // with the fitted rule
  double held_out_us = 0; // fitted without this row (leave one out; fitted rows only)
};

struct TensorGemmFit {
  int sm_version = 0;
  double ctas_per_sm = 0;  // the fitted cublas_tensor_ctas_per_sm
  bool split_k = true;     // the fitted cublas_tensor_split_k
  std::vector<TensorGemmFitRow> rows;
  // Mean |ln(predicted / measured)| over the fitted rows: without the rule, in sample, leave one out.
  double before_error = 0, in_sample_error = 0, held_out_error = 0;
  // The best rule with the other split-K setting, and its in-sample error.
  double other_split_ctas_per_sm = 0, other_split_error = 0;
};

// Fits the rule of the architecture of the rows' GPUs (all rows must share one) over ctas_per_sm in 1-8 (steps of
// 0.25) and split-K on/off, minimising the mean absolute log error of the fitted rows.
TensorGemmFit fit_tensor_gemm(const std::vector<PublishedGemm>& rows);

// The fitted rule as TOML ([sm_XX] cublas_tensor_ctas_per_sm, cublas_tensor_split_k, sources), for data/.
std::string tensor_gemm_fit_toml(const TensorGemmFit& fit, const std::string& kernels_path);

// The fit as markdown: constants, then every row's measured, before, fitted and held-out times.
std::string tensor_gemm_fit_markdown(const TensorGemmFit& fit);

}  // namespace perfcast
