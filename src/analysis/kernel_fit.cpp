#include "analysis/kernel_fit.h"

#include <nlopt.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "analysis/single_op.h"
#include "core/data_files.h"
#include "core/error.h"
#include "core/nearest_sm.h"
#include "core/toml_reader.h"
#include "cost/cost_constants.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/catalog.h"

namespace perfcast {

namespace {

// cuBLAS's separate split-K reduction pass (splitKreduce_kernel; the measured files write it in lower case).
bool has_split_k_reduce(std::string kernels) {
  std::transform(kernels.begin(), kernels.end(), kernels.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return kernels.find("splitkreduce") != std::string::npos;
}


constexpr int kMeasuredOps = static_cast<int>(MeasuredOp::kCount);

// Which measured op classes a list names (bmm, linear, ...); an unknown name is an error with the nearest one.
std::array<bool, kMeasuredOps> op_class_mask(const std::vector<std::string>& names, const std::string& where) {
  std::vector<std::string> all;
  for (int o = 0; o < kMeasuredOps; ++o) all.emplace_back(measured_op_name(static_cast<MeasuredOp>(o)));
  std::array<bool, kMeasuredOps> mask{};
  for (const std::string& name : names) {
    const auto it = std::find(all.begin(), all.end(), name);
    if (it == all.end()) throw_unknown("op class (" + where + ")", name, all);
    mask[static_cast<std::size_t>(it - all.begin())] = true;
  }
  return mask;
}

// Every value is data/kernel_fit_setup.toml's (load_setup requires each key): no number here, so that no code
// default can disagree with the file (NaN and 0 until loaded).
struct Setup {
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, std::string> devices;
  std::map<std::string, std::pair<double, double>> bounds;
  std::pair<double, double> floor_bounds, launch_bounds, host_bounds, soak_bounds, soak_us_bounds, serial_bounds;
  double start_serial_share = kUnset;
  double start_floor = kUnset, start_launch = kUnset, start_soak_us = kUnset;
  // Op classes whose launch is the host's ([harness] host_launch_ops): host speed x host_launch_us, its own value.
  std::array<bool, kMeasuredOps> host_launch{};
  std::pair<double, double> host_launch_bounds;
  double start_host_launch = kUnset;
  double held_out_floor_share = kUnset;  // held-out board's host speed: from rows whose kernel is under this share of the floor
  bool tf32 = false;                     // whether the harness let cuDNN/cuBLAS run FP32 as TF32 on Ampere
  std::map<std::string, double> start_floor_by_op;  // op class name -> start floor, where it is not start_floor
  double prior_weight = kUnset;
  double tile_min_share = kUnset;
  int restarts = 0;
  std::size_t rows_per_group = 0;
  int max_evaluations = 0;
};

Setup load_setup() {
  const auto path = data_dir() / "kernel_fit_setup.toml";
  const toml::table root = parse_toml_file(path);
  TomlFields top(root, path.string());
  Setup s;
  for (const auto& [k, v] : top.table("devices")) s.devices[std::string(k.str())] = v.value_or(std::string{});
  auto pair = [&](const toml::node& n, const std::string& key) {
    const auto* a = n.as_array();
    if (!a || a->size() != 2) throw InputError(path.string() + ": '" + key + "' must be [lower, upper]");
    return std::make_pair(a->get(0)->value<double>().value_or(0), a->get(1)->value<double>().value_or(0));
  };
  for (const auto& [k, v] : top.table("parameters")) s.bounds[std::string(k.str())] = pair(v, std::string(k.str()));
  TomlFields h(top.table("harness"), path.string() + " [harness]");
  s.floor_bounds = pair(h.raw()["floor_us"].ref<toml::array>(), "floor_us");
  s.launch_bounds = pair(h.raw()["launch_us"].ref<toml::array>(), "launch_us");
  s.host_bounds = pair(h.raw()["host_speed"].ref<toml::array>(), "host_speed");
  s.start_floor = h.number("start_floor_us");
  s.start_launch = h.number("start_launch_us");
  if (const toml::node* bounds = h.raw().get("host_launch_us"))
    s.host_launch_bounds = pair(*bounds, "host_launch_us");
  else
    throw InputError(path.string() + ": [harness] has no 'host_launch_us' = [lower, upper]");
  s.start_host_launch = h.number("start_host_launch_us");
  if (const auto* ops = h.raw()["host_launch_ops"].as_array(); ops) {
    std::vector<std::string> names;
    for (const auto& v : *ops) names.push_back(v.value<std::string>().value_or(""));
    s.host_launch = op_class_mask(names, path.string() + " [harness] host_launch_ops");
  } else {
    throw InputError(path.string() + ": [harness] host_launch_ops must be a list of op classes ([] for none)");
  }
  if (const auto* by_op = h.raw()["start_floor_us_by_op"].as_table())
    for (const auto& [k, v] : *by_op) {
      const std::string op(k.str());
      bool known = false;
      for (int o = 0; o < kMeasuredOps; ++o) known = known || measured_op_name(static_cast<MeasuredOp>(o)) == op;
      if (!known) throw InputError(path.string() + ": [harness] start_floor_us_by_op: no op class '" + op + "'");
      s.start_floor_by_op[op] = v.value<double>().value_or(s.start_floor);
    }
  s.soak_bounds = pair(h.raw()["soak_share"].ref<toml::array>(), "soak_share");
  s.serial_bounds = pair(h.raw()["serial_share"].ref<toml::array>(), "serial_share");
  s.start_serial_share = h.number("start_serial_share");
  s.soak_us_bounds = pair(h.raw()["soak_us"].ref<toml::array>(), "soak_us");
  s.start_soak_us = h.number("start_soak_us");
  s.held_out_floor_share = h.number("held_out_floor_share");
  s.tf32 = h.boolean("tf32");
  TomlFields f(top.table("fit"), path.string() + " [fit]");
  s.prior_weight = f.number("prior_weight");
  s.restarts = f.count("restarts");
  TomlFields t(top.table("tiles"), path.string() + " [tiles]");
  s.tile_min_share = t.number("min_share");
  s.rows_per_group = static_cast<std::size_t>(f.number("rows_per_group"));
  s.max_evaluations = f.count("max_evaluations");
  return s;
}

struct Row {
  int gpu = 0;  // index into Problem::gpus
  MeasuredOp op = MeasuredOp::kBmm;
  double measured_us = 0;
  PreparedOp prepared;
  std::string cudnn_algorithm;  // convolutions: the algorithm the row's kernel names show
  std::int64_t batch = 0, channels = 0, map = 0;
  const MeasuredKernel* source = nullptr;  // the measured row (alive for the whole fit)
};

struct GpuEntry {
  std::string id;
  OpContext ctx;
  std::string arch;  // "sm_70"
};

// The parameter vector's layout: per measured architecture, global, per measured board, the harness.
struct Layout {
  std::vector<std::string> archs;           // measured architectures, in order
  std::vector<std::string> boards;          // measured GPUs (catalog ids), in order
  std::vector<std::string> arch_keys = {"dram_efficiency", "sgemm_tile_loss_share"};
  std::vector<std::string> global_keys = {"gemm_efficiency_cuda", "k_half_cuda", "ramp_us", "tile_efficiency_2",
                                          "tile_efficiency_3", "tile_efficiency_4", "tile_efficiency_5",
                                          "tile_efficiency_6", "tile_efficiency_7", "reduction_bandwidth_efficiency"};
  std::size_t global_base() const { return archs.size() * arch_keys.size(); }
  std::size_t board_base() const { return global_base() + global_keys.size(); }
  std::size_t harness_base() const { return board_base() + boards.size(); }
  // Harness: a floor per op class, the launch latency, the host launch of [harness] host_launch_ops, and each
  // board's host speed (floors and the host launch scale with it).
  std::size_t host_launch() const { return harness_base() + kMeasuredOps + 1; }
  std::size_t host_base() const { return harness_base() + kMeasuredOps + 2; }
  // Harness: each board's serial share, the part of the host floor a kernel does not hide (harness_time).
  std::size_t serial_base() const { return host_base() + boards.size(); }
  // Harness: each board's rate share in long back-to-back calls (soak), for linear layers and for bmm (and conv),
  // then the time constant (one value).
  std::size_t soak_base() const { return serial_base() + boards.size(); }
  std::size_t soak_time() const { return soak_base() + 2 * boards.size(); }
  // A measured board's index in `boards` (its offset in each per-board block).
  std::size_t board(const std::string& id) const {
    return static_cast<std::size_t>(std::find(boards.begin(), boards.end(), id) - boards.begin());
  }
  bool soak = false;  // --soak: the soak terms are in the parameter vector
  std::size_t size() const { return soak ? soak_time() + 1 : soak_base(); }
  std::size_t arch_index(std::size_t a, std::size_t key) const { return a * arch_keys.size() + key; }
};

double arch_value(const ArchitectureProfile& a, const std::string& key) {
  return key == "sgemm_tile_loss_share" ? a.sgemm_tile_loss_share : a.dram_efficiency;
}
void set_arch_value(ArchitectureProfile& a, const std::string& key, double v) {
  (key == "sgemm_tile_loss_share" ? a.sgemm_tile_loss_share : a.dram_efficiency) = v;
}
double global_value(const CostConstants& c, const std::string& key) {
  if (key == "gemm_efficiency_cuda") return 0;  // its start is the architectures' (see fit_kernels)
  if (key == "k_half_cuda") return c.k_half_cuda;
  if (key == "ramp_us") return c.ramp_us;
  if (key == "reduction_bandwidth_efficiency") return c.reduction_bandwidth_efficiency;
  if (key == "winograd_fused_efficiency") return c.winograd_fused_efficiency;
  if (key == "winograd_nonfused_efficiency") return c.winograd_nonfused_efficiency;
  if (key == "conv_efficiency_cuda") return c.conv_efficiency_cuda;
  if (key == "winograd_fused_step_latency_clk") return c.winograd_fused_step_latency_clk;
  if (key == "implicit_gemm_step_latency_clk") return c.implicit_gemm_step_latency_clk;
  const std::size_t i = static_cast<std::size_t>(key.back() - '1');
  return i < c.tiles_cuda.size() ? c.tiles_cuda[i].efficiency : 1.0;
}
void set_global_value(CostConstants& c, const std::string& key, double v) {
  if (key == "k_half_cuda") c.k_half_cuda = v;
  else if (key == "ramp_us") c.ramp_us = v;
  else if (key == "reduction_bandwidth_efficiency") c.reduction_bandwidth_efficiency = v;
  else if (key == "winograd_fused_efficiency") c.winograd_fused_efficiency = v;
  else if (key == "winograd_nonfused_efficiency") c.winograd_nonfused_efficiency = v;
  else if (key == "conv_efficiency_cuda") c.conv_efficiency_cuda = v;
  else if (key == "winograd_fused_step_latency_clk") c.winograd_fused_step_latency_clk = v;
  else if (key == "implicit_gemm_step_latency_clk") c.implicit_gemm_step_latency_clk = v;
  else if (const std::size_t i = static_cast<std::size_t>(key.back() - '1'); i < c.tiles_cuda.size())
    c.tiles_cuda[i].efficiency = v;
}

struct Problem {
  Setup setup;
  Layout layout;
  std::vector<GpuEntry> gpus;
  std::vector<Row> rows;
  std::vector<double> start, lo, hi;
  std::vector<int> fit_gpus;  // GPUs whose rows enter the loss
  std::vector<std::vector<std::size_t>> groups;  // row indices per (gpu, op) group, for the loss
  std::vector<std::vector<std::size_t>> conv_groups;  // --fit-conv: conv rows, fitted after the others
  int evaluations = 0;
};

// Architecture and constants for GPU g under parameter vector x. An architecture without fitted values (the
// held-out one) is treated as data/kernel_fit.toml treats an architecture without measured kernels: its own start
// value (architectures.toml: a published STREAM-like bandwidth, a datasheet figure) scaled by the mean
// fitted/start ratio of the fitted architectures, and its own datasheet-derived power. The achievable share of
// peak DRAM bandwidth differs by board (0.61-0.80 fitted) with the memory and its controller, which the fitted
// architectures' mean does not carry; what PyTorch's kernels lose against a STREAM copy does.
void apply(const Problem& p, const std::vector<double>& x, int g, const std::vector<bool>& arch_fitted,
           ArchitectureProfile& arch, CostConstants& constants, DeviceSpec& device) {
  const Layout& L = p.layout;
  const GpuEntry& e = p.gpus[static_cast<std::size_t>(g)];
  arch = e.ctx.arch;
  device = e.ctx.device;
  const auto it = std::find(L.archs.begin(), L.archs.end(), e.arch);
  const std::size_t a = static_cast<std::size_t>(it - L.archs.begin());
  for (std::size_t key = 0; key < L.arch_keys.size(); ++key) {
    if (arch_fitted[a]) {
      set_arch_value(arch, L.arch_keys[key], x[L.arch_index(a, key)]);
    } else {
      double sum = 0;
      int n = 0;
      for (std::size_t o = 0; o < L.archs.size(); ++o)
        if (arch_fitted[o] && p.start[L.arch_index(o, key)] > 0)
          sum += x[L.arch_index(o, key)] / p.start[L.arch_index(o, key)], ++n;
      if (n > 0) set_arch_value(arch, L.arch_keys[key], std::min(p.hi[L.arch_index(a, key)], p.start[L.arch_index(a, key)] * sum / n));
    }
  }
  constants = cost_constants_prior();
  for (std::size_t k = 0; k < L.global_keys.size(); ++k) {
    if (L.global_keys[k] == "gemm_efficiency_cuda") arch.gemm_efficiency_cuda = x[L.global_base() + k];
    else set_global_value(constants, L.global_keys[k], x[L.global_base() + k]);
  }
  // A board in the fit gets its fitted sustained clock; a held-out one keeps the power model.
  if (std::find(p.fit_gpus.begin(), p.fit_gpus.end(), g) != p.fit_gpus.end()) {
    device.sustained_clock_factor = x[L.board_base() + L.board(e.id)];
    device.sustained_clock_tdp_w = device.tdp_w;
  }
}

// The conv algorithm name conv_pass costs (CostContext::forced_conv_algorithm) for one cuDNN ran.
std::string_view forced_algorithm(const std::string& cudnn) {
  if (cudnn == "fft" || cudnn == "winograd_fused" || cudnn == "winograd_nonfused") return cudnn;
  return "gemm";  // implicit GEMM, and im2col + GEMM
}

// The harness repeats each call back to back (25 calls, the fastest 5 kept), so a long kernel keeps the board busy
// for seconds. On the T4 (linear and bmm), the P4 and the P100 (linear only) compute-bound GEMMs of 3 ms and more
// run slower the longer they are, at a fixed shape class; the fit gives such rows the rate share
// s + (1 - s) exp(-t / tau) of the short-burst rate, t the kernel's predicted time, s per board and op class (linear;
// bmm and conv), so they do not pull the board's sustained clock. Harness only, never in a prediction: the
// transformer steps of the end-to-end files run GEMMs of at most a few ms (docs/kernel-model.md, "Long kernels").
double soaked_time(const Problem& p, const std::vector<double>& x, int g, MeasuredOp op, const KernelCost& k) {
  const bool gemm = op == MeasuredOp::kBmm || op == MeasuredOp::kLinear || op == MeasuredOp::kConv;
  if (!p.layout.soak || !gemm || (k.bound != Bound::kCudaCompute && k.bound != Bound::kTensorCompute)) return k.time_us;
  if (std::find(p.fit_gpus.begin(), p.fit_gpus.end(), g) == p.fit_gpus.end()) return k.time_us;  // held out: unknown
  const Layout& L = p.layout;
  const std::size_t b = L.board(p.gpus[static_cast<std::size_t>(g)].id);
  const double s = x[L.soak_base() + (op == MeasuredOp::kLinear ? 0 : L.boards.size()) + b], tau = x[L.soak_time()];
  return k.time_us / (s + (1 - s) * std::exp(-k.time_us / tau));
}

// A measured call: the host's dispatch of the op (its floor) and launch + kernel on the GPU. NeuSight's harness
// synchronizes after every call (neusight/Dataset/collect.py `measure_once`: record, op, record, synchronize), so a
// call starts on an idle GPU and, read literally, measures dispatch + kernel; the plain max treats a long kernel as
// hiding the dispatch. Per board, the share w of the shorter part that stays serial:
// max(floor, kernel) + w min(floor, kernel); w = 0 is the plain max, the default ([harness] serial_share held at 0:
// w = 1 and a free w were tried in session 30 and not kept, docs/kernel-model.md "The harness measures dispatch +
// kernel"). Harness only, never in a prediction.
double harness_time(double floor, double kernel, double serial) {
  return std::max(floor, kernel) + serial * std::min(floor, kernel);
}

// GPU g's kernel model at parameters x, and the measuring harness's terms for its rows: a row is predicted as
// harness_time(floor(op), launch + kernel time, serial share).
struct GpuAtParams {
  ArchitectureProfile arch;
  CostConstants constants;
  DeviceSpec device;
  std::optional<KernelCostModel> km;
  double launch = 0, host = 0, serial = 0;
  const Problem& p;
  const std::vector<double>& x;

  GpuAtParams(const Problem& problem, const std::vector<double>& params, int g, const std::vector<bool>& arch_fitted)
      : p(problem), x(params) {
    apply(p, x, g, arch_fitted, arch, constants, device);
    km.emplace(device, arch, constants);
    launch = x[p.layout.harness_base() + kMeasuredOps];
    host = x[p.layout.host_base() + p.layout.board(p.gpus[static_cast<std::size_t>(g)].id)];
    serial = x[p.layout.serial_base() + p.layout.board(p.gpus[static_cast<std::size_t>(g)].id)];
  }
  GpuAtParams(const GpuAtParams&) = delete;
  GpuAtParams& operator=(const GpuAtParams&) = delete;

  double floor(MeasuredOp op) const { return host * x[p.layout.harness_base() + static_cast<std::size_t>(op)]; }
  // The time from the start event to the kernel's start: the host's own share of the dispatch for the classes of
  // [harness] host_launch_ops (it scales with the board's host speed, as the floor does), the shared launch
  // latency for the others.
  double launch_of(MeasuredOp op) const {
    return p.setup.host_launch[static_cast<std::size_t>(op)] ? host * x[p.layout.host_launch()] : launch;
  }
};

// Predicted measurement of every row of GPU g: max(host floor of the op, launch latency + kernel time).
void predict_rows(const Problem& p, const std::vector<double>& x, const std::vector<bool>& arch_fitted, int g,
                  const std::vector<std::size_t>& rows, std::vector<double>& out) {
  const GpuAtParams at(p, x, g, arch_fitted);
  const GpuEntry& e = p.gpus[static_cast<std::size_t>(g)];
  for (std::size_t r : rows) {
    Row& row = const_cast<Row&>(p.rows[r]);  // predict_prepared toggles gradient flags and restores them
    const double kernel = soaked_time(p, x, g, row.op, predict_prepared(row.prepared, e.ctx, *at.km).cost);
    out[r] = harness_time(at.floor(row.op), at.launch_of(row.op) + kernel, at.serial);
  }
}

std::vector<bool> fitted_archs(const Problem& p, int held_out_gpu) {
  std::vector<bool> fitted(p.layout.archs.size(), false);
  for (int g : p.fit_gpus) {
    if (g == held_out_gpu) continue;
    const auto it = std::find(p.layout.archs.begin(), p.layout.archs.end(), p.gpus[static_cast<std::size_t>(g)].arch);
    fitted[static_cast<std::size_t>(it - p.layout.archs.begin())] = true;
  }
  return fitted;
}

struct LossData {
  Problem* p;
  std::vector<bool> arch_fitted;
  std::vector<std::vector<std::size_t>> rows_per_gpu;
  std::vector<double> pred;
};

double loss(unsigned n, const double* xs, double*, void* data) {
  auto* d = static_cast<LossData*>(data);
  Problem& p = *d->p;
  const std::vector<double> x(xs, xs + n);
  for (std::size_t g = 0; g < d->rows_per_gpu.size(); ++g)
    if (!d->rows_per_gpu[g].empty()) predict_rows(p, x, d->arch_fitted, static_cast<int>(g), d->rows_per_gpu[g], d->pred);
  double total = 0;
  int groups = 0;
  for (const auto& grp : p.groups) {
    double s = 0;
    int m = 0;
    for (std::size_t r : grp) {
      if (d->rows_per_gpu[static_cast<std::size_t>(p.rows[r].gpu)].empty()) continue;
      s += std::abs(std::log(d->pred[r] / p.rows[r].measured_us));
      ++m;
    }
    if (m > 0) total += s / m, ++groups;
  }
  double prior = 0;
  // The soak terms have no prior: only rows of 1 ms and longer identify them, and their start (no soak) is no
  // physical estimate to pull towards.
  // Nor the serial shares: their start is no estimate either.
  for (unsigned i = 0; i < std::min<std::size_t>(n, p.layout.serial_base()); ++i)
    if (p.start[i] > 0 && xs[i] > 0) prior += std::pow(std::log(xs[i] / p.start[i]), 2);
  ++p.evaluations;
  return (groups ? total / groups : 0) + p.setup.prior_weight * prior;
}

std::vector<double> run_fit(Problem& p, int held_out_gpu) {
  LossData d{&p, fitted_archs(p, held_out_gpu), std::vector<std::vector<std::size_t>>(p.gpus.size()),
             std::vector<double>(p.rows.size(), 0)};
  for (const auto& grp : p.groups)
    for (std::size_t r : grp)
      if (p.rows[r].gpu != held_out_gpu) d.rows_per_gpu[static_cast<std::size_t>(p.rows[r].gpu)].push_back(r);
  std::vector<double> x = p.start;
  nlopt_opt opt = nlopt_create(NLOPT_LN_SBPLX, static_cast<unsigned>(x.size()));
  nlopt_set_lower_bounds(opt, p.lo.data());
  nlopt_set_upper_bounds(opt, p.hi.data());
  nlopt_set_min_objective(opt, loss, &d);
  nlopt_set_maxeval(opt, p.setup.max_evaluations);
  nlopt_set_xtol_rel(opt, 1e-4);
  double best = 0;
  // Restarting from the optimum lets the simplex re-expand along directions it had collapsed (the usual remedy
  // for Nelder-Mead-type stalls); a stop at maxeval still leaves the best point in x.
  for (int i = 0; i < std::max(1, p.setup.restarts); ++i) nlopt_optimize(opt, x.data(), &best);
  nlopt_destroy(opt);
  return x;
}

// --fit-conv: the shared GEMM, memory and harness values are fitted on the other op classes first (conv
// constants held at their starts), then the conv constants and the conv floor alone on the conv rows, the rest held:
// cuDNN's per-algorithm error (the heuristic rules miss a third of the rows) must not move the GEMM values.
std::vector<double> run_fit_staged(Problem& p, int held_out_gpu) {
  if (p.conv_groups.empty()) return run_fit(p, held_out_gpu);
  const std::vector<double> lo = p.lo, hi = p.hi, start = p.start;
  const auto groups = p.groups;
  std::vector<std::size_t> conv_params = {p.layout.harness_base() + static_cast<std::size_t>(MeasuredOp::kConv)};
  for (std::size_t k = 0; k < p.layout.global_keys.size(); ++k) {
    const std::string& key = p.layout.global_keys[k];
    if (key == "winograd_fused_efficiency" || key == "winograd_nonfused_efficiency" || key == "conv_efficiency_cuda" ||
        key == "winograd_fused_step_latency_clk" || key == "implicit_gemm_step_latency_clk")
      conv_params.push_back(p.layout.global_base() + k);
  }
  for (std::size_t i : conv_params) p.lo[i] = p.hi[i] = p.start[i];
  std::vector<double> x = run_fit(p, held_out_gpu);
  for (std::size_t i = 0; i < x.size(); ++i) p.lo[i] = p.hi[i] = p.start[i] = x[i];
  for (std::size_t i : conv_params) p.lo[i] = lo[i], p.hi[i] = hi[i], p.start[i] = start[i];
  p.groups = p.conv_groups;
  x = run_fit(p, held_out_gpu);
  p.lo = lo, p.hi = hi, p.start = start, p.groups = groups;
  return x;
}

// Median and mean APE, share within 25%, median log ratio of predicted over measured (the upper median of an even count).
GroupError error_of(const std::vector<double>& measured, const std::vector<double>& predicted) {
  GroupError e;
  e.rows = measured.size();
  if (measured.empty()) return e;
  std::vector<double> ape, lr;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    ape.push_back(std::abs(predicted[i] - measured[i]) / measured[i] * 100);
    lr.push_back(std::log(predicted[i] / measured[i]));
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  e.median_ape = median(ape);
  double s = 0;
  for (double a : ape) s += a;
  e.mean_ape = s / static_cast<double>(ape.size());
  e.within_25 = 100.0 * static_cast<double>(std::count_if(ape.begin(), ape.end(), [](double a) { return a <= 25; })) /
                static_cast<double>(ape.size());
  e.median_log_ratio = median(lr);
  return e;
}

// One markdown table of per-GPU, per-op-class errors (fit-kernels' and predict-kernels' reports).
void error_table(std::ostringstream& o, const std::vector<GroupError>& errs) {
  o << "| GPU | op class | rows | median error | mean error | within 25% | median pred/meas |\n"
       "|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& e : errs)
    o << fmt::format("| {} | {} | {} | {:.1f}% | {:.1f}% | {:.0f}% | {:.2f} |\n", e.gpu, e.op, e.rows, e.median_ape,
                     e.mean_ape, e.within_25, std::exp(e.median_log_ratio));
}

GroupError group_error(const Problem& p, const std::vector<std::size_t>& rows, const std::vector<double>& pred) {
  std::vector<double> measured, predicted;
  for (std::size_t r : rows) measured.push_back(p.rows[r].measured_us), predicted.push_back(pred[r]);
  return error_of(measured, predicted);
}

// The host speed of a board held out of the fit. It belongs to the machine that measured the board, not to the GPU
// (the P100's host dispatches a PyTorch add in 43 us, the A100's in 26), and no prediction uses it; left at its start
// (1) it scored the held-out P100's and V100's small kernels, half their elementwise rows, 1.7x and 1.3x too fast
// (docs/kernel-model.md, "Leave one GPU out: the host floor"). Read off the held-out board's rows whose predicted
// launch + kernel stays under held_out_floor_share of the op's floor (whatever the GPU, those rows measure the host):
// the median of measured / floor. No GPU parameter is touched.
double held_out_host_speed(const Problem& p, const std::vector<double>& x, const std::vector<bool>& fitted, int g,
                           const std::vector<std::size_t>& rows) {
  std::vector<double> kernel_only(p.rows.size(), 0), xk = x;
  const std::size_t b = p.layout.board(p.gpus[static_cast<std::size_t>(g)].id);
  // Floor 0: predict_rows gives launch + kernel time (the kernel alone for [harness] host_launch_ops, whose launch
  // scales with the host speed as well).
  xk[p.layout.host_base() + b] = 0;
  predict_rows(p, xk, fitted, g, rows, kernel_only);
  std::vector<double> ratios;
  for (std::size_t r : rows) {
    const double floor = x[p.layout.harness_base() + static_cast<std::size_t>(p.rows[r].op)];
    if (floor > 0 && kernel_only[r] < p.setup.held_out_floor_share * floor) ratios.push_back(p.rows[r].measured_us / floor);
  }
  if (ratios.empty()) return x[p.layout.host_base() + b];
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  return std::clamp(ratios[ratios.size() / 2], p.setup.host_bounds.first, p.setup.host_bounds.second);
}

// Errors of every group whose GPU is in `gpus`, over all of its rows (not only the fit's subsample). A board held
// out of the fit (held_out_gpu >= 0) gets its host speed from its own floor rows (held_out_host_speed).
std::vector<GroupError> errors(Problem& p, const std::vector<double>& x_fit, int held_out_gpu, const std::vector<int>& gpus) {
  std::vector<double> pred(p.rows.size(), 0);
  const std::vector<bool> fitted = fitted_archs(p, held_out_gpu);
  std::vector<GroupError> out;
  for (int g : gpus) {
    std::vector<std::vector<std::size_t>> by_op(kMeasuredOps);
    for (std::size_t r = 0; r < p.rows.size(); ++r)
      if (p.rows[r].gpu == g) by_op[static_cast<std::size_t>(p.rows[r].op)].push_back(r);
    std::vector<std::size_t> all;
    for (const auto& v : by_op) all.insert(all.end(), v.begin(), v.end());
    std::vector<double> x = x_fit;
    if (held_out_gpu >= 0) {
      x[p.layout.host_base() + p.layout.board(p.gpus[static_cast<std::size_t>(g)].id)] = held_out_host_speed(p, x_fit, fitted, g, all);
      // Its serial share (its rows were not fitted): the fitted boards' mean.
      double sum = 0;
      int n = 0;
      for (int f : p.fit_gpus)
        if (f != held_out_gpu) sum += x_fit[p.layout.serial_base() + p.layout.board(p.gpus[static_cast<std::size_t>(f)].id)], ++n;
      if (n > 0) x[p.layout.serial_base() + p.layout.board(p.gpus[static_cast<std::size_t>(g)].id)] = sum / n;
    }
    predict_rows(p, x, fitted, g, all, pred);
    for (int o = 0; o < kMeasuredOps; ++o) {
      if (by_op[static_cast<std::size_t>(o)].empty()) continue;
      GroupError e = group_error(p, by_op[static_cast<std::size_t>(o)], pred);
      e.gpu = p.gpus[static_cast<std::size_t>(g)].id;
      e.op = std::string(measured_op_name(static_cast<MeasuredOp>(o)));
      out.push_back(e);
    }
  }
  return out;
}

// Convolution errors at parameters x (every GPU's own fitted values), grouped by the algorithm cuDNN ran against
// the one perfcast chose, and by batch, input channels and map size.
std::vector<ConvBreakdown> conv_breakdown(Problem& p, const std::vector<double>& x) {
  const std::vector<bool> fitted = fitted_archs(p, -1);
  struct Entry {
    double ape, log_ratio;
    bool same;
    std::vector<std::pair<std::string, std::string>> keys;
  };
  std::vector<Entry> entries;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    const GpuAtParams at(p, x, static_cast<int>(g), fitted);
    const KernelCostModel& km = *at.km;
    const double launch = at.launch_of(MeasuredOp::kConv);
    const double floor = at.floor(MeasuredOp::kConv), serial = at.serial;
    for (Row& row : p.rows) {
      if (row.gpu != static_cast<int>(g) || row.op != MeasuredOp::kConv) continue;
      const OpPrediction pr = predict_prepared(row.prepared, p.gpus[g].ctx, km);
      const double pred = harness_time(floor, launch + soaked_time(p, x, static_cast<int>(g), row.op, pr.cost), serial);
      OpContext forced = p.gpus[g].ctx;
      forced.forced_conv_algorithm = forced_algorithm(row.cudnn_algorithm);
      const double as_ran =
          harness_time(floor, launch + soaked_time(p, x, static_cast<int>(g), row.op, predict_prepared(row.prepared, forced, km).cost), serial);
      entries.push_back({std::abs(as_ran - row.measured_us) / row.measured_us * 100, std::log(as_ran / row.measured_us), true,
                         {{"costed as cuDNN ran", row.cudnn_algorithm}}});
      std::string chose(pr.cost.algorithm);
      if (chose == "gemm") chose = "implicit_gemm";
      const char* batch = row.batch == 1 ? "1" : row.batch <= 8 ? "2-8" : row.batch <= 32 ? "9-32" : "33+";
      const char* chan = row.channels < 64 ? "< 64" : row.channels < 256 ? "64-255" : "256+";
      const char* map = row.map <= 8 ? "<= 8" : row.map <= 32 ? "9-32" : "33+";
      entries.push_back({std::abs(pred - row.measured_us) / row.measured_us * 100, std::log(pred / row.measured_us),
                         chose == row.cudnn_algorithm,
                         {{"cuDNN ran / perfcast chose", row.cudnn_algorithm + " / " + chose},
                          {"cuDNN ran", row.cudnn_algorithm},
                          {"batch", batch},
                          {"input channels", chan},
                          {"map size", map}}});
    }
  }
  std::map<std::pair<std::string, std::string>, std::vector<const Entry*>> groups;
  for (const Entry& e : entries)
    for (const auto& k : e.keys) groups[k].push_back(&e);
  std::vector<ConvBreakdown> out;
  for (const auto& [key, es] : groups) {
    ConvBreakdown c;
    c.dimension = key.first, c.key = key.second, c.rows = es.size();
    std::vector<double> ape, lr;
    double same = 0, within = 0;
    for (const Entry* e : es) ape.push_back(e->ape), lr.push_back(e->log_ratio), same += e->same, within += e->ape <= 25;
    std::nth_element(ape.begin(), ape.begin() + static_cast<std::ptrdiff_t>(ape.size() / 2), ape.end());
    std::nth_element(lr.begin(), lr.begin() + static_cast<std::ptrdiff_t>(lr.size() / 2), lr.end());
    c.median_ape = ape[ape.size() / 2], c.median_log_ratio = lr[lr.size() / 2];
    c.same_algorithm = 100 * same / static_cast<double>(es.size());
    c.within_25 = 100 * within / static_cast<double>(es.size());
    out.push_back(c);
  }
  return out;
}

// Every row's prediction at parameters x (in sample), one CSV line each: the measured shape and kernel names, the
// measured and predicted latency, and what the model made of the kernel (tile, split-K, clock, bound).
std::string residuals_csv(Problem& p, const std::vector<double>& x) {
  const std::vector<bool> fitted = fitted_archs(p, -1);
  std::ostringstream o;
  o << "gpu,op,op_name,b,m,n,k,measured_us,predicted_us,kernel_us,tile_m,tile_n,split_k,measured_split_k,clock_factor,bound,"
       "kernels\n";
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    const GpuAtParams at(p, x, static_cast<int>(g), fitted);
    const KernelCostModel& km = *at.km;
    for (Row& row : p.rows) {
      if (row.gpu != static_cast<int>(g)) continue;
      const OpPrediction pr = predict_prepared(row.prepared, p.gpus[g].ctx, km);
      const double floor = at.floor(row.op);
      const double pred = harness_time(floor, at.launch_of(row.op) + soaked_time(p, x, static_cast<int>(g), row.op, pr.cost), at.serial);
      const MeasuredKernel& m = *row.source;
      std::string kernels = m.kernels;
      std::replace(kernels.begin(), kernels.end(), ',', ' ');
      std::replace(kernels.begin(), kernels.end(), '"', ' ');
      o << fmt::format("{},{},{},{},{},{},{},{:.4g},{:.4g},{:.4g},{},{},{},{},{:.4g},{},\"{}\"\n", p.gpus[g].id,
                       measured_op_name(row.op), m.op_name, m.b, m.m, m.op == MeasuredOp::kConv ? m.conv_k : m.n,
                       m.op == MeasuredOp::kConv ? m.conv_c : m.k, row.measured_us, pred, pr.cost.time_us,
                       pr.cost.tile_m, pr.cost.tile_n, pr.cost.split_k, cublas_split_k(m), pr.cost.clock_factor,
                       bound_name(pr.cost.bound),
                       kernels);
    }
  }
  return o.str();
}

// Split-K of every measured linear row, perfcast's (in sample, at parameters x) against cuBLAS's grid.z.
std::vector<SplitKAgreement> split_k_agreement(Problem& p, const std::vector<double>& x) {
  const std::vector<bool> fitted = fitted_archs(p, -1);
  std::vector<SplitKAgreement> out;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    const GpuAtParams at(p, x, static_cast<int>(g), fitted);
    const KernelCostModel& km = *at.km;
    const double launch = at.launch_of(MeasuredOp::kLinear);
    SplitKAgreement all{p.gpus[g].id, false}, shorter{p.gpus[g].id, true};
    std::vector<double> ratios[2][4];  // [short][both, model only, cuBLAS only, neither]
    for (Row& row : p.rows) {
      if (row.gpu != static_cast<int>(g) || row.op != MeasuredOp::kLinear) continue;
      const OpPrediction pr = predict_prepared(row.prepared, p.gpus[g].ctx, km);
      const double floor = at.floor(row.op);
      const double pred = harness_time(floor, launch + soaked_time(p, x, static_cast<int>(g), row.op, pr.cost), at.serial);
      const bool model = pr.cost.split_k > 1, cublas = cublas_split_k(*row.source) > 1;
      const bool reduce = cublas && has_split_k_reduce(row.source->kernels);
      const bool is_short = row.measured_us < SplitKAgreement::short_us;
      for (SplitKAgreement* a : {&all, &shorter}) {
        if (a->short_rows && !is_short) continue;
        ++a->rows, a->model_split += model, a->cublas_split += cublas, a->cublas_reduce += reduce;
        a->agree += model == cublas;
        ratios[a->short_rows][model && cublas ? 0 : model ? 1 : cublas ? 2 : 3].push_back(pred / row.measured_us);
      }
    }
    const auto median = [](std::vector<double>& v) {
      if (v.empty()) return 0.0;
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    for (SplitKAgreement* a : {&all, &shorter}) {
      if (a->rows == 0) continue;
      auto& r = ratios[a->short_rows];
      a->ratio_both = median(r[0]), a->ratio_model_only = median(r[1]);
      a->ratio_cublas_only = median(r[2]), a->ratio_neither = median(r[3]);
      out.push_back(*a);
    }
  }
  return out;
}

std::string param_name(const Layout& L, std::size_t i) {
  if (i < L.global_base()) return L.archs[i / L.arch_keys.size()] + "." + L.arch_keys[i % L.arch_keys.size()];
  if (i < L.board_base()) return "global." + L.global_keys[i - L.global_base()];
  if (i < L.harness_base()) return "gpu." + L.boards[i - L.board_base()] + ".sustained_clock";
  const std::size_t h = i - L.harness_base();
  if (h < static_cast<std::size_t>(kMeasuredOps))
    return "harness.floor_us." + std::string(measured_op_name(static_cast<MeasuredOp>(h)));
  if (i < L.host_launch()) return "harness.launch_us";
  if (i < L.host_base()) return "harness.host_launch_us";
  if (i < L.serial_base()) return "harness.host_speed." + L.boards[i - L.host_base()];
  if (i < L.soak_base()) return "harness.serial_share." + L.boards[i - L.serial_base()];
  if (i < L.soak_base() + L.boards.size()) return "harness.soak_linear." + L.boards[i - L.soak_base()];
  if (i < L.soak_time()) return "harness.soak_bmm." + L.boards[i - L.soak_base() - L.boards.size()];
  return "harness.soak_us";
}

// The (m, n) of a cuBLAS SGEMM kernel name ("volta_sgemm_128x64_nn", "ampere_sgemm_32x32_sliced1x4_tn"); {0, 0}
// for other kernels.
std::pair<int, int> sgemm_tile(const std::string& kernel) {
  const std::size_t at = kernel.find("sgemm_");
  if (at == std::string::npos) return {0, 0};
  const char* p = kernel.c_str() + at + 6;
  char* end = nullptr;
  const long m = std::strtol(p, &end, 10);
  if (end == p || *end != 'x') return {0, 0};
  const long n = std::strtol(end + 1, &end, 10);
  if (*end != '_') return {0, 0};  // sgemm_32x32x32_NN (Maxwell-era names) carries a third dimension
  return {static_cast<int>(m), static_cast<int>(n)};
}

// Tiles that ran at least `min_share` of the rows of `op` on each architecture.
std::map<std::string, std::vector<std::pair<int, int>>> tile_sets(const std::vector<MeasuredKernel>& measured,
                                                                  const std::map<std::string, std::string>& arch_of,
                                                                  MeasuredOp op, double min_share) {
  std::map<std::string, std::map<std::pair<int, int>, int>> counts;
  std::map<std::string, int> totals;
  for (const auto& m : measured) {
    if (m.op != op) continue;
    const std::string& arch = arch_of.at(m.device);
    ++totals[arch];
    const auto t = sgemm_tile(m.kernel);
    if (t.first > 0) ++counts[arch][t];
  }
  std::map<std::string, std::vector<std::pair<int, int>>> out;
  for (const auto& [arch, c] : counts)
    for (const auto& [tile, n] : c)
      if (n >= min_share * totals[arch]) out[arch].push_back(tile);
  return out;
}

std::string tile_list(const std::vector<std::pair<int, int>>& tiles) {
  std::string s = "[";
  for (const auto& t : tiles) s += (s.size() > 1 ? ", " : "") + fmt::format("\"{}x{}\"", t.first, t.second);
  return s + "]";
}

}  // namespace

