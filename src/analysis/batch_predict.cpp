#include "analysis/batch_predict.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

#include "core/data_files.h"
#include "core/echoed_values.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/toml_reader.h"
#include "cost/attention_kernels.h"
#include "runtime/harness_profile.h"
#include "runtime/llm_model_code.h"
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

bool yes_no(const std::string& key, const std::string& v) {
  if (v == "yes") return true;
  if (v == "no") return false;
  throw InputError("parallel: " + key + " takes yes or no, got '" + v + "'");
}

// The `parallel` column: space- or ';'-separated key=value pairs of the LLM training layout. The `batch` column is
// the micro-batch unless mb= says otherwise; n_gpus is GPUs per node.
void apply_parallel_column(const std::string& text, PredictRequest& r) {
  static const std::vector<std::string> keys{"tp", "pp", "dp", "cp", "ep", "vpp", "zero", "fsdp", "mb", "gb",
                                             "recompute", "sp", "offload", "overlap", "nodes", "train_tokens"};
  r.micro_batch = r.batch;
  std::string token;
  auto apply = [&](const std::string& kv) {
    if (kv.empty()) return;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw InputError("parallel: '" + kv + "' is not key=value");
    const std::string key = kv.substr(0, eq), v = kv.substr(eq + 1);
    auto count = [&](std::int64_t lo, std::int64_t hi) {
      const std::int64_t n = parse_count(v, ("parallel " + key).c_str(), -1);
      if (n < lo || n > hi) throw InputError("parallel: " + key + " must be " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + v);
      return n;
    };
    constexpr std::int64_t kInt = std::numeric_limits<int>::max();
    if (key == "tp") r.tensor_parallel = static_cast<int>(count(1, kInt));
    else if (key == "pp") r.pipeline_parallel = static_cast<int>(count(1, kInt));
    else if (key == "dp") r.data_parallel = static_cast<int>(count(1, kInt));
    else if (key == "cp") r.context_parallel = static_cast<int>(count(1, kInt));
    else if (key == "ep") r.expert_parallel = static_cast<int>(count(1, kInt));
    else if (key == "vpp") r.virtual_pipeline = static_cast<int>(count(1, kInt));
    else if (key == "zero") r.zero_stage = static_cast<int>(count(0, 3));
    else if (key == "fsdp") r.fsdp = yes_no(key, v);
    else if (key == "mb") r.micro_batch = count(1, std::numeric_limits<std::int64_t>::max());
    else if (key == "gb") r.global_batch = count(1, std::numeric_limits<std::int64_t>::max());
    else if (key == "recompute") r.recompute = v;
    else if (key == "sp") r.sequence_parallel = yes_no(key, v);
    else if (key == "offload") r.offload_optimizer = yes_no(key, v);
    else if (key == "overlap") r.overlap_grad_reduce = yes_no(key, v);
    else if (key == "nodes") r.nodes = static_cast<int>(count(1, kInt));
    else if (key == "train_tokens") r.train_tokens = static_cast<double>(count(1, std::numeric_limits<std::int64_t>::max()));
    else throw_unknown("parallel key", key, keys);
  };
  for (char ch : text) {
    if (ch == ' ' || ch == ';') {
      apply(token);
      token.clear();
    } else {
      token += ch;
    }
  }
  apply(token);
}

// data/defaults.toml [unstated_in_measurements]: what a measurement row that leaves `host` or `runtime_version`
// empty was gathered against (the defaults of the files' era), so that such a row keeps its prediction when the
// defaults a user gets move on. Calibration rows state both in their columns; the frozen evaluation files, whose
// rows may not be edited, rely on this.
struct UnstatedSetup {
  std::string host;
  std::map<std::string, std::string, std::less<>> runtime_version;  // by runtime id
};

const UnstatedSetup& unstated_in_measurements() {
  static const UnstatedSetup u = [] {
    const auto path = data_dir() / "defaults.toml";
    const toml::table root = parse_toml_file(path);
    TomlFields top(root, path.string());
    const std::string where = path.string() + " [unstated_in_measurements]";
    const toml::table& t = top.table("unstated_in_measurements");
    TomlFields f(t, where);
    UnstatedSetup out;
    out.host = f.text("host");
    const auto* versions = t["runtime_version"].as_table();
    if (!versions) f.fail("runtime_version", "must be a table of runtime id = version");
    for (const auto& [k, v] : *versions) {
      const auto text = v.value<std::string>();
      if (!text) f.fail("runtime_version", "must map runtime ids to version strings");
      out.runtime_version.emplace(std::string(k.str()), *text);
    }
    return out;
  }();
  return u;
}

