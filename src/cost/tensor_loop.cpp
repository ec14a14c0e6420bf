#include "cost/tensor_loop.h"

#include <map>
#include <string>

#include "core/data_files.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

std::map<int, TensorLoopSpec> load_tensor_loops() {
  const auto path = data_dir() / "architectures.toml";
  const toml::table root = parse_toml_file(path);
  std::map<int, TensorLoopSpec> out;
  for (const auto& [key, node] : root) {
    const auto* t = node.as_table();
    const std::string k(key.str());
    if (!t || k.rfind("sm_", 0) != 0) continue;
    TomlFields f(*t, path.string() + " [" + k + "]");
    out[std::stoi(k.substr(3))] = {f.number_or("tensor_step_bytes", 0), f.number_or("tensor_pipeline_stages", 0)};
  }
  return out;
}

}  // namespace

const TensorLoopSpec& tensor_loop_spec(int sm_version) {
  static const std::map<int, TensorLoopSpec> all = load_tensor_loops();  // parsed once, never changed
  static const TensorLoopSpec none;
  const auto it = all.find(sm_version);
  return it == all.end() ? none : it->second;
}

}  // namespace perfcast
