// A model graph from a PyTorch profiler trace recorded with record_shapes=True: the forward operators of the
// first profiled step, with the shapes the trace recorded, become perfcast ops; the cost model then derives
// backward and the update itself, so the same graph can be predicted on any GPU, precision or batch.
//
// Which events are the forward ops: the aten:: operators on the thread that ran the profiler steps, outside
// backward (autograd::engine::evaluate_function, *Backward*) and optimizer (Optimizer.*) spans, and not nested in
// another aten:: operator (aten::linear, not the aten::addmm it calls). Kineto records no tensor identities,
// so an op's producer is the latest earlier op whose output has the op's input shape (else the op just before).
// The batch is the first dimension of the first costed op's input; another --batch rescales every activation
// whose first dimension is a multiple of it (the ONNX importer's rule). Operators with no cost rule are listed in
// ModelSource.uncosted; views, casts and copies are skipped (casts are part of the precision model).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/error.h"
#include "core/limits.h"
#include "graph/builder.h"
#include "import/kineto_trace.h"
#include "import/model_source.h"
#include "import/trace_model.h"

namespace perfcast {

namespace {

using Shape = std::vector<std::int64_t>;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// Spans whose operators are not forward ops.
bool excluded_span(std::string_view name) {
  return starts_with(name, "Optimizer.") || contains(name, "evaluate_function") || contains(name, "Backward") ||
         starts_with(name, "autograd::") || contains(name, "zero_grad") || starts_with(name, "aten::backward") ||
         starts_with(name, "nccl:") || starts_with(name, "c10d::");
}

// Operators that launch no kernel of their own, or that the precision model already accounts for.
const std::set<std::string_view>& skipped_ops() {
  static const std::set<std::string_view> s = {
      "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::permute", "aten::transpose", "aten::t",
      "aten::expand", "aten::expand_as", "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::select",
      "aten::flatten", "aten::contiguous", "aten::detach", "aten::detach_", "aten::empty", "aten::empty_like",
      "aten::empty_strided", "aten::zeros", "aten::zeros_like", "aten::ones", "aten::ones_like", "aten::as_strided",
      "aten::split", "aten::split_with_sizes", "aten::chunk", "aten::narrow", "aten::to", "aten::_to_copy",
      "aten::copy_", "aten::clone", "aten::zero_", "aten::fill_", "aten::lift_fresh", "aten::alias", "aten::size",
      "aten::stride", "aten::item", "aten::_local_scalar_dense", "aten::resize_", "aten::is_nonzero",
      "aten::result_type", "aten::_unsafe_view", "aten::unbind", "aten::arange", "aten::full", "aten::rand",
      "aten::randn", "aten::uniform_", "aten::normal_", "aten::set_", "aten::numpy_T", "aten::type_as",
      "aten::record_stream", "aten::lift", "aten::new_empty", "aten::new_zeros", "aten::scalar_tensor",
      "aten::_has_compatible_shallow_copy_type", "aten::resolve_conj", "aten::resolve_neg", "aten::view_as",
      "aten::broadcast_tensors"};  // expanded views of its inputs: no kernel
  return s;
}

// FBGEMM's table-batched embedding forward (TorchRec's sharded EmbeddingBagCollection):
// fbgemm::split_embedding_codegen_lookup_<optimizer>_function. Its backward and the table update run in the
// autograd span of the same function and are derived by the cost model.
bool is_tbe_lookup(std::string_view name) {
  return starts_with(name, "fbgemm::split_embedding_codegen_lookup_") && name.ends_with("_function");
}

// "[1, 2]" or "2" -> {1, 2} / {2}; empty when the text is not a list of integers (floats, names, overflow).
Shape parse_int_list(const std::string& s) {
  Shape out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '[' || c == ']' || c == ',' || c == ' ' || c == '(' || c == ')') {
      ++i;
      continue;
    }
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec != std::errc() || ptr == s.data() + i) return {};
    i = static_cast<std::size_t>(ptr - s.data());
    if (i < s.size() && s[i] != ',' && s[i] != ']' && s[i] != ' ' && s[i] != ')') return {};  // 1e-05, 1.5
    out.push_back(v);
  }
  return out;
}

// True when a concrete input is the literal True.
bool concrete_true(const TraceCpuOp& op, std::size_t index) {
  return index < op.concrete_inputs.size() && op.concrete_inputs[index] == "True";
}

// Recorded dimensions a kernel could have: positive and below 2^40 elements per dimension.
// Every dimension positive and the element total within data/limits.toml, so that products over it fit 64 bits.
bool plausible(const Shape& d) {
  const InputLimits& lim = input_limits();
  if (static_cast<std::int64_t>(d.size()) > lim.max_rank) return false;
  std::int64_t total = 1;
  for (auto v : d) {
    if (v <= 0 || v > lim.max_dim || total > lim.max_elements / v) return false;
    total *= v;
  }
  return true;
}

// Spatial parameters (stride, dilation, kernel, groups) must be at least 1; padding at least 0.
bool at_least(const Shape& d, std::int64_t lo) {
  for (auto v : d)
    if (v < lo || v > (std::int64_t{1} << 20)) return false;
  return true;
}

std::optional<Shape> concrete_list(const TraceCpuOp& op, std::size_t index) {
  if (index >= op.concrete_inputs.size()) return std::nullopt;
  Shape v = parse_int_list(op.concrete_inputs[index]);
  if (v.empty()) return std::nullopt;
  return v;
}

const Shape& dims_at(const TraceCpuOp& op, std::size_t i) {
  static const Shape kEmpty;
  return i < op.input_dims.size() ? op.input_dims[i] : kEmpty;
}

std::int64_t product(const Shape& s) {
  std::int64_t p = 1;
  for (auto v : s) p *= v;
  return p;
}

// The forward operators of the first step, in time order.
struct ForwardOps {
  std::vector<TraceCpuOp> ops;
  std::vector<std::size_t> source;  // index of each op in KinetoTrace::cpu_ops
  std::int64_t tid = 0;
  bool has_shapes = false;
  std::string path;
};