void fill_unstated_setup(ConfigRow& row) {
  const UnstatedSetup& u = unstated_in_measurements();
  if (row.host.empty()) {
    row.host = u.host;
    row.filled_from_unstated.push_back("host");
  }
  // sdpa / flash attention exist from PyTorch 2.0 on (data/attention.toml): such a row did not run the era's version.
  const bool fused_attention_row = !row.attention.empty() && row.attention != "eager";
  if (row.runtime_version.empty() && !fused_attention_row) {
    const std::string runtime = row.runtime.empty() ? PredictRequest{}.runtime : row.runtime;
    if (auto it = u.runtime_version.find(runtime); it != u.runtime_version.end()) {
      row.runtime_version = it->second;
      row.filled_from_unstated.push_back("runtime_version");
    }
  }
}

}  // namespace

PredictRequest request_from_row(const ConfigRow& row) {
  PredictRequest r;
  r.gpu = row.gpu;
  r.model = row.model;
  if (!row.runtime.empty()) r.runtime = row.runtime;
  r.runtime_version = row.runtime_version;
  if (!row.attention.empty()) {
    if (!parse_generation_kernel(row.attention)) parse_attention_impl(row.attention);  // a typo is the row's error
    r.attention = row.attention;
  }
  if (!row.mode.empty()) r.mode = parse_mode(row.mode);  // a typo is the row's error
  if (!row.precision.empty()) r.precision = row.precision;
  else if (is_llm_pass(r.mode))
    r.precision = r.runtime == "llama.cpp" ? "f16" : "fp16";  // as on the command line
  if (row.batch == "max") r.batch = 0;
  else {
    const bool serving = is_llm_pass(r.mode);
    r.batch = parse_count(row.batch, "batch", serving ? 1 : 64);
    if (r.batch <= 0) throw InputError("batch must be positive, got " + row.batch);
  }
  r.seq = parse_count(row.seq, "seq", 0);
  r.seq_mean = parse_count(row.seq_mean, "seq_mean", 0);
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
  if (!row.parallel.empty()) apply_parallel_column(row.parallel, r);
  if (!row.optimizer.empty()) r.optimizer = row.optimizer;
  if (row.checkpointing == "yes") r.checkpointing = true;
  else if (!row.checkpointing.empty() && row.checkpointing != "no")
    throw InputError("checkpointing must be yes or no, got '" + row.checkpointing + "'");
  check_conv_algo(row.conv_algo);
  r.conv_algo = row.conv_algo;
  // Part of the precision: what-if pairs and interval groups key on `precision` alone, so an amp row run as O2
  // still pairs with its fp32 sibling.
  if (row.amp_o2 == "yes") r.amp_o2 = true;
  else if (!row.amp_o2.empty() && row.amp_o2 != "no")
    throw_unknown("amp_o2 value", row.amp_o2.substr(0, 40), {"yes", "no"});
  r.embedding_precision = row.embedding_precision;  // checked against the precisions where the request resolves
  if (!row.harness.empty()) find_harness(row.harness);
  r.harness = row.harness;
  if (!row.llm_code.empty() && row.llm_code != "none") find_llm_model_code(row.llm_code);
  r.llm_code = row.llm_code;
  if (!row.instances.empty()) {
    const std::int64_t n = parse_count(row.instances, "instances", 1);
    if (n <= 0) throw InputError("instances must be positive, got " + row.instances);
    r.instances = static_cast<int>(std::min<std::int64_t>(n, std::numeric_limits<int>::max()));
  }
  if (!row.cores.empty()) {
    const std::int64_t n = parse_count(row.cores, "cores", 1);
    if (n <= 0) throw InputError("cores must be positive, got " + row.cores);
    r.cores = static_cast<int>(std::min<std::int64_t>(n, std::numeric_limits<int>::max()));
  }
  r.numa_pages = row.numa_pages;  // checked where the request resolves
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
  } catch (const UnsupportedError& e) {
    // A valid setup perfcast does not model (an unknown precision on this architecture, an engine's training).
    res.status = std::string("unsupported: ") + clip_echoed_values(e.what());
  } catch (const InputError& e) {
    // The row's own input is wrong (a typo'd id, a bad value): named as op --configs names it.
    res.status = "error: line " + std::to_string(row.line) + ": " + clip_echoed_values(e.what());
  }
  return res;
}

}  // namespace

std::vector<RowResult> predict_rows(const std::vector<ConfigRow>& rows) {
  std::vector<RowResult> out(rows.size());
  parallel_for(rows.size(), [&](std::size_t i) { out[i] = predict_row(rows[i]); });
  return out;
}

void predict_config_file(const std::filesystem::path& path, const std::function<void(RowResult&&)>& emit,
                         bool with_measurements) {
  // Enough rows per chunk to keep every worker busy between the (serial) reads and writes.
  const std::size_t chunk = 64 * static_cast<std::size_t>(worker_threads());
  std::vector<ConfigRow> rows;
  rows.reserve(chunk);
  auto flush = [&] {
    for (auto& r : predict_rows(rows)) emit(std::move(r));
    rows.clear();
  };
  for_each_config_row(path, with_measurements, [&](ConfigRow&& r) {
    if (with_measurements) fill_unstated_setup(r);
    rows.push_back(std::move(r));
    if (rows.size() >= chunk) flush();
  });
  flush();
}

}  // namespace perfcast
