#include "analysis/trace_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/data_files.h"
#include "core/error.h"
#include "core/median.h"
#include "core/toml_reader.h"
#include "core/toml_writer.h"
#include "device/architecture.h"
#include "device/catalog.h"
#include "graph/op_kinds.h"
#include "import/model_source.h"
#include "import/trace_model.h"

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

// The op classes of the cost model as `perfcast trace` groups them: the op table's trace class.
std::string class_of_op_kind(OpKind k) { return std::string(op_kind_info(k).trace_class); }

bool backward_span(const std::string& name) {
  return name.find("Backward") != std::string::npos || name.find("evaluate_function") != std::string::npos;
}

std::string shapes_of(const TraceCpuOp& op) {
  std::string out;
  for (std::size_t i = 0; i < op.input_dims.size() && i < 2; ++i) {
    if (op.input_dims[i].empty()) continue;
    out += out.empty() ? "[" : " [";
    for (std::size_t k = 0; k < op.input_dims[i].size(); ++k) out += (k ? "," : "") + std::to_string(op.input_dims[i][k]);
    out += "]";
  }
  return out;
}

// Ties each kernel of the first step to the forward operator it belongs to: the innermost CPU event enclosing its
// launch (same thread, by time; the launch is found by correlation id, or the kernel's External id names the
// operator), then up the nesting to a forward operator, or, inside backward, through the "fwdbwd" flow of the
// backward node (PyTorch >= 1.13) or else its autograd sequence number to the forward operator that created it.
struct OpTimes {
  double forward = 0, backward = 0;  // all its kernels
  double gemm = 0;                   // its matmul-class kernels (forward and backward)
  double streaming = 0;              // its elementwise / normalisation kernels (forward and backward)
};

struct Attribution {
  std::map<std::size_t, OpTimes> us;  // forward position -> kernel time, us
  double attributed_us = 0;
  double total_us = 0;
};