ForwardOps select_forward_ops(const KinetoTrace& t) {
  // The main thread: the one that ran the profiler steps, else the one with the most aten ops.
  std::map<std::int64_t, int> aten_count;
  for (const auto& op : t.cpu_ops)
    if (starts_with(op.name, "aten::")) ++aten_count[op.tid];
  ForwardOps f;
  if (aten_count.empty()) return f;
  f.tid = std::max_element(aten_count.begin(), aten_count.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; })
              ->first;
  double lo = -1e300, hi = 1e300;
  const auto first_step = std::find_if(t.steps.begin(), t.steps.end(), [](const TraceStep& st) { return st.dur_us > 0; });
  if (first_step != t.steps.end()) {
    lo = first_step->ts_us;
    hi = lo + first_step->dur_us;
    // The thread with the most aten ops inside the first step (the step marker may be on another thread).
    std::map<std::int64_t, int> in_step;
    for (const auto& op : t.cpu_ops)
      if (starts_with(op.name, "aten::") && op.ts_us >= lo && op.ts_us <= hi) ++in_step[op.tid];
    if (!in_step.empty())
      f.tid = std::max_element(in_step.begin(), in_step.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; })
                  ->first;
  }
  std::vector<const TraceCpuOp*> on_thread;
  for (const auto& op : t.cpu_ops)
    if (op.tid == f.tid && op.ts_us >= lo && op.ts_us <= hi) on_thread.push_back(&op);
  std::stable_sort(on_thread.begin(), on_thread.end(), [](const TraceCpuOp* a, const TraceCpuOp* b) {
    return a->ts_us != b->ts_us ? a->ts_us < b->ts_us : a->dur_us > b->dur_us;
  });
  // Nesting by time: a stack of the enclosing events.
  std::vector<const TraceCpuOp*> stack;
  for (const TraceCpuOp* op : on_thread) {
    while (!stack.empty() && stack.back()->ts_us + stack.back()->dur_us <= op->ts_us) stack.pop_back();
    bool excluded = excluded_span(op->name), inside_aten = false;
    for (const TraceCpuOp* s : stack) {
      if (excluded_span(s->name)) excluded = true;
      if (starts_with(s->name, "aten::")) inside_aten = true;
    }
    if (!excluded && !inside_aten && (starts_with(op->name, "aten::") || is_tbe_lookup(op->name))) {
      f.ops.push_back(*op);
      f.source.push_back(static_cast<std::size_t>(op - t.cpu_ops.data()));
      if (!op->input_dims.empty()) f.has_shapes = true;
    }
    stack.push_back(op);
  }
  return f;
}

// Builds the graph at `batch` from the forward ops traced at `traced_batch`.
class TraceGraphBuilder {
 public:
  TraceGraphBuilder(const ForwardOps& f, std::int64_t traced_batch, std::int64_t batch, const std::string& id)
      : f_(f), traced_(traced_batch), batch_(batch), b_(id, batch) {}

