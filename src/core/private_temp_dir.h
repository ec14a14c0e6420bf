// A folder only this process's user can enter (mode 0700, mkdtemp under the system temp folder), removed with
// everything in it when the object goes: where the in-process API and `perfcast serve` put an uploaded file or
// a page a command writes, under names they choose themselves.
#pragma once

#include <filesystem>
#include <string_view>

namespace perfcast {

class PrivateTempDir {
 public:
  // Creates <temp>/<prefix>-XXXXXX; InputError when the system temp folder cannot take it.
  explicit PrivateTempDir(std::string_view prefix = "perfcast");
  ~PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;

  // The folder.
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace perfcast
