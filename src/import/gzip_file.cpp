#include "import/gzip_file.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace perfcast {

namespace {

// Scratch buffer of the counting pass.
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

// Room after the text for a parser that reads past the end in place (simdjson's 64-byte padding), so that the
// caller's reserve() does not copy the whole text once more.
constexpr std::size_t kTailBytes = 64;

// One open gzip (or plain) file, closed on every path out.
struct GzFile {
  gzFile f = nullptr;
  GzFile(const std::string& path, const std::string& what) : f(gzopen(path.c_str(), "rb")) {
    if (f == nullptr) throw InputError("cannot read " + what + " '" + path + "'");
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  ~GzFile() { gzclose(f); }
};

// Reads up to `want` bytes into `dst`; returns how many came (fewer only at the end of the text). Throws on a read
// error.
std::size_t read_some(gzFile f, char* dst, std::size_t want, const std::string& what, const std::string& path) {
  std::size_t filled = 0;
  int n = 0;
  while (filled < want) {
    const auto chunk = static_cast<unsigned>(std::min<std::size_t>(want - filled, kBlockBytes));
    if ((n = gzread(f, dst + filled, chunk)) <= 0) break;
    filled += static_cast<std::size_t>(n);
  }
  if (n < 0) {
    int code = 0;
    throw InputError("cannot read " + what + " '" + path + "': " + gzerror(f, &code));
  }
  return filled;
}

// Throws when the stream ended on an error (a gzip stream cut short reads as a short file otherwise).
void check_stream_end(gzFile f, const std::string& what, const std::string& path) {
  int code = Z_OK;
  const std::string why = gzerror(f, &code);
  if (code != Z_OK && code != Z_STREAM_END)
    throw InputError("cannot read " + what + " '" + path + "': " +
                     (code == Z_BUF_ERROR ? "the gzip stream is cut short" : why));
}

}  // namespace

// Two passes over the file: the first counts the decompressed bytes through a 1 MiB scratch buffer (and refuses a
// file past the limit holding nothing more), the second decompresses straight into a string of that exact size.
// The peak is about the text itself: gathering blocks and copying them into one string held the text twice (and a
// string grown by doubling holds up to three times it while it moves). The price is decompressing twice.
std::string read_maybe_gzip(const std::string& path, std::size_t limit, const std::string& what, bool truncate,
                            const std::string& too_large_message) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    // A folder or a device (/dev/null, a FIFO) exists: "no such file" would send the user looking for a typo.
    const auto status = std::filesystem::status(path, ec);
    throw InputError("cannot read " + what + " '" + path + "': " +
                     (!std::filesystem::exists(status)          ? "no such file"
                      : std::filesystem::is_directory(status) ? "a folder, not a file"
                                                              : "not a regular file (a device, FIFO or socket)"));
  }
  std::size_t total = 0;
  bool cut = false;
  {
    GzFile in(path, what);
    std::string scratch(kBlockBytes, '\0');
    for (;;) {
      const std::size_t filled = read_some(in.f, scratch.data(), scratch.size(), what, path);
      if (total + filled > limit) {
        if (!truncate) {
          if (!too_large_message.empty()) throw InputError(too_large_message);
          throw InputError("cannot read " + what + " '" + path + "': larger than " + std::to_string(limit >> 20) +
                           " MiB");
        }
        total = limit;
        cut = true;
        break;
      }
      total += filled;
      if (filled < scratch.size()) break;
    }
    if (!cut) check_stream_end(in.f, what, path);
  }
  GzFile in(path, what);
  std::string out;
  out.reserve(total + kTailBytes);
  out.resize(total);
  // The file changing between the passes shows as a different length; refused rather than returned half-read.
  if (read_some(in.f, out.data(), total, what, path) != total)
    throw InputError("cannot read " + what + " '" + path + "': it changed while being read");
  if (!cut) {
    char probe = 0;
    if (read_some(in.f, &probe, 1, what, path) != 0)
      throw InputError("cannot read " + what + " '" + path + "': it changed while being read");
  }
  return out;
}

}  // namespace perfcast
