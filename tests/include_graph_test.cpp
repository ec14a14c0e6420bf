// The src/ folders are the pipeline's stages (src/README.md): a folder includes only the folders it may depend
// on, and no two folders include each other through any chain. The scan reads every #include "folder/..." line
// of src/**/*.{h,cpp}.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

// The allowed dependencies, as written in src/README.md. The stages run import -> graph -> cost -> schedule ->
// analysis -> report -> cli; graph/ holds the op and graph types that import/ produces, so import/ includes graph/
// and not the reverse. device/, runtime/ and core/ are inputs that every stage up to analysis/ may read; only
// analysis/ (the orchestrator) and the layers above it read import/.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table{
      {"core", {}},
      {"device", {"core"}},
      {"runtime", {"core"}},
      {"graph", {"core"}},
      {"import", {"core", "device", "runtime", "graph"}},
      {"cost", {"core", "device", "runtime", "graph"}},
      {"schedule", {"core", "device", "runtime", "graph", "cost"}},
      {"analysis", {"core", "device", "runtime", "graph", "cost", "schedule", "import"}},
      {"report", {"core", "device", "runtime", "graph", "cost", "schedule", "analysis"}},
      {"cli", {"core", "device", "runtime", "graph", "cost", "schedule", "import", "analysis", "report"}},
  };
  return table;
}

struct Edge {
  std::string file;  // the including file, relative to src/
  std::string line;  // the #include line
};

// folder -> included folder -> where
std::map<std::string, std::map<std::string, std::vector<Edge>>> scan_includes() {
  const fs::path src = fs::path(PERFCAST_SOURCE_DIR) / "src";
  const std::regex include(R"re(^\s*#\s*include\s*"([a-z_]+)/[^"]+")re");
  std::map<std::string, std::map<std::string, std::vector<Edge>>> out;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".h" && ext != ".cpp") continue;
    const fs::path rel = fs::relative(entry.path(), src);
    const std::string folder = rel.begin()->string();
    if (rel.begin() == rel.end() || std::next(rel.begin()) == rel.end()) continue;  // a file directly in src/
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line))
      if (std::regex_search(line, m, include) && m[1] != folder) out[folder][m[1]].push_back({rel.string(), line});
  }
  return out;
}

TEST(IncludeGraph, EveryFolderIsInTheTable) {
  const fs::path src = fs::path(PERFCAST_SOURCE_DIR) / "src";
  for (const auto& entry : fs::directory_iterator(src)) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(allowed().count(entry.path().filename().string()))
        << "src/" << entry.path().filename().string() << " is not in the dependency table (tests/include_graph_test.cpp, src/README.md)";
  }
}

TEST(IncludeGraph, FoldersIncludeOnlyWhatTheTableAllows) {
  const auto graph = scan_includes();
  ASSERT_FALSE(graph.empty()) << "no includes found under " << PERFCAST_SOURCE_DIR << "/src";
  for (const auto& [from, targets] : graph) {
    const auto row = allowed().find(from);
    if (row == allowed().end()) continue;  // reported by EveryFolderIsInTheTable
    for (const auto& [to, edges] : targets)
      if (!row->second.count(to))
        for (const auto& e : edges) ADD_FAILURE() << "src/" << e.file << " (" << from << "/) may not include " << to << "/: " << e.line;
  }
}

TEST(IncludeGraph, NoCycleBetweenFolders) {
  const auto graph = scan_includes();
  std::map<std::string, int> state;  // 0 unvisited, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::function<void(const std::string&)> visit = [&](const std::string& f) {
    state[f] = 1;
    stack.push_back(f);
    if (const auto it = graph.find(f); it != graph.end())
      for (const auto& [to, edges] : it->second) {
        if (state[to] == 1) {
          std::string cycle;
          for (auto s = std::find(stack.begin(), stack.end(), to); s != stack.end(); ++s) cycle += *s + " -> ";
          ADD_FAILURE() << "include cycle between folders: " << cycle << to << " (" << edges.front().file << ": "
                        << edges.front().line << ")";
        } else if (state[to] == 0) {
          visit(to);
        }
      }
    stack.pop_back();
    state[f] = 2;
  };
  for (const auto& [from, targets] : graph)
    if (state[from] == 0) visit(from);
}

}  // namespace
