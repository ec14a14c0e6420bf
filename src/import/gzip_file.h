// Reading files that may be gzip-compressed (profiler traces, measured-kernel tables).
#pragma once

#include <cstddef>
#include <string>

namespace perfcast {

// The file's text, decompressed when it is gzip (zlib's gzread passes plain files through). Throws InputError
// naming `what` (e.g. "trace") when the file is missing, unreadable or cut short, and when it is larger than
// `limit` bytes once decompressed (with `too_large_message` as its text when that is given); with `truncate`,
// returns its first `limit` bytes instead. A file past the limit is refused holding about `limit` bytes, and the
// text returned has 64 bytes of spare capacity (simdjson's padding) so that parsing in place copies nothing.
std::string read_maybe_gzip(const std::string& path, std::size_t limit, const std::string& what, bool truncate = false,
                            const std::string& too_large_message = "");

}  // namespace perfcast