Attribution attribute_kernels(const KinetoTrace& t, const TraceForwardOps& fwd, int device) {
  Attribution a;
  if (fwd.ops.empty()) return a;
  const std::size_t n = t.cpu_ops.size();
  std::map<std::size_t, std::size_t> position;  // cpu_op index -> forward position
  for (std::size_t i = 0; i < fwd.ops.size(); ++i) position[fwd.ops[i]] = i;
  // Parents by time nesting, per thread; and each thread's ops by start time.
  std::vector<std::ptrdiff_t> parent(n, -1);
  std::map<std::int64_t, std::vector<std::size_t>> by_tid;
  for (std::size_t i = 0; i < n; ++i) by_tid[t.cpu_ops[i].tid].push_back(i);
  for (auto& [tid, v] : by_tid) {
    std::stable_sort(v.begin(), v.end(), [&](std::size_t x, std::size_t y) {
      const auto &a1 = t.cpu_ops[x], &b1 = t.cpu_ops[y];
      return a1.ts_us != b1.ts_us ? a1.ts_us < b1.ts_us : a1.dur_us > b1.dur_us;
    });
    std::vector<std::size_t> stack;
    for (std::size_t i : v) {
      while (!stack.empty() && t.cpu_ops[stack.back()].ts_us + t.cpu_ops[stack.back()].dur_us <= t.cpu_ops[i].ts_us)
        stack.pop_back();
      if (!stack.empty()) parent[i] = static_cast<std::ptrdiff_t>(stack.back());
      stack.push_back(i);
    }
  }
  const auto forward_of = [&](std::size_t i) -> std::optional<std::size_t> {
    for (std::ptrdiff_t k = static_cast<std::ptrdiff_t>(i); k >= 0; k = parent[static_cast<std::size_t>(k)])
      if (auto it = position.find(static_cast<std::size_t>(k)); it != position.end()) return it->second;
    return std::nullopt;
  };
  // Sequence number of an autograd node -> the forward position of the op that created it. Every op records the
  // counter's current value and only creating a node advances it, so the ops before the creator (views, casts, ops
  // without gradients) share its number: the creator is the last op, by start time, that recorded it.
  std::map<std::int64_t, std::pair<double, std::size_t>> by_sequence;  // seq -> (start, forward position)
  for (std::size_t i = 0; i < n; ++i) {
    const auto& op = t.cpu_ops[i];
    if (op.sequence < 0 || op.tid != fwd.tid || backward_span(op.name)) continue;
    const auto f = forward_of(i);
    if (!f) continue;
    auto [it, fresh] = by_sequence.try_emplace(op.sequence, op.ts_us, *f);
    if (!fresh && op.ts_us >= it->second.first) it->second = {op.ts_us, *f};
  }
  // Forward-backward flows: the backward op (index) -> the forward op that created its node (index).
  std::map<std::size_t, std::size_t> backward_to_forward;
  {
    // The op the flow starts or ends on: one starting at its time on its thread, preferring one that recorded a
    // sequence number (an autograd node's creator or the node itself) over a zero-length neighbour at the same time.
    const auto starting_at = [&](std::int64_t tid, double ts) -> std::optional<std::size_t> {
      const auto it = by_tid.find(tid);
      if (it == by_tid.end()) return std::nullopt;
      const auto& v = it->second;  // sorted by start
      auto k = std::lower_bound(v.begin(), v.end(), ts - 1e-3,
                                [&](std::size_t i, double x) { return t.cpu_ops[i].ts_us < x; });
      std::optional<std::size_t> first;
      for (; k != v.end() && t.cpu_ops[*k].ts_us < ts + 1e-3; ++k) {
        if (!first) first = *k;
        if (t.cpu_ops[*k].sequence >= 0) return *k;
      }
      return first;
    };
    std::map<std::int64_t, std::size_t> start_of, finish_of;
    for (const auto& fl : t.fwdbwd)
      if (auto op = starting_at(fl.tid, fl.ts_us)) (fl.start ? start_of : finish_of)[fl.id] = *op;
    for (const auto& [id, b] : finish_of)
      if (auto f = start_of.find(id); f != start_of.end()) backward_to_forward[b] = f->second;
  }
  // The innermost event on `tid` enclosing time `ts`.
  const auto enclosing = [&](std::int64_t tid, double ts) -> std::optional<std::size_t> {
    const auto it = by_tid.find(tid);
    if (it == by_tid.end()) return std::nullopt;
    const auto& v = it->second;
    auto after = std::upper_bound(v.begin(), v.end(), ts, [&](double x, std::size_t i) { return x < t.cpu_ops[i].ts_us; });
    if (after == v.begin()) return std::nullopt;
    for (std::ptrdiff_t k = static_cast<std::ptrdiff_t>(*(after - 1)); k >= 0; k = parent[static_cast<std::size_t>(k)]) {
      const auto& op = t.cpu_ops[static_cast<std::size_t>(k)];
      if (op.ts_us + op.dur_us >= ts) return static_cast<std::size_t>(k);
    }
    return std::nullopt;
  };
  std::map<std::int64_t, const TraceLaunch*> launch_of;
  for (const auto& l : t.launches)
    if (l.correlation >= 0) launch_of.emplace(l.correlation, &l);
  std::map<std::int64_t, std::size_t> by_external;
  for (std::size_t i = 0; i < n; ++i)
    if (t.cpu_ops[i].external_id >= 0 && t.cpu_ops[i].category == "cpu_op") by_external.emplace(t.cpu_ops[i].external_id, i);
  // The first step's CPU window (kernels belong to it when their launch does).
  double lo = -1e300, hi = 1e300;
  const auto step = std::find_if(t.steps.begin(), t.steps.end(), [](const TraceStep& s) { return s.dur_us > 0; });
  if (step != t.steps.end()) {
    lo = step->ts_us;
    hi = lo + step->dur_us;
  }
  std::map<std::string_view, std::string> class_of_name;
  for (const auto& k : t.kernels) {
    if (k.device != device) continue;
    std::optional<std::size_t> op;
    double when = k.ts_us;
    if (auto l = launch_of.find(k.correlation); l != launch_of.end()) {
      when = l->second->ts_us;
      op = enclosing(l->second->tid, when);
    } else if (auto e = by_external.find(k.external_id); e != by_external.end()) {
      op = e->second;
      when = t.cpu_ops[e->second].ts_us;
    }
    if (when < lo || when > hi) continue;
    a.total_us += k.dur_us;
    if (!op) continue;
    // Inside backward: the node's sequence number leads to the forward op.
    std::optional<std::size_t> target;
    bool backward = false;
    for (std::ptrdiff_t q = static_cast<std::ptrdiff_t>(*op); q >= 0; q = parent[static_cast<std::size_t>(q)]) {
      const auto& e = t.cpu_ops[static_cast<std::size_t>(q)];
      if (auto link = backward_to_forward.find(static_cast<std::size_t>(q)); link != backward_to_forward.end()) {
        backward = true;
        target = forward_of(link->second);
        if (target) break;
      }
      if (backward_span(e.name)) {
        backward = true;
        if (e.sequence >= 0)
          if (auto it = by_sequence.find(e.sequence); it != by_sequence.end()) {
            target = it->second.second;
            break;
          }
      }
    }
    if (!backward) target = forward_of(*op);
    if (!target) continue;
    auto& slot = a.us[*target];
    (backward ? slot.backward : slot.forward) += k.dur_us;
    auto [known, fresh] = class_of_name.try_emplace(k.name);
    if (fresh) known->second = kernel_class(k.name);  // traces repeat a few hundred kernel names
    const std::string& cls = known->second;
    if (cls == "matmul") slot.gemm += k.dur_us;
    if (cls == "elementwise" || cls == "norm") slot.streaming += k.dur_us;
    a.attributed_us += k.dur_us;
  }
  return a;
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
  if (s.size() > 70) {
    std::size_t cut = 67;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    s = s.substr(0, cut) + "...";
  }
  return s;
}

