// The readers perfcast exposes to files from users, by fuzz target name: one place that the libFuzzer targets
// (fuzz/fuzz_<target>.cpp) and the regression replay (tests/hostile_input_test.cpp) both call, so that a crash
// found by one is replayed through exactly the same code by the other.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <atomic>

#include "analysis/cloud.h"
#include "analysis/monitor.h"
#include "core/error.h"
#include "device/catalog.h"
#include "import/config_csv.h"
#include "import/kineto_trace.h"
#include "import/model_source.h"
#include "runtime/runtime_profile.h"

namespace perfcast::fuzz {

// The fuzz targets, as named under fuzz/ and fuzz/regressions/.
inline const std::vector<std::string>& targets() {
  static const std::vector<std::string> names{"csv", "gpu_toml", "runtime_toml", "price_toml", "hf_config", "onnx",
                                              "trace",     "monitor_session"};
  return names;
}

// The file name extension each reader expects (model files are recognised by it).
inline std::string extension(const std::string& target) {
  if (target == "csv" || target == "monitor_session") return ".csv";
  if (target == "hf_config" || target == "trace") return ".json";
  if (target == "onnx") return ".onnx";
  return ".toml";
}

// Runs `file` through the reader of `target` and, for models, builds the graph once at batch 1. Returns normally
// on success; InputError (or UnsupportedError) on bad input; anything else is a bug.
inline void read_as(const std::string& target, const std::filesystem::path& file) {
  const std::string path = file.string();
  if (target == "csv") {
    read_config_csv(file, true);
  } else if (target == "gpu_toml") {
    load_device_file(file);
  } else if (target == "runtime_toml") {
    load_runtime(file);
  } else if (target == "price_toml") {
    load_price_catalog(file);
  } else if (target == "hf_config") {
    model_from_hf_config(path).build(ModelOptions{1, 0});
  } else if (target == "onnx") {
    model_from_onnx(path, {});  // builds once at the model's own batch
  } else if (target == "trace") {
    read_kineto_trace(path);
    const ModelSource m = model_from_trace(path);
    m.build(ModelOptions{m.natural_batch > 0 ? m.natural_batch : 1, 0});
  } else if (target == "monitor_session") {
    // A recorded `perfcast monitor --csv` session, replayed through the analysis as --replay does.
    const auto sampler = open_session_replay(file);
    const std::atomic<bool> stop{false};
    run_monitor(*sampler, MonitorOptions{}, stop, nullptr);
  } else {
    PERFCAST_ASSERT(false, "fuzz targets are the names in targets()");
  }
}

}  // namespace perfcast::fuzz
