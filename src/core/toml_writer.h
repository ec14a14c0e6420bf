// A TOML table as text for a data file that perfcast writes (perfcast trace --write-gpu).
#pragma once

#include <string>

#include <toml++/toml.h>

namespace perfcast {

// toml++'s formatter output with each float written in the shortest form that reads back to the same double
// (9.7, not 9.6999999999999993): toml++ prints every float with 17 significant digits. Floats stay floats (a
// ".0" is kept where the shortest form would read as an integer); strings and keys are left as they are. The text ends with a newline.
std::string toml_text(const toml::table& table);

}  // namespace perfcast
