// The op-kind table (src/graph/op_kinds.h) against what it must agree with outside the code: the kernel classes
// of data/trace_kernels.toml and the names the JSON output documents.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/data_files.h"
#include "core/toml_reader.h"
#include "graph/op_kinds.h"

namespace perfcast {
namespace {

TEST(OpKindTable, TraceClassesAreClassesOfTheTraceKernelFile) {
  const toml::table t = parse_toml_file(data_dir() / "trace_kernels.toml");
  std::set<std::string> ids;
  if (const auto* classes = t["class"].as_array())
    for (const auto& c : *classes)
      if (const auto* row = c.as_table())
        if (auto id = (*row)["id"].value<std::string>()) ids.insert(*id);
  ASSERT_FALSE(ids.empty());
  for (const auto& row : kOpKinds)
    EXPECT_TRUE(ids.count(std::string(row.trace_class))) << row.name << " -> " << row.trace_class;
}

TEST(OpKindTable, NamesAreUniqueLowerCaseIdentifiers) {
  std::set<std::string_view> names;
  for (const auto& row : kOpKinds) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    for (char ch : row.name) EXPECT_TRUE((ch >= 'a' && ch <= 'z') || ch == '_') << row.name;
    EXPECT_EQ(op_kind_name(row.kind), row.name);
  }
}

}  // namespace
}  // namespace perfcast
