#include "core/toml_reader.h"

#include <cmath>
#include <cstdint>
#include <sstream>

#include "core/data_files.h"

namespace perfcast {

toml::table parse_toml_file(const std::filesystem::path& path) {
  try {
    return toml::parse(read_text_file(path), path.string());
  } catch (const toml::parse_error& e) {
    throw InputError("'" + path.string() + "' is not valid TOML: " + std::string(e.description()) + " (line " +
                     std::to_string(e.source().begin.line) + ")");
  }
}

double TomlFields::number(std::string_view key) const {
  auto node = asked(key);
  if (auto v = node.value<double>()) {
    if (!std::isfinite(*v)) fail(key, "must be a finite number");
    return *v;
  }
  if (!node) fail_missing(key);
  fail(key, "is not a number");
}

int TomlFields::count(std::string_view key, int max) const {
  const double v = number(key);
  if (v < 0 || v > max || v != std::floor(v)) fail(key, "must be a whole number from 0 to " + std::to_string(max));
  return static_cast<int>(v);
}

int TomlFields::count_or(std::string_view key, int fallback, int max) const {
  if (!asked(key)) return fallback;
  return count(key, max);
}

std::vector<int> TomlFields::count_list(std::string_view key, int min, int max) const {
  std::vector<int> out;
  auto node = asked(key);
  if (!node) return out;
  const auto* arr = node.as_array();
  const std::string what = "must be an array of whole numbers from " + std::to_string(min) + " to " + std::to_string(max);
  if (!arr) fail(key, what);
  for (const auto& v : *arr) {
    const auto k = v.value<std::int64_t>();
    if (!k || *k < min || *k > max) fail(key, what);
    out.push_back(static_cast<int>(*k));
  }
  return out;
}

double TomlFields::number_or(std::string_view key, double fallback) const {
  auto node = asked(key);
  if (!node) return fallback;
  return number(key);
}

std::map<int, double> TomlFields::by_sm(std::string_view key) const {
  std::map<int, double> out;
  auto node = asked(key);
  if (!node) return out;
  const auto* table = node.as_table();
  if (!table) fail(key, "must be a table of sm_XX = number");
  for (const auto& [k, v] : *table) {
    const std::string entry(k.str());
    // At most four digits: compute capabilities are two or three, and stoi stays in range.
    if (entry.rfind("sm_", 0) != 0 || entry.size() < 4 || entry.size() > 7 ||
        entry.find_first_not_of("0123456789", 3) != std::string::npos)
      fail(key, "entry '" + entry.substr(0, 40) + "' is not a compute capability (keys look like sm_90)");
    const auto value = v.value<double>();
    if (!value || !std::isfinite(*value)) {
      std::ostringstream text;
      v.visit([&](const auto& x) { text << x; });
      fail(key, "entry " + entry + " = " + text.str().substr(0, 40) + " is not a number");
    }
    out[std::stoi(entry.substr(3))] = *value;
  }
  return out;
}

bool TomlFields::boolean(std::string_view key) const {
  auto node = asked(key);
  if (auto v = node.value<bool>()) return *v;
  if (!node) fail_missing(key);
  fail(key, "is not true/false");
}

bool TomlFields::boolean_or(std::string_view key, bool fallback) const {
  if (!asked(key)) return fallback;
  return boolean(key);
}

std::string TomlFields::text(std::string_view key) const {
  auto node = asked(key);
  if (auto v = node.value<std::string>()) return *v;
  if (!node) fail_missing(key);
  fail(key, "is not a string");
}

std::string TomlFields::text_or(std::string_view key, std::string fallback) const {
  auto node = asked(key);
  if (!node) return fallback;
  return text(key);
}

const toml::table& TomlFields::table(std::string_view key) const {
  if (const auto* t = asked(key).as_table()) return *t;
  if (!t_[key]) fail_missing(key);
  fail(key, "is not a table");
}

std::map<std::string, std::string> TomlFields::sourced_counts(std::span<const std::pair<const char*, double*>> counts,
                                                              double max) const {
  for (const auto& [key, field] : counts) {
    *field = number(key);
    if (*field < 0 || *field > max) {
      std::string what = "must be between 0 and ";
      what += std::to_string(static_cast<long long>(max));
      fail(key, what);
    }
  }
  std::map<std::string, std::string> sources;
  for (const auto& [key, value] : table("sources"))
    if (auto text = value.value<std::string>()) sources[std::string(key.str())] = *text;
  for (const auto& [key, field] : counts)
    if (!sources.count(key)) fail("sources", std::string("has no source for ") + key);
  return sources;
}

toml::node_view<const toml::node> TomlFields::asked(std::string_view key) const {
  if (!asked_.contains(key)) asked_.emplace(key);
  return t_[key];
}

bool TomlFields::has(std::string_view key) const { return static_cast<bool>(asked(key)); }

void TomlFields::refuse_unknown_keys() const {
  for (const auto& [k, v] : t_) {
    if (asked_.contains(k.str())) continue;
    const std::vector<std::string> known(asked_.begin(), asked_.end());
    const std::string guess = nearest(k.str(), known);
    const std::string hint =
        guess.empty() ? std::string(" (no key of that name is read here)") : "; did you mean '" + guess + "'?";
    throw InputError(where_ + ": unknown key '" + std::string(k.str()) + "'" + hint);
  }
}

void TomlFields::fail_missing(std::string_view key) const {
  std::vector<std::string> unread;
  for (const auto& [k, v] : t_)
    if (!asked_.contains(k.str())) unread.emplace_back(k.str());
  const std::string guess = nearest(key, unread);
  fail(key, guess.empty() ? "is missing" : "is missing ('" + guess + "' looks like a misspelling of it)");
}

void TomlFields::fail(std::string_view key, std::string_view what) const {
  throw InputError(where_ + ": field '" + std::string(key) + "' " + std::string(what));
}

}  // namespace perfcast