KernelFit fit_kernels(const KernelFitOptions& options) {
  Problem p;
  p.setup = load_setup();
  if (options.rows_per_group > 0) p.setup.rows_per_group = options.rows_per_group;
  if (options.max_evaluations > 0) p.setup.max_evaluations = options.max_evaluations;
  if (options.host_launch_ops) p.setup.host_launch = op_class_mask(*options.host_launch_ops, "--host-launch");
  if (options.start_host_launch_us) {
    const auto [lo, hi] = p.setup.host_launch_bounds;
    const double start = *options.start_host_launch_us;
    if (!(start >= lo && start <= hi))
      throw InputError(fmt::format("--start-host-launch {} is outside [harness] host_launch_us = [{}, {}] (data/kernel_fit_setup.toml)",
                                   start, lo, hi));
    p.setup.start_host_launch = start;
  }
  p.layout.soak = options.soak;
  // Fitting convolutions too adds the per-algorithm conv efficiencies and lets the conv rows into a second stage
  // of the fit (run_fit_staged; their harness floor is fitted there as well).
  if (options.fit_conv)
    for (const char* key : {"winograd_fused_efficiency", "winograd_nonfused_efficiency", "conv_efficiency_cuda",
                            "winograd_fused_step_latency_clk", "implicit_gemm_step_latency_clk"})
      p.layout.global_keys.push_back(key);
  const std::vector<MeasuredKernel> measured = read_measured_kernel_dir(options.kernels_dir);
  for (const auto& m : measured)
    if (m.precision != "fp32")
      throw InputError("fit-kernels: a " + m.precision + " row of '" + m.device +
                       "': the fit takes FP32 rows only (perfcast predict-kernels reports the others)");
  KernelFit fit;
  fit.source_dir = options.kernels_dir;
  fit.rows_total = measured.size();
  std::map<std::string, int> gpu_index;
  for (const auto& m : measured) {
    if (gpu_index.count(m.device)) continue;
    const auto it = p.setup.devices.find(m.device);
    if (it == p.setup.devices.end())
      throw InputError("fit-kernels: device '" + m.device + "' has no catalog id in data/kernel_fit_setup.toml [devices]");
    GpuEntry e{it->second, op_context(it->second, "pytorch", "fp32"), ""};
    e.ctx.arch = architecture_prior(e.ctx.device);  // the fit starts from the data files, never from its own output
    // PyTorch runs FP32 convolutions as TF32 on Ampere by default (cudnn.allow_tf32); the harness turned it off.
    e.ctx.runtime.tf32_conv_default = e.ctx.runtime.tf32_conv_default && p.setup.tf32;
    e.ctx.runtime.tf32_matmul_default = e.ctx.runtime.tf32_matmul_default && p.setup.tf32;
    e.ctx.plan = resolve_precision("fp32", e.ctx.device, e.ctx.arch, e.ctx.runtime, "", false);
    // The harness did not autotune convolutions (PyTorch's default torch.backends.cudnn.benchmark = False): the
    // kernel names show cuDNN's heuristic choice, often a slower implicit GEMM where Winograd is faster, so the
    // rows are costed with the heuristic rules ([conv] heuristic_fwd), not the fastest algorithm.
    e.ctx.conv_autotune = false;
    e.ctx.device.sustained_clock_factor = 0;
    e.ctx.device.sustained_clock_tdp_w = 0;
    e.arch = "sm_" + std::to_string(e.ctx.arch.sm_version);
    gpu_index[m.device] = static_cast<int>(p.gpus.size());
    p.gpus.push_back(std::move(e));
  }
  // Two A100 boards (conv rows come from the 80 GB one) share one architecture; a GPU's rows are grouped per op.
  for (const auto& g : p.gpus) {
    if (std::find(p.layout.archs.begin(), p.layout.archs.end(), g.arch) == p.layout.archs.end()) p.layout.archs.push_back(g.arch);
    p.layout.boards.push_back(g.id);
  }
  std::map<std::string, std::string> arch_of;
  for (const auto& [device, g] : gpu_index) arch_of[device] = p.gpus[static_cast<std::size_t>(g)].arch;
  const auto plain = tile_sets(measured, arch_of, MeasuredOp::kLinear, p.setup.tile_min_share);
  const auto batched = tile_sets(measured, arch_of, MeasuredOp::kBmm, p.setup.tile_min_share);
  for (auto& g : p.gpus) {
    if (plain.count(g.arch)) g.ctx.arch.sgemm_tiles = plain.at(g.arch);
    if (batched.count(g.arch)) g.ctx.arch.sgemm_tiles_batched = batched.at(g.arch);
  }
  fit.sgemm_tiles = plain;
  fit.sgemm_tiles_batched = batched;
  for (const auto& m : measured) {
    Row r;
    r.gpu = gpu_index[m.device];
    r.op = m.op;
    r.measured_us = m.latency_us;
    r.prepared = prepare_op(measured_op_spec(m));
    r.source = &m;
    if (m.op == MeasuredOp::kConv) {
      r.cudnn_algorithm = cudnn_conv_algorithm(m.kernels);
      r.batch = m.b, r.channels = m.conv_c, r.map = m.conv_hw;
      // Agreement of the heuristic rules with the algorithm cuDNN ran, on every measured row.
      const auto& ctx = p.gpus[static_cast<std::size_t>(r.gpu)].ctx;
      const bool rule_shape = m.conv_r == 3 && m.conv_stride == 1;
      std::string rule = rule_shape ? conv_heuristic_algorithm(cost_constants_prior(), ctx.device.sm_version,
                                                                static_cast<double>(m.b), static_cast<double>(m.conv_c),
                                                                static_cast<double>(m.conv_hw))
                                    : std::string();
      if (rule.empty() || rule == "gemm") rule = "implicit_gemm";
      auto it = std::find_if(fit.conv_agreement.begin(), fit.conv_agreement.end(),
                             [&](const ConvAgreement& a) { return a.gpu == p.gpus[static_cast<std::size_t>(r.gpu)].id; });
      if (it == fit.conv_agreement.end()) {
        fit.conv_agreement.push_back({p.gpus[static_cast<std::size_t>(r.gpu)].id});
        it = fit.conv_agreement.end() - 1;
      }
      it->rows += 1;
      it->agree += rule == r.cudnn_algorithm;
    }
    p.rows.push_back(std::move(r));
  }
  // Start values and bounds.
  const Layout& L = p.layout;
  for (const std::string& arch : options.leave_out_archs)
    if (std::find(L.archs.begin(), L.archs.end(), arch) == L.archs.end())
      throw_unknown("measured architecture (--leave-out)", arch, L.archs);
  p.start.resize(L.size());
  p.lo.resize(L.size());
  p.hi.resize(L.size());
  auto bound = [&](const std::string& key) {
    const auto it = p.setup.bounds.find(key);
    if (it == p.setup.bounds.end()) throw InputError("data/kernel_fit_setup.toml: no bounds for '" + key + "'");
    return it->second;
  };
  for (std::size_t a = 0; a < L.archs.size(); ++a) {
    const GpuEntry& any = *std::find_if(p.gpus.begin(), p.gpus.end(), [&](const GpuEntry& g) { return g.arch == L.archs[a]; });
    for (std::size_t k = 0; k < L.arch_keys.size(); ++k) {
      const std::size_t i = L.arch_index(a, k);
      p.start[i] = arch_value(any.ctx.arch, L.arch_keys[k]);
      std::tie(p.lo[i], p.hi[i]) = bound("arch." + L.arch_keys[k]);
    }
  }
  for (std::size_t k = 0; k < L.global_keys.size(); ++k) {
    const std::size_t i = L.global_base() + k;
    p.start[i] = global_value(cost_constants_prior(), L.global_keys[k]);
    if (L.global_keys[k] == "gemm_efficiency_cuda") {  // the mean of the measured architectures' stated values
      double sum = 0;
      for (const auto& g : p.gpus) sum += g.ctx.arch.gemm_efficiency_cuda;
      p.start[i] = sum / static_cast<double>(p.gpus.size());
    }
    std::tie(p.lo[i], p.hi[i]) = bound("global." + L.global_keys[k]);
  }
  for (std::size_t b = 0; b < L.boards.size(); ++b) {
    const std::size_t i = L.board_base() + b;
    p.start[i] = 1.0;
    std::tie(p.lo[i], p.hi[i]) = bound("gpu.sustained_clock");
  }
  for (int o = 0; o <= kMeasuredOps; ++o) {
    const std::size_t i = L.harness_base() + static_cast<std::size_t>(o);
    const bool is_launch = o == kMeasuredOps;
    p.start[i] = is_launch ? p.setup.start_launch : p.setup.start_floor;
    if (!is_launch) {
      const auto it = p.setup.start_floor_by_op.find(std::string(measured_op_name(static_cast<MeasuredOp>(o))));
      if (it != p.setup.start_floor_by_op.end()) p.start[i] = it->second;
    }
    std::tie(p.lo[i], p.hi[i]) = is_launch ? p.setup.launch_bounds : p.setup.floor_bounds;
  }
  // The host launch: fitted where some op class takes it, else held at its start (no row reads it).
  {
    bool used = false;
    for (bool b : p.setup.host_launch) used = used || b;
    p.start[L.host_launch()] = p.setup.start_host_launch;
    std::tie(p.lo[L.host_launch()], p.hi[L.host_launch()]) =
        used ? p.setup.host_launch_bounds : std::make_pair(p.setup.start_host_launch, p.setup.start_host_launch);
  }
  for (std::size_t b = 0; b < L.boards.size(); ++b) {
    const std::size_t i = L.host_base() + b;
    p.start[i] = 1.0;
    std::tie(p.lo[i], p.hi[i]) = p.setup.host_bounds;
    p.start[L.serial_base() + b] = p.setup.start_serial_share;
    std::tie(p.lo[L.serial_base() + b], p.hi[L.serial_base() + b]) = p.setup.serial_bounds;
    if (!L.soak) continue;
    for (std::size_t i : {L.soak_base() + b, L.soak_base() + L.boards.size() + b}) {
      p.start[i] = 1.0;  // no soak
      std::tie(p.lo[i], p.hi[i]) = p.setup.soak_bounds;
    }
  }
  if (L.soak) {
    p.start[L.soak_time()] = p.setup.start_soak_us;
    std::tie(p.lo[L.soak_time()], p.hi[L.soak_time()]) = p.setup.soak_us_bounds;
  }
  for (std::size_t i = 0; i < L.size(); ++i) p.start[i] = std::clamp(p.start[i], p.lo[i], p.hi[i]);
  // Subsample: a fixed stride through each (GPU, op) group.
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    p.fit_gpus.push_back(static_cast<int>(g));
    for (int o = 0; o < kMeasuredOps; ++o) {
      std::vector<std::size_t> all;
      for (std::size_t r = 0; r < p.rows.size(); ++r)
        if (p.rows[r].gpu == static_cast<int>(g) && static_cast<int>(p.rows[r].op) == o) all.push_back(r);
      // Convolutions are reported, not fitted, unless asked (--fit-conv, a second stage with the shared values
      // held): the heuristic rules miss a third of cuDNN's choices and small-batch conv times are off
      // (docs/kernel-model.md), and the conv efficiencies they fit make the end-to-end files worse.
      if (all.empty() || (static_cast<MeasuredOp>(o) == MeasuredOp::kConv && !options.fit_conv)) continue;
      const std::size_t stride = std::max<std::size_t>(1, all.size() / p.setup.rows_per_group);
      std::vector<std::size_t> pick;
      for (std::size_t i = 0; i < all.size(); i += stride) pick.push_back(all[i]);
      fit.rows_used += pick.size();
      (static_cast<MeasuredOp>(o) == MeasuredOp::kConv ? p.conv_groups : p.groups).push_back(std::move(pick));
    }
  }
  const std::vector<double> x = run_fit_staged(p, -1);
  for (std::size_t i = 0; i < L.size(); ++i) fit.parameters.push_back({param_name(L, i), p.start[i], p.lo[i], p.hi[i], x[i]});
  std::vector<int> all_gpus(p.gpus.size());
  for (std::size_t g = 0; g < p.gpus.size(); ++g) all_gpus[g] = static_cast<int>(g);
  fit.in_sample = errors(p, x, -1, all_gpus);
  fit.conv_breakdown = conv_breakdown(p, x);
  if (!options.residuals_csv.empty()) fit.residuals_csv = residuals_csv(p, x);
  fit.split_k_agreement = split_k_agreement(p, x);
  if (options.leave_one_out) {
    // Boards of one architecture (the two A100s) are held out together: the held-out architecture has no
    // fitted values at all.
    for (const std::string& arch : L.archs) {
      const auto& only = options.leave_out_archs;
      if (!only.empty() && std::find(only.begin(), only.end(), arch) == only.end()) continue;
      std::vector<int> held;
      for (std::size_t g = 0; g < p.gpus.size(); ++g)
        if (p.gpus[g].arch == arch) held.push_back(static_cast<int>(g));
      Problem q = p;
      // The held-out architecture's tiles come from the nearest other measured architecture, not its own rows.
      std::string nearest_arch;
      int best_gap = 1 << 30;
      for (const std::string& other : L.archs) {
        const int gap = std::abs(std::stoi(other.substr(3)) - std::stoi(arch.substr(3)));
        if (other != arch && gap < best_gap) best_gap = gap, nearest_arch = other;
      }
      for (auto& g : q.gpus)
        if (g.arch == arch) {
          g.ctx.arch.sgemm_tiles = plain.count(nearest_arch) ? plain.at(nearest_arch) : std::vector<std::pair<int, int>>{};
          g.ctx.arch.sgemm_tiles_batched =
              batched.count(nearest_arch) ? batched.at(nearest_arch) : std::vector<std::pair<int, int>>{};
        }
      std::vector<std::vector<std::size_t>> kept;
      for (const auto& grp : q.groups)
        if (std::find(held.begin(), held.end(), q.rows[grp.front()].gpu) == held.end()) kept.push_back(grp);
      q.groups = kept;
      q.fit_gpus.clear();
      for (std::size_t g = 0; g < q.gpus.size(); ++g)
        if (std::find(held.begin(), held.end(), static_cast<int>(g)) == held.end()) q.fit_gpus.push_back(static_cast<int>(g));
      const std::vector<double> xo = run_fit_staged(q, held.front());
      auto e = errors(q, xo, held.front(), held);
      fit.leave_one_gpu_out.insert(fit.leave_one_gpu_out.end(), e.begin(), e.end());
    }
  }
  return fit;
}

