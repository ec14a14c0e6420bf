// `perfcast op --configs IN.csv`: one single-op prediction per row. Bad rows get a status; the file never fails
// as a whole once its header is read.
#pragma once

#include <string>

namespace perfcast {

struct OpBatchResult {
  std::string csv;  // the input columns plus predicted_us, algorithm, bound, status
  int ok = 0, failed = 0;
};

// Columns (any order; empty where they do not apply): gpu, op, precision, direction, m, n, k, a_trans, b_trans
// (N or T, checked and passed through: either layout is costed the same),
// batch_count, conv_n, conv_c, conv_h, conv_w, conv_k, conv_r, conv_s, pad_h, pad_w, stride_h, stride_w, rows,
// cols; optional function, runtime, conv_algo (autotune | heuristic; empty = the runtime's default). Throws InputError only when the header lacks gpu or op.
OpBatchResult predict_op_configs(const std::string& csv_text);

}  // namespace perfcast
