// "The nearest SM version at or below": per-architecture tables list some compute capabilities, and a GPU takes
// the row of the newest one not newer than itself (sm_86 takes sm_80's row when sm_86 is not listed).
#pragma once

#include <iterator>

namespace perfcast {

// The element of `items` whose sm_of(element) is the largest at or below `sm`, or nullptr when all are above it.
template <class Range, class SmOf>
auto nearest_sm_at_or_below(const Range& items, int sm, SmOf sm_of) -> decltype(&*std::begin(items)) {
  decltype(&*std::begin(items)) best = nullptr;
  for (const auto& item : items)
    if (sm_of(item) <= sm && (!best || sm_of(item) > sm_of(*best))) best = &item;
  return best;
}

}  // namespace perfcast
