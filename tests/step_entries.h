// Finding entries of a predicted step in tests.
#pragma once

#include <gtest/gtest.h>

#include "analysis/predict.h"

namespace perfcast::test {

// The first attention core entry of a phase (a test failure when there is none).
inline const OpCost& attention_entry(const Prediction& p, Phase phase) {
  for (const auto& e : p.step.entries)
    if (e.kind == OpKind::kAttention && e.phase == phase) return e;
  ADD_FAILURE() << "no attention entry";
  return p.step.entries.front();
}

}  // namespace perfcast::test
