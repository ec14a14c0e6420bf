// A model as an ordered list of ops (topological order) at one batch size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/op.h"

namespace perfcast {

struct Graph {
  std::string model_id;
  std::int64_t batch = 1;
  std::int64_t seq = 0;                // tokens per sample for sequence models, 0 otherwise
  bool is_sequence = false;            // throughput is also reported in tokens/s
  std::int64_t input_bytes_per_sample = 0;  // host-to-device bytes per sample (uint8 image or int token ids)
  std::int64_t input_elems_per_sample = 0;  // values per sample the host pipeline produces
  std::vector<Op> ops;
  // The eager model code whose layers' torch and module calls are counted (data/graph_code id); "" when the graph's
  // ops stand for the code's calls one for one (a CNN's modules).
  std::string model_code;

  // Learned parameters (sum over ops; tied weights count once).
  std::int64_t params() const;
  // Parameters held in embedding-bag tables (updated sparsely inside backward, placed and sharded on their own).
  std::int64_t table_params() const;
  // params() without the tables: what the dense optimizer, AMP casts and the gradient all-reduce touch.
  std::int64_t dense_params() const { return params() - table_params(); }
};

}  // namespace perfcast
