// Looking an entry up in a catalog by its id, with a "did you mean" for typos.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace perfcast {

// The entry whose `key` member (its id by default) equals `id`; InputError "unknown <what> 'x'" with the
// nearest id otherwise.
template <typename T>
const T& find_by_id(const std::vector<T>& items, std::string_view id, std::string_view what,
                    std::string T::*key = &T::id) {
  std::vector<std::string> ids;
  for (const auto& item : items) {
    if (item.*key == id) return item;
    ids.push_back(item.*key);
  }
  throw_unknown(what, id, ids);
}

}  // namespace perfcast
