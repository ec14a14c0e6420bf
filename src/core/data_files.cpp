#include "core/data_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace perfcast {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("PERFCAST_DATA"); env && *env) return env;
#ifdef PERFCAST_DATA_DIR
  if (std::filesystem::exists(PERFCAST_DATA_DIR)) return PERFCAST_DATA_DIR;
#endif
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto share = exe.parent_path().parent_path() / "share" / "perfcast" / "data";
    if (std::filesystem::exists(share)) return share;
  }
  throw InputError("perfcast data directory not found; set PERFCAST_DATA to the project's data/ folder");
}

std::vector<std::filesystem::path> env_paths(const char* variable) {
  std::vector<std::filesystem::path> out;
  const char* env = std::getenv(variable);
  if (!env) return out;
  std::stringstream ss(env);
  std::string part;
  while (std::getline(ss, part, ':'))
    if (!part.empty() && std::filesystem::is_directory(part)) out.emplace_back(part);
  return out;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read file '" + path.string() + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace perfcast