int cublas_split_k(const MeasuredKernel& k) {
  if (k.op != MeasuredOp::kLinear && k.op != MeasuredOp::kBmm) return 1;
  // A batched GEMM's grid.z is its batch (every measured linear row has B = 1; no measured bmm ran a reduce pass).
  if (k.op == MeasuredOp::kBmm && !has_split_k_reduce(k.kernels)) return 1;
  return static_cast<int>(std::max<std::int64_t>(1, k.grid_z));
}

std::string cudnn_conv_algorithm(const std::string& kernels) {
  std::string k = kernels;
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (k.find("fft") != std::string::npos) return "fft";
  if (k.find("winograd_nonfused") != std::string::npos) return "winograd_nonfused";
  if (k.find("winograd") != std::string::npos) return "winograd_fused";
  if (k.find("explicit_convolve_sgemm") != std::string::npos || k.find("im2col") != std::string::npos) return "gemm_im2col";
  return "implicit_gemm";
}

OpSpec measured_op_spec(const MeasuredKernel& k) {
  OpSpec s;
  s.direction = "fwd";
  switch (k.op) {
    case MeasuredOp::kBmm:  // [B,M,N] x [B,N,K]: output M x K, depth N
      s.op = "matmul", s.batch_count = k.b, s.m = k.m, s.k = k.n, s.n = k.k;
      break;
    case MeasuredOp::kLinear:  // x [B,M,N] -> [B,M,K]
      s.op = "linear", s.batch_count = 1, s.m = k.b * k.m, s.k = k.n, s.n = k.k;
      break;
    case MeasuredOp::kConv:
      s.op = "conv2d", s.conv_n = k.b, s.conv_c = k.conv_c, s.conv_k = k.conv_k, s.conv_r = s.conv_s = k.conv_r;
      s.conv_h = s.conv_w = k.conv_hw, s.stride_h = s.stride_w = k.conv_stride, s.pad_h = s.pad_w = k.conv_pad;
      break;
    case MeasuredOp::kBinary:
      s.op = "elementwise", s.function = "add", s.rows = k.b, s.cols = k.m;
      break;
    case MeasuredOp::kUnary:
      s.op = "elementwise", s.rows = k.b, s.cols = k.m;
      s.function = k.op_name == "relu" || k.op_name == "gelu" || k.op_name == "tanh" ? k.op_name : "scale";
      break;
    case MeasuredOp::kSoftmax:
      s.op = "softmax", s.rows = k.b, s.cols = k.m;
      break;
    case MeasuredOp::kLayerNorm:
      s.op = "layernorm", s.rows = k.b, s.cols = k.m;
      break;
    case MeasuredOp::kCount:
      break;
  }
  return s;
}

