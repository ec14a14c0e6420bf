// Fits the kernel cost model's few physical parameters to measured kernel latencies (shared/kernels/), and
// reports kernel-level error in sample and leave-one-GPU-out. `perfcast fit-kernels` runs it and writes
// data/kernel_fit.toml, which the architectures read (device/architecture.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/single_op.h"
#include "import/measured_kernels.h"

namespace perfcast {

// One fitted value: "sm_70.gemm_efficiency_cuda", "global.k_half_cuda", "harness.floor_us.softmax", ...
struct FitParameter {
  std::string name;
  double start = 0, lo = 0, hi = 0;  // start value and bounds (data/kernel_fit_setup.toml)
  double value = 0;
};

// Error of one group of measured kernels (a GPU and an op class).
struct GroupError {
  std::string gpu;  // catalog id
  std::string op;   // measured_op_name
  std::size_t rows = 0;
  double median_ape = 0, mean_ape = 0;  // |pred - meas| / meas, percent
  double within_25 = 0;                 // share of rows within 25%, percent
  double median_log_ratio = 0;          // median of ln(pred / meas): > 0 predicted too slow
};

// Measured convolutions broken down by one shape dimension or by the algorithm cuDNN ran (read off the row's kernel
// names) against the one perfcast chose; errors at the in-sample fit.
struct ConvBreakdown {
  std::string dimension;  // "cuDNN ran / perfcast chose", "batch", "input channels", "map size"
  std::string key;
  std::size_t rows = 0;
  double median_ape = 0, within_25 = 0, median_log_ratio = 0;
  double same_algorithm = 0;  // share of rows where perfcast chose the algorithm cuDNN ran, percent
};

// How often cuDNN's heuristic rules ([conv] heuristic_fwd) name the algorithm a GPU's measured convolutions ran.
struct ConvAgreement {
  std::string gpu;
  std::size_t rows = 0, agree = 0;
};

// How often perfcast splits K where cuBLAS did, over a GPU's measured plain (linear) SGEMMs: cuBLAS's split is the
// main kernel's grid.z (cublas_split_k). Short rows are those measured under short_us.
struct SplitKAgreement {
  static constexpr double short_us = 300;
  std::string gpu;
  bool short_rows = false;                // this line counts only the rows measured under short_us
  std::size_t rows = 0;
  std::size_t model_split = 0;            // rows perfcast splits
  std::size_t cublas_split = 0;           // rows cuBLAS split (grid.z > 1)
  std::size_t cublas_reduce = 0;          // of those, with a separate splitKreduce_kernel pass
  std::size_t agree = 0;                  // rows where both split or neither
  // Median predicted / measured latency where both split, only perfcast, only cuBLAS, neither (0: no rows).
  double ratio_both = 0, ratio_model_only = 0, ratio_cublas_only = 0, ratio_neither = 0;
};

struct KernelFit {
  std::vector<FitParameter> parameters;  // fitted on every GPU
  std::vector<GroupError> in_sample;
  std::vector<GroupError> leave_one_gpu_out;  // each GPU predicted by a fit on the others
  // SGEMM tiles the measured kernels ran per architecture ("sm_70"), for linear (plain) and bmm (batched).
  std::map<std::string, std::vector<std::pair<int, int>>> sgemm_tiles, sgemm_tiles_batched;
  std::vector<ConvBreakdown> conv_breakdown;
  std::vector<ConvAgreement> conv_agreement;  // per GPU, in the order the rows came
  std::vector<SplitKAgreement> split_k_agreement;  // per GPU, all linear rows then the short ones (in sample)
  std::size_t rows_used = 0, rows_total = 0;
  std::string source_dir;
  std::string residuals_csv;  // KernelFitOptions::residuals_csv's content (empty unless asked)
};

struct KernelFitOptions {
  std::string kernels_dir;              // shared/kernels/neusight_train
  std::size_t rows_per_group = 0;       // subsample per (GPU, op class); 0 = data/kernel_fit_setup.toml
  int max_evaluations = 0;              // optimizer budget per fit; 0 = the setup file's
  bool leave_one_out = true;
  // Hold out only these architectures (sm_80, ...) in the leave-one-GPU-out fits; empty: every measured one.
  std::vector<std::string> leave_out_archs;
  bool fit_conv = false;                // then fit the per-algorithm conv efficiencies on the conv rows (staged)
  std::string residuals_csv;            // write every row's in-sample prediction here (CSV), for slicing the error
  bool soak = false;                    // fit the harness's soak of long calls (reported, not the default)
  // Op classes whose kernel starts after the host's launch (host speed x harness.host_launch_us) in place of the
  // shared launch_us; unset = data/kernel_fit_setup.toml [harness] host_launch_ops.
  std::optional<std::vector<std::string>> host_launch_ops;
  // Start value of harness.host_launch_us; unset = data/kernel_fit_setup.toml [harness] start_host_launch_us. Lets a
  // test start the fit away from the intercept it should find, so that a value that never moves cannot pass.
  std::optional<double> start_host_launch_us;
};

KernelFit fit_kernels(const KernelFitOptions& options);

// Measured kernels of GPUs the fit never saw (data/measured_kernels/h200), predicted as `perfcast predict` would
// cost them: the shipped model (data/kernel_fit.toml applied to architectures.toml and cost_model.toml, the
// catalog board with its power model) plus the fitted harness terms of data/kernel_fit.toml [harness] (a row is
// max(host floor of the op, launch + kernel time)). The board's host speed belongs to the machine that measured it,
// not to the GPU: it is read off its own rows whose launch + kernel stays under held_out_floor_share of the floor,
// as leave-one-GPU-out does for a held-out board.
struct KernelPrediction {
  std::string source_dir;
  std::vector<GroupError> all_rows;          // per GPU and op class ("elementwise_unary" etc.) and per op name
  std::vector<GroupError> kernel_rows;       // the same over rows measured at least twice the op's host floor
  std::map<std::string, double> host_speed;  // per GPU (catalog id): measured floor / fitted floor
  std::string residuals_csv;                 // every row: shape, measured, predicted, kernel time, tile, kernels
};
KernelPrediction predict_measured_kernels(const std::string& dir);
std::string kernel_prediction_markdown(const KernelPrediction& pred);

// The op a measured row ran, in perfcast's terms (bmm/linear/conv/elementwise/softmax/LayerNorm shapes mapped to
// `perfcast op`'s fields).
OpSpec measured_op_spec(const MeasuredKernel& k);

// The convolution algorithm a measured row ran, from its ';'-separated kernel names (cuDNN 8.9):
// "fft" (fft2d_r2c / gcgemm / c2r), "winograd_nonfused" (winogradforwarddata/filter/output + SGEMM),
// "winograd_fused" (scudnn_winograd_*), "gemm_im2col" (im2col + explicit_convolve_sgemm), "implicit_gemm"
// (scudnn_* implicit-precomputed GEMM, implicit_convolve_sgemm).
std::string cudnn_conv_algorithm(const std::string& kernels);

// The split-K factor a measured cuBLAS GEMM ran, from its main kernel's grid.z: cuBLAS's SGEMM kernels put the K
// slices on grid.z and reduce them in place, or in a separate splitKreduce_kernel pass (named in the kernels);
// 1 for an unsplit GEMM, a row of another op, or a file without a grid.
int cublas_split_k(const MeasuredKernel& k);

// The fit as data/kernel_fit.toml text (per-architecture values with their provenance) and as markdown.
std::string kernel_fit_toml(const KernelFit& fit);
std::string kernel_fit_markdown(const KernelFit& fit);

}  // namespace perfcast
