#include "analysis/predict.h"
#include "core/error.h"

namespace perfcast {

void apply_data_parallel(Prediction& p, const Graph&) {
  const int n = p.request.gpus * p.request.nodes;
  if (n > 1) throw UnsupportedError("multi-GPU data parallelism is not modelled yet (" + std::to_string(n) + " GPUs)");
}

}  // namespace perfcast
