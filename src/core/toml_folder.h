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

// Every .toml file of each existing folder in `dirs`, read by `load`, in folder order and by file name within a
// folder; an entry whose id an earlier one has is replaced by it (extra catalog folders override the shipped one,
// as PERFCAST_GPU_PATH and PERFCAST_CPU_PATH do).
template <typename T, typename Load>
std::vector<T> load_toml_folders_overriding(const std::vector<std::filesystem::path>& dirs, Load load) {
  std::vector<T> out;
  for (const auto& dir : dirs) {
    if (!std::filesystem::is_directory(dir)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".toml") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      T entry = load(f);
      auto same = std::find_if(out.begin(), out.end(), [&](const T& x) { return x.id == entry.id; });
      if (same != out.end()) *same = std::move(entry);
      else out.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace perfcast
