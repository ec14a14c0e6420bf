#include "runtime/llm_model_code.h"

#include <filesystem>

#include "core/data_files.h"
#include "core/find_by_id.h"
#include "core/toml_folder.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

LlmModelCode load_code(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  const std::string where = "model-code file '" + path.string() + "'";
  TomlFields f(t, where);
  LlmModelCode c;
  c.id = f.text("id");
  c.name = f.text("name");
  const std::pair<const char*, double*> counts[] = {
      {"python_ops_per_layer", &c.python_ops_per_layer},
      {"kernels_per_layer", &c.kernels_per_layer},
      {"module_calls_per_layer", &c.module_calls_per_layer},
      {"python_ops_per_forward", &c.python_ops_per_forward},
      {"kernels_per_forward", &c.kernels_per_forward},
      {"module_calls_per_forward", &c.module_calls_per_forward},
      {"loop_python_ops_per_token", &c.loop_python_ops_per_token},
      {"loop_kernels_per_token", &c.loop_kernels_per_token},
      {"syncs_per_token", &c.syncs_per_token},
      {"kv_cache_copies_per_layer", &c.kv_cache_copies_per_layer},
      {"kv_cache_copies_per_extra_group", &c.kv_cache_copies_per_extra_group}};
  c.kv_cache_static = f.boolean("kv_cache_static");
  c.kv_cache_window = f.boolean("kv_cache_window");
  c.sources = f.sourced_counts(counts, 1e5);
  return c;
}

}  // namespace

const std::vector<LlmModelCode>& llm_model_code_catalog() {
  static const auto all = load_toml_folder<LlmModelCode>(data_dir() / "llm_code", load_code);
  return all;
}

const LlmModelCode& find_llm_model_code(std::string_view id) {
  return find_by_id(llm_model_code_catalog(), id, "model code");
}

}  // namespace perfcast
