// OnnxModel: an .onnx file loaded and validated once (structure, symbolic dimensions and --dim values, the
// batch and sequence dimensions, the fusion plan), built into a Graph per batch.
#pragma once

#ifdef PERFCAST_HAVE_ONNX

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <mutex>

#include "import/model_source.h"
#include "import/onnx/onnx_common.h"
#include "import/onnx/onnx_fusions.h"

namespace perfcast::onnx_import {

struct InputDim {
  std::int64_t value = 0;  // > 0 when fixed
  std::string param;       // name of a symbolic dimension ("" with value 0: unnamed)
};

struct GraphInput {
  std::string name;
  int dtype = ox::TensorProto::FLOAT;
  std::vector<InputDim> dims;
};

class OnnxModel {
 public:
  // Loads and validates `path`, resolves its dimensions and plans its fusions (InputError when it cannot).
  OnnxModel(std::string path, ImportOptions options) : path_(std::move(path)), options_(std::move(options)) {
    load();
    check_nodes();
    check_structure();
    resolve_inputs();
    find_position_table();
    plan_fusions();
  }

  // The graph at batch o.batch (defined in onnx_graph_build.cpp).
  Graph build(const ModelOptions& o) const;

  // The file the model was read from.
  const std::string& path() const { return path_; }
  // True when the first input holds token ids [batch, seq].
  bool sequence() const { return sequence_; }
  // The sequence length of a sequence model (fixed, or from --seq/--dim).
  std::int64_t default_seq() const { return default_seq_; }
  // The model's own batch: its fixed first dimension, else 1.
  std::int64_t natural_batch() const { return fixed_batch_ > 0 ? fixed_batch_ : 1; }
  // Rows of a learned position table (a Gather from a 2-D initializer whose indices are positions: a Range, or a
  // slice of a constant buffer with one index per row, as transformers' exports write position_ids); 0: none found.
  std::int64_t position_table_rows() const { return position_rows_; }
  // "N x OpType not costed" notes from the first build.
  std::vector<std::string> uncosted() const {
    std::vector<std::string> out;
    for (const auto& [type, count] : uncosted_) out.push_back(fmt::format("{} x {} not costed", count, type));
    return out;
  }
  // The model family set by model_from_onnx ("onnx", "cnn", "cnn3d", "transformer").
  std::string family() const { return family_; }
  // The one-line description set by model_from_onnx.
  std::string description() const { return description_; }

  // Filled by the first build (the node kinds do not depend on the batch).
  void note_uncosted(const std::map<std::string, int>& counts) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!uncosted_done_) {
      uncosted_ = counts;
      uncosted_done_ = true;
    }
  }
  // Sets the family and description (once, after the first build).
  void set_family(std::string f, std::string d) {
    family_ = std::move(f);
    description_ = std::move(d);
  }

 private:
  friend class GraphBuild;

  void load();
  void check_nodes();
  void check_structure();
  void resolve_inputs();
  void find_position_table();
  void plan_fusions();

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("ONNX model '{}' {}", path_, what));
  }

  std::string path_;
  ImportOptions options_;
  ox::ModelProto model_;  // value_info and output shapes cleared, large initializer data dropped
  std::vector<int> order_;  // node indices in topological order
  std::set<std::string> initializer_names_;
  std::vector<GraphInput> inputs_;  // graph inputs that are not initializers
  std::map<std::string, std::int64_t> dim_values_;  // resolved --dim values by dimension name
  std::string batch_param_;         // symbolic batch dimension name ("" when fixed or unnamed)
  std::int64_t fixed_batch_ = 0;    // > 0 when the first input has a fixed first dimension
  bool has_batch_ = true;           // false when the first input is a scalar
  bool sequence_ = false;
  std::string seq_param_;           // symbolic sequence dimension of a token-id input
  std::int64_t fixed_seq_ = 0;
  std::int64_t default_seq_ = 0;
  std::int64_t position_rows_ = 0;
  std::vector<Plan> plans_;         // by node index
  std::map<std::string, int> producer_;  // tensor name -> node index
  std::string family_ = "onnx";
  std::string description_;

  mutable std::mutex mutex_;
  mutable bool uncosted_done_ = false;
  mutable std::map<std::string, int> uncosted_;
};

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
