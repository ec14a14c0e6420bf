#include "analysis/trace_analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"
#include "device/catalog.h"
#include "import/model_source.h"

namespace perfcast {

namespace {

struct KernelClasses {
  std::vector<std::pair<std::string, std::vector<std::string>>> classes;  // file order
  std::vector<std::string> tensor_core_patterns;
};

const KernelClasses& kernel_classes() {
  static const KernelClasses k = [] {
    const auto path = data_dir() / "trace_kernels.toml";
    const toml::table t = parse_toml_file(path);
    KernelClasses out;
    const auto strings = [&](const toml::node* n, const std::string& where) {
      std::vector<std::string> v;
      const toml::array* a = n ? n->as_array() : nullptr;
      if (a == nullptr) throw InputError(path.string() + ": " + where + " needs a patterns array");
      for (const auto& e : *a)
        if (auto s = e.value<std::string>()) v.push_back(*s);
      return v;
    };
    if (const toml::array* cs = t["class"].as_array())
      for (const auto& c : *cs) {
        const toml::table* ct = c.as_table();
        if (ct == nullptr) continue;
        const std::string id = TomlFields(*ct, path.string() + " [[class]]").text("id");
        out.classes.emplace_back(id, strings(ct->get("patterns"), "class '" + id + "'"));
      }
    out.tensor_core_patterns = strings(t["tensor_cores"]["patterns"].node(), "[tensor_cores]");
    return out;
  }();
  return k;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> name_tokens(const std::string& name) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : lower(name) + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (!cur.empty()) {
      if (cur != "nvidia" && cur != "geforce" && cur != "tesla" && cur != "quadro") out.push_back(cur);
      cur.clear();
    }
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Length of the union of [start, end) intervals.
double union_length(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cur_start = 0, cur_end = -1e300;
  for (const auto& [s, e] : iv) {
    if (s > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total;
}

std::string fmt_pct(double x) { return std::to_string(static_cast<int>(std::lround(100 * x))) + "%"; }

// The op classes of the cost model as `perfcast trace` groups them.
std::string class_of_op_kind(OpKind k) {
  switch (k) {
    case OpKind::kConv: return "conv";
    case OpKind::kMatmul: return "matmul";
    case OpKind::kAttention: return "attention";
    case OpKind::kNorm: return "norm";
    case OpKind::kPool: return "pool";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kEmbedding: return "embedding";
    case OpKind::kLoss: return "loss";
    case OpKind::kOptimizer: return "optimizer";
    default: return "elementwise";
  }
}

}  // namespace

std::string kernel_class(const std::string& kernel_name) {
  const std::string n = lower(short_kernel_name(kernel_name));
  for (const auto& [id, patterns] : kernel_classes().classes)
    for (const auto& p : patterns)
      if (n.find(p) != std::string::npos) return id;
  return "other";
}

bool kernel_uses_tensor_cores(const std::string& kernel_name) {
  const std::string n = lower(kernel_name);
  for (const auto& p : kernel_classes().tensor_core_patterns)
    if (n.find(p) != std::string::npos) return true;
  return false;
}

std::string short_kernel_name(const std::string& kernel_name) {
  std::string s = kernel_name;
  if (s.rfind("void ", 0) == 0) s = s.substr(5);
  for (std::size_t at; (at = s.find("(anonymous namespace)::")) != std::string::npos;) s.erase(at, 23);
  // Cut at the first '<' or '(': template arguments and parameters name types, not what the kernel does.
  const std::size_t cut = s.find_first_of("<(");
  if (cut != std::string::npos && cut > 0) s = s.substr(0, cut);
  if (s.size() > 70) s = s.substr(0, 67) + "...";
  return s;
}

std::vector<std::string> catalog_gpus_for(const TraceDevice& device) {
  if (device.name.empty()) return {};
  const int sm = device.compute_major * 10 + device.compute_minor;
  const auto wanted = name_tokens(device.name);
  std::vector<std::string> best;
  int best_score = -1;
  for (const DeviceSpec& g : gpu_catalog()) {
    if (sm > 0 && g.sm_version != sm) continue;
    if (device.sm_count > 0 && g.sm_count != device.sm_count) continue;
    int score = 0;
    if (device.memory_bytes > 0) {
      const double ratio = device.memory_bytes / g.memory_bytes();
      if (ratio < 0.9 || ratio > 1.1) continue;
      score += 2;
    }
    const auto have = name_tokens(g.name + " " + g.id);
    for (const auto& w : wanted)
      if (std::find(have.begin(), have.end(), w) != have.end()) score += 3;
    if (score > best_score) {
      best_score = score;
      best = {g.id};
    } else if (score == best_score) {
      best.push_back(g.id);
    }
  }
  // Without SM data, a name match is required.
  if ((sm == 0 || device.sm_count == 0) && best_score < 3) return {};
  return best;
}

std::string catalog_gpu_for(const TraceDevice& device) {
  const auto all = catalog_gpus_for(device);
  return all.empty() ? "" : all.front();
}

TraceSummary summarize_trace(const KinetoTrace& t, int top_kernels) {
  TraceSummary s;
  s.path = t.path;
  // The device with the most kernel time.
  std::map<int, double> per_device;
  for (const auto& k : t.kernels) per_device[k.device] += k.dur_us;
  if (!per_device.empty())
    s.device = std::max_element(per_device.begin(), per_device.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; })
                   ->first;
  for (const auto& d : t.devices)
    if (d.id == s.device || s.device_name.empty()) {
      s.device_name = d.name;
      const auto ids = catalog_gpus_for(d);
      s.gpu_id = ids.empty() ? "" : ids.front();
      s.gpu_alternatives.assign(ids.size() > 1 ? ids.begin() + 1 : ids.end(), ids.end());
      if (d.id == s.device) break;
    }

  // The window: the profiler steps, else the span of the GPU activity.
  // Steps with a duration; a last step cut short by the end of profiling (under a tenth of the median) is dropped.
  std::vector<TraceStep> steps;
  for (const auto& st : t.steps)
    if (st.dur_us > 0) steps.push_back(st);
  if (steps.size() > 1) {
    std::vector<double> durs;
    for (const auto& st : steps) durs.push_back(st.dur_us);
    if (steps.back().dur_us < 0.1 * median(durs)) steps.pop_back();
  }
  double lo = 1e300, hi = -1e300;
  if (!steps.empty()) {
    s.steps = static_cast<int>(steps.size());
    lo = steps.front().ts_us;
    for (const auto& st : steps) hi = std::max(hi, st.ts_us + st.dur_us);
  } else {
    for (const auto& k : t.kernels) {
      lo = std::min(lo, k.ts_us);
      hi = std::max(hi, k.ts_us + k.dur_us);
    }
    for (const auto& c : t.copies) {
      lo = std::min(lo, c.ts_us);
      hi = std::max(hi, c.ts_us + c.dur_us);
    }
  }
  const double n_steps = std::max(1, s.steps);
  if (hi <= lo) {
    s.verdict = "the trace has no GPU activity";
    s.bound = "host";
    return s;
  }
  const auto inside = [&](double ts) { return ts >= lo && ts < hi; };
  s.step_ms = (hi - lo) / 1e3 / n_steps;

  std::vector<std::pair<double, double>> busy;
  std::map<std::string, TraceClassTime> classes;
  std::map<std::string, TraceKernelTime> kernels;
  std::vector<double> durations;
  double mma_class_us = 0, mma_tc_us = 0;
  // Traces repeat the same few hundred kernel names: classify each name once.
  struct NameInfo {
    std::string cls, short_name;
    bool tc = false;
  };
  std::map<std::string_view, NameInfo> by_name;
  for (const auto& k : t.kernels) {
    if (k.device != s.device || !inside(k.ts_us)) continue;
    busy.emplace_back(k.ts_us, k.ts_us + k.dur_us);
    durations.push_back(k.dur_us);
    auto [it, fresh] = by_name.try_emplace(k.name);
    if (fresh) it->second = {kernel_class(k.name), short_kernel_name(k.name), kernel_uses_tensor_cores(k.name)};
    const std::string& cls = it->second.cls;
    const bool tc = it->second.tc;
    auto& c = classes[cls];
    c.cls = cls;
    c.ms += k.dur_us / 1e3;
    c.kernels += 1;
    if (tc) c.tensor_core_ms += k.dur_us / 1e3;
    if (cls == "matmul" || cls == "conv" || cls == "attention") {
      mma_class_us += k.dur_us;
      if (tc) mma_tc_us += k.dur_us;
    }
    const std::string& sn = it->second.short_name;
    auto& kt = kernels[sn];
    kt.name = sn;
    kt.cls = cls;
    kt.ms += k.dur_us / 1e3;
    kt.calls += 1;
    kt.tensor_cores = kt.tensor_cores || tc;
    s.kernel_ms += k.dur_us / 1e3;
    s.kernels += 1;
  }
  for (const auto& c : t.copies) {
    if (c.device != s.device || !inside(c.ts_us)) continue;
    busy.emplace_back(c.ts_us, c.ts_us + c.dur_us);
    const double ms = c.dur_us / 1e3;
    switch (c.kind) {
      case TraceCopyKind::kHostToDevice: s.h2d_ms += ms; s.h2d_bytes += c.bytes; break;
      case TraceCopyKind::kDeviceToHost: s.d2h_ms += ms; break;
      case TraceCopyKind::kDeviceToDevice: s.d2d_ms += ms; break;
      case TraceCopyKind::kMemset: s.memset_ms += ms; break;
      default: s.d2d_ms += ms; break;
    }
  }
  s.busy_ms = union_length(busy) / 1e3 / n_steps;
  s.kernel_ms /= n_steps;
  s.kernels /= n_steps;
  s.h2d_ms /= n_steps;
  s.d2h_ms /= n_steps;
  s.d2d_ms /= n_steps;
  s.memset_ms /= n_steps;
  s.h2d_bytes /= n_steps;
  s.idle_ms = std::max(0.0, s.step_ms - s.busy_ms);
  s.launches = static_cast<double>(t.runtime_launches) / n_steps;
  if (!steps.empty()) {
    // Launch events outside the steps were counted too; scale to the steps' share of the kernels.
    const double all = static_cast<double>(t.kernels.size());
    if (all > 0) s.launches *= s.kernels * n_steps / all;
  }
  s.median_kernel_us = median(durations);
  s.tensor_core_share = mma_class_us > 0 ? mma_tc_us / mma_class_us : 0;
  for (auto& [id, c] : classes) {
    c.ms /= n_steps;
    c.kernels /= n_steps;
    c.tensor_core_ms /= n_steps;
    s.classes.push_back(c);
  }
  std::sort(s.classes.begin(), s.classes.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
  for (auto& [id, k] : kernels) {
    k.ms /= n_steps;
    k.calls /= n_steps;
    s.top.push_back(k);
  }
  std::sort(s.top.begin(), s.top.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
  if (static_cast<int>(s.top.size()) > top_kernels) s.top.resize(static_cast<std::size_t>(top_kernels));

  // Operators: shapes, backward, precision.
  int half = 0, bf16 = 0, fp32 = 0;
  static const std::set<std::string> compute = {"aten::mm", "aten::addmm", "aten::bmm", "aten::linear",
                                                "aten::matmul", "aten::conv2d", "aten::convolution",
                                                "aten::cudnn_convolution", "aten::conv1d", "aten::conv3d"};
  for (const auto& op : t.cpu_ops) {
    if (!op.input_dims.empty() && op.name.rfind("aten::", 0) == 0) s.has_shapes = true;
    if (op.name.find("Backward") != std::string::npos || op.name.find("evaluate_function") != std::string::npos)
      s.has_backward = true;
    if (compute.count(op.name) && !op.input_types.empty()) {
      const std::string& ty = op.input_types[0];
      if (ty == "c10::Half" || ty == "Half") ++half;
      else if (ty == "c10::BFloat16" || ty == "BFloat16") ++bf16;
      else if (ty == "float") ++fp32;
    }
  }
  if (half > 0) s.precision = fp32 > 0 ? "amp" : "fp16";
  else if (bf16 > 0) s.precision = fp32 > 0 ? "amp-bf16" : "bf16";
  else s.precision = "fp32";
  // FP32 operators whose GEMMs and convolutions ran on tensor cores ran as TF32 (Ampere and later).
  if (s.precision == "fp32" && s.tensor_core_share > 0.5) s.precision = "tf32";

  // What bounds the step.
  const double comm = classes.count("communication") ? classes["communication"].ms : 0;  // already per step
  const double idle_share = s.step_ms > 0 ? s.idle_ms / s.step_ms : 0;
  if (idle_share > 0.3) {
    s.bound = "host";
    s.verdict = "the GPU is idle " + fmt_pct(idle_share) + " of the step: the host does not keep it fed";
    if (s.median_kernel_us < 20 && s.kernels > 200)
      s.verdict += " (" + std::to_string(static_cast<long>(std::lround(s.kernels))) +
                   " kernels per step, median " + std::to_string(static_cast<long>(std::lround(s.median_kernel_us))) +
                   " us: launch and framework overhead; CUDA graphs or torch.compile would cut it)";
    else
      s.verdict += " (data loading, synchronisation or Python between kernels)";
  } else if (s.busy_ms > 0 && comm > 0.3 * s.busy_ms) {
    s.bound = "communication";
    s.verdict = "collectives (NCCL) take " + fmt_pct(comm / s.busy_ms) + " of the GPU's busy time";
  } else if (s.busy_ms > 0 && s.h2d_ms > 0.2 * s.busy_ms) {
    s.bound = "host_to_device";
    s.verdict = "host-to-device copies take " + fmt_pct(s.h2d_ms / s.busy_ms) + " of the GPU's busy time";
  } else {
    s.bound = "gpu";
    s.verdict = "the GPU is busy " + fmt_pct(1 - idle_share) + " of the step";
    if (!s.classes.empty() && s.kernel_ms > 0)
      s.verdict += "; " + s.classes.front().cls + " kernels take " + fmt_pct(s.classes.front().ms / s.kernel_ms) +
                   " of kernel time";
  }
  if (mma_class_us > 0 && s.tensor_core_share < 0.5 && s.precision != "fp32")
    s.verdict += "; only " + fmt_pct(s.tensor_core_share) + " of GEMM/convolution time is on tensor cores";
  return s;
}

TraceComparison compare_trace(const KinetoTrace& trace, const TraceSummary& summary, const std::string& gpu,
                              const std::string& runtime, const std::string& runtime_version) {
  const ModelSource m = model_from_trace(trace.path);
  PredictRequest r;
  r.gpu = gpu;
  r.model = trace.path;
  r.runtime = runtime;
  r.runtime_version = runtime_version;
  r.mode = summary.has_backward ? "train" : "infer";
  r.precision = summary.precision.empty() ? "fp32" : summary.precision;
  // TF32 is what FP32 operators ran as on the traced card; a GPU without TF32 runs them as FP32.
  if (r.precision == "tf32" && find_gpu(gpu).peak(Pipe::kTcTf32) <= 0) r.precision = "fp32";
  r.batch = m.natural_batch > 0 ? m.natural_batch : 1;
  r.optimizer_step = summary.has_backward && std::any_of(summary.classes.begin(), summary.classes.end(), [](const auto& c) {
                       return c.cls == "optimizer";
                     });
  TraceComparison out;
  out.prediction = predict(r);
  out.measured_step_ms = summary.step_ms;
  out.predicted_step_ms = out.prediction.step_us / 1e3;
  std::map<std::string, TraceClassComparison> by;
  for (const auto& c : summary.classes) {
    auto& e = by[c.cls];
    e.cls = c.cls;
    e.measured_ms = c.ms;
  }
  for (const auto& e : out.prediction.step.entries) {
    const std::string cls = class_of_op_kind(e.kind);
    auto& b = by[cls];
    b.cls = cls;
    b.predicted_ms += e.cost.time_us / 1e3;
  }
  for (auto& [cls, c] : by) out.classes.push_back(c);
  std::sort(out.classes.begin(), out.classes.end(), [](const auto& a, const auto& b) {
    return std::max(a.measured_ms, a.predicted_ms) > std::max(b.measured_ms, b.predicted_ms);
  });
  return out;
}

}  // namespace perfcast
