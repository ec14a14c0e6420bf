// Typed field access on a parsed TOML table that names the file and field in every error.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include <toml++/toml.h>

#include "core/error.h"

namespace perfcast {

// Parses a TOML file; InputError naming the file and line on a syntax error.
toml::table parse_toml_file(const std::filesystem::path& path);

// Every accessor notes the key it was asked for, present or not, so that refuse_unknown_keys can tell a key the
// reader knows from one it never asks for: the reader's own calls are the list of known keys.
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
  // `fallback` when the key is absent; present, it must be true or false.
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string text(std::string_view key) const;
  std::string text_or(std::string_view key, std::string fallback) const;
  const toml::table& table(std::string_view key) const;
  // Counts read off a model's code (calls, kernels, module calls ...), each a number from 0 to max, and the file's
  // [sources] table, which must give a source for every one of them: the sources by key.
  std::map<std::string, std::string> sourced_counts(std::span<const std::pair<const char*, double*>> counts,
                                                    double max) const;
  // The node at `key` (empty when absent), noted as known: for values the caller reads itself (arrays of tables).
  toml::node_view<const toml::node> node(std::string_view key) const { return asked(key); }
  // Whether the table holds `key`, noting it as known: for keys the caller reads itself (arrays of tables, free-form
  // tables such as [sources]).
  bool has(std::string_view key) const;
  // Fails on a key of the table that no call above asked for, naming it and the nearest key asked for: without it a
  // misspelt optional switch reads silently as its default. Call after the last read.
  void refuse_unknown_keys() const;
  [[noreturn]] void fail(std::string_view key, std::string_view what) const;
  const toml::table& raw() const { return t_; }

 private:
  toml::node_view<const toml::node> asked(std::string_view key) const;
  // "is missing", naming a key of the table that no call asked for and is close to `key` (a misspelling of it).
  [[noreturn]] void fail_missing(std::string_view key) const;
  const toml::table& t_;
  std::string where_;
  mutable std::set<std::string, std::less<>> asked_;
};

}  // namespace perfcast
