#include "analysis/predict.h"
#include "core/error.h"

namespace perfcast {

void apply_input_pipeline(Prediction& p, const Graph&) {
  if (p.request.data != "synthetic")
    throw UnsupportedError("data=" + p.request.data + " needs the input-pipeline model, not built yet");
}

}  // namespace perfcast
