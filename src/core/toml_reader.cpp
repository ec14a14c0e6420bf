#include "core/toml_reader.h"

#include <cmath>

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
  auto node = t_[key];
  if (auto v = node.value<double>()) {
    if (!std::isfinite(*v)) fail(key, "must be a finite number");
    return *v;
  }
  fail(key, node ? "is not a number" : "is missing");
}

int TomlFields::count(std::string_view key, int max) const {
  const double v = number(key);
  if (v < 0 || v > max || v != std::floor(v)) fail(key, "must be a whole number from 0 to " + std::to_string(max));
  return static_cast<int>(v);
}

double TomlFields::number_or(std::string_view key, double fallback) const {
  auto node = t_[key];
  if (!node) return fallback;
  return number(key);
}

bool TomlFields::boolean(std::string_view key) const {
  auto node = t_[key];
  if (auto v = node.value<bool>()) return *v;
  fail(key, node ? "is not true/false" : "is missing");
}

std::string TomlFields::text(std::string_view key) const {
  auto node = t_[key];
  if (auto v = node.value<std::string>()) return *v;
  fail(key, node ? "is not a string" : "is missing");
}

std::string TomlFields::text_or(std::string_view key, std::string fallback) const {
  auto node = t_[key];
  if (!node) return fallback;
  return text(key);
}

const toml::table& TomlFields::table(std::string_view key) const {
  if (const auto* t = t_[key].as_table()) return *t;
  fail(key, "is missing or not a table");
}

void TomlFields::fail(std::string_view key, std::string_view what) const {
  throw InputError(where_ + ": field '" + std::string(key) + "' " + std::string(what));
}

}  // namespace perfcast
