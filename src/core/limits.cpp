#include "core/limits.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/data_files.h"
#include "core/echoed_values.h"
#include "core/error.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

InputLimits load_limits() {
  const auto path = data_dir() / "limits.toml";
  const toml::table t = parse_toml_file(path);
  InputLimits l;
  auto section = [&](std::string_view name) { return TomlFields(TomlFields(t, path.string()).table(name), path.string() + " [" + std::string(name) + "]"); };
  auto count = [](const TomlFields& f, std::string_view key) {
    const double v = f.number(key);
    if (v < 1 || v > 9.0e18 || v != std::floor(v)) f.fail(key, "must be a positive whole number");
    return static_cast<std::int64_t>(v);
  };
  const auto json = section("json");
  l.max_nesting_depth = static_cast<int>(std::min<std::int64_t>(count(json, "max_nesting_depth"), 100000));
  const auto model = section("model");
  l.max_layers = count(model, "max_layers");
  l.max_experts = count(model, "max_experts");
  l.max_hidden_size = count(model, "max_hidden_size");
  l.max_intermediate_size = count(model, "max_intermediate_size");
  l.max_heads = count(model, "max_heads");
  l.max_vocab_size = count(model, "max_vocab_size");
  l.max_positions = count(model, "max_positions");
  const auto tensor = section("tensor");
  l.max_rank = count(tensor, "max_rank");
  l.max_dim = count(tensor, "max_dim");
  l.max_elements = count(tensor, "max_elements");
  l.max_graph_nodes = count(tensor, "max_graph_nodes");
  l.max_attribute_values = count(tensor, "max_attribute_values");
  l.max_window = count(tensor, "max_window");
  l.max_file_bytes = count(tensor, "max_file_bytes");
  l.max_shape_inference_seconds = count(tensor, "max_shape_inference_seconds");
  const auto trace = section("trace");
  l.max_trace_bytes = count(trace, "max_decompressed_bytes");
  const auto counts = section("counts");
  l.max_gpus_per_node = count(counts, "max_gpus_per_node");
  l.max_nodes = count(counts, "max_nodes");
  l.max_batch = count(counts, "max_batch");
  l.max_seq = count(counts, "max_seq");
  l.max_config_rows = count(counts, "max_config_rows");
  const auto serve = section("serve");
  l.max_upload_bytes = count(serve, "max_upload_bytes");
  l.min_request_rate = serve.number("min_request_rate");
  if (!(l.min_request_rate > 0) || !std::isfinite(l.min_request_rate))
    serve.fail("min_request_rate", "must be a positive finite number");
  l.max_serving_requests = count(counts, "max_serving_requests");
  l.max_serving_steps = count(counts, "max_serving_steps");
  const auto run = section("run");
  l.max_dataset_samples = count(run, "max_dataset_samples");
  l.max_epochs = count(run, "max_epochs");
  l.max_deadline_hours = count(run, "max_deadline_hours");
  l.max_pue = run.number("max_pue");
  if (!(l.max_pue >= 1) || !std::isfinite(l.max_pue)) run.fail("max_pue", "must be a finite number of at least 1");
  l.max_usd_per_gpu_hour = run.number("max_usd_per_gpu_hour");
  if (!(l.max_usd_per_gpu_hour > 0) || !std::isfinite(l.max_usd_per_gpu_hour))
    run.fail("max_usd_per_gpu_hour", "must be a positive finite number");
  const auto messages = section("messages");
  l.long_message_bytes = static_cast<std::size_t>(count(messages, "long_message_bytes"));
  l.long_quote_bytes = static_cast<std::size_t>(count(messages, "long_quote_bytes"));
  l.kept_quote_bytes = static_cast<std::size_t>(count(messages, "kept_quote_bytes"));
  l.max_message_bytes = static_cast<std::size_t>(count(messages, "max_message_bytes"));
  // A clipped span (kept bytes and the note) must not be long enough to clip again, and the cut message must have
  // room for the note: otherwise clipping a clipped message would change it.
  if (l.kept_quote_bytes + kClipNoteBytes > l.long_quote_bytes)
    messages.fail("kept_quote_bytes", "plus the note (" + std::to_string(kClipNoteBytes) +
                                          " bytes) must be at most long_quote_bytes");
  if (l.max_message_bytes <= kClipNoteBytes || l.max_message_bytes < l.long_message_bytes)
    messages.fail("max_message_bytes", "must exceed the note (" + std::to_string(kClipNoteBytes) +
                                           " bytes) and be at least long_message_bytes");
  const auto anchor = section("anchor");
  l.max_measured_over_peak = anchor.number("max_measured_over_peak");
  if (!(l.max_measured_over_peak >= 1) || !std::isfinite(l.max_measured_over_peak))
    anchor.fail("max_measured_over_peak", "must be a finite number of at least 1");
  for (const TomlFields* f : {&json, &model, &tensor, &trace, &counts, &serve, &run, &messages, &anchor}) {
    f->has("sources");
    f->refuse_unknown_keys();
  }
  return l;
}

}  // namespace

const InputLimits& input_limits() {
  static const InputLimits limits = load_limits();
  return limits;
}

void check_limit(std::string_view what, std::int64_t value, std::int64_t limit, std::string_view key) {
  if (value > limit)
    throw InputError(std::string(what) + " " + std::to_string(value) + " exceeds the limit of " + std::to_string(limit) +
                     " (data/limits.toml " + std::string(key) + ")");
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw InputError(std::string(what) + " overflows 64 bits (" + std::to_string(a) + " x " + std::to_string(b) + ")");
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw InputError(std::string(what) + " overflows 64 bits (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  return r;
}

std::int64_t to_int64_or(double v, std::int64_t fallback) {
  // 2^63 is exactly representable; every double below it converts.
  if (!std::isfinite(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0) return fallback;
  return static_cast<std::int64_t>(v);
}

int to_int_or(double v, int fallback) {
  if (!std::isfinite(v) || v >= 2147483648.0 || v <= -2147483649.0) return fallback;
  return static_cast<int>(v);
}

}  // namespace perfcast