  Graph build(std::map<std::string, int>* uncosted, int* skipped) {
    const auto& ops = f_.ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const TraceCpuOp& op = ops[i];
      const TraceCpuOp* next = i + 1 < ops.size() ? &ops[i + 1] : nullptr;
      if (skipped_ops().count(op.name)) {
        if (skipped) ++*skipped;
        continue;
      }
      // A table-batched lookup's flattened tables exceed any one activation dimension: add_tbe checks its sizes.
      bool ok = is_tbe_lookup(op.name) || std::all_of(op.input_dims.begin(), op.input_dims.end(), plausible);
      if (ok) {
        try {
          name_ = trace_op_name(op.name, i);
          ok = add(op, next);
        } catch (const InputError&) {
          ok = false;  // shapes the builder rejects (an output size that is not positive, ...)
        }
      }
      // Older traces record a TensorList input (cat, stack) as an empty list: say so beside the name.
      const bool list_unrecorded = op.input_lists.empty() &&
                                   std::find(op.input_types.begin(), op.input_types.end(), "TensorList") !=
                                       op.input_types.end();
      if (!ok && uncosted) ++(*uncosted)[list_unrecorded ? op.name + " (its tensor list's shapes not recorded)" : op.name];
    }
    if (first_ && !costed_) throw InputError("trace '" + f_.path + "' has no forward operator perfcast can cost");
    return b_.finish();
  }

  // The first dimension of the first costed op's input (0 before any): the traced batch.
  std::int64_t first_batch() const { return first_batch_; }

 private:
  Shape scaled(Shape d) const {
    if (!d.empty() && traced_ > 0 && d[0] % traced_ == 0) d[0] = d[0] / traced_ * batch_;
    return d;
  }

  // The activation tensor with (scaled) shape `d`: produced by the latest op with that output shape, else by the
  // op just before; the first op reads the graph input.
  Tensor activation(const Shape& traced_dims) {
    Shape d = scaled(traced_dims);
    if (first_ && !sets_batch_) return Tensor{-1, d};  // bookkeeping before the model (index sums, cat of ids)
    if (first_) {
      first_ = false;
      first_batch_ = traced_dims.empty() ? 1 : traced_dims[0];
      Shape rest(d.begin() + (d.empty() ? 0 : 1), d.end());
      Tensor in = b_.input(rest, input_bytes_);
      in.shape = d;
      return in;
    }
    for (int k = static_cast<int>(outputs_.size()) - 1, seen = 0; k >= 0 && seen < 8; --k, ++seen)
      if (outputs_[k].shape == d) return Tensor{outputs_[k].id, d};
    return Tensor{outputs_.empty() ? -1 : outputs_.back().id, d};
  }

  void produced(const Tensor& t) { outputs_.push_back(t); }

  // Output spatial size of a conv/pool from the next op's input when it has the same rank (Kineto records no
  // output shapes).
  static std::optional<Shape> next_spatial(const TraceCpuOp* next, std::size_t rank, std::int64_t channels) {
    if (next == nullptr || next->input_dims.empty()) return std::nullopt;
    const Shape& d = next->input_dims[0];
    if (d.size() != rank || (channels > 0 && d[1] != channels)) return std::nullopt;
    return Shape(d.begin() + 2, d.end());
  }

  // FBGEMM lookup_*_function arguments (fbgemm_gpu codegen embedding_backward_split_host_template.cpp):
  // 1 dev_weights, 2 uvm_weights (flattened tables on the device / in host memory), 6 D_offsets (tables + 1),
  // 11 indices, 12 offsets (bags + 1, bags = tables x samples), 20 momentum1_dev (one FP32 per row for row-wise
  // Adagrad). Row length = table elements / rows when the rows are known, else from the lookup volume.
  bool add_tbe(const TraceCpuOp& op) {
    if (op.input_dims.size() < 13) return false;
    const auto elems_at = [&](std::size_t i) { return dims_at(op, i).size() == 1 ? dims_at(op, i)[0] : 0; };
    const std::int64_t dev = elems_at(1), uvm = elems_at(2), d_offsets = elems_at(6);
    const std::int64_t lookups = elems_at(11), offsets = elems_at(12);
    const std::int64_t tables = d_offsets - 1;
    const InputLimits& lim = input_limits();
    for (std::int64_t v : {dev, uvm, lookups, offsets, d_offsets})
      if (v < 0 || v > lim.max_elements) return false;
    if (tables <= 0 || offsets <= 1 || lookups <= 0 || dev + uvm <= 0 || (offsets - 1) % tables != 0) return false;
    const std::int64_t bags = (offsets - 1) / tables;  // samples each table pools for (the global batch when sharded)
    const bool adagrad = op.name.find("rowwise_adagrad") != std::string::npos;
    std::int64_t rows = adagrad ? elems_at(20) : 0;
    if (rows <= 0) rows = std::max<std::int64_t>(1, lookups);  // rows not recorded: at least one per lookup
    const std::int64_t dim = std::max<std::int64_t>(1, (dev + uvm) / rows);
    const std::string type = op.input_types.size() > 1 ? op.input_types[uvm > dev ? 2 : 1] : "float";
    std::vector<std::int64_t> table_rows(static_cast<std::size_t>(tables), std::max<std::int64_t>(1, rows / tables));
    std::vector<double> pooling(static_cast<std::size_t>(tables),
                                static_cast<double>(lookups) / static_cast<double>(offsets - 1));
    const EmbeddingOptimizer opt = adagrad ? EmbeddingOptimizer::kRowwiseAdagrad : EmbeddingOptimizer::kSgd;
    const Tensor ids{-1, {lookups}};
    const std::int64_t scaled_bags = scaled({bags})[0];
    Tensor out = b_.embedding_bag(ids, std::move(table_rows), std::move(pooling), dim, opt, name_, scaled_bags);
    Graph& g = b_.graph_for_update();
    Op& added = g.ops.back();
    added.bag.table_elem_bytes = type == "c10::Half" || type == "c10::BFloat16" ? 2.0 : type == "unsigned char" ? 1.0 : 4.0;
    produced(out);
    return true;
  }

  // One aten:: operator's rule: adds its op(s) at the traced shapes; false when the shapes do not fit it (the
  // operator is then listed as uncosted). `d0` is the first input's shape, never empty here.
  using Handler = bool (TraceGraphBuilder::*)(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next);
  struct AtenRule {
    std::string_view name;
    Handler handler;
  };

  // The aten:: operators perfcast costs, each with its handler (in-place variants share their operator's).
  static const std::unordered_map<std::string_view, Handler>& aten_rules() {
    static constexpr AtenRule kRules[] = {
        {"aten::embedding", &TraceGraphBuilder::add_embedding},
        {"aten::linear", &TraceGraphBuilder::add_linear},
        {"aten::addmm", &TraceGraphBuilder::add_addmm},
        {"aten::mm", &TraceGraphBuilder::add_mm},
        {"aten::matmul", &TraceGraphBuilder::add_matmul},
        {"aten::bmm", &TraceGraphBuilder::add_bmm},
        {"aten::baddbmm", &TraceGraphBuilder::add_bmm},
        {"aten::conv1d", &TraceGraphBuilder::add_conv},
        {"aten::conv2d", &TraceGraphBuilder::add_conv},
        {"aten::conv3d", &TraceGraphBuilder::add_conv},
        {"aten::convolution", &TraceGraphBuilder::add_conv},
        {"aten::_convolution", &TraceGraphBuilder::add_conv},
        {"aten::cudnn_convolution", &TraceGraphBuilder::add_conv},
        {"aten::conv_transpose1d", &TraceGraphBuilder::add_conv_transpose},
        {"aten::conv_transpose2d", &TraceGraphBuilder::add_conv_transpose},
        {"aten::conv_transpose3d", &TraceGraphBuilder::add_conv_transpose},
        {"aten::batch_norm", &TraceGraphBuilder::add_batch_norm},
        {"aten::cudnn_batch_norm", &TraceGraphBuilder::add_batch_norm},
        {"aten::native_batch_norm", &TraceGraphBuilder::add_batch_norm},
        {"aten::_batch_norm_impl_index", &TraceGraphBuilder::add_batch_norm},
        {"aten::layer_norm", &TraceGraphBuilder::add_layer_norm},
        {"aten::native_layer_norm", &TraceGraphBuilder::add_layer_norm},
        {"aten::rms_norm", &TraceGraphBuilder::add_rms_norm},
        {"aten::group_norm", &TraceGraphBuilder::add_group_norm},
        {"aten::instance_norm", &TraceGraphBuilder::add_instance_norm},
        {"aten::relu6", &TraceGraphBuilder::add_relu6},
        {"aten::hardtanh", &TraceGraphBuilder::add_relu6},
        {"aten::hardtanh_", &TraceGraphBuilder::add_relu6},
        {"aten::gelu", &TraceGraphBuilder::add_gelu},
        {"aten::gelu_", &TraceGraphBuilder::add_gelu},
        {"aten::silu", &TraceGraphBuilder::add_silu},
        {"aten::silu_", &TraceGraphBuilder::add_silu},
        {"aten::sigmoid", &TraceGraphBuilder::add_sigmoid},
        {"aten::sigmoid_", &TraceGraphBuilder::add_sigmoid},
        {"aten::tanh", &TraceGraphBuilder::add_tanh},
        {"aten::tanh_", &TraceGraphBuilder::add_tanh},
        {"aten::hardswish", &TraceGraphBuilder::add_hardswish},
        {"aten::hardswish_", &TraceGraphBuilder::add_hardswish},
        {"aten::hardsigmoid", &TraceGraphBuilder::add_hardsigmoid},
        {"aten::hardsigmoid_", &TraceGraphBuilder::add_hardsigmoid},
        {"aten::dropout", &TraceGraphBuilder::add_dropout},
        {"aten::dropout_", &TraceGraphBuilder::add_dropout},
        {"aten::native_dropout", &TraceGraphBuilder::add_dropout},
        {"aten::feature_dropout", &TraceGraphBuilder::add_dropout},
        // Binary: a same-sized second tensor is read too.
        {"aten::add", &TraceGraphBuilder::add_binary},
        {"aten::add_", &TraceGraphBuilder::add_binary},
        {"aten::sub", &TraceGraphBuilder::add_binary},
        {"aten::sub_", &TraceGraphBuilder::add_binary},
        {"aten::div", &TraceGraphBuilder::add_binary},
        {"aten::div_", &TraceGraphBuilder::add_binary},
        {"aten::mul", &TraceGraphBuilder::add_binary},
        {"aten::mul_", &TraceGraphBuilder::add_binary},
        {"aten::where", &TraceGraphBuilder::add_binary},
        {"aten::pow", &TraceGraphBuilder::add_binary},
        {"aten::rsqrt", &TraceGraphBuilder::add_binary},
        {"aten::exp", &TraceGraphBuilder::add_binary},
        {"aten::neg", &TraceGraphBuilder::add_binary},
        {"aten::masked_fill", &TraceGraphBuilder::add_binary},
        {"aten::masked_fill_", &TraceGraphBuilder::add_binary},
        // One-input elementwise kernels: one read and one write per element (ReLU's cost).
        {"aten::relu", &TraceGraphBuilder::add_unary},
        {"aten::relu_", &TraceGraphBuilder::add_unary},
        {"aten::threshold", &TraceGraphBuilder::add_unary},
        {"aten::leaky_relu", &TraceGraphBuilder::add_unary},
        {"aten::leaky_relu_", &TraceGraphBuilder::add_unary},
        {"aten::elu", &TraceGraphBuilder::add_unary},
        {"aten::clamp", &TraceGraphBuilder::add_unary},
        {"aten::clamp_", &TraceGraphBuilder::add_unary},
        {"aten::clamp_min", &TraceGraphBuilder::add_unary},
        {"aten::clamp_max", &TraceGraphBuilder::add_unary},
        {"aten::log", &TraceGraphBuilder::add_unary},
        {"aten::log2", &TraceGraphBuilder::add_unary},
        {"aten::sqrt", &TraceGraphBuilder::add_unary},
        {"aten::square", &TraceGraphBuilder::add_unary},
        {"aten::abs", &TraceGraphBuilder::add_unary},
        {"aten::rsub", &TraceGraphBuilder::add_unary},
        {"aten::nan_to_num", &TraceGraphBuilder::add_unary},
        {"aten::logit", &TraceGraphBuilder::add_unary},
        {"aten::reciprocal", &TraceGraphBuilder::add_unary},
        {"aten::erf", &TraceGraphBuilder::add_unary},
        {"aten::cos", &TraceGraphBuilder::add_unary},
        {"aten::sin", &TraceGraphBuilder::add_unary},
        {"aten::eq", &TraceGraphBuilder::add_unary},
        {"aten::ne", &TraceGraphBuilder::add_unary},
        {"aten::lt", &TraceGraphBuilder::add_unary},
        {"aten::le", &TraceGraphBuilder::add_unary},
        {"aten::gt", &TraceGraphBuilder::add_unary},
        {"aten::ge", &TraceGraphBuilder::add_unary},
        {"aten::floor", &TraceGraphBuilder::add_unary},
        {"aten::sign", &TraceGraphBuilder::add_unary},
        {"aten::round", &TraceGraphBuilder::add_unary},
        {"aten::softmax", &TraceGraphBuilder::add_softmax},
        {"aten::_softmax", &TraceGraphBuilder::add_softmax},
        {"aten::log_softmax", &TraceGraphBuilder::add_softmax},
        {"aten::_log_softmax", &TraceGraphBuilder::add_softmax},
        {"aten::max_pool1d", &TraceGraphBuilder::add_pool},
        {"aten::max_pool2d", &TraceGraphBuilder::add_pool},
        {"aten::max_pool3d", &TraceGraphBuilder::add_pool},
        {"aten::max_pool2d_with_indices", &TraceGraphBuilder::add_pool},
        {"aten::avg_pool1d", &TraceGraphBuilder::add_pool},
        {"aten::avg_pool2d", &TraceGraphBuilder::add_pool},
        {"aten::avg_pool3d", &TraceGraphBuilder::add_pool},
        {"aten::adaptive_avg_pool1d", &TraceGraphBuilder::add_pool},
        {"aten::adaptive_avg_pool2d", &TraceGraphBuilder::add_pool},
        {"aten::adaptive_avg_pool3d", &TraceGraphBuilder::add_pool},
        {"aten::adaptive_max_pool2d", &TraceGraphBuilder::add_pool},
        {"aten::scaled_dot_product_attention", &TraceGraphBuilder::add_sdpa},
        {"aten::_scaled_dot_product_flash_attention", &TraceGraphBuilder::add_sdpa},
        {"aten::_scaled_dot_product_efficient_attention", &TraceGraphBuilder::add_sdpa},
        {"aten::_scaled_dot_product_cudnn_attention", &TraceGraphBuilder::add_sdpa},
        {"aten::cross_entropy_loss", &TraceGraphBuilder::add_cross_entropy},
        {"aten::nll_loss", &TraceGraphBuilder::add_cross_entropy},
        {"aten::nll_loss_nd", &TraceGraphBuilder::add_cross_entropy},
        {"aten::binary_cross_entropy_with_logits", &TraceGraphBuilder::add_cross_entropy},
        {"aten::max_pool1d_with_indices", &TraceGraphBuilder::add_pool},
        {"aten::max_pool3d_with_indices", &TraceGraphBuilder::add_pool},
        // Memory-bound passes: bytes read + written at the streaming rate (kDataMovement, as the zoo's concat and
        // upsample); backward (slices of the gradient, its broadcast back, the interpolation's scatter) moves the
        // same bytes (op_arithmetic.cpp backward_work).
        {"aten::cat", &TraceGraphBuilder::add_concat},
        {"aten::concat", &TraceGraphBuilder::add_concat},
        {"aten::concatenate", &TraceGraphBuilder::add_concat},
        {"aten::stack", &TraceGraphBuilder::add_concat},
        {"aten::sum", &TraceGraphBuilder::add_reduction},
        {"aten::mean", &TraceGraphBuilder::add_reduction},
        {"aten::amax", &TraceGraphBuilder::add_reduction},
        {"aten::amin", &TraceGraphBuilder::add_reduction},
        {"aten::prod", &TraceGraphBuilder::add_reduction},
        {"aten::logsumexp", &TraceGraphBuilder::add_reduction},
        {"aten::linalg_vector_norm", &TraceGraphBuilder::add_reduction},
        {"aten::norm", &TraceGraphBuilder::add_reduction},
        {"aten::std", &TraceGraphBuilder::add_reduction},
        {"aten::var", &TraceGraphBuilder::add_reduction},
        {"aten::max", &TraceGraphBuilder::add_max_min},
        {"aten::min", &TraceGraphBuilder::add_max_min},
        {"aten::cumsum", &TraceGraphBuilder::add_scan},
        {"aten::cumprod", &TraceGraphBuilder::add_scan},
        {"aten::index_select", &TraceGraphBuilder::add_index_select},
        {"aten::upsample_nearest1d", &TraceGraphBuilder::add_upsample},
        {"aten::upsample_nearest2d", &TraceGraphBuilder::add_upsample},
        {"aten::upsample_nearest3d", &TraceGraphBuilder::add_upsample},
        {"aten::upsample_linear1d", &TraceGraphBuilder::add_upsample},
        {"aten::upsample_bilinear2d", &TraceGraphBuilder::add_upsample},
        {"aten::upsample_bicubic2d", &TraceGraphBuilder::add_upsample},
        {"aten::upsample_trilinear3d", &TraceGraphBuilder::add_upsample},
        {"aten::mse_loss", &TraceGraphBuilder::add_mse_loss},
        {"aten::l1_loss", &TraceGraphBuilder::add_mse_loss},
        {"aten::smooth_l1_loss", &TraceGraphBuilder::add_mse_loss},
    };
    static const std::unordered_map<std::string_view, Handler> kByName = [] {
      std::unordered_map<std::string_view, Handler> m;
      for (const auto& r : kRules) m.emplace(r.name, r.handler);
      return m;
    }();
    return kByName;
  }

  bool add(const TraceCpuOp& op, const TraceCpuOp* next) {
    if (is_tbe_lookup(op.name)) return add_tbe(op);
    const auto& rules = aten_rules();
    const auto it = rules.find(op.name);
    const Shape& d0 = dims_at(op, 0);
    if (it == rules.end()) return false;
    // A TensorList first input (cat, stack) or an empty first entry (some writers' sum) is found by its handler.
    const bool finds_own_input = it->second == &TraceGraphBuilder::add_concat ||
                                 it->second == &TraceGraphBuilder::add_reduction ||
                                 it->second == &TraceGraphBuilder::add_max_min ||
                                 it->second == &TraceGraphBuilder::add_scan;
    if (d0.empty() && !finds_own_input) return false;
    // The traced batch is the first dimension of the first model op's input; the streaming passes on index and
    // length tensors that often come before it (sums of lengths, cat of ids) do not set it.
    sets_batch_ = !finds_own_input && it->second != &TraceGraphBuilder::add_index_select;
    const bool ok = (this->*(it->second))(op, d0, next);
    if (ok) costed_ = true;
    return ok;
  }

  bool add_embedding(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    const Shape& w = d0;
    const Shape& ids = dims_at(op, 1);
    if (w.size() != 2 || ids.empty()) return false;
    if (first_) {
      input_bytes_ = 8;
      if (ids.size() == 2) b_.set_sequence(ids[1]);
    }
    produced(b_.embedding(activation(ids), w[0], w[1], name_));
    return true;
  }

  bool add_linear(const TraceCpuOp& op, const Shape&, const TraceCpuOp*) {
    // input [..., in], weight [out, in], bias [out]: the first consistent pair (some writers prepend inputs).
    for (std::size_t i = 0; i + 1 < op.input_dims.size(); ++i) {
      const Shape& x = op.input_dims[i];
      const Shape& w = op.input_dims[i + 1];
      if (x.empty() || w.size() != 2 || x.back() != w[1]) continue;
      produced(b_.linear(activation(x), w[0], !dims_at(op, i + 2).empty(), name_));
      return true;
    }
    return false;
  }

  bool add_addmm(const TraceCpuOp& op, const Shape&, const TraceCpuOp*) {
    const Shape& a = dims_at(op, 1);
    const Shape& w = dims_at(op, 2);
    if (a.size() != 2 || w.size() != 2 || a[1] != w[0]) return false;
    produced(b_.linear(activation(a), w[1], true, name_));
    return true;
  }

  bool add_mm(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    const Shape& w = dims_at(op, 1);
    if (w.size() != 2 || d0.back() != w[0]) return false;
    produced(b_.linear(activation(d0), w[1], false, name_));
    return true;
  }

  // aten::matmul by a 2-D second operand is a linear map (mm), else a batched product (bmm).
  bool add_matmul(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next) {
    return dims_at(op, 1).size() == 2 ? add_mm(op, d0, next) : add_bmm(op, d0, next);
  }

  bool add_bmm(const TraceCpuOp& op, const Shape&, const TraceCpuOp*) {
    const std::size_t ia = op.name == "aten::baddbmm" ? 1 : 0;
    const Shape& a = dims_at(op, ia);
    const Shape& bb = dims_at(op, ia + 1);
    if (a.size() < 3 || bb.size() < 3 || a.back() != bb[bb.size() - 2]) return false;
    const Tensor ta = activation(a);
    produced(b_.matmul(ta, Tensor{-1, scaled(bb)}, name_));
    return true;
  }

  bool add_conv(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next) {
    const std::string& n = op.name;
    const Shape& w = dims_at(op, 1);
    if (w.size() != d0.size() || d0.size() < 3 || w[1] <= 0) return false;
    // conv2d(input, weight, bias, stride, padding, dilation, groups); convolution(..., transposed, output_padding,
    // groups); cudnn_convolution(input, weight, padding, stride, dilation, groups, ...) has no bias argument.
    const bool cudnn = n == "aten::cudnn_convolution";
    const bool generic = n == "aten::convolution" || n == "aten::_convolution";
    if (generic && concrete_true(op, 6)) return false;  // transposed
    const std::size_t sd = d0.size() - 2;
    if (d0[1] % w[1] != 0) return false;
    const std::int64_t groups = d0[1] / w[1];
    Shape k(w.begin() + 2, w.end());
    Shape stride = concrete_list(op, cudnn ? 3 : 3).value_or(Shape{});
    Shape pad = concrete_list(op, cudnn ? 2 : 4).value_or(Shape{});
    Shape dil = concrete_list(op, cudnn ? 4 : 5).value_or(Shape{1});
    const bool has_bias = !cudnn && !dims_at(op, 2).empty();
    if (!at_least(dil, 1) || (!stride.empty() && !at_least(stride, 1)) || (!pad.empty() && !at_least(pad, 0)))
      return false;
    if ((stride.size() > 1 && stride.size() != sd) || (pad.size() > 1 && pad.size() != sd) ||
        (dil.size() > 1 && dil.size() != sd))
      return false;
    if (stride.empty() || pad.empty()) {
      // Infer from the next op's input: stride from the size ratio, padding that gives that size.
      stride.assign(sd, 1);
      pad.assign(sd, 0);
      const auto out = next_spatial(next, d0.size(), w[0]);
      for (std::size_t i = 0; i < sd; ++i) {
        const std::int64_t in = d0[2 + i];
        const std::int64_t o = out ? std::max<std::int64_t>(1, (*out)[i]) : in;
        stride[i] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(in) / static_cast<double>(o))));
        pad[i] = std::max<std::int64_t>(0, ((o - 1) * stride[i] + (k[i] - 1) + 1 - in + 1) / 2);
      }
    }
    produced(b_.conv(activation(d0), w[0], k, stride, pad, dil, groups, has_bias, name_));
    return true;
  }

  // conv_transpose{1,2,3}d(input, weight, bias, stride, padding, output_padding, groups, dilation), the
  // upsampling of a U-Net's decoder (torch.nn.ConvTranspose3d: weight [C_in, C_out / groups, kernel...], output
  // (in - 1) x stride - 2 x padding + kernel). The graph's transposed convolution is ungrouped and undilated, with
  // no output padding: another one stays listed as uncosted. Stride and padding from Concrete Inputs, else the
  // stride that gives the next op's input size with no padding (kernel = stride, as U-Nets upsample).
  bool add_conv_transpose(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next) {
    const Shape& w = dims_at(op, 1);
    if (w.size() != d0.size() || d0.size() < 3 || d0.size() > 5 || w[0] != d0[1] || w[1] <= 0) return false;
    const std::size_t sd = d0.size() - 2;
    const auto all = [](const std::optional<Shape>& v, std::int64_t x) {
      return !v || std::all_of(v->begin(), v->end(), [x](std::int64_t e) { return e == x; });
    };
    if (!all(concrete_list(op, 5), 0) || !all(concrete_list(op, 6), 1) || !all(concrete_list(op, 7), 1))
      return false;
    const Shape k(w.begin() + 2, w.end());
    Shape stride = concrete_list(op, 3).value_or(Shape{});
    Shape pad = concrete_list(op, 4).value_or(Shape{});
    if ((stride.size() > 1 && stride.size() != sd) || (pad.size() > 1 && pad.size() != sd) ||
        (!stride.empty() && !at_least(stride, 1)) || (!pad.empty() && !at_least(pad, 0)))
      return false;
    if (stride.empty()) {
      stride.assign(sd, 1);
      const auto out = next_spatial(next, d0.size(), w[1]);
      for (std::size_t i = 0; i < sd && out; ++i)
        stride[i] = std::max<std::int64_t>(1, (*out)[i] / std::max<std::int64_t>(1, d0[2 + i]));
    }
    if (pad.empty()) pad.assign(sd, 0);
    for (std::size_t i = 0; i < sd; ++i) {
      const std::int64_t s = stride.size() == 1 ? stride[0] : stride[i], p = pad.size() == 1 ? pad[0] : pad[i];
      std::int64_t o = 0;  // (in - 1) x stride - 2 x pad + kernel, refused when it overflows or is not positive
      if (__builtin_mul_overflow(d0[2 + i] - 1, s, &o) || __builtin_add_overflow(o, k[i], &o) ||
          p > input_limits().max_dim || o - 2 * p <= 0 || o - 2 * p > input_limits().max_dim)
        return false;
    }
    produced(b_.conv_transpose(activation(d0), w[1], k, stride, pad, !dims_at(op, 2).empty(), name_));
    return true;
  }

  bool add_batch_norm(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.batch_norm(activation(d0), name_));
    return true;
  }

  bool add_layer_norm(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.layer_norm(activation(d0), name_));
    return true;
  }

  bool add_rms_norm(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.rms_norm(activation(d0), name_));
    return true;
  }

  bool add_group_norm(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    const auto g = concrete_list(op, 1);
    const std::int64_t groups = g ? (*g)[0] : 32;
    if (d0.size() < 2 || groups < 1 || d0[1] % groups != 0) return false;
    produced(b_.group_norm(activation(d0), groups, name_));
    return true;
  }

  // instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
  // statistics per sample and channel, the kernels of a group norm with one channel per group (MONAI's default
  // norm in its 3D U-Nets). nn.InstanceNorm3d has no affine weight unless affine=True: no weight, no parameters.
  bool add_instance_norm(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    if (d0.size() < 3 || d0[1] < 1) return false;
    produced(b_.group_norm(activation(d0), d0[1], name_));
    if (dims_at(op, 1).empty()) {
      Op& added = b_.graph_for_update().ops.back();
      added.params = 0;
      added.weight_elems = 0;
    }
    return true;
  }

  bool add_unary(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    produced(b_.relu(activation(d0), op.name.back() == '_', name_));
    return true;
  }

  bool add_relu6(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.relu6(activation(d0), name_));
    return true;
  }

  bool add_gelu(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.gelu(activation(d0), name_));
    return true;
  }

  bool add_silu(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.silu(activation(d0), name_));
    return true;
  }

  bool add_sigmoid(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.sigmoid(activation(d0), name_));
    return true;
  }

  bool add_tanh(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.tanh(activation(d0), name_));
    return true;
  }

  bool add_hardswish(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.hardswish(activation(d0), name_));
    return true;
  }

  bool add_hardsigmoid(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.hardsigmoid(activation(d0), name_));
    return true;
  }

  bool add_dropout(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.dropout(activation(d0), name_));
    return true;
  }

  bool add_binary(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    const Tensor a = activation(d0);
    const Shape& d1 = dims_at(op, 1);
    // A tensor second operand of the same size is read too; a scalar or broadcast one is not counted.
    const Tensor other = !d1.empty() && product(scaled(d1)) == a.elems() ? Tensor{-1, a.shape} : a;
    const bool multiply = op.name.find("mul") != std::string::npos || op.name.find("div") != std::string::npos;
    produced(multiply ? b_.mul(a, other, name_) : b_.add(a, other, name_));
    return true;
  }

  bool add_softmax(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.softmax(activation(d0), name_));
    return true;
  }

  bool add_pool(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next) {
    const std::string& n = op.name;
    if (d0.size() < 3) return false;
    const std::size_t sd = d0.size() - 2;
    const bool adaptive = n.find("adaptive") != std::string::npos;
    const bool is_max = n.find("max") != std::string::npos;
    Shape out;
    if (adaptive) {
      out = concrete_list(op, 1).value_or(Shape{});
      if (out.empty()) out = next_spatial(next, d0.size(), d0[1]).value_or(Shape(sd, 1));
      if (out.size() == 1) out.assign(sd, out[0]);
      if (product(out) == 1) {
        produced(b_.global_avg_pool(activation(d0), name_));
        return true;
      }
    }
    Shape k = adaptive ? Shape{} : concrete_list(op, 1).value_or(Shape{});
    Shape s = adaptive ? Shape{} : concrete_list(op, 2).value_or(Shape{});
    Shape p = adaptive ? Shape{} : concrete_list(op, 3).value_or(Shape{0});
    if (k.empty()) {
      if (out.empty()) out = next_spatial(next, d0.size(), d0[1]).value_or(Shape(sd, 1));
      if (out.size() != sd) return false;
      k.assign(sd, 1);
      for (std::size_t i = 0; i < sd; ++i) k[i] = std::max<std::int64_t>(1, d0[2 + i] / std::max<std::int64_t>(1, out[i]));
      s = k;
      p = {0};
    }
    if (s.empty()) s = k;
    if (!at_least(k, 1) || !at_least(s, 1) || !at_least(p, 0)) return false;
    // max_pool2d(input, kernel, stride, padding, dilation, ceil_mode); avg_pool2d(input, kernel, stride, padding, ceil_mode)
    const bool ceil_mode = concrete_true(op, is_max ? 5 : 4);
    const Tensor x = activation(d0);
    produced(is_max ? b_.max_pool(x, k, s, p, ceil_mode, name_) : b_.avg_pool(x, k, s, p, ceil_mode, name_));
    return true;
  }

  bool add_sdpa(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    const std::string& n = op.name;
    const Shape& k = dims_at(op, 1);
    if (d0.size() != 4 || k.size() != 4) return false;
    // q [B, H, S, D] -> the builder's [B, S, H*D]
    const Tensor q = activation(d0);
    const Shape qs = {q.shape[0], d0[2], d0[1] * d0[3]};
    const Shape ks = {q.shape[0], k[2], k[1] * k[3]};
    if (k[1] < 1 || d0[1] % k[1] != 0) return false;
    // is_causal: scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal),
    // _flash(q, k, v, dropout_p, is_causal), _efficient(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal)
    const std::size_t causal_at = n == "aten::_scaled_dot_product_flash_attention" ? 4
                                  : n == "aten::_scaled_dot_product_efficient_attention" ? 6 : 5;
    produced(b_.attention(Tensor{q.id, qs}, Tensor{-1, ks}, Tensor{-1, ks}, d0[1], k[1], concrete_true(op, causal_at), true, name_));
    return true;
  }

  // cat(tensors, dim) / stack(tensors, dim): the shapes of the TensorList (PyTorch 2.x traces record them; older
  // ones record an empty list, and the op stays uncosted). Reads every input once and writes their sum.
  bool add_concat(const TraceCpuOp& op, const Shape&, const TraceCpuOp*) {
    if (op.input_lists.empty() || op.input_lists[0].empty()) return false;
    const auto& list = op.input_lists[0];
    const Shape& s0 = list[0];
    if (!std::all_of(list.begin(), list.end(), plausible)) return false;
    const bool stack = op.name == "aten::stack";
    const auto rank = static_cast<std::int64_t>(s0.size()) + (stack ? 1 : 0);
    std::int64_t dim = 0;
    if (const auto d = concrete_list(op, 1)) dim = (*d)[0];
    else if (op.concrete_inputs.size() > 1 && op.concrete_inputs[1].starts_with("-")) return false;  // from the end
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank || s0.empty()) return false;
    std::vector<Tensor> xs;
    std::int64_t along = 0;  // stacked tensors
    for (const Shape& s : list) {
      if (s.size() != s0.size()) return false;
      for (std::size_t i = 0; i < s.size(); ++i)
        if (static_cast<std::int64_t>(i) != dim && s[i] != s0[i] && !stack) return false;
      if (stack && s != s0) return false;
      xs.push_back(activation(s));
      ++along;
    }
    Shape out = xs[0].shape;  // at the predicted batch (activation() rescales each input)
    if (stack) {
      out.insert(out.begin() + dim, along);
    } else {
      out[static_cast<std::size_t>(dim)] = 0;
      for (const Tensor& x : xs) out[static_cast<std::size_t>(dim)] += x.shape[static_cast<std::size_t>(dim)];
    }
    produced(b_.streaming_pass(xs, out, name_, stack ? "stack" : "concat"));
    return true;
  }

  // The tensor an op reads: its first input with a shape (some writers record an empty first entry).
  static const Shape* first_shape(const TraceCpuOp& op, std::size_t* at = nullptr) {
    for (std::size_t i = 0; i < op.input_dims.size(); ++i)
      if (!op.input_dims[i].empty()) {
        if (at) *at = i;
        return &op.input_dims[i];
      }
    return nullptr;
  }

  // sum / mean / amax / norm (self, dim, keepdim, ...): reads the input once, writes the reduced tensor. The dims
  // from Concrete Inputs; where the trace holds none (older traces, or sum(self) with no dim) the whole tensor is
  // reduced: the output is then one element, which understates the write of a partial reduction by at most
  // 1 / (the reduced extent) of the bytes read.
  bool add_reduction(const TraceCpuOp& op, const Shape&, const TraceCpuOp*) {
    std::size_t at = 0;
    const Shape* in = first_shape(op, &at);
    if (in == nullptr) return false;
    const Tensor x = activation(*in);
    const auto rank = static_cast<std::int64_t>(x.shape.size());
    // linalg_vector_norm(self, ord, dim, keepdim) and norm(self, p, dim, keepdim): the dims come after the order.
    const bool with_order = op.name == "aten::linalg_vector_norm" || op.name == "aten::norm";
    const std::size_t dim_at = at + (with_order ? 2 : 1);
    std::optional<Shape> dims = concrete_list(op, dim_at);
    const bool keepdim = concrete_true(op, dim_at + 1);
    std::vector<bool> reduced(static_cast<std::size_t>(rank), !dims.has_value());
    if (dims)
      for (std::int64_t d : *dims) {
        if (d < 0) d += rank;
        if (d < 0 || d >= rank) return false;
        reduced[static_cast<std::size_t>(d)] = true;
      }
    Shape out;
    for (std::int64_t i = 0; i < rank; ++i)
      if (!reduced[static_cast<std::size_t>(i)]) out.push_back(x.shape[static_cast<std::size_t>(i)]);
      else if (keepdim) out.push_back(1);
    if (out.empty()) out.push_back(1);
    produced(b_.streaming_pass({x}, out, name_, "reduce"));
    return true;
  }

  // max / min: of two tensors (max(self, other)) an elementwise op, else a reduction (max(self[, dim, keepdim])).
  bool add_max_min(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next) {
    if (!d0.empty() && !dims_at(op, 1).empty()) {
      sets_batch_ = true;
      return add_binary(op, d0, next);
    }
    return add_reduction(op, d0, next);
  }

  // cumsum / cumprod (self, dim): one read and one write of the whole tensor.
  bool add_scan(const TraceCpuOp& op, const Shape&, const TraceCpuOp*) {
    const Shape* in = first_shape(op);
    if (in == nullptr) return false;
    const Tensor x = activation(*in);
    produced(b_.streaming_pass({x}, x.shape, name_, "scan"));
    return true;
  }

  // index_select(self, dim, index): gathers index.numel() slices along dim: reads them and the int64 index (as
  // one more slice-sized read is too much, the index is counted as its own elements), writes the output.
  bool add_index_select(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp*) {
    const Shape& index = dims_at(op, 2);
    const auto dim_list = concrete_list(op, 1);
    if (index.size() > 1) return false;
    std::int64_t dim = dim_list ? (*dim_list)[0] : 0;
    const auto rank = static_cast<std::int64_t>(d0.size());
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return false;
    const Tensor x = activation(d0);
    Shape out = x.shape;
    out[static_cast<std::size_t>(dim)] = index.empty() ? 1 : index[0];
    // The bytes read are the gathered slices, not the whole source: read a tensor of the output's shape.
    produced(b_.streaming_pass({Tensor{x.id, out}}, out, name_, "gather"));
    return true;
  }

  // upsample_{nearest,linear,bilinear,bicubic,trilinear}{1,2,3}d(input, output_size, [align_corners,]
  // scale_factors): reads the input, writes [N, C, output_size...]. Output size from Concrete Inputs, else the
  // scale factors, else the next op's input. Each output element interpolates 2^d neighbours, which neighbouring
  // outputs share through the cache: DRAM traffic is the input once and the output once.
  bool add_upsample(const TraceCpuOp& op, const Shape& d0, const TraceCpuOp* next) {
    if (d0.size() < 3) return false;
    const std::size_t sd = d0.size() - 2;
    Shape out_spatial = concrete_list(op, 1).value_or(Shape{});
    if (out_spatial.size() != sd) {
      out_spatial.clear();
      // scale_factors: the last argument, a list of floats ("[2., 2., 2.]").
      if (!op.concrete_inputs.empty()) {
        const std::string& f = op.concrete_inputs.back();
        std::vector<double> scales;
        for (std::size_t i = 0; i < f.size();) {
          if (std::isdigit(static_cast<unsigned char>(f[i])) == 0) { ++i; continue; }
          double v = 0;
          const auto [ptr, ec] = std::from_chars(f.data() + i, f.data() + f.size(), v);
          if (ec != std::errc()) break;
          scales.push_back(v);
          i = static_cast<std::size_t>(ptr - f.data());
        }
        if (scales.size() == sd)
          for (std::size_t i = 0; i < sd; ++i)
            out_spatial.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(d0[2 + i]) * scales[i])));
      }
    }
    if (out_spatial.size() != sd) out_spatial = next_spatial(next, d0.size(), d0[1]).value_or(Shape{});
    if (out_spatial.size() != sd || !at_least(out_spatial, 1)) return false;
    const Tensor x = activation(d0);
    Shape out = {x.shape[0], x.shape[1]};
    out.insert(out.end(), out_spatial.begin(), out_spatial.end());
    if (!plausible(out)) return false;
    produced(b_.streaming_pass({x}, out, name_, "upsample"));
    return true;
  }

  bool add_cross_entropy(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.cross_entropy(activation(d0), name_));
    return true;
  }

  bool add_mse_loss(const TraceCpuOp&, const Shape& d0, const TraceCpuOp*) {
    produced(b_.mse_loss(activation(d0), name_));
    return true;
  }

  ForwardOps f_;
  std::int64_t traced_;
  std::int64_t batch_;
  GraphBuilder b_;
  bool first_ = true;       // no op has read the graph input yet
  bool sets_batch_ = true;  // the op being added may be the one whose input sets the traced batch
  bool costed_ = false;     // some aten:: op was costed
  std::string name_;  // of the op being added: trace_op_name()
  std::int64_t first_batch_ = 0;
  int input_bytes_ = 4;
  std::vector<Tensor> outputs_;
};

}  // namespace

