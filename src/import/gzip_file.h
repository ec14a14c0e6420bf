// Reading files that may be gzip-compressed (profiler traces, measured-kernel tables).
#pragma once

#include <cstddef>
#include <string>

namespace perfcast {

// The file's text, decompressed when it is gzip (zlib's gzread passes plain files through). Throws InputError
// naming `what` (e.g. "trace") when the file is missing, unreadable, cut short, or larger than `limit` bytes
// once decompressed.
std::string read_maybe_gzip(const std::string& path, std::size_t limit, const std::string& what);

}  // namespace perfcast
