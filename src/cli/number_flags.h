// The one parser of the command line's number flags, and of the values the API and perfcast serve hand on as
// flags. A number is plain decimal, as a user types it: digits with at most one point and an exponent (a whole
// number: digits only). Nothing else is read as a number: no sign, no spaces, no "inf" or "nan", no hexadecimal
// ("0x10", which CLI11's own conversion reads as 16, as it reads "010" as 8), nothing past a double's range
// ("1e999"). Any other value is one InputError in one format, that of the duration flags (parse_duration):
//   "<flag> takes <rule>, got '<value>'"
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace perfcast::cli {

// The values a real-number flag takes, from `least` (left out when `least_open`) to `most`, and how the error
// words them.
struct NumberRange {
  double least = 0;
  bool least_open = true;  // (least, most]: a positive number
  double most = std::numeric_limits<double>::max();
  std::string_view rule = "a positive finite number";
};

// A finite real number within `range`; InputError naming `flag` otherwise.
double number_flag(std::string_view text, std::string_view flag, const NumberRange& range = {});

// A whole number (digits only) from `least` to `most`; InputError naming `flag` otherwise. `alternative` words a
// value the caller reads before this one (" or 'max'").
std::uint64_t whole_number_flag(std::string_view text, std::string_view flag, std::uint64_t least,
                                std::uint64_t most = std::numeric_limits<std::int64_t>::max(),
                                std::string_view alternative = "");

// The same whole number as a signed count (`most` at most INT64_MAX).
std::int64_t count_flag(std::string_view text, std::string_view flag, std::int64_t least,
                        std::int64_t most = std::numeric_limits<std::int64_t>::max(),
                        std::string_view alternative = "");

// --pue (predict, compare, plan): facility energy / IT energy, from 1 to data/limits.toml max_pue.
double pue_flag(std::string_view text);

// For a flag CLI11 converts itself (an integer or double member), given to Option::transform: refuses, before that
// conversion, any value count_flag / number_flag would refuse, with their message. A whole number is written back
// without its leading zeros, which CLI11's base-0 conversion would read as octal ("010": 8). The library checks
// the range of the number.
CLI::Validator whole_number_check(std::string flag, std::int64_t least = 0,
                                  std::int64_t most = std::numeric_limits<std::int64_t>::max());
CLI::Validator number_check(std::string flag, NumberRange range = {});

}  // namespace perfcast::cli
