#include "import/kineto_trace.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "core/error.h"
#include "import/gzip_file.h"
#include "core/limits.h"

namespace perfcast {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

double number(element e, double fallback = 0) {
  switch (e.type()) {
    case element_type::INT64: return static_cast<double>(int64_t(e));
    case element_type::UINT64: return static_cast<double>(uint64_t(e));
    case element_type::DOUBLE: return double(e);
    case element_type::STRING: {
      // Some writers quote numbers (pid/tid as strings).
      const std::string_view s = std::string_view(e);
      try {
        return std::stod(std::string(s));
      } catch (...) {
        return fallback;
      }
    }
    default: return fallback;
  }
}

double field_number(element obj, const char* key, double fallback = 0) {
  element v;
  if (obj[key].get(v) != simdjson::SUCCESS) return fallback;
  return number(v, fallback);
}

std::string_view field_view(element obj, const char* key) {
  element v;
  if (obj[key].get(v) != simdjson::SUCCESS) return {};
  std::string_view s;
  if (v.get(s) != simdjson::SUCCESS) return {};
  return s;
}

std::string field_text(element obj, const char* key) { return std::string(field_view(obj, key)); }

// A shape: [2, 3] -> {2, 3}.
std::vector<std::int64_t> shape_of(simdjson::dom::array a) {
  std::vector<std::int64_t> shape;
  for (element x : a) shape.push_back(to_int64_or(number(x, 0), 0));
  return shape;
}

// "Input Dims": one shape per input; a TensorList input is a list of shapes ([[[37], [6]], []] for aten::cat in
// PyTorch 2.x traces), kept in `lists` with an empty shape in its place.
void dims_of(element arr, std::vector<std::vector<std::int64_t>>& dims,
             std::vector<std::vector<std::vector<std::int64_t>>>& lists) {
  dims.clear();
  lists.clear();
  simdjson::dom::array a;
  if (arr.get(a) != simdjson::SUCCESS) return;
  bool any_list = false;
  for (element d : a) {
    std::vector<std::int64_t> shape;
    std::vector<std::vector<std::int64_t>> list;
    simdjson::dom::array inner;
    if (d.get(inner) == simdjson::SUCCESS) {
      simdjson::dom::array first;
      const bool nested = inner.size() > 0 && inner.at(0).get(first) == simdjson::SUCCESS;
      if (nested) {
        for (element t : inner) {
          simdjson::dom::array ts;
          list.push_back(t.get(ts) == simdjson::SUCCESS ? shape_of(ts) : std::vector<std::int64_t>{});
        }
        any_list = true;
      } else {
        shape = shape_of(inner);
      }
    }
    dims.push_back(std::move(shape));
    lists.push_back(std::move(list));
  }
  if (!any_list) lists.clear();
}

std::vector<std::string> texts_of(element arr) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (arr.get(a) != simdjson::SUCCESS) return out;
  for (element d : a) {
    std::string_view s;
    out.push_back(d.get(s) == simdjson::SUCCESS ? std::string(s) : std::string());
  }
  return out;
}

TraceCopyKind copy_kind(std::string_view category, std::string_view name) {
  if (category == "gpu_memset") return TraceCopyKind::kMemset;
  if (name.find("HtoD") != std::string_view::npos) return TraceCopyKind::kHostToDevice;
  if (name.find("DtoH") != std::string_view::npos) return TraceCopyKind::kDeviceToHost;
  if (name.find("DtoD") != std::string_view::npos || name.find("PtoP") != std::string_view::npos)
    return TraceCopyKind::kDeviceToDevice;
  return TraceCopyKind::kOther;
}

bool is_launch(std::string_view name) {
  return name == "cudaLaunchKernel" || name == "cuLaunchKernel" || name == "cudaLaunchKernelExC" ||
         name == "cudaGraphLaunch" || name == "cudaLaunchCooperativeKernel" || name == "hipLaunchKernel" ||
         name == "hipExtModuleLaunchKernel";
}

