// Typed field access on a parsed TOML table that names the file and field in every error.
#pragma once

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include <toml++/toml.h>

#include "core/error.h"

namespace perfcast {

// Parses a TOML file; InputError naming the file and line on a syntax error.
toml::table parse_toml_file(const std::filesystem::path& path);

class TomlFields {
 public:
  TomlFields(const toml::table& t, std::string where) : t_(t), where_(std::move(where)) {}
  double number(std::string_view key) const;
  double number_or(std::string_view key, double fallback) const;
  // A whole number from 0 to max (counts: SMs, cores, lanes); larger values would overflow an int.
  int count(std::string_view key, int max = 1 << 20) const;
  int count_or(std::string_view key, int fallback, int max = 1 << 20) const;
  // An array of whole numbers from min to max (filter sizes, compute capabilities); empty when the key is absent.
  std::vector<int> count_list(std::string_view key, int min, int max) const;
  // A table of numbers by compute capability, `{ sm_80 = 0.8, sm_90 = 2 }` -> {80: 0.8, 90: 2}; empty when the
  // key is absent. An entry that is not sm_<digits> = <number> fails naming the entry and its value.
  std::map<int, double> by_sm(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::string text(std::string_view key) const;
  std::string text_or(std::string_view key, std::string fallback) const;
  const toml::table& table(std::string_view key) const;
  // Counts read off a model's code (calls, kernels, module calls ...), each a number from 0 to max, and the file's
  // [sources] table, which must give a source for every one of them: the sources by key.
  std::map<std::string, std::string> sourced_counts(std::span<const std::pair<const char*, double*>> counts,
                                                    double max) const;
  [[noreturn]] void fail(std::string_view key, std::string_view what) const;
  const toml::table& raw() const { return t_; }

 private:
  const toml::table& t_;
  std::string where_;
};

}  // namespace perfcast
