// Shared by the tests that check a refusal: the message of the InputError predict() throws for a request, or ""
// when it predicts.
#pragma once

#include <string>

#include "analysis/predict.h"
#include "core/error.h"

namespace perfcast::predict_test {

inline std::string error_of(const PredictRequest& r) {
  try {
    predict(r);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace perfcast::predict_test