// A complete event's start and duration as a profiler writes them: microseconds, whole in Kineto's traces, since the
// epoch (1.7e15 in 2024) or since the profiler started. A double holds whole microseconds exactly up to 2^53 (about
// 285 years after 1970); no event lasts longer than the longest run perfcast plans (data/limits.toml
// max_deadline_hours). Past either the value is not a time: a step of 1e300 us was printed in 300 digits. A negative
// duration stands for none (an event left open when profiling stopped) and is left out where durations are summed.
void check_event_time(double ts, double dur, std::string_view name, const std::string& where) {
  constexpr double kExactMicroseconds = 9007199254740992.0;  // 2^53
  const double max_dur_us = static_cast<double>(input_limits().max_deadline_hours) * 3600e6;
  const auto bad = [&](const char* field, double v, const std::string& rule) {
    throw InputError(fmt::format("trace '{}': event '{}' has '{}' {:g} us, {}", where, name.substr(0, 80), field, v, rule));
  };
  if (!(std::fabs(ts) <= kExactMicroseconds))
    bad("ts", ts, "beyond 2^53 us (285 years): not a time a profiler writes");
  if (dur > max_dur_us)
    bad("dur", dur, fmt::format("longer than any run perfcast plans ({} h, data/limits.toml max_deadline_hours)",
                                input_limits().max_deadline_hours));
}

}  // namespace

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& where) {
  simdjson::dom::parser parser;
  element doc;
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: parse in place when the buffer has them, else copy.
  simdjson::padded_string copy;
  const bool padded = text.capacity() >= text.size() + simdjson::SIMDJSON_PADDING;
  if (!padded) copy = simdjson::padded_string(text);
  const auto parsed = padded ? parser.parse(text.data(), text.size(), false) : parser.parse(copy);
  if (const auto err = parsed.get(doc); err != simdjson::SUCCESS)
    throw InputError("trace '" + where + "' is not valid JSON: " + simdjson::error_message(err));
  simdjson::dom::array events;
  // A bare array of events is the Chrome trace format's other form: torch.autograd.profiler's legacy
  // export_chrome_trace writes it (CPU functions and launch flows, no kernels or shapes;
  // pytorch/pytorch@006bb57b torch/autograd/profiler_util.py EventList.export_chrome_trace), as do other tools.
  if (doc.is_array())
    throw InputError("trace '" + where + "' is a bare list of events (torch.autograd.profiler's legacy export or "
                     "another tool's Chrome trace), without GPU kernels or input shapes: record it with "
                     "torch.profiler (Kineto), whose trace is an object with traceEvents");
  if (doc["traceEvents"].get(events) != simdjson::SUCCESS)
    throw InputError("trace '" + where + "' has no traceEvents array (not a PyTorch profiler / Chrome trace)");

  KinetoTrace t;
  t.path = where;
  simdjson::dom::array props;
  if (doc["deviceProperties"].get(props) == simdjson::SUCCESS)
    for (element p : props) {
      TraceDevice d;
      d.id = to_int_or(field_number(p, "id"), 0);
      d.name = field_text(p, "name");
      d.sm_count = to_int_or(field_number(p, "numSms"), 0);
      d.compute_major = to_int_or(field_number(p, "computeMajor"), 0);
      d.compute_minor = to_int_or(field_number(p, "computeMinor"), 0);
      d.memory_bytes = field_number(p, "totalGlobalMem");
      t.devices.push_back(std::move(d));
    }
  element dist;
  if (doc["distributedInfo"].get(dist) == simdjson::SUCCESS) {
    t.rank = to_int_or(field_number(dist, "rank", -1), -1);
    t.world_size = to_int_or(field_number(dist, "world_size", 0), 0);
  }

  for (element e : events) {
    const std::string_view ph = field_view(e, "ph");
    if ((ph == "s" || ph == "f") && field_view(e, "cat") == "fwdbwd") {
      TraceFlow fl;
      fl.id = to_int64_or(field_number(e, "id", -1), -1);
      fl.start = ph == "s";
      fl.tid = to_int64_or(field_number(e, "tid"), -1);
      fl.ts_us = field_number(e, "ts");
      t.fwdbwd.push_back(fl);
      continue;
    }
    if (ph != "X") continue;
    const std::string_view category = field_view(e, "cat");
    std::string_view name_view;
    if (e["name"].get(name_view) != simdjson::SUCCESS) continue;
    const double ts = field_number(e, "ts"), dur = field_number(e, "dur");
    check_event_time(ts, dur, name_view, where);
    element args;
    const bool has_args = e["args"].get(args) == simdjson::SUCCESS;
    if (category == "kernel" || category == "Kernel") {
      TraceKernel k;
      k.name = std::string(name_view);
      k.ts_us = ts;
      k.dur_us = dur;
      if (has_args) {
        k.device = to_int_or(field_number(args, "device"), 0);
        k.stream = to_int64_or(field_number(args, "stream"), -1);
        k.correlation = to_int64_or(field_number(args, "correlation", -1), -1);
        k.external_id = to_int64_or(field_number(args, "External id", -1), -1);
      }
      t.kernels.push_back(std::move(k));
    } else if (category == "gpu_memcpy" || category == "gpu_memset" || category == "Memcpy" || category == "Memset") {
      TraceCopy c;
      c.kind = copy_kind(category == "Memset" ? "gpu_memset" : category, name_view);
      c.ts_us = ts;
      c.dur_us = dur;
      if (has_args) {
        c.bytes = field_number(args, "bytes");
        c.device = to_int_or(field_number(args, "device"), 0);
      }
      t.copies.push_back(c);
    } else if (category == "cuda_runtime" || category == "cuda_driver" || category == "Runtime") {
      if (is_launch(name_view)) {
        ++t.runtime_launches;
        TraceLaunch l;
        l.tid = to_int64_or(field_number(e, "tid"), -1);
        l.ts_us = ts;
        if (has_args) l.correlation = to_int64_or(field_number(args, "correlation", -1), -1);
        t.launches.push_back(l);
      }
    } else if (category == "gpu_user_annotation") {
      if (name_view.substr(0, 13) == "ProfilerStep#") t.gpu_steps.push_back({std::string(name_view), ts, dur});
    } else if (category == "cpu_op" || category == "user_annotation" || category == "Operator" ||
               category == "python_function") {
      if (category == "python_function") continue;
      TraceCpuOp op;
      op.name = std::string(name_view);
      op.category = std::string(category);
      op.ts_us = ts;
      op.dur_us = dur;
      op.tid = to_int64_or(field_number(e, "tid"), -1);
      if (has_args) {
        op.external_id = to_int64_or(field_number(args, "External id", -1), -1);
        op.sequence = to_int64_or(field_number(args, "Sequence number", -1), -1);
        element v;
        if (args["Input Dims"].get(v) == simdjson::SUCCESS) dims_of(v, op.input_dims, op.input_lists);
        if (args["Input type"].get(v) == simdjson::SUCCESS) op.input_types = texts_of(v);
        if (args["Concrete Inputs"].get(v) == simdjson::SUCCESS) op.concrete_inputs = texts_of(v);
      }
      if (op.name.rfind("ProfilerStep#", 0) == 0) t.steps.push_back({op.name, ts, dur});
      t.cpu_ops.push_back(std::move(op));
    }
  }
  std::sort(t.steps.begin(), t.steps.end(), [](const TraceStep& a, const TraceStep& b) { return a.ts_us < b.ts_us; });
  // The same step can be both a cpu_op and a user_annotation in some versions: keep one per name.
  t.steps.erase(std::unique(t.steps.begin(), t.steps.end(),
                            [](const TraceStep& a, const TraceStep& b) { return a.name == b.name; }),
                t.steps.end());
  if (t.kernels.empty() && t.cpu_ops.empty())
    throw InputError("trace '" + where + "' has no GPU kernels and no operator events");
  return t;
}

