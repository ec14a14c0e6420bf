#include "core/private_temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.h"

namespace perfcast {

PrivateTempDir::PrivateTempDir(std::string_view prefix) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) throw InputError("cannot create a temporary folder: " + ec.message());
  std::string templ = (base / (std::string(prefix) + "-XXXXXX")).string();
  // mkdtemp creates the folder with mode 0700 under a name no one can predict.
  if (mkdtemp(templ.data()) == nullptr)
    throw InputError("cannot create a temporary folder in '" + base.string() + "': " + std::strerror(errno));
  path_ = templ;
}

PrivateTempDir::~PrivateTempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: a destructor must not throw
}

}  // namespace perfcast
