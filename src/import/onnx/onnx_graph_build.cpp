// One build of an ONNX model: batch and --dim substitution, libonnx shape inference, and the walk over the nodes
// in topological order.
#include "import/onnx/onnx_graph_build.h"

#ifdef PERFCAST_HAVE_ONNX

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <sstream>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <stdexcept>

#include "core/limits.h"

namespace perfcast::onnx_import {

namespace {

// Writes all of `bytes` to `fd` (a pipe); false when the reader went away.
bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads `fd` to its end, keeping at most `limit` bytes (more is a failure: nullopt).
std::optional<std::string> read_all(int fd, std::size_t limit) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    if (out.size() + static_cast<std::size_t>(n) > limit) return std::nullopt;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

// libonnx's shape rules index dimensions they never check (a ConvTranspose weight of rank 1, a pool over a tensor of
// rank 0 that another node computes: SIGSEGVs found by fuzz_onnx), and check_nodes() can only test what the file
// declares. So inference runs in a forked child: it writes back the inferred value_info and outputs, and a child that
// dies (a signal, a sanitizer report) or runs past data/limits.toml max_shape_inference_seconds makes the file an
// InputError instead of taking perfcast down. The child touches nothing but its own copy of the model and the pipe.
void GraphBuild::infer_shapes_isolated() {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("cannot create a pipe for ONNX shape inference");
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("cannot start a process for ONNX shape inference");
  }
  if (pid == 0) {
    ::close(fds[0]);
    // Plain deaths: no sanitizer or fuzzer handler reports (or saves an input for) what the parent handles.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, SIG_DFL);
    ::alarm(static_cast<unsigned>(std::min<std::int64_t>(input_limits().max_shape_inference_seconds, 1 << 30)));
    int code = 0;
    try {
      try {
        ox::ShapeInferenceOptions options(false, 0, true);
        ox::shape_inference::InferShapes(proto_, ox::OpSchemaRegistry::Instance(), options);
      } catch (const std::exception&) {
        // libonnx gave up part way (unknown domain, a schema newer than it knows): what it inferred before
        // stays, the per-op rules fill the rest.
      }
      ox::GraphProto inferred;
      *inferred.mutable_value_info() = proto_.graph().value_info();
      *inferred.mutable_output() = proto_.graph().output();
      std::string bytes;
      if (!inferred.SerializeToString(&bytes) || !write_all(fds[1], bytes)) code = 3;
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  ::close(fds[1]);
  // What comes back is the graph's value_info: bounded by the model's own size (a name and a shape per tensor).
  const std::optional<std::string> bytes = read_all(fds[0], 64 * m_.model_.ByteSizeLong() + (1u << 20));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ox::GraphProto inferred;
  if (!bytes || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !inferred.ParseFromString(*bytes)) {
    std::string why = "it stopped";
    if (WIFSIGNALED(status))
      why = WTERMSIG(status) == SIGALRM
                ? fmt::format("it ran past {} s (data/limits.toml max_shape_inference_seconds)",
                              input_limits().max_shape_inference_seconds)
                : fmt::format("it crashed with signal {}", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      why = fmt::format("it failed with status {}", WEXITSTATUS(status));
    throw InputError(fmt::format("ONNX model '{}' is malformed: libonnx's shape inference could not process it ({}); "
                                 "check it with onnx.checker.check_model(model, full_check=True)",
                                 m_.path(), why));
  }
  auto* g = proto_.mutable_graph();
  *g->mutable_value_info() = inferred.value_info();
  *g->mutable_output() = inferred.output();
}

void GraphBuild::substitute_and_infer() {
  proto_ = m_.model_;
  const std::int64_t seq = opts_.seq;
  if (m_.sequence_ && seq > 0 && m_.fixed_seq_ > 0 && seq != m_.fixed_seq_)
    throw InputError(fmt::format("ONNX model '{}' has a fixed sequence length of {}; it cannot run --seq {}", m_.path(),
                                 m_.fixed_seq_, seq));
  std::map<std::string, std::int64_t> values = m_.dim_values_;
  if (m_.sequence_ && seq > 0 && !m_.seq_param_.empty()) values[m_.seq_param_] = seq;
  if (!m_.has_batch_ && opts_.batch != 1)
    throw InputError(fmt::format("ONNX model '{}' has a scalar first input and no batch dimension; use --batch 1",
                                 m_.path()));
  batch_ = m_.has_batch_ ? opts_.batch : 1;
  rebatched_ = m_.fixed_batch_ > 0 && batch_ != m_.fixed_batch_;

  auto* g = proto_.mutable_graph();
  std::size_t gi = 0;
  for (auto& in : *g->mutable_input()) {
    if (m_.initializer_names_.count(in.name())) continue;
    const GraphInput& spec = m_.inputs_[gi++];
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int a = 0; a < shape->dim_size(); ++a) {
      auto* d = shape->mutable_dim(a);
      const InputDim& id = spec.dims[static_cast<std::size_t>(a)];
      std::int64_t v = id.value;
      if (a == 0 && m_.has_batch_) {
        const bool is_batch = m_.fixed_batch_ > 0 ? id.value == m_.fixed_batch_
                                                  : (id.value == 0 && id.param == m_.batch_param_);
        if (is_batch) v = batch_;
      }
      if (v <= 0) {
        const std::string name = id.param.empty() ? fmt::format("{}:{}", spec.name, a) : id.param;
        auto it = values.find(name);
        PERFCAST_ASSERT(it != values.end(), "resolve_inputs rejected unresolved dimensions");
        v = it->second;
      }
      d->clear_dim_param();
      d->set_dim_value(v);
    }
  }
  infer_shapes_isolated();
  auto collect = [&](const ox::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return;
    const auto& tt = vi.type().tensor_type();
    inferred_types_[vi.name()] = tt.elem_type();
    if (!tt.has_shape()) return;
    Shape s;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value() || d.dim_value() <= 0) return;
      s.push_back(d.dim_value());
    }
    // Shape inference multiplies what the file says (Expand, Tile, Reshape targets): bound the result before any
    // rule or fold takes a product over it.
    const InputLimits& lim = input_limits();
    std::int64_t total = 1;
    for (auto d : s)
      if (d > lim.max_dim || __builtin_mul_overflow(total, d, &total) || total > lim.max_elements)
        throw InputError(fmt::format("ONNX model '{}': tensor '{}' has the shape {}, over the limit of {} elements "
                                     "(data/limits.toml max_elements)", m_.path(), vi.name(), shape_text(s),
                                     lim.max_elements));
    inferred_[vi.name()] = std::move(s);
  };
  for (const auto& vi : g->value_info()) collect(vi);
  for (const auto& vi : g->output()) collect(vi);
}

void GraphBuild::seed_values() {
  const auto& g = proto_.graph();
  auto add_root = [&](const std::string& name, const ox::TensorProto& t) {
    Root r;
    r.name = name;
    r.dtype = t.data_type();
    r.rank = static_cast<std::size_t>(t.dims_size());
    r.elems = numel(Shape(t.dims().begin(), t.dims().end()));
    roots_.push_back(r);
    owned_.push_back(false);
    return static_cast<int>(roots_.size()) - 1;
  };
  for (const auto& t : g.initializer()) {
    Value v;
    v.is_const = true;
    v.shape.assign(t.dims().begin(), t.dims().end());
    v.dtype = t.data_type();
    v.data = tensor_data(t);
    v.roots = {add_root(t.name(), t)};
    values_[t.name()] = std::move(v);
  }
  for (const auto& in : g.input()) {
    if (m_.initializer_names_.count(in.name())) continue;
    Value v;
    v.id = -1;
    for (const auto& d : in.type().tensor_type().shape().dim()) v.shape.push_back(d.dim_value());
    v.dtype = in.type().tensor_type().elem_type();
    const std::int64_t bytes = numel(v.shape) * elem_bytes(v.dtype);
    input_bytes_ += bytes;
    values_[in.name()] = std::move(v);
  }
}

Graph GraphBuild::run() {
  substitute_and_infer();
  em_ = std::make_unique<Emitter>(m_.path(), batch_);
  seed_values();
  if (m_.sequence_) em_->b().set_sequence(opts_.seq > 0 ? opts_.seq : m_.default_seq_);
  for (int k : m_.order_) {
    const auto& n = proto_.graph().node(k);
    try {
      process(k);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      if (msg.rfind("ONNX model", 0) == 0) throw;
      throw InputError(fmt::format("ONNX model '{}': {}: {}", m_.path(), node_label(n), msg));
    }
  }
  Graph graph = em_->finish();
  graph.input_bytes_per_sample = input_bytes_ / std::max<std::int64_t>(1, batch_);
  m_.note_uncosted(uncosted_);
  return graph;
}

void GraphBuild::process(int k) {
  const auto& n = proto_.graph().node(k);
  const Plan& plan = m_.plans_[static_cast<std::size_t>(k)];
  if (plan.role == Role::kAbsorbed) return;
  if (plan.role != Role::kNormal && plan.role != Role::kViewTranspose) {
    emit(n, plan);  // a fused pattern: its inner tensors were never materialised
    return;
  }
  if (has_subgraph(n)) {
    passthrough(n);
    return;
  }
  bool all_const = true;
  for (int i = 0; i < n.input_size(); ++i)
    if (const Value* v = input(n, i); v && !v->is_const) all_const = false;
  if (n.op_type() == "Shape" || n.op_type() == "Size" || all_const) {
    fold(n);
    return;
  }
  emit(n, plan);
}

Graph OnnxModel::build(const ModelOptions& o) const {
  if (o.batch <= 0) throw InputError("batch must be positive");
  GraphBuild b(*this, o);
  return b.run();
}

}  // namespace perfcast::onnx_import

#endif  // PERFCAST_HAVE_ONNX