KinetoTrace read_kineto_trace(const std::string& path) {
  // Refused at the first byte past the limit, without reading the rest and holding no more than the limit: the
  // reader does not assemble the text of a trace it refuses (a gzip bomb needed twice the limit before).
  const auto limit = static_cast<std::size_t>(input_limits().max_trace_bytes);
  std::string text =
      read_maybe_gzip(path, limit, "trace", false,
                      "trace '" + path + "' is larger than " + std::to_string(limit >> 20) +
                          " MiB decompressed (data/limits.toml max_decompressed_bytes); trace fewer steps");
  text.reserve(text.size() + simdjson::SIMDJSON_PADDING);  // parse in place: no second copy of a large trace
  return parse_kineto_trace(text, path);
}

bool looks_like_trace(const std::string& path) {
  try {
    const std::string head = read_maybe_gzip(path, 1 << 20, "trace", true);
    // A file that opens with a list of objects is the Chrome trace's bare-array form (a config.json is an
    // object): the trace reader says what it is.
    const auto first = head.find_first_not_of(" \t\r\n");
    const auto second = first == std::string::npos ? first : head.find_first_not_of(" \t\r\n", first + 1);
    return head.find("\"traceEvents\"") != std::string::npos || head.find("\"schemaVersion\"") != std::string::npos ||
           (second != std::string::npos && head[first] == '[' && head[second] == '{');
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace perfcast
