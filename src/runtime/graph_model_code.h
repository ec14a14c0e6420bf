// The eager Python code a zoo graph's repeated layer runs (data/graph_code/<id>.toml): how many Python-level torch
// calls, kernels and nn.Module calls one layer issues, counted from the model's source. The graph has one op per
// tensor operation (a BERT layer's attention core is one op); the eager code issues several torch calls per op and
// a module call per submodule, and at small batch that host work sets the pace (docs/host-model.md). Same format
// as data/llm_code's per-layer counts, for encoder graphs the training and inference step schedules.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

// One attention path's counts per layer.
struct LayerCodeCounts {
  double python_ops = 0;    // Python-level torch calls (views and no-op dropouts included)
  double kernels = 0;       // kernels those calls launch (eval)
  double module_calls = 0;  // nn.Module __call__s
};

struct GraphModelCode {
  std::string id;
  std::string name;
  LayerCodeCounts eager;  // textbook attention (the graph's unfused core)
  LayerCodeCounts sdpa;   // scaled_dot_product_attention (the graph's fused core)
  std::map<std::string, std::string> sources;
};

const std::vector<GraphModelCode>& graph_model_code_catalog();

// InputError naming the nearest id when unknown.
const GraphModelCode& find_graph_model_code(std::string_view id);

}  // namespace perfcast
