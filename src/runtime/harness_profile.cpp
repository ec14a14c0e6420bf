#include "runtime/harness_profile.h"

#include <filesystem>

#include "core/data_files.h"
#include "core/find_by_id.h"
#include "core/toml_folder.h"
#include "core/toml_reader.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

namespace {

HarnessProfile load_harness(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  TomlFields f(t, "harness file '" + path.string() + "'");
  HarnessProfile h;
  h.id = f.text("id");
  h.name = f.text("name");
  h.host_step_us = f.number("host_step_us");
  h.syncs_per_step = f.number("syncs_per_step");
  if (h.host_step_us < 0 || h.host_step_us > 1e6) f.fail("host_step_us", "must be within 0..1e6 microseconds");
  if (h.syncs_per_step < 0 || h.syncs_per_step > 1e3) f.fail("syncs_per_step", "must be within 0..1000");
  h.input_threads = f.count_or("input_threads", 0, 4096);
  h.input_copy_in_step = f.boolean_or("input_copy_in_step", false);
  // Each group is given whole or not at all: one key of it asks for the others.
  if (f.has("clip_per_tensor_kernels") || f.has("clip_per_tensor_host_ops") || f.has("clip_per_tensor_grad_passes")) {
    h.per_tensor.clip_per_tensor_kernels = f.number("clip_per_tensor_kernels");
    h.per_tensor.clip_per_tensor_host_ops = f.number("clip_per_tensor_host_ops");
    h.per_tensor.clip_per_tensor_grad_passes = f.number("clip_per_tensor_grad_passes");
    for (const char* key : {"clip_per_tensor_kernels", "clip_per_tensor_host_ops", "clip_per_tensor_grad_passes"})
      if (f.number(key) < 0 || f.number(key) > 100) f.fail(key, "must be within 0..100");
  }
  if (f.has("update_per_tensor_kernels") || f.has("update_per_tensor_host_ops") || f.has("update_per_tensor_passes") ||
      f.has("update_decay_kernels") || f.has("update_decay_passes")) {
    h.per_tensor.update_per_tensor_kernels = f.number("update_per_tensor_kernels");
    h.per_tensor.update_per_tensor_host_ops = f.number("update_per_tensor_host_ops");
    h.per_tensor.update_per_tensor_passes = f.number("update_per_tensor_passes");
    h.per_tensor.update_decay_kernels = f.number("update_decay_kernels");
    h.per_tensor.update_decay_passes = f.number("update_decay_passes");
    for (const char* key : {"update_per_tensor_kernels", "update_per_tensor_host_ops", "update_per_tensor_passes",
                            "update_decay_kernels", "update_decay_passes"})
      if (f.number(key) < 0 || f.number(key) > 100) f.fail(key, "must be within 0..100");
  }
  TomlFields s(f.table("sources"), "harness file '" + path.string() + "' [sources]");
  for (const auto& [key, value] : s.raw())
    if (auto text = value.value<std::string>()) h.sources[std::string(key.str())] = *text;
  for (const char* key : {"host_step_us", "syncs_per_step"})
    if (!h.sources.count(key)) f.fail("sources", std::string("has no source for ") + key);
  for (const char* key : {"input_threads", "input_copy_in_step", "clip_per_tensor_kernels", "clip_per_tensor_host_ops",
                          "clip_per_tensor_grad_passes", "update_per_tensor_kernels", "update_per_tensor_host_ops",
                          "update_per_tensor_passes", "update_decay_kernels", "update_decay_passes"})
    if (t.contains(key) && !h.sources.count(key)) f.fail("sources", std::string("has no source for ") + key);
  f.refuse_unknown_keys();
  return h;
}

}  // namespace

const std::vector<HarnessProfile>& harness_catalog() {
  static const auto all = load_toml_folder<HarnessProfile>(data_dir() / "harnesses", load_harness);
  return all;
}

const HarnessProfile& find_harness(std::string_view id) { return find_by_id(harness_catalog(), id, "harness"); }

void apply_harness(RuntimeProfile& runtime, const HarnessProfile& harness) {
  runtime.host_step_us = harness.host_step_us;
  runtime.syncs_per_step = harness.syncs_per_step;
  runtime.per_tensor = harness.per_tensor;
}

}  // namespace perfcast
