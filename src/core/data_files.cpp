#include "core/data_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/error.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

namespace fs = std::filesystem;

// The build tree's pointer to the source tree's data/: the first line of `file`, when that folder exists.
fs::path source_data_named_in(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return {};
  std::error_code ec;
  return fs::is_directory(line, ec) ? fs::path(line) : fs::path();
}

}  // namespace

fs::path data_dir() {
  if (const char* env = std::getenv("PERFCAST_DATA"); env && *env) {
    std::error_code ec;
    if (!fs::is_directory(env, ec))
      throw InputError("PERFCAST_DATA is '" + std::string(env) +
                       "', which is not a directory; point it at perfcast's data/ folder");
    return env;
  }
  std::error_code ec;
  // The kernel's path of the running binary, links resolved: a link to an installed perfcast finds its share/.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    throw InputError("perfcast data directory not found (cannot locate the executable: " + ec.message() +
                     "); set PERFCAST_DATA to perfcast's data/ folder");
  const fs::path bin = exe.parent_path();
  if (fs::path src = source_data_named_in(bin / "perfcast-source-data"); !src.empty()) return src;
  const fs::path share = bin.parent_path() / "share" / "perfcast";
  if (fs::is_directory(share, ec)) return share;
  // tests/ and bench/ of a build tree.
  if (fs::path src = source_data_named_in(bin.parent_path() / "perfcast-source-data"); !src.empty()) return src;
  throw InputError("perfcast data directory not found: no '" + share.string() +
                   "' beside the executable; install with `cmake --install`, or set PERFCAST_DATA to perfcast's "
                   "data/ folder");
}

std::string data_catalog_date() {
  const fs::path path = data_dir() / "catalog.toml";
  const toml::table t = parse_toml_file(path);
  return TomlFields(t, path.string()).text("date");
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
  // An ifstream opens a directory on Linux and reads nothing from it, which callers would take for an empty file
  // ("has no [[instance]] entries"): name the real problem.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("cannot read file '" + path.string() + "': is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read file '" + path.string() + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace perfcast
