#include "core/echoed_values.h"

#include <string_view>

#include "core/error.h"
#include "core/limits.h"

namespace perfcast {

namespace {

// `text` cut to at most `keep` bytes, before a UTF-8 continuation byte never after it.
std::string_view utf8_prefix(std::string_view text, std::size_t keep) {
  if (text.size() <= keep) return text;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return text.substr(0, keep);
}

std::string left_out(std::size_t bytes) { return "... (" + std::to_string(bytes) + " more bytes)"; }

}  // namespace

std::string clip_echoed_values(std::string message) {
  const InputLimits* limits = nullptr;
  try {
    limits = &input_limits();
  } catch (const InputError&) {
    // data/limits.toml itself cannot be read: the message being shown is likely that error, which echoes no huge
    // value; shown whole rather than replaced by a second error inside the handler that prints it.
    return message;
  }
  if (message.size() <= limits->long_message_bytes) return message;
  std::string out;
  std::size_t at = 0;
  while (at < message.size()) {
    const std::size_t open = message.find('\'', at);
    const std::size_t close = open == std::string::npos ? std::string::npos : message.find('\'', open + 1);
    if (close == std::string::npos) {
      out.append(message, at, std::string::npos);
      break;
    }
    const std::string_view quoted = std::string_view(message).substr(open + 1, close - open - 1);
    out.append(message, at, open + 1 - at);
    if (quoted.size() > limits->long_quote_bytes) {
      const std::string_view kept = utf8_prefix(quoted, limits->kept_quote_bytes);
      out += kept;
      out += left_out(quoted.size() - kept.size());
    } else {
      out += quoted;
    }
    out += '\'';
    at = close + 1;
  }
  if (out.size() > limits->max_message_bytes) {
    // Room for the note, so that the result is at most max_message_bytes and clipping it again changes nothing.
    const std::string_view kept = utf8_prefix(out, limits->max_message_bytes - kClipNoteBytes);
    out = std::string(kept) + left_out(out.size() - kept.size());
  }
  return out;
}

}  // namespace perfcast