bool same_board(const TraceDevice& device, const DeviceSpec& gpu) {
  const int sm = device.compute_major * 10 + device.compute_minor;
  if (sm > 0 && gpu.sm_version != sm) return false;
  if (device.sm_count > 0 && gpu.sm_count != device.sm_count) return false;
  if (device.memory_bytes > 0) {
    const double ratio = device.memory_bytes / gpu.memory_bytes();
    if (ratio < 0.9 || ratio > 1.1) return false;
  }
  return true;
}

std::vector<std::string> catalog_gpus_for(const TraceDevice& device) {
  if (device.name.empty()) return {};
  const int sm = device.compute_major * 10 + device.compute_minor;
  const auto wanted = name_tokens(device.name);
  std::vector<std::string> best;
  int best_score = -1;
  for (const DeviceSpec& g : gpu_catalog()) {
    if (!same_board(device, g)) continue;
    int score = 0;  // name tokens in common
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

namespace {

// Lanes of the window [lo, end) (kernels also in the step's GPU-side window): intervals sorted and merged where they
// overlap or touch, so a lane has at most as many segments as the step has events.
std::vector<TraceSegment> first_step_timeline(const KinetoTrace& t, int device, double lo, double end,
                                              std::pair<double, double> gpu_window) {
  const auto in_step = [&](double ts) {
    return (ts >= lo && ts < end) || (ts >= gpu_window.first && ts < gpu_window.second);
  };
  std::map<std::string, std::pair<std::string, std::vector<std::pair<double, double>>>> lanes;
  for (const auto& k : t.kernels)
    if (k.device == device && in_step(k.ts_us)) {
      auto& lane = lanes["stream " + std::to_string(k.stream)];
      lane.first = "kernel";
      lane.second.emplace_back(k.ts_us, k.ts_us + k.dur_us);
    }
  for (const auto& c : t.copies)
    if (c.device == device && in_step(c.ts_us)) {
      auto& lane = lanes["copies"];
      lane.first = "copy";
      lane.second.emplace_back(c.ts_us, c.ts_us + c.dur_us);
    }
  std::map<std::int64_t, double> per_thread;
  for (const auto& op : t.cpu_ops)
    if (op.category == "cpu_op" && op.ts_us >= lo && op.ts_us < end) per_thread[op.tid] += op.dur_us;
  if (!per_thread.empty()) {
    const std::int64_t tid = std::max_element(per_thread.begin(), per_thread.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; })->first;
    auto& lane = lanes["host"];
    lane.first = "operator";
    for (const auto& op : t.cpu_ops)
      if (op.category == "cpu_op" && op.tid == tid && op.ts_us >= lo && op.ts_us < end)
        lane.second.emplace_back(op.ts_us, op.ts_us + op.dur_us);
  }
  std::vector<TraceSegment> out;
  for (auto& [name, lane] : lanes) {
    auto& v = lane.second;
    std::sort(v.begin(), v.end());
    std::pair<double, double> cur = v.front();
    for (std::size_t i = 1; i <= v.size(); ++i) {
      if (i < v.size() && v[i].first <= cur.second) {
        cur.second = std::max(cur.second, v[i].second);
        continue;
      }
      out.push_back({name, lane.first, (cur.first - lo) / 1e3, (cur.second - lo) / 1e3});
      if (i < v.size()) cur = v[i];
    }
  }
  return out;
}

}  // namespace

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
  // Kernels can run after the CPU side of their step ends. Where the trace marks the steps on the GPU timeline too
  // (gpu_user_annotation), a kernel in one of those windows belongs to the steps as well, and the last window's end
  // closes the span. (The GPU-side window only covers kernels the main thread launched, so it widens the CPU window,
  // never replaces it: backward kernels come from the autograd thread.)
  std::vector<std::pair<double, double>> gpu_windows;
  for (const auto& st : steps)
    for (const auto& g : t.gpu_steps)
      if (g.name == st.name && g.dur_us > 0) {
        gpu_windows.emplace_back(g.ts_us, g.ts_us + g.dur_us);
        hi = std::max(hi, g.ts_us + g.dur_us);
      }
  const auto inside = [&](double ts) {
    if (ts >= lo && ts < hi) return true;
    for (const auto& [a, b] : gpu_windows)
      if (ts >= a && ts < b) return true;
    return false;
  };
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
  s.timeline = first_step_timeline(t, s.device, lo, steps.empty() ? hi : steps.front().ts_us + steps.front().dur_us,
                                   gpu_windows.empty() ? std::pair<double, double>{0, 0} : gpu_windows.front());
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
  r.mode = summary.has_backward ? Mode::kTrain : Mode::kInfer;
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
  // Operator by operator (the first step).
  const TraceForwardOps fwd = trace_forward_ops(trace);
  const Attribution at = attribute_kernels(trace, fwd, summary.device);
  out.attributed_share = at.total_us > 0 ? at.attributed_us / at.total_us : 0;
  std::map<std::string, std::pair<double, double>> predicted;  // graph op name -> (forward, backward) us
  for (const auto& e : out.prediction.step.entries) {
    if (e.phase == Phase::kForward) predicted[e.name].first += e.cost.time_us;
    if (e.phase == Phase::kBackward) predicted[e.name].second += e.cost.time_us;
  }
  for (const auto& [pos, us] : at.us) {
    const TraceCpuOp& op = trace.cpu_ops[fwd.ops[pos]];
    TraceOpComparison o;
    o.name = trace_op_name(op.name, pos);
    o.shapes = shapes_of(op);
    o.measured_forward_ms = us.forward / 1e3;
    o.measured_backward_ms = us.backward / 1e3;
    o.measured_gemm_ms = us.gemm / 1e3;
    o.measured_streaming_ms = us.streaming / 1e3;
    if (auto it = predicted.find(o.name); it != predicted.end()) {
      o.predicted_forward_ms = it->second.first / 1e3;
      o.predicted_backward_ms = it->second.second / 1e3;
    }
    out.ops.push_back(std::move(o));
  }
  std::sort(out.ops.begin(), out.ops.end(), [](const auto& x, const auto& y) {
    return x.measured_forward_ms + x.measured_backward_ms > y.measured_forward_ms + y.measured_backward_ms;
  });
  std::sort(out.classes.begin(), out.classes.end(), [](const auto& a, const auto& b) {
    return std::max(a.measured_ms, a.predicted_ms) > std::max(b.measured_ms, b.predicted_ms);
  });
  return out;
}

