#include "import/gzip_file.h"

#include <zlib.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "core/error.h"

namespace perfcast {

namespace {

// Decompressed text is gathered in blocks of this size and copied into one string of its final size at the end.
// Growing one string instead doubles its capacity and copies it on the way, so a file at the size limit needed
// about twice the limit of memory (4.2 GB to refuse a gzip bomb at the 2 GiB trace limit) before it was refused.
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

// Room after the text for a parser that reads past the end in place (simdjson's 64-byte padding), so that the
// caller's reserve() does not copy the whole text once more.
constexpr std::size_t kTailBytes = 64;

}  // namespace

std::string read_maybe_gzip(const std::string& path, std::size_t limit, const std::string& what, bool truncate,
                            const std::string& too_large_message) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError("cannot read " + what + " '" + path + "': no such file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw InputError("cannot read " + what + " '" + path + "'");
  std::vector<std::string> blocks;
  std::size_t total = 0;
  bool cut = false;
  for (;;) {
    std::string block(kBlockBytes, '\0');
    std::size_t filled = 0;
    int n = 0;
    while (filled < block.size() &&
           (n = gzread(f, block.data() + filled, static_cast<unsigned>(block.size() - filled))) > 0)
      filled += static_cast<std::size_t>(n);
    if (n < 0) {
      int code = 0;
      const std::string why = gzerror(f, &code);
      gzclose(f);
      throw InputError("cannot read " + what + " '" + path + "': " + why);
    }
    if (total + filled > limit) {
      if (!truncate) {
        gzclose(f);
        if (!too_large_message.empty()) throw InputError(too_large_message);
        throw InputError("cannot read " + what + " '" + path + "': larger than " + std::to_string(limit >> 20) +
                         " MiB");
      }
      filled = limit - total;
      cut = true;
    }
    block.resize(filled);
    total += filled;
    if (filled > 0) blocks.push_back(std::move(block));
    if (cut || n == 0) break;
  }
  if (!cut) {
    int code = Z_OK;
    const std::string why = gzerror(f, &code);
    if (code != Z_OK && code != Z_STREAM_END) {
      gzclose(f);
      throw InputError("cannot read " + what + " '" + path + "': " +
                       (code == Z_BUF_ERROR ? "the gzip stream is cut short" : why));
    }
  }
  gzclose(f);
  std::string out;
  out.reserve(total + kTailBytes);
  for (auto& b : blocks) {
    out.append(b);
    std::string().swap(b);  // give each block back as it is copied
  }
  return out;
}

}  // namespace perfcast