std::string kernel_fit_toml(const KernelFit& fit) {
  std::ostringstream o;
  o << "# Written by `perfcast fit-kernels` (src/analysis/kernel_fit.cpp) from " << fit.rows_total
    << " measured kernel latencies\n# (" << fit.rows_used
    << " in the fit's subsample) in shared/kernels/neusight_train: calibration data. Do not edit by hand: rerun\n"
       "# `perfcast fit-kernels --kernels ../shared/kernels/neusight_train --out data/kernel_fit.toml`.\n"
       "# Start values and bounds: data/kernel_fit_setup.toml. Errors per GPU and op class: docs/kernel-model.md.\n"
       "# [arch.sm_XX] values replace architectures.toml's for that architecture; [global] values replace\n"
       "# cost_model.toml's; [harness] describes the measurement (host floor, launch) and feeds no prediction.\n";
  std::map<std::string, std::vector<const FitParameter*>> sections;
  for (const auto& prm : fit.parameters) {
    const std::size_t dot = prm.name.rfind('.');
    std::string section = prm.name.substr(0, dot);
    if (section.rfind("sm_", 0) == 0) section = "arch." + section;
    sections[section].push_back(&prm);
  }
  std::map<std::string, double> fitted;
  for (const auto& prm : fit.parameters) fitted[prm.name] = prm.value;
  for (const auto& [section, params] : sections) {
    o << "\n[" << section << "]\n";
    for (const FitParameter* prm : params) {
      const std::string key = prm->name.substr(prm->name.rfind('.') + 1);
      o << fmt::format("{} = {:.4g}   # start {:.4g}, bounds [{:.4g}, {:.4g}]\n", key, prm->value, prm->start, prm->lo, prm->hi);
    }
    if (section.rfind("arch.", 0) == 0) {
      const std::string arch = section.substr(5);
      // The one fitted SGEMM efficiency, written where the architectures read it.
      o << fmt::format("gemm_efficiency_cuda = {:.4g}   # [global] gemm_efficiency_cuda\n", fitted["global.gemm_efficiency_cuda"]);
      if (fit.sgemm_tiles.count(arch)) o << "sgemm_tiles = " << tile_list(fit.sgemm_tiles.at(arch)) << "\n";
      if (fit.sgemm_tiles_batched.count(arch))
        o << "sgemm_tiles_batched = " << tile_list(fit.sgemm_tiles_batched.at(arch)) << "\n";
    }
  }
  // Architectures without measured kernels: the newest measured architecture at or below them carries its
  // tiles, and its fitted/start ratio scales their own start values (their datasheet-derived differences stay).
  std::vector<int> measured_sm;
  for (const auto& [arch, tiles] : fit.sgemm_tiles) measured_sm.push_back(std::stoi(arch.substr(3)));
  std::sort(measured_sm.begin(), measured_sm.end());
  for (const ArchitectureProfile& a : architecture_priors()) {
    if (std::find(measured_sm.begin(), measured_sm.end(), a.sm_version) != measured_sm.end()) continue;
    const int* from = nearest_sm_at_or_below(measured_sm, a.sm_version, [](int sm) { return sm; });
    if (!from) continue;
    const std::string src = "sm_" + std::to_string(*from);
    o << fmt::format("\n[arch.sm_{}]   # no measured kernels: carried from {}\n", a.sm_version, src);
    {
      // Their stated SGEMM efficiency, scaled as the measured architectures' moved: sm_86/89 count twice the FP32
      // lanes per SM (half of them shared with INT32), so their own stated value stays the base.
      double start = 0;
      for (const auto& prm : fit.parameters)
        if (prm.name == "global.gemm_efficiency_cuda") start = prm.start;
      o << fmt::format("gemm_efficiency_cuda = {:.4g}   # {:.4g} x fitted/start {:.4g}/{:.4g} of the measured architectures\n",
                       std::min(1.0, a.gemm_efficiency_cuda * fitted["global.gemm_efficiency_cuda"] / start),
                       a.gemm_efficiency_cuda, fitted["global.gemm_efficiency_cuda"], start);
    }
    for (const char* key : {"dram_efficiency", "sgemm_tile_loss_share"}) {
      double start = 0;
      for (const auto& prm : fit.parameters)
        if (prm.name == src + "." + key) start = prm.start;
      const double own = arch_value(a, key);
      if (start > 0)
        o << fmt::format("{} = {:.4g}   # {:.4g} x {} fitted/start {:.4g}/{:.4g}\n", key,
                         std::string_view(key) == "dram_efficiency" ? std::min(1.0, own * fitted[src + "." + key] / start)
                                                                    : own * fitted[src + "." + key] / start,
                         own, src, fitted[src + "." + key], start);
    }
    o << "sgemm_tiles = " << tile_list(fit.sgemm_tiles.at(src)) << "\n";
    if (fit.sgemm_tiles_batched.count(src)) o << "sgemm_tiles_batched = " << tile_list(fit.sgemm_tiles_batched.at(src)) << "\n";
  }
  return o.str();
}

