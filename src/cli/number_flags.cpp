#include "cli/number_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "core/error.h"
#include "core/limits.h"

namespace perfcast::cli {

namespace {

// A value echoed in an error: the first 40 characters (a hostile megabyte stays out of the one line).
[[noreturn]] void refuse(std::string_view flag, std::string_view rule, std::string_view text) {
  throw InputError(fmt::format("{} takes {}, got '{}'", flag, rule, text.substr(0, 40)));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Digits, at most one point, then an optional exponent (e or E, an optional sign, digits), with a digit before the
// exponent: what std::from_chars reads as a fixed or scientific number, less its "inf", "nan", hexadecimal and
// leading minus.
bool plain_decimal(std::string_view s) {
  std::size_t i = 0, digits = 0;
  bool point = false;
  for (; i < s.size(); ++i) {
    if (is_digit(s[i])) ++digits;
    else if (s[i] == '.' && !point) point = true;
    else break;
  }
  if (digits == 0) return false;
  if (i == s.size()) return true;
  if (s[i] != 'e' && s[i] != 'E') return false;
  if (++i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i == s.size()) return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i), s.end(), is_digit);
}

}  // namespace

double number_flag(std::string_view text, std::string_view flag, const NumberRange& range) {
  double v = 0;
  if (!plain_decimal(text)) refuse(flag, range.rule, text);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // result_out_of_range: "1e999" (or an underflow to 0, "1e-999"), which no flag takes.
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) refuse(flag, range.rule, text);
  if (range.least_open ? !(v > range.least) : !(v >= range.least)) refuse(flag, range.rule, text);
  if (!(v <= range.most)) refuse(flag, range.rule, text);
  return v;
}

std::uint64_t whole_number_flag(std::string_view text, std::string_view flag, std::uint64_t least, std::uint64_t most,
                                std::string_view alternative) {
  std::uint64_t v = 0;
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), is_digit);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (!digits || ec != std::errc() || ptr != text.data() + text.size() || v < least || v > most)
    refuse(flag,
           fmt::format("a whole number (digits only) from {}{}{}", least,
                       most == static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
                               most == std::numeric_limits<std::uint64_t>::max()
                           ? std::string()
                           : fmt::format(" to {}", most),
                       alternative),
           text);
  return v;
}

std::int64_t count_flag(std::string_view text, std::string_view flag, std::int64_t least, std::int64_t most,
                        std::string_view alternative) {
  return static_cast<std::int64_t>(whole_number_flag(text, flag, static_cast<std::uint64_t>(std::max<std::int64_t>(least, 0)),
                                                     static_cast<std::uint64_t>(std::max<std::int64_t>(most, 0)),
                                                     alternative));
}

double pue_flag(std::string_view text) {
  // PUE is total facility energy over IT equipment energy: 1 is a facility with no overhead. Its ceiling is a limit
  // on hostile input, with its source (data/limits.toml max_pue).
  const double most = input_limits().max_pue;
  const std::string rule = fmt::format(
      "a number from 1 (facility energy / IT energy; 1 is no overhead) to {:g} (data/limits.toml max_pue), such as 1.1 "
      "or 1.58",
      most);
  return number_flag(text, "--pue", {1.0, false, most, rule});
}

CLI::Validator whole_number_check(std::string flag, std::int64_t least, std::int64_t most) {
  return CLI::Validator(
      [flag = std::move(flag), least, most](std::string& value) {
        value = std::to_string(count_flag(value, flag, least, most));
        return std::string();
      },
      "", "whole number");
}

CLI::Validator number_check(std::string flag, NumberRange range) {
  return CLI::Validator(
      [flag = std::move(flag), range](std::string& value) {
        number_flag(value, flag, range);
        return std::string();
      },
      "", "number");
}

}  // namespace perfcast::cli