TraceCalibration calibrate_from_trace(const TraceComparison& c) {
  TraceCalibration cal;
  const Prediction& p = c.prediction;
  cal.gpu = p.device.id;
  const ArchitectureProfile used = architecture_for(p.device);
  // Per graph op: predicted compute time of its compute-bound GEMM entries, and memory time of its bandwidth-bound
  // streaming entries.
  struct Predicted {
    double gemm_compute_us = 0, stream_memory_us = 0;
    bool gemm_compute_bound = true, tensor = false, streaming = false;
  };
  std::map<std::string, Predicted> pred;
  for (const auto& e : p.step.entries) {
    if (e.phase == Phase::kUpdate) continue;
    auto& x = pred[e.name];
    if (e.kind == OpKind::kMatmul) {
      x.gemm_compute_us += e.cost.compute_us;
      if (e.cost.bound != Bound::kTensorCompute && e.cost.bound != Bound::kCudaCompute) x.gemm_compute_bound = false;
      x.tensor = is_tensor_pipe(e.cost.pipe);
    } else if ((e.kind == OpKind::kElementwise || e.kind == OpKind::kNorm) && e.cost.bound == Bound::kMemory) {
      x.stream_memory_us += e.cost.memory_us;
      x.streaming = true;
    }
  }
  double gemm_pred = 0, gemm_meas = 0, stream_pred = 0, stream_meas = 0;
  int tensor_votes = 0;
  for (const auto& op : c.ops) {
    const auto it = pred.find(op.name);
    if (it == pred.end()) continue;
    const Predicted& x = it->second;
    // Kernels shorter than this are launch-floor noise, not throughput.
    // A training op whose backward kernels were not found (no sequence number) would look fast: leave it out.
    if (op.predicted_backward_ms > 0 && op.measured_backward_ms <= 0) continue;
    if (x.gemm_compute_us > 0 && x.gemm_compute_bound && op.measured_gemm_ms * 1e3 >= 20) {
      gemm_pred += x.gemm_compute_us;
      gemm_meas += op.measured_gemm_ms * 1e3;
      tensor_votes += x.tensor ? 1 : -1;
      ++cal.gemm_ops;
    } else if (x.streaming && op.measured_streaming_ms * 1e3 >= 10) {
      stream_pred += x.stream_memory_us;
      stream_meas += op.measured_streaming_ms * 1e3;
      ++cal.streaming_ops;
    }
  }
  cal.gemm_measured_ms = gemm_meas / 1e3;
  cal.streaming_measured_ms = stream_meas / 1e3;
  // Outside (0.05, 1.2] a value says more about the trace (kernels tied to the wrong operator, clocks throttled by
  // something else) than about the card: it is reported, not written.
  const auto accept = [&](double v, const char* key, std::optional<double>& out) {
    if (v > 0.05 && v <= 1.2) out = v;
    else cal.rejected.push_back(fmt::format("{} {:.3f} (outside 0.05-1.2)", key, v));
  };
  if (gemm_meas > 0) {
    if (tensor_votes > 0) {
      // Where the architecture caps the FP32-accumulate or INT8 tensor rate (Turing), a [measured] tensor
      // efficiency replaces the cap, so a value scaled from the capped rate would not reproduce the trace.
      if (used.tensor_fp32acc_flops_per_clk_sm > 0 || used.tensor_int8_ops_per_clk_sm > 0)
        cal.rejected.push_back("gemm_efficiency_tensor (this architecture's tensor rate is capped in "
                               "data/architectures.toml; a measured efficiency would replace the cap)");
      else
        accept(used.gemm_efficiency_tensor * gemm_pred / gemm_meas, "gemm_efficiency_tensor", cal.gemm_efficiency_tensor);
    } else {
      accept(used.gemm_efficiency_cuda * gemm_pred / gemm_meas, "gemm_efficiency_cuda", cal.gemm_efficiency_cuda);
    }
  }
  if (stream_meas > 0) accept(used.dram_efficiency * stream_pred / stream_meas, "dram_efficiency", cal.dram_efficiency);
  return cal;
}