std::string kernel_fit_markdown(const KernelFit& fit) {
  std::ostringstream o;
  auto table = [&](const std::vector<GroupError>& errs) { error_table(o, errs); };
  o << "### In sample (fit on all five GPUs)\n\n";
  table(fit.in_sample);
  if (!fit.leave_one_gpu_out.empty()) {
    o << "\n### Leave one GPU out (fit on the others; the held-out architecture takes its own start DRAM efficiency "
         "scaled by the fitted architectures' mean fitted/start ratio, as an architecture without measured kernels "
         "does, and its datasheet-derived power per SM; the held-out board's harness host speed is read off its rows "
         "the model puts under half the op's floor)\n\n";
    table(fit.leave_one_gpu_out);
  }
  if (!fit.conv_agreement.empty()) {
    o << "\n### cuDNN's heuristic rules against the algorithm cuDNN ran (every measured convolution; "
         "cost_model.toml [conv] heuristic_fwd)\n\n| GPU | rows | rule's choice = cuDNN's |\n|---|---:|---:|\n";
    std::size_t rows = 0, agree = 0;
    for (const auto& a : fit.conv_agreement) {
      o << fmt::format("| {} | {} | {:.1f}% |\n", a.gpu, a.rows, 100.0 * static_cast<double>(a.agree) / static_cast<double>(a.rows));
      rows += a.rows, agree += a.agree;
    }
    o << fmt::format("| all | {} | {:.1f}% |\n", rows, 100.0 * static_cast<double>(agree) / static_cast<double>(rows));
  }
  if (!fit.split_k_agreement.empty()) {
    o << "\n### Split-K of plain GEMMs: perfcast against cuBLAS (linear rows, in sample)\n\n"
         "cuBLAS split = the main SGEMM kernel's grid.z > 1 (K slices reduced in place, or by a splitKreduce_kernel "
         "pass: 'reduce pass'). pred/meas = median predicted / measured latency where both split, only perfcast, "
         "only cuBLAS, neither.\n\n"
         "| GPU | measured | rows | perfcast splits | cuBLAS splits | reduce pass | same choice | pred/meas: both | "
         "perfcast only | cuBLAS only | neither |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    const auto pct = [](std::size_t a, std::size_t n) { return 100.0 * static_cast<double>(a) / static_cast<double>(n); };
    const auto ratio = [](double r) { return r > 0 ? fmt::format("{:.2f}", r) : std::string("-"); };
    for (const auto& a : fit.split_k_agreement)
      o << fmt::format("| {} | {} | {} | {:.1f}% | {:.1f}% | {:.1f}% | {:.1f}% | {} | {} | {} | {} |\n", a.gpu,
                       a.short_rows ? fmt::format("under {:.1f} ms", SplitKAgreement::short_us / 1e3) : "all", a.rows, pct(a.model_split, a.rows),
                       pct(a.cublas_split, a.rows), pct(a.cublas_reduce, a.rows), pct(a.agree, a.rows), ratio(a.ratio_both),
                       ratio(a.ratio_model_only), ratio(a.ratio_cublas_only), ratio(a.ratio_neither));
  }
  if (!fit.conv_breakdown.empty()) {
    o << "\n### Convolutions by algorithm and shape (in sample; all GPUs together)\n\n"
         "| dimension | class | rows | median error | within 25% | median pred/meas | perfcast chose cuDNN's algorithm |\n"
         "|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& c : fit.conv_breakdown)
      o << fmt::format("| {} | {} | {} | {:.1f}% | {:.0f}% | {:.2f} | {:.0f}% |\n", c.dimension, c.key, c.rows, c.median_ape,
                       c.within_25, std::exp(c.median_log_ratio), c.same_algorithm);
  }
  o << "\n### Fitted values\n\n| parameter | start | fitted |\n|---|---:|---:|\n";
  for (const auto& prm : fit.parameters) o << fmt::format("| {} | {:.4g} | {:.4g} |\n", prm.name, prm.start, prm.value);
  return o.str();
}

