#include "analysis/predict.h"
#include "core/error.h"

namespace perfcast {

Prediction predict_llm(const PredictRequest& request) {
  throw UnsupportedError("--mode " + request.mode + " (LLM serving) is not built yet");
}

}  // namespace perfcast
