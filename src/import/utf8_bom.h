// A spreadsheet that saves "CSV UTF-8" starts the file with the UTF-8 byte-order mark (EF BB BF), no part of the
// first column's name: the CSV readers take it off the first line.
#pragma once

#include <string_view>

namespace perfcast {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// `first_line` without a leading byte-order mark.
inline std::string_view without_utf8_bom(std::string_view first_line) {
  if (first_line.starts_with(kUtf8Bom)) first_line.remove_prefix(kUtf8Bom.size());
  return first_line;
}

}  // namespace perfcast
