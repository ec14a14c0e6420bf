// One name per fact in every command's --json (docs/json.md). Where two commands named one fact two ways, the
// name most commands used (or the clearer) was kept and the other command's old name is written beside it, with
// the same value, for one release: a deprecated alias that docs/json.md lists.
#pragma once

#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfcast {

// A key renamed to the name the other commands use: `old_key` still appears beside `key` with the same value.
struct DeprecatedKey {
  std::string_view old_key;  // the name this command used before session 38
  std::string_view key;      // the name every command uses now
  std::string_view where;    // the outputs that still write old_key
};

// Every deprecated alias, for the docs and the tests.
std::span<const DeprecatedKey> deprecated_keys();

// j[key] = value, and j[old_key] = value where deprecated_keys() lists old_key as an alias of key (an assertion
// holds that it does, so no alias is written that the docs do not list).
void put_with_alias(nlohmann::json& j, std::string_view key, std::string_view old_key, const nlohmann::json& value);
// The same where the new key writes null for a figure that does not exist and the alias keeps the value it had
// before the rename (0 or ""), so that readers of the old name see what they saw (docs/json.md).
void put_with_alias(nlohmann::json& j, std::string_view key, std::string_view old_key, const nlohmann::json& value,
                    const nlohmann::json& old_value);

}  // namespace perfcast