KernelPrediction predict_measured_kernels(const std::string& dir) {
  const Setup setup = load_setup();
  const auto fit_path = data_dir() / "kernel_fit.toml";
  const toml::table fit_root = parse_toml_file(fit_path);
  const toml::table* harness = fit_root["harness"].as_table();
  const toml::table* floors = harness ? (*harness)["floor_us"].as_table() : nullptr;
  if (!harness || !floors) throw InputError(fit_path.string() + ": no [harness] floor_us (rerun perfcast fit-kernels)");
  const double launch = (*harness)["launch_us"].value<double>().value_or(0);
  const std::optional<double> host_launch_us = (*harness)["host_launch_us"].value<double>();
  if (!host_launch_us && std::find(setup.host_launch.begin(), setup.host_launch.end(), true) != setup.host_launch.end())
    throw InputError(fit_path.string() + ": no [harness] host_launch_us for kernel_fit_setup.toml's host_launch_ops (rerun perfcast fit-kernels)");
  const double host_launch = host_launch_us.value_or(0);
  std::array<double, kMeasuredOps> floor_us{};
  for (int o = 0; o < kMeasuredOps; ++o) {
    const std::string name(measured_op_name(static_cast<MeasuredOp>(o)));
    floor_us[static_cast<std::size_t>(o)] = (*floors)[name].value<double>().value_or(0);
  }
  KernelPrediction out;
  out.source_dir = dir;
  const std::vector<MeasuredKernel> measured = read_measured_kernel_dir(dir);
  // One context per device and precision (this project's sweeps hold tensor-core GEMMs beside the FP32 rows).
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> rows_of;
  for (std::size_t i = 0; i < measured.size(); ++i) rows_of[{measured[i].device, measured[i].precision}].push_back(i);
  std::vector<double> kernel_us(measured.size(), 0);
  std::vector<double> pred_us(measured.size(), 0);
  std::vector<OpPrediction> op_pred(measured.size());
  std::vector<std::string> gpu_of(measured.size());
  std::map<std::string, std::vector<double>> floor_ratios;  // GPU -> measured / floor of its host-bound rows
  for (const auto& [key, rows] : rows_of) {
    const auto& [device, precision] = key;
    const auto it = setup.devices.find(device);
    if (it == setup.devices.end())
      throw InputError("predict-kernels: device '" + device + "' has no catalog id in data/kernel_fit_setup.toml [devices]");
    // As `perfcast predict --runtime pytorch` costs the board, with the harness's settings: TF32 off in FP32 rows
    // (fit_kernels), on in the tf32 rows (the sweep set torch.backends.cuda.matmul.allow_tf32 for them), cuDNN's
    // heuristic choice (no autotuning).
    const bool tf32 = precision == "tf32";
    OpContext ctx = op_context(it->second, "pytorch", tf32 ? "fp32" : precision);
    ctx.runtime.tf32_conv_default = ctx.runtime.tf32_conv_default && setup.tf32;
    ctx.runtime.tf32_matmul_default = tf32 || (ctx.runtime.tf32_matmul_default && setup.tf32);
    ctx.plan = resolve_precision(tf32 ? "fp32" : precision, ctx.device, ctx.arch, ctx.runtime, "", false);
    ctx.conv_autotune = false;
    const KernelCostModel km(ctx.device, ctx.arch);
    for (std::size_t r : rows) {
      PreparedOp prepared = prepare_op(measured_op_spec(measured[r]));
      op_pred[r] = predict_prepared(prepared, ctx, km);
      kernel_us[r] = launch + op_pred[r].cost.time_us;
      gpu_of[r] = it->second;
      const double floor = floor_us[static_cast<std::size_t>(measured[r].op)];
      if (floor > 0 && kernel_us[r] < setup.held_out_floor_share * floor)
        floor_ratios[it->second].push_back(measured[r].latency_us / floor);
    }
  }
  for (std::size_t r = 0; r < measured.size(); ++r) {
    if (out.host_speed.count(gpu_of[r])) continue;
    std::vector<double>& ratios = floor_ratios[gpu_of[r]];
    double host = 1;
    if (!ratios.empty()) {
      std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
      host = std::clamp(ratios[ratios.size() / 2], setup.host_bounds.first, setup.host_bounds.second);
    }
    out.host_speed[gpu_of[r]] = host;
  }
  // The classes of [harness] host_launch_ops start their kernel after the host's launch (host speed x host_launch_us)
  // in place of the shared launch; the host speed itself was read above with the shared launch.
  for (std::size_t r = 0; r < measured.size(); ++r) {
    const double host = out.host_speed.at(gpu_of[r]);
    if (setup.host_launch[static_cast<std::size_t>(measured[r].op)])
      kernel_us[r] = host * host_launch + op_pred[r].cost.time_us;
    pred_us[r] = std::max(host * floor_us[static_cast<std::size_t>(measured[r].op)], kernel_us[r]);
  }
  // Groups: per GPU, op class, then per op name where a class holds several (add and mul; relu and gelu).
  // A precision other than FP32 is part of the class ("linear bf16").
  std::map<std::tuple<std::string, int, std::string, std::string>, std::vector<std::size_t>> groups;
  for (std::size_t r = 0; r < measured.size(); ++r) {
    const std::string prec = measured[r].precision == "fp32" ? "" : measured[r].precision;
    groups[{gpu_of[r], static_cast<int>(measured[r].op), prec, ""}].push_back(r);
    groups[{gpu_of[r], static_cast<int>(measured[r].op), prec, measured[r].op_name}].push_back(r);
  }
  for (const auto& [key, rows] : groups) {
    const auto& [gpu, op, prec, name] = key;
    std::string cls(measured_op_name(static_cast<MeasuredOp>(op)));
    if (!name.empty() && name == cls) continue;
    if (!name.empty() && groups.at({gpu, op, prec, ""}).size() == rows.size()) continue;
    if (!prec.empty()) cls += " " + prec;
    const double floor = out.host_speed.at(gpu) * floor_us[static_cast<std::size_t>(op)];
    std::vector<double> m, p, mk, pk;
    for (std::size_t r : rows) {
      m.push_back(measured[r].latency_us), p.push_back(pred_us[r]);
      if (measured[r].latency_us >= 2 * floor) mk.push_back(measured[r].latency_us), pk.push_back(pred_us[r]);
    }
    GroupError e = error_of(m, p), ek = error_of(mk, pk);
    e.gpu = ek.gpu = gpu;
    e.op = ek.op = name.empty() ? cls : "  " + name;
    out.all_rows.push_back(e);
    if (ek.rows > 0) out.kernel_rows.push_back(ek);
  }
  std::ostringstream o;
  o << "gpu,op,op_name,precision,b,m,n,k,measured_us,predicted_us,kernel_us,floor_us,tile_m,tile_n,split_k,measured_split_k,"
       "clock_factor,bound,kernel\n";
  for (std::size_t r = 0; r < measured.size(); ++r) {
    const MeasuredKernel& m = measured[r];
    const KernelCost& c = op_pred[r].cost;
    std::string kernel = m.kernel;
    std::replace(kernel.begin(), kernel.end(), ',', ' ');
    std::replace(kernel.begin(), kernel.end(), '"', ' ');
    o << fmt::format("{},{},{},{},{},{},{},{},{:.4g},{:.4g},{:.4g},{:.4g},{},{},{},{},{:.4g},{},\"{}\"\n", gpu_of[r],
                     measured_op_name(m.op), m.op_name, m.precision, m.b, m.m, m.op == MeasuredOp::kConv ? m.conv_k : m.n,
                     m.op == MeasuredOp::kConv ? m.conv_c : m.k, m.latency_us, pred_us[r], c.time_us,
                     out.host_speed.at(gpu_of[r]) * floor_us[static_cast<std::size_t>(m.op)], c.tile_m, c.tile_n,
                     c.split_k, cublas_split_k(m), c.clock_factor, bound_name(c.bound), kernel);
  }
  out.residuals_csv = o.str();
  return out;
}

std::string kernel_prediction_markdown(const KernelPrediction& pred) {
  std::ostringstream o;
  auto table = [&](const std::vector<GroupError>& errs) { error_table(o, errs); };
  o << "### " << pred.source_dir << " predicted with data/kernel_fit.toml (which never saw these rows)\n\n"
       "Out of sample only as far as the fit goes: values set elsewhere from the same machine's measurements (a GPU's "
       "[measured] table in data/gpus, per-architecture values in data/cost_model.toml) make those terms in sample; "
       "docs/kernel-model.md says which. A row is predicted as max(host speed x the op's fitted floor, fitted launch + kernel time; the launch is host speed x the fitted host launch for [harness] host_launch_ops); the host speed "
       "is the board's machine, read off its own rows the model puts under half the floor:";
  for (const auto& [gpu, h] : pred.host_speed) o << fmt::format(" {} {:.3f}", gpu, h);
  o << ". error = |pred - meas| / meas.\n\n";
  table(pred.all_rows);
  o << "\n### The same, rows measured at least twice the op's host floor (the kernel, not the host, sets them)\n\n";
  table(pred.kernel_rows);
  return o.str();
}

}  // namespace perfcast
