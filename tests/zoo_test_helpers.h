// Shared by the zoo tests: build a zoo model and read its totals or one op by name.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "graph/op_arithmetic.h"
#include "import/zoo/zoo.h"

namespace perfcast::zoo_test {

inline Graph build(const char* id, std::int64_t batch = 1, std::int64_t seq = 0) {
  return find_zoo_model(id).build({batch, seq});
}
inline double params_of(const char* id) { return static_cast<double>(build(id).params()); }
inline double macs_of(const char* id) { return conv_linear_macs(build(id)); }

inline const Op& op_named(const Graph& g, const std::string& name) {
  for (const auto& op : g.ops)
    if (op.name == name) return op;
  ADD_FAILURE() << "no op named " << name << " in " << g.model_id;
  return g.ops.back();
}

// Op names are unique, every op reads only earlier ops, and MACs per sample do not depend on the batch.
inline void expect_well_formed(const Graph& g, const char* id) {
  std::set<std::string> names;
  for (const auto& op : g.ops) {
    EXPECT_TRUE(names.insert(op.name).second) << id << ": duplicate op name " << op.name;
    for (int in : op.inputs) EXPECT_LT(in, static_cast<int>(&op - g.ops.data())) << id << " " << op.name;
  }
  EXPECT_DOUBLE_EQ(conv_linear_macs(g), macs_of(id));
}

}  // namespace perfcast::zoo_test
