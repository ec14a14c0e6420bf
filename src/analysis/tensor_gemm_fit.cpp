#include "analysis/tensor_gemm_fit.h"

// fast-cpp-csv-parser copies the file name with strncpy; GCC flags the bounded copy after inlining.
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>

#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "cost/cost_constants.h"
#include "cost/kernel_cost.h"
#include "device/architecture.h"
#include "device/catalog.h"

namespace perfcast {

std::vector<PublishedGemm> read_published_gemms(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw InputError("cannot read published GEMM timings '" + path + "'");
  std::vector<PublishedGemm> out;
  try {
    io::CSVReader<8, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>> in(path);
    in.read_header(io::ignore_extra_column, "gpu", "precision", "m", "n", "k", "time_us", "role", "source");
    PublishedGemm g;
    while (in.read_row(g.gpu, g.precision, g.m, g.n, g.k, g.time_us, g.role, g.source)) {
      if (g.m <= 0 || g.n <= 0 || g.k <= 0 || !(g.time_us > 0))
        throw InputError(fmt::format("{}: line {}: m, n, k and time_us must be positive", path, in.get_file_line()));
      out.push_back(g);
    }
  } catch (const io::error::base& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
  if (out.empty()) throw InputError("published GEMM timings '" + path + "' have no rows");
  return out;
}

namespace {

// One GEMM's predicted time (us) on its GPU with `arch`'s rule: cuBLAS, FP16 operands and output, no framework.
double predict_us(const PublishedGemm& g, const DeviceSpec& device, const ArchitectureProfile& arch) {
  const auto pipe = arch.math_pipe(g.precision);
  if (!pipe) throw InputError(fmt::format("precision '{}' does not run on {}", g.precision, device.id));
  const KernelCostModel km(device, arch, cost_constants());
  const MatmulGeometry geo{1, g.m, g.n, g.k, false, false};
  const double m = static_cast<double>(g.m), n = static_cast<double>(g.n), k = static_cast<double>(g.k);
  const double flops = 2.0 * m * n * k, bytes = 2.0 * (m * k + k * n + m * n);
  return km.gemm(geo, *pipe, flops, bytes, 1.0, 1, GemmLibrary::kCublas).time_us;
}

double log_error(double predicted, double measured) { return std::abs(std::log(predicted / measured)); }

struct Candidate {
  double ctas_per_sm = 1;
  bool split_k = true;
  double error = std::numeric_limits<double>::infinity();
};

// The best rule over the grid for the fitted rows other than `skip` (-1: none).
Candidate best_rule(const std::vector<PublishedGemm>& rows, const std::vector<DeviceSpec>& devices,
                    const ArchitectureProfile& base, std::ptrdiff_t skip, std::initializer_list<bool> splits = {true, false}) {
  Candidate best;
  for (const bool split : splits)
    for (double c = 1.0; c <= 8.0 + 1e-9; c += 0.25) {
      ArchitectureProfile a = base;
      a.cublas_tensor_ctas_per_sm = c;
      a.cublas_tensor_split_k = split;
      double sum = 0;
      int count = 0;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].fitted() || static_cast<std::ptrdiff_t>(i) == skip) continue;
        sum += log_error(predict_us(rows[i], devices[i], a), rows[i].time_us);
        ++count;
      }
      const double err = count > 0 ? sum / count : 0;
      if (err < best.error - 1e-12) best = {c, split, err};
    }
  return best;
}

}  // namespace

