// The error figures of one data/validation file, every row predicted: what the calibration files' ratchet tests read.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/validate.h"
#include "test_paths.h"

namespace perfcast::test {

// Every row of data/validation/<file>; a row perfcast could not predict fails the calling test.
inline ErrorStats validation_file_stats(const std::string& file) {
  const ValidationReport rep = validate_file(std::string(PERFCAST_SOURCE_DIR) + "/data/validation/" + file);
  for (const auto& r : rep.unpredicted) ADD_FAILURE() << file << ": " << r.status;
  std::vector<const ValidationRow*> all;
  for (const auto& r : rep.rows) all.push_back(&r);
  return error_stats(all);
}

}  // namespace perfcast::test
