// Catalogs kept as one TOML file per entry in a data folder (data/runtimes, data/hosts, data/datasets).
#pragma once

#include <algorithm>
#include <filesystem>
#include <vector>

namespace perfcast {

// Every .toml file in `dir` read by `load` (path -> T), sorted by the entries' id.
template <typename T, typename Load>
std::vector<T> load_toml_folder(const std::filesystem::path& dir, Load load) {
  std::vector<T> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".toml") out.push_back(load(e.path()));
  std::sort(out.begin(), out.end(), [](const T& a, const T& b) { return a.id < b.id; });
  return out;
}

}  // namespace perfcast
