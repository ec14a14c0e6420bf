#include "runtime/graph_model_code.h"

#include <filesystem>

#include "core/data_files.h"
#include "core/find_by_id.h"
#include "core/toml_folder.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

GraphModelCode load_code(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  const std::string where = "graph-code file '" + path.string() + "'";
  TomlFields f(t, where);
  GraphModelCode c;
  c.id = f.text("id");
  c.name = f.text("name");
  const std::pair<const char*, double*> counts[] = {
      {"python_ops_per_layer", &c.eager.python_ops},
      {"kernels_per_layer", &c.eager.kernels},
      {"module_calls_per_layer", &c.eager.module_calls},
      {"sdpa_python_ops_per_layer", &c.sdpa.python_ops},
      {"sdpa_kernels_per_layer", &c.sdpa.kernels},
      {"sdpa_module_calls_per_layer", &c.sdpa.module_calls}};
  c.sources = f.sourced_counts(counts, 1e4);
  return c;
}

}  // namespace

const std::vector<GraphModelCode>& graph_model_code_catalog() {
  static const auto all = load_toml_folder<GraphModelCode>(data_dir() / "graph_code", load_code);
  return all;
}

const GraphModelCode& find_graph_model_code(std::string_view id) {
  return find_by_id(graph_model_code_catalog(), id, "graph code");
}

}  // namespace perfcast