std::string measured_gpu_file(const TraceCalibration& cal, const DeviceSpec& device, const std::string& trace_path,
                              const std::string& device_name) {
  if (!cal.gemm_efficiency_tensor && !cal.gemm_efficiency_cuda && !cal.dram_efficiency)
    throw InputError("trace '" + trace_path + "' measured no efficiency to write (kernels of at least 20 us tied to "
                     "shaped GEMM or elementwise operators are needed" +
                     (cal.rejected.empty() ? std::string(")") : "; rejected: " + cal.rejected.front() + ")"));
  // The catalog file as a table: values already in its [measured] table stay unless re-measured here.
  toml::table t = parse_toml_file(device.file);
  const std::string base_id = device.id.ends_with("-trace") ? device.id.substr(0, device.id.size() - 6) : device.id;
  t.insert_or_assign("id", base_id + "-trace");
  toml::table measured;
  if (const toml::table* old = t["measured"].as_table()) measured = *old;
  const std::string before = measured.contains("tool") ? measured["tool"].value_or(std::string()) + "; then " : "";
  measured.insert_or_assign("device_name", device_name.empty() ? device.name : device_name);
  measured.erase("date");  // of the values measured before; the trace carries no date
  measured.insert_or_assign(
      "tool", before + fmt::format("perfcast trace {}: {} GEMM operators ({:.2f} ms of GEMM kernels), {} elementwise and "
                                   "normalisation operators ({:.2f} ms), measured against the cost model",
                                   std::filesystem::path(trace_path).filename().string(), cal.gemm_ops,
                                   cal.gemm_measured_ms, cal.streaming_ops, cal.streaming_measured_ms));
  const auto put = [&](const char* key, const std::optional<double>& v) {
    if (v) measured.insert_or_assign(key, std::round(*v * 1000) / 1000);
  };
  put("gemm_efficiency_tensor", cal.gemm_efficiency_tensor);
  put("gemm_efficiency_cuda", cal.gemm_efficiency_cuda);
  put("dram_efficiency", cal.dram_efficiency);
  t.insert_or_assign("measured", std::move(measured));
  const std::string tidy = toml_text(t);
  std::string origin = device.file + " (comments dropped) and " + trace_path;
  for (char& c : origin)
    if (c == '\n' || c == '\r') c = ' ';  // one comment line
  return "# Written by perfcast trace --write-gpu from " + origin + "\n" + tidy;
}

