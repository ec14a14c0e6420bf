// Report text in English or Chinese. Keys are stable; JSON keys never change with the language.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace perfcast {

enum class Lang { kEn, kZh };

// Parses "en" / "zh"; InputError for anything else.
Lang parse_lang(std::string_view code);

// "en" / "zh" (HTML lang attribute).
inline const char* lang_code(Lang lang) { return lang == Lang::kZh ? "zh" : "en"; }

// The text for `key` in `lang` (fmt format string where the key takes arguments).
std::string_view msg(std::string_view key, Lang lang);

// The sentence for a reason code in `lang`, its facts filled in by name; "" when the code has no sentence or a
// fact it needs is missing (the caller then prints the English text it was given).
std::string reason_text(const ReasonCode& reason, Lang lang);

// Every reason code that has a sentence ("precision.inference_only", ...), for tests.
std::vector<std::string> reason_codes();

}  // namespace perfcast
