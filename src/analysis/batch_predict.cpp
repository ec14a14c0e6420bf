#include "analysis/batch_predict.h"

#include <algorithm>
#include <charconv>

#include "core/error.h"
#include "core/parallel.h"
#include "cost/attention_kernels.h"
#include "schedule/collectives.h"

namespace perfcast {

namespace {

std::int64_t parse_count(const std::string& text, const char* what, std::int64_t fallback) {
  if (text.empty()) return fallback;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw InputError(std::string(what) + " '" + text + "' is not an integer");
  return v;
}

}  // namespace

PredictRequest request_from_row(const ConfigRow& row) {
  PredictRequest r;
  r.gpu = row.gpu;
  r.model = row.model;
  if (!row.runtime.empty()) r.runtime = row.runtime;
  r.runtime_version = row.runtime_version;
  if (!row.attention.empty()) {
    parse_attention_impl(row.attention);  // a typo is the row's error
    r.attention = row.attention;
  }
  if (!row.mode.empty()) r.mode = row.mode;
  if (!row.precision.empty()) r.precision = row.precision;
  else if (row.mode == "prefill" || row.mode == "decode" || row.mode == "generate")
    r.precision = r.runtime == "llama.cpp" ? "f16" : "fp16";  // as on the command line
  if (row.batch == "max") r.batch = 0;
  else {
    const bool serving = row.mode == "prefill" || row.mode == "decode" || row.mode == "generate";
    r.batch = parse_count(row.batch, "batch", serving ? 1 : 64);
    if (r.batch <= 0) throw InputError("batch must be positive, got " + row.batch);
  }
  r.seq = parse_count(row.seq, "seq", 0);
  const std::int64_t n_gpus = parse_count(row.n_gpus, "n_gpus", 1);
  if (n_gpus <= 0) throw InputError("n_gpus must be positive, got " + row.n_gpus);
  r.gpus = static_cast<int>(n_gpus);
  if (!row.interconnect.empty()) r.interconnect = row.interconnect;
  if (!row.strategy.empty()) {
    find_strategy(row.strategy);  // a typo is the row's error even on one GPU
    r.strategy = row.strategy;
  }
  if (!row.data.empty()) r.data = row.data;
  if (row.optimizer_step == "no") r.optimizer_step = false;
  else if (!row.optimizer_step.empty() && row.optimizer_step != "yes")
    throw InputError("optimizer_step must be yes or no, got '" + row.optimizer_step + "'");
  if (row.layout == "nhwc") r.channels_last = true;
  else if (!row.layout.empty() && row.layout != "nchw")
    throw InputError("layout must be nchw or nhwc, got '" + row.layout + "'");
  if (!row.host.empty()) r.host = row.host;
  if (!row.host_cores.empty()) {
    r.host_cores = static_cast<int>(parse_count(row.host_cores, "host_cores", 0));
    if (r.host_cores <= 0) throw InputError("host_cores must be positive, got " + row.host_cores);
  }
  r.context = parse_count(row.context, "context", 0);
  if (r.context < 0) throw InputError("context must be zero or positive, got " + row.context);
  if (!row.kv_precision.empty()) r.kv_precision = row.kv_precision;
  if (!row.grad_accum.empty())
    r.grad_accum =
        static_cast<int>(std::clamp<std::int64_t>(parse_count(row.grad_accum, "grad_accum", 1), 0, kMaxGradAccum + 1));
  if (row.fused_optimizer == "yes")
    r.fused_optimizer = true;
  else if (row.fused_optimizer == "no")
    r.fused_optimizer = false;
  else if (!row.fused_optimizer.empty())
    throw InputError("fused_optimizer must be yes or no, got '" + row.fused_optimizer + "'");
  if (row.prefetch == "yes") r.prefetch = true;
  else if (!row.prefetch.empty() && row.prefetch != "no")
    throw InputError("prefetch must be yes or no, got '" + row.prefetch + "'");
  if (row.gpu_decode == "yes") r.gpu_decode = true;
  else if (!row.gpu_decode.empty() && row.gpu_decode != "no")
    throw InputError("gpu_decode must be yes or no, got '" + row.gpu_decode + "'");
  return r;
}

namespace {

RowResult predict_row(const ConfigRow& row) {
  RowResult res{row, "ok", std::nullopt};
  if (!row.error.empty()) {
    res.status = "error: " + row.error;
    return res;
  }
  try {
    res.prediction = predict(request_from_row(row));
  } catch (const InputError& e) {
    res.status = std::string("unsupported: ") + e.what();
  }
  return res;
}

}  // namespace

std::vector<RowResult> predict_rows(const std::vector<ConfigRow>& rows) {
  std::vector<RowResult> out(rows.size());
  parallel_for(rows.size(), [&](std::size_t i) { out[i] = predict_row(rows[i]); });
  return out;
}

void predict_config_file(const std::filesystem::path& path, const std::function<void(const RowResult&)>& emit) {
  // Enough rows per chunk to keep every worker busy between the (serial) reads and writes.
  const std::size_t chunk = 64 * static_cast<std::size_t>(worker_threads());
  std::vector<ConfigRow> rows;
  rows.reserve(chunk);
  auto flush = [&] {
    for (const auto& r : predict_rows(rows)) emit(r);
    rows.clear();
  };
  for_each_config_row(path, false, [&](ConfigRow&& r) {
    rows.push_back(std::move(r));
    if (rows.size() >= chunk) flush();
  });
  flush();
}

}  // namespace perfcast
