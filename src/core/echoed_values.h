// Error messages that echo input, held to a readable length where they are shown.
#pragma once

#include <string>

namespace perfcast {

// `message` (an InputError's, already escaped) with the values it echoes held to a readable length: in a message
// longer than 1000 bytes, each quoted span ('...') over 200 bytes keeps its first 160 and says how many bytes were
// left out, and what is still over 4000 bytes is cut there. A message quoting a 10 MB CSV cell or a 100 kB id
// stays one short line; a message of 1000 bytes or less is returned unchanged, and clipping twice changes nothing.
std::string clip_echoed_values(std::string message);

}  // namespace perfcast