TensorGemmFit fit_tensor_gemm(const std::vector<PublishedGemm>& rows) {
  std::vector<DeviceSpec> devices;
  for (const auto& r : rows) devices.push_back(find_device(r.gpu));
  const ArchitectureProfile& base = architecture_of(devices.front());
  for (const auto& d : devices)
    if (architecture_of(d).sm_version != base.sm_version)
      throw InputError("published GEMM timings mix architectures: fit one architecture's rows at a time");
  TensorGemmFit fit;
  fit.sm_version = base.sm_version;
  const Candidate all = best_rule(rows, devices, base, -1);
  fit.ctas_per_sm = all.ctas_per_sm;
  fit.split_k = all.split_k;
  const Candidate other = best_rule(rows, devices, base, -1, {!all.split_k});
  fit.other_split_ctas_per_sm = other.ctas_per_sm;
  fit.other_split_error = other.error;
  ArchitectureProfile fitted = base;
  fitted.cublas_tensor_ctas_per_sm = all.ctas_per_sm;
  fitted.cublas_tensor_split_k = all.split_k;
  ArchitectureProfile no_rule = base;  // every GEMM grid-filling, split-K allowed: the model before the rule
  no_rule.cublas_tensor_ctas_per_sm = 0;
  no_rule.cublas_tensor_split_k = true;
  int n = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    TensorGemmFitRow r{rows[i], predict_us(rows[i], devices[i], no_rule), predict_us(rows[i], devices[i], fitted), 0};
    if (rows[i].fitted()) {
      const Candidate without = best_rule(rows, devices, base, static_cast<std::ptrdiff_t>(i));
      ArchitectureProfile held = base;
      held.cublas_tensor_ctas_per_sm = without.ctas_per_sm;
      held.cublas_tensor_split_k = without.split_k;
      r.held_out_us = predict_us(rows[i], devices[i], held);
      fit.before_error += log_error(r.before_us, rows[i].time_us);
      fit.in_sample_error += log_error(r.fitted_us, rows[i].time_us);
      fit.held_out_error += log_error(r.held_out_us, rows[i].time_us);
      ++n;
    }
    fit.rows.push_back(r);
  }
  if (n > 0) {
    fit.before_error /= n;
    fit.in_sample_error /= n;
    fit.held_out_error /= n;
  }
  return fit;
}

std::string tensor_gemm_fit_toml(const TensorGemmFit& fit, const std::string& kernels_path) {
  return fmt::format(
      "# Written by perfcast fit-tensor-gemm --kernels {0}: cuBLAS's tensor-core grid rule fitted to published\n"
      "# half-precision GEMM timings (DeepBench's: CUDA 9.0). Read only for runtime releases that linked that library\n"
      "# (a runtime's cublas_cuda9_tensor_grid: PyTorch below 0.4); data/architectures.toml would set these keys where a\n"
      "# fit transfers to every library (docs/calibration.md, 'Issue 13: tensor-core GEMMs with few CTAs', session 28).\n\n"
      "[sm_{1}]\n"
      "cublas_tensor_ctas_per_sm = {2:.2f}\n"
      "cublas_tensor_split_k = {3}\n"
      "mean_abs_log_error_in_sample = {4:.3f}\n"
      "mean_abs_log_error_leave_one_out = {5:.3f}\n"
      "mean_abs_log_error_without_rule = {6:.3f}\n"
      "sources = \"fitted by perfcast fit-tensor-gemm (src/analysis/tensor_gemm_fit.cpp) to {0}: {7} rows, see its README for sources\"\n",
      kernels_path, fit.sm_version, fit.ctas_per_sm, fit.split_k ? "true" : "false", fit.in_sample_error,
      fit.held_out_error, fit.before_error, fit.rows.size());
}

std::string tensor_gemm_fit_markdown(const TensorGemmFit& fit) {
  std::string s = fmt::format(
      "# Tensor-core cuBLAS grid rule, sm_{}\n\n"
      "cublas_tensor_ctas_per_sm = {:.2f}  (CTAs an SM holds at its full tensor rate; a CTA alone reaches 1/this)\n"
      "cublas_tensor_split_k = {}\n\n"
      "error = mean |ln(predicted / measured)| over the small_grid rows; ratio = predicted / measured\n"
      "without the rule {:.3f} (x{:.2f}), in sample {:.3f} (x{:.2f}), leave one row out {:.3f} (x{:.2f})\n"
      "best with split-K {}: cublas_tensor_ctas_per_sm = {:.2f}, in sample {:.3f} (x{:.2f})\n\n"
      "| gpu | m | n | k | role | measured us | no rule us | ratio | fitted us | ratio | held out us | ratio |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
      fit.sm_version, fit.ctas_per_sm, fit.split_k ? "true" : "false", fit.before_error, std::exp(fit.before_error),
      fit.in_sample_error, std::exp(fit.in_sample_error), fit.held_out_error, std::exp(fit.held_out_error),
      fit.split_k ? "off" : "on", fit.other_split_ctas_per_sm, fit.other_split_error, std::exp(fit.other_split_error));
  for (const auto& r : fit.rows) {
    const double t = r.gemm.time_us;
    const std::string held = r.gemm.fitted() ? fmt::format("{:.1f} | {:.2f}", r.held_out_us, r.held_out_us / t) : "- | -";
    s += fmt::format("| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.2f} | {:.1f} | {:.2f} | {} |\n", r.gemm.gpu, r.gemm.m,
                     r.gemm.n, r.gemm.k, r.gemm.role, t, r.before_us, r.before_us / t, r.fitted_us, r.fitted_us / t, held);
  }
  return s;
}

}  // namespace perfcast