namespace {

// Ranks of one data-parallel job run on one kind of device. The device most traces name is the job's; the first
// trace (by file name) on another is the odd one.
void check_one_kind_of_device(const std::string& folder, const std::vector<RankTrace>& ranks) {
  std::map<std::string, std::vector<std::string>> files_by_device;
  for (const auto& r : ranks)
    if (!r.device.empty()) files_by_device[r.device].push_back(r.file);
  if (files_by_device.size() < 2) return;
  auto job = files_by_device.begin();
  for (auto it = files_by_device.begin(); it != files_by_device.end(); ++it)
    if (it->second.size() > job->second.size()) job = it;
  std::string odd_file, odd_device;
  for (const auto& [device, files] : files_by_device)
    for (const auto& f : files)
      if (device != job->first && (odd_file.empty() || f < odd_file)) {
        odd_file = f;
        odd_device = device;
      }
  const std::size_t others = job->second.size();
  throw InputError(fmt::format(
      "folder '{}' mixes devices: '{}' ran on {}, {} on {}; the traces of one job's ranks run on one kind of "
      "device (read the odd trace on its own)",
      folder, odd_file, odd_device, others == 1 ? "'" + job->second.front() + "'" : fmt::format("{} other traces", others),
      job->first));
}

}  // namespace

