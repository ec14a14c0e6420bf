// Error messages that echo input, held to a readable length where they are shown.
#pragma once

#include <cstddef>
#include <string>

namespace perfcast {

// The most bytes the note that replaces what was left out ("... (N more bytes)", N of up to 20 digits) takes.
inline constexpr std::size_t kClipNoteBytes = 40;

// `message` (an InputError's, already escaped) with the values it echoes held to a readable length (data/limits.toml
// [messages]): in a message longer than long_message_bytes, each quoted span ('...') over long_quote_bytes keeps its
// first kept_quote_bytes and says how many bytes were left out, and what is still over max_message_bytes is cut
// there. A message quoting a 10 MB CSV cell or a 100 kB id stays one short line; a short message is returned
// unchanged, and clipping twice changes nothing.
std::string clip_echoed_values(std::string message);

}  // namespace perfcast
