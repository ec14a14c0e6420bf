#include "import/gzip_file.h"

#include <zlib.h>

#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace perfcast {

std::string read_maybe_gzip(const std::string& path, std::size_t limit, const std::string& what, bool truncate) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError("cannot read " + what + " '" + path + "': no such file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw InputError("cannot read " + what + " '" + path + "'");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(f, &code);
      gzclose(f);
      throw InputError("cannot read " + what + " '" + path + "': " + why);
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > limit) {
      if (truncate) {
        out.append(buf, limit - out.size());
        gzclose(f);
        return out;
      }
      gzclose(f);
      throw InputError("cannot read " + what + " '" + path + "': larger than " + std::to_string(limit >> 20) + " MiB");
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  int code = Z_OK;
  const std::string why = gzerror(f, &code);
  gzclose(f);
  if (code != Z_OK && code != Z_STREAM_END)
    throw InputError("cannot read " + what + " '" + path + "': " +
                     (code == Z_BUF_ERROR ? "the gzip stream is cut short" : why));
  return out;
}

}  // namespace perfcast
