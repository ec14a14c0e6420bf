#include "core/toml_writer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include <fmt/format.h>

namespace perfcast {

namespace {

bool starts_number(char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+'; }

bool in_token(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+';
}

// A value token that TOML reads as a float written with a fraction or exponent (not 'inf'/'nan', not a date, an
// integer or a hex literal): its shortest round-trip form, else the token unchanged.
std::string shortest_float(const std::string& token) {
  if (token.find_first_of(".eE") == std::string::npos || token.find_first_of(":xobT_") != std::string::npos)
    return token;
  const char* first = token.data() + (token[0] == '+' ? 1 : 0);
  double v = 0;
  const auto [end, ec] = std::from_chars(first, token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size()) return token;
  std::string out = fmt::format("{}", v);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

}  // namespace

std::string toml_text(const toml::table& table) {
  std::ostringstream formatted;
  formatted << toml::toml_formatter{table};
  const std::string in = formatted.str();
  std::string out;
  out.reserve(in.size());
  // Values follow '=', '[' or ',' (after spaces); strings are copied whole so that digits inside them stay.
  char last = '\n';
  for (std::size_t i = 0; i < in.size();) {
    const char c = in[i];
    if (c == '"' || c == '\'') {
      const bool triple = in.compare(i, 3, std::string(3, c)) == 0;
      const std::string close = triple ? std::string(3, c) : std::string(1, c);
      std::size_t j = i + close.size();
      while (j < in.size() && in.compare(j, close.size(), close) != 0) j += (c == '"' && in[j] == '\\') ? 2 : 1;
      j = std::min(in.size(), j + close.size());
      out.append(in, i, j - i);
      last = c;
      i = j;
      continue;
    }
    if (starts_number(c) && (last == '=' || last == '[' || last == ',')) {
      std::size_t j = i;
      while (j < in.size() && in_token(in[j])) ++j;
      out += shortest_float(in.substr(i, j - i));
      last = '0';
      i = j;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') last = c;
    out += c;
    ++i;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';  // a text file's last line ends with a newline
  return out;
}

}  // namespace perfcast