TraceFolder summarize_trace_folder(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code ec;
  std::filesystem::directory_iterator it(folder, ec), end;
  if (ec) throw InputError("cannot read folder '" + folder + "': " + ec.message());
  TraceFolder out;
  for (; it != end; it.increment(ec)) {
    if (ec) throw InputError("cannot read folder '" + folder + "': " + ec.message());
    const std::string name = it->path().filename().string();
    std::error_code fec;
    if (!(name.ends_with(".json") || name.ends_with(".json.gz")) || !it->is_regular_file(fec) || fec) continue;
    // Run folders also hold config.json, trainer_state.json ...: only Chrome traces count.
    if (!looks_like_trace(it->path().string())) {
      out.skipped.push_back(name + " (not a profiler trace)");
      continue;
    }
    files.push_back(it->path().string());
  }
  if (files.empty()) throw InputError("folder '" + folder + "' holds no .json or .json.gz profiler trace");
  std::sort(files.begin(), files.end());
  // One trace per rank: tensorboard_trace_handler writes one file per profiling cycle, so a rank can have several;
  // the newest (by file time) stands for it.
  std::map<int, std::pair<std::filesystem::file_time_type, std::size_t>> newest;  // rank -> (mtime, index in out.ranks)
  for (const auto& f : files) {
    RankTrace r;
    r.file = std::filesystem::path(f).filename().string();
    const KinetoTrace t = read_kineto_trace(f);
    r.rank = t.rank;
    r.summary = summarize_trace(t, 3);
    for (const auto& c : r.summary.classes)
      if (c.cls == "communication") r.communication_ms = c.ms;
    for (const auto& d : t.devices)
      if (d.id == r.summary.device)
        r.device = fmt::format("{} (compute {}.{}, {} SMs)", d.name.empty() ? "an unnamed device" : d.name,
                               d.compute_major, d.compute_minor, d.sm_count);
    std::error_code tec;
    const auto mtime = std::filesystem::last_write_time(f, tec);
    if (r.rank >= 0) {
      if (auto n = newest.find(r.rank); n != newest.end()) {
        const bool newer = mtime > n->second.first;
        RankTrace& kept = out.ranks[n->second.second];
        out.skipped.push_back((newer ? kept.file : r.file) + " (an older trace of rank " + std::to_string(r.rank) + ")");
        if (newer) {
          kept = std::move(r);
          n->second.first = mtime;
        }
        continue;
      }
      newest[r.rank] = {mtime, out.ranks.size()};
    }
    out.ranks.push_back(std::move(r));
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(), [](const RankTrace& a, const RankTrace& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.file < b.file;
  });
  check_one_kind_of_device(folder, out.ranks);
  std::vector<double> steps;
  for (const auto& r : out.ranks)
    if (r.summary.step_ms > 0) steps.push_back(r.summary.step_ms);
  out.median_step_ms = median(steps);
  for (std::size_t i = 0; i < out.ranks.size(); ++i)
    if (out.ranks[i].summary.step_ms > out.ranks[out.slowest].summary.step_ms) out.slowest = i;
  out.spread = out.median_step_ms > 0 ? out.ranks[out.slowest].summary.step_ms / out.median_step_ms - 1 : 0;
  return out;
}

}  // namespace perfcast
