#include "core/mode.h"

#include "core/error.h"

namespace perfcast {

std::vector<std::string> mode_names() { return {kModeNames.begin(), kModeNames.end()}; }

Mode parse_mode(std::string_view text) {
  for (std::size_t i = 0; i < kModeNames.size(); ++i)
    if (kModeNames[i] == text) return static_cast<Mode>(i);
  throw_unknown("mode", text, mode_names());
}

}  // namespace perfcast
