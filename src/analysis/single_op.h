// One kernel on its own (`perfcast op`, and the kernel fit's predictions of measured kernels): the op is built
// with the graph builder, costed by the same cost model as whole models, and reported with what runs and what
// bounds it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <string>

#include "cost/kernel_cost.h"
#include "cost/precision.h"
#include "device/architecture.h"
#include "device/device_spec.h"
#include "graph/graph.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

// Which op and shape. Fields that do not apply to the op are ignored.
struct OpSpec {
  std::string op = "matmul";  // matmul | linear | conv2d | conv3d | elementwise | softmax | layernorm | attention
  std::string direction = "fwd";  // fwd | bwd (both gradients) | bwd_data | bwd_filter
  // matmul: batch_count x [m,k] x [k,n] (two activations); linear: [m,k] x weight [k,n] (+bias).
  std::int64_t m = 0, n = 0, k = 0, batch_count = 1;
  // No transpose inputs: the graph's matmul has no operand layout, and cuBLAS runs the same tiles for N and T.
  bool bias = true;  // linear only
  // conv2d, NCHW: n images of c x h x w, k filters of c x r x s.
  std::int64_t conv_n = 0, conv_c = 0, conv_h = 0, conv_w = 0, conv_k = 0, conv_r = 0, conv_s = 0;
  std::int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  // conv3d, NCDHW: the conv2d fields plus the input depth d and the filter depth t (cuDNN's KCTRS filter layout).
  std::int64_t conv_d = 0, conv_t = 0, pad_d = 0, stride_d = 1;
  // elementwise / softmax / layernorm over a rows x cols tensor; `function` names the elementwise op
  // (add, mul, div, pow: two tensors; relu, gelu, tanh, scale: one).
  std::int64_t rows = 0, cols = 0;
  std::string function = "add";
  // attention core: batch_count x heads, q_len x kv_len, head_dim (m = q_len, n = kv_len, k = head_dim).
  std::int64_t heads = 1;
  bool causal = false;
};

// What a device, runtime and precision make of ops (built once, used for many ops).
struct OpContext {
  DeviceSpec device;
  ArchitectureProfile arch;
  RuntimeProfile runtime;
  PrecisionPlan plan;
  std::string_view forced_conv_algorithm;  // CostContext::forced_conv_algorithm (fit-kernels --fit-conv only)
  bool conv_autotune = false;              // CostContext::conv_autotune (op_context sets the runtime's default)
};

// Resolves `gpu` (catalog id or file), `runtime` and `precision` as `perfcast predict` does; `power_limit_w` > 0
// replaces the board limit. Throws InputError / UnsupportedError as predict would.
// `training`: the precision as training runs it (backward directions); forward ops resolve it as inference does
// (int8 and fp8 run only there).
OpContext op_context(const std::string& gpu, const std::string& runtime, const std::string& precision,
                     double power_limit_w = 0, bool training = false);

struct OpPrediction {
  KernelCost cost;  // total over the op's kernels (time_us, flops, bytes, launches, bound, algorithm)
  double tflops() const { return cost.time_us > 0 ? cost.flops / cost.time_us * 1e-6 : 0; }
  double gbps() const { return cost.time_us > 0 ? cost.bytes / cost.time_us * 1e-3 : 0; }
};

// An op built once and costed many times (the kernel fit costs each measured kernel under many parameter sets).
struct PreparedOp {
  Graph graph;
  std::size_t index = 0;
  std::string direction;
};
PreparedOp prepare_op(const OpSpec& spec);
OpPrediction predict_prepared(PreparedOp& op, const OpContext& ctx, const KernelCostModel& kernels);

// Predicts one op. Throws InputError on a shape that is not an op (zero or negative sizes, unknown op or
// direction) and UnsupportedError on an op the device/runtime cannot run.
OpPrediction predict_op(const OpSpec& spec, const OpContext& ctx, const KernelCostModel& kernels);
OpPrediction predict_op(const OpSpec& spec, const OpContext& ctx);

}  // namespace perfcast
