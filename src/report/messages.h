// Report text in English or Chinese. Keys are stable; JSON keys never change with the language.
#pragma once

#include <string>
#include <string_view>

namespace perfcast {

enum class Lang { kEn, kZh };

// Parses "en" / "zh"; InputError for anything else.
Lang parse_lang(std::string_view code);

// The text for `key` in `lang` (fmt format string where the key takes arguments).
std::string_view msg(std::string_view key, Lang lang);

}  // namespace perfcast
