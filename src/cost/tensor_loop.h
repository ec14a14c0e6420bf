// The main loop of a tensor-core GEMM or implicit-GEMM convolution on one architecture (data/architectures.toml
// tensor_step_bytes, tensor_pipeline_stages): how much of K one step loads and how many steps ahead its loads go.
#pragma once

namespace perfcast {

struct TensorLoopSpec {
  double step_bytes = 0;  // bytes of K per operand row one main-loop step loads (0 = no K-loop floor)
  double stages = 0;      // shared-memory stages in flight: a step's loads are issued stages - 1 steps ahead
};

// The spec of architecture sm_version as data/architectures.toml gives it (zeros where it gives none).
const TensorLoopSpec& tensor_loop_spec(int sm_version);

}  // namespace perfcast