TraceForwardOps trace_forward_ops(const KinetoTrace& trace) {
  const ForwardOps f = select_forward_ops(trace);
  return {f.source, f.tid};
}

std::string trace_op_name(const std::string& aten_name, std::size_t index) {
  return aten_name + "#" + std::to_string(index);
}

namespace {

ModelSource read_model_from_trace(const std::string& path);

}  // namespace

ModelSource model_from_trace(const std::string& path) {
  // One CLI call resolves the same trace several times (its default batch, the prediction, the comparison): keep the
  // last one read while the file is unchanged.
  static std::mutex mutex;
  static std::string cached_key;
  static std::optional<ModelSource> cached;
  // Identity of the file's content as far as the file system tells: device, inode, size, and the modification and
  // status-change times (a copy that keeps the old mtime still changes ctime).
  std::string key;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0)
    key = path + "|" + std::to_string(st.st_dev) + "|" + std::to_string(st.st_ino) + "|" + std::to_string(st.st_size) +
          "|" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "|" +
          std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!key.empty() && cached && cached_key == key) return *cached;
  }
  ModelSource m = read_model_from_trace(path);
  std::lock_guard<std::mutex> lock(mutex);
  cached_key = key;
  cached = m;
  return m;
}

namespace {

ModelSource read_model_from_trace(const std::string& path) {
  const KinetoTrace t = read_kineto_trace(path);
  ForwardOps f = select_forward_ops(t);
  f.path = path;
  if (f.ops.empty())
    throw InputError("trace '" + path + "' has no aten:: operator events (record the trace with torch.profiler "
                     "and ProfilerActivity.CPU)");
  if (!f.has_shapes)
    throw InputError("trace '" + path + "' has no input shapes (record it with torch.profiler.profile("
                     "record_shapes=True) to build a model from it)",
                     {"trace.no_input_shapes", {{"path", path}}});
  const std::string id = std::filesystem::path(path).filename().string();
  auto shared = std::make_shared<ForwardOps>(std::move(f));
  std::map<std::string, int> uncosted;
  int skipped = 0;
  bool sequence = false;
  std::int64_t seq = 0;
  std::int64_t traced_batch = 1;
  {
    // At the traced shapes (no rescaling): validates every op, lists the uncosted ones and finds the batch.
    TraceGraphBuilder probe(*shared, 0, 1, id);
    const Graph g = probe.build(&uncosted, &skipped);
    sequence = g.is_sequence;
    seq = g.seq;
    traced_batch = std::max<std::int64_t>(1, probe.first_batch());
  }
  ModelSource m;
  m.id = path;
  m.family = sequence ? "transformer" : "trace";
  m.description = "PyTorch profiler trace " + id + ": " + std::to_string(shared->ops.size() - skipped) +
                  " forward operators of the first step, traced at batch " + std::to_string(traced_batch);
  m.sequence = sequence;
  m.default_seq = seq;
  m.natural_batch = traced_batch;
  for (const auto& [name, count] : uncosted) m.uncosted.push_back(std::to_string(count) + " x " + name + " not costed");
  m.build = [shared, traced_batch, id](const ModelOptions& o) {
    TraceGraphBuilder b(*shared, traced_batch, o.batch > 0 ? o.batch : traced_batch, id);
    return b.build(nullptr, nullptr);
  };
  return m;
}

}  // namespace

}  // namespace perfcast
