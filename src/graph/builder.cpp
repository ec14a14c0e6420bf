#include "graph/builder.h"

#include <numeric>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"

namespace perfcast {

namespace {

// Checked: shapes come from files and flags, and a product past 64 bits is an input error, not undefined behaviour.
template <class Shape>
std::int64_t product(const Shape& v, std::size_t from = 0) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < v.size(); ++i)
    if (__builtin_mul_overflow(p, v[i], &p))
      throw InputError("a tensor of " + std::to_string(v.size()) + " dimensions has more elements than 64 bits count "
                       "(a dimension of " + std::to_string(v[i]) + ")");
  return p;
}

// Expands a user Dims ({3} or {3,3}) to `n` spatial entries.
std::array<std::int64_t, 3> expand(const Dims& d, int n) {
  if (d.empty() || (d.size() != 1 && static_cast<int>(d.size()) != n))
    throw InputError("spatial parameter has " + std::to_string(d.size()) + " entries for " + std::to_string(n) +
                     " spatial dimensions");
  std::array<std::int64_t, 3> out{1, 1, 1};
  for (int i = 0; i < n; ++i) out[i] = d.size() == 1 ? d[0] : d[i];
  return out;
}

std::int64_t pooled(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t dil, bool ceil_mode) {
  const std::int64_t span = in + 2 * p - dil * (k - 1) - 1;
  std::int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  // PyTorch rule: the last window must start inside the input or left padding.
  if (ceil_mode && (o - 1) * s >= in + p) --o;
  return o;
}

}  // namespace

std::int64_t Tensor::elems() const { return product(shape); }

std::int64_t Graph::params() const {
  std::int64_t p = 0;
  for (const auto& op : ops) p += op.params;
  return p;
}

std::int64_t Graph::table_params() const {
  std::int64_t p = 0;
  for (const auto& op : ops)
    if (op.kind == OpKind::kEmbeddingBag) p += op.params;
  return p;
}

double EmbeddingBagGeometry::lookups() const {
  double per_sample = 0;
  for (double p : pooling) per_sample += p;
  return per_sample * static_cast<double>(batch);
}

double EmbeddingBagGeometry::table_elems() const {
  double rows_total = 0;
  for (std::int64_t r : rows) rows_total += static_cast<double>(r);
  return rows_total * static_cast<double>(dim);
}

GraphBuilder::GraphBuilder(std::string model_id, std::int64_t batch) {
  PERFCAST_ASSERT(batch > 0, "callers validate the batch before building");
  graph_.model_id = std::move(model_id);
  graph_.batch = batch;
  // A capacity hint, not a limit: most zoo graphs have a few hundred ops, and growing the vector op by op moved
  // every op (its shapes and name) about nine times per build.
  graph_.ops.reserve(512);
}

Tensor GraphBuilder::input(std::vector<std::int64_t> shape, int bytes_per_elem_on_host) {
  Tensor t;
  t.id = -1;
  t.shape = {graph_.batch};
  t.shape.insert(t.shape.end(), shape.begin(), shape.end());
  graph_.input_bytes_per_sample += product(shape) * bytes_per_elem_on_host;
  graph_.input_elems_per_sample += product(shape);
  return t;
}

void GraphBuilder::set_sequence(std::int64_t seq) {
  graph_.is_sequence = true;
  graph_.seq = seq;
}

Op& GraphBuilder::push(Op op, const std::string& name, const char* default_stem) {
  // Built in place: one allocation for a name past the short-string buffer, none below it.
  op.name.clear();
  if (name.empty()) {
    const std::string number = std::to_string(counter_);
    const std::string_view stem(default_stem);
    op.name.reserve(scope_.size() + stem.size() + number.size());
    op.name.append(scope_).append(stem).append(number);
  } else {
    op.name.reserve(scope_.size() + name.size());
    op.name.append(scope_).append(name);
  }
  ++counter_;
  op.code_layer = code_layer_;
  op.out_elems = product(op.out_shape);
  // An op whose every input is the graph input computes no input gradient (the data needs none).
  op.needs_input_grad = false;
  for (int id : op.inputs)
    if (id >= 0) op.needs_input_grad = true;
  graph_.ops.push_back(std::move(op));
  return graph_.ops.back();
}

Tensor GraphBuilder::out_of(const Op& op) const {
  return Tensor{static_cast<int>(graph_.ops.size()) - 1, op.out_shape};
}

Tensor GraphBuilder::conv(const Tensor& x, std::int64_t c_out, Dims kernel, Dims stride, Dims pad, Dims dilation,
                          std::int64_t groups, bool bias, const std::string& name) {
  const int sd = static_cast<int>(x.shape.size()) - 2;
  if (sd < 1 || sd > 3) throw InputError("conv input must be [N,C,spatial...] with 1-3 spatial dims");
  Op op;
  op.kind = OpKind::kConv;
  op.inputs = {x.id};
  auto& g = op.conv;
  g.spatial_dims = sd;
  g.n = x.shape[0];
  g.c_in = x.shape[1];
  g.c_out = c_out;
  g.groups = groups;
  g.kernel = expand(kernel, sd);
  g.stride = expand(stride, sd);
  g.pad = expand(pad, sd);
  g.dilation = expand(dilation, sd);
  g.bias = bias;
  if (g.c_in % groups != 0 || c_out % groups != 0) throw InputError("conv channels not divisible by groups");
  op.out_shape.reserve(2 + static_cast<std::size_t>(sd));
  op.out_shape.push_back(g.n);
  op.out_shape.push_back(c_out);
  for (int i = 0; i < sd; ++i) {
    g.in[i] = x.shape[2 + i];
    g.out[i] = pooled(g.in[i], g.kernel[i], g.stride[i], g.pad[i], g.dilation[i], false);
    if (g.out[i] <= 0) throw InputError("conv output size is not positive");
    op.out_shape.push_back(g.out[i]);
  }
  op.in_elems = x.elems();
  op.params = c_out * (g.c_in / groups) * product(g.kernel) +
              (bias ? c_out : 0);
  op.weight_elems = op.params;
  op.saves_input = true;
  return out_of(push(std::move(op), name, "conv"));
}

Tensor GraphBuilder::conv_transpose(const Tensor& x, std::int64_t c_out, Dims kernel, Dims stride, Dims pad,
                                    bool bias, const std::string& name) {
  const int sd = static_cast<int>(x.shape.size()) - 2;
  if (sd < 1 || sd > 3) throw InputError("conv_transpose input must be [N,C,spatial...]");
  Op op;
  op.kind = OpKind::kConv;
  op.inputs = {x.id};
  auto& g = op.conv;
  g.spatial_dims = sd;
  g.transposed = true;
  g.n = x.shape[0];
  g.c_in = x.shape[1];
  g.c_out = c_out;
  g.kernel = expand(kernel, sd);
  g.stride = expand(stride, sd);
  g.pad = expand(pad, sd);
  g.bias = bias;
  op.out_shape.reserve(2 + static_cast<std::size_t>(sd));
  op.out_shape.push_back(g.n);
  op.out_shape.push_back(c_out);
  for (int i = 0; i < sd; ++i) {
    g.in[i] = x.shape[2 + i];
    g.out[i] = (g.in[i] - 1) * g.stride[i] - 2 * g.pad[i] + g.kernel[i];
    op.out_shape.push_back(g.out[i]);
  }
  op.in_elems = x.elems();
  op.params = c_out * g.c_in * product(g.kernel) +
              (bias ? c_out : 0);
  op.weight_elems = op.params;
  op.saves_input = true;
  return out_of(push(std::move(op), name, "deconv"));
}

Tensor GraphBuilder::linear(const Tensor& x, std::int64_t out_features, bool bias, const std::string& name,
                            bool tied_weight) {
  Op op;
  op.kind = OpKind::kMatmul;
  op.inputs = {x.id};
  const std::int64_t in_features = x.shape.back();
  op.mm.batch = 1;
  op.mm.m = x.elems() / in_features;
  op.mm.k = in_features;
  op.mm.n = out_features;
  op.mm.weight_operand = true;
  op.mm.bias = bias;
  op.out_shape = x.shape;
  op.out_shape.back() = out_features;
  op.in_elems = x.elems();
  op.weight_elems = in_features * out_features + (bias ? out_features : 0);
  op.params = tied_weight ? (bias ? out_features : 0) : op.weight_elems;
  op.saves_input = true;
  return out_of(push(std::move(op), name, "linear"));
}

Tensor GraphBuilder::matmul(const Tensor& a, const Tensor& b, const std::string& name) {
  if (a.shape.size() < 2 || b.shape.size() < 2) throw InputError("matmul operands need at least 2 dims");
  Op op;
  op.kind = OpKind::kMatmul;
  op.inputs = {a.id, b.id};
  op.mm.m = a.shape[a.shape.size() - 2];
  op.mm.k = a.shape.back();
  op.mm.n = b.shape.back();
  op.mm.batch = a.elems() / (op.mm.m * op.mm.k);
  op.mm.weight_operand = false;
  op.out_shape = a.shape;
  op.out_shape.back() = op.mm.n;
  op.in_elems = a.elems() + b.elems();
  op.saves_input = true;
  return out_of(push(std::move(op), name, "matmul"));
}

Tensor GraphBuilder::attention(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t heads,
                               std::int64_t kv_heads, bool causal, bool fused, const std::string& name,
                               bool dropout, bool head_copies, std::int64_t window) {
  Op op;
  op.kind = OpKind::kAttention;
  op.inputs = {q.id, k.id, v.id};
  auto& a = op.attn;
  a.batch = q.shape[0];
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.q_len = q.shape[1];
  a.kv_len = k.shape[1];
  a.head_dim = q.shape.back() / heads;
  a.causal = causal;
  a.window = window;
  a.fused = fused;
  a.dropout = dropout;
  a.head_copies = head_copies;
  op.out_shape = q.shape;
  op.in_elems = q.elems() + k.elems() + v.elems();
  op.saves_input = true;
  // Unfused attention keeps the softmax probabilities for backward: batch x heads x q x kv.
  op.saves_output = !fused;
  return out_of(push(std::move(op), name, "attention"));
}

Tensor GraphBuilder::lstm(const Tensor& x, std::int64_t hidden, const std::string& name) {
  const std::string stem = name.empty() ? "lstm" + std::to_string(counter_) : name;
  const std::int64_t n = x.shape[0], s = x.shape[1];
  // Input projection for all time steps at once: [N*S, in] x [in, 4h] (+ bias).
  Tensor gates_x = linear(x, 4 * hidden, true, stem + ".ih");
  // Recurrent projection, one launch per step: [N, h] x [h, 4h].
  Op rec;
  rec.kind = OpKind::kMatmul;
  rec.inputs = {gates_x.id};
  rec.mm = MatmulGeometry{1, n, 4 * hidden, hidden, true, true};
  rec.repeats = s;
  rec.out_shape = {n, s, 4 * hidden};
  rec.in_elems = n * s * hidden;
  rec.params = hidden * 4 * hidden + 4 * hidden;
  rec.weight_elems = rec.params;
  rec.saves_input = true;
  Tensor gates = out_of(push(std::move(rec), stem + ".hh", "lstm"));
  // Gate nonlinearities and cell update, one fused kernel per step in cuDNN: ~ 3 sigmoid + 2 tanh + 5 mul/add.
  Op cell;
  cell.kind = OpKind::kElementwise;
  cell.inputs = {gates.id};
  cell.out_shape = {n, s, hidden};
  cell.in_elems = n * s * 4 * hidden;
  cell.flops_per_out_elem = 40;
  cell.repeats = s;
  cell.saves_output = true;
  cell.saves_input = true;
  return out_of(push(std::move(cell), stem + ".cell", "lstm"));
}

Tensor GraphBuilder::norm(const Tensor& x, NormKind kind, std::int64_t channels, double flops_per_elem,
                          const std::string& name) {
  Op op;
  op.kind = OpKind::kNorm;
  op.norm = kind;
  op.inputs = {x.id};
  op.out_shape = x.shape;
  op.in_elems = x.elems();
  op.flops_per_out_elem = flops_per_elem;
  op.params = kind == NormKind::kRms ? channels : 2 * channels;
  op.weight_elems = op.params;
  op.saves_input = true;
  const char* stem = kind == NormKind::kBatch ? "bn" : kind == NormKind::kLayer ? "ln" : kind == NormKind::kGroup ? "gn" : "rmsnorm";
  return out_of(push(std::move(op), name, stem));
}

namespace {
// A norm's channel axis must exist: axis 1 for batch and group norm, the last axis for layer and RMS norm. An
// imported graph can hand a scalar or a vector to any of them.
void require_rank(const Tensor& x, std::size_t rank, const char* what, const std::string& name) {
  if (x.shape.size() < rank)
    throw InputError(fmt::format("{} '{}' needs an input of rank {} or more, got rank {}", what, name, rank,
                                 x.shape.size()));
}
}  // namespace

Tensor GraphBuilder::batch_norm(const Tensor& x, const std::string& name) {
  require_rank(x, 2, "batch norm", name);
  return norm(x, NormKind::kBatch, x.shape[1], 8, name);
}
Tensor GraphBuilder::layer_norm(const Tensor& x, const std::string& name) {
  require_rank(x, 1, "layer norm", name);
  return norm(x, NormKind::kLayer, x.shape.back(), 8, name);
}
Tensor GraphBuilder::rms_norm(const Tensor& x, const std::string& name) {
  require_rank(x, 1, "RMS norm", name);
  return norm(x, NormKind::kRms, x.shape.back(), 5, name);
}
Tensor GraphBuilder::group_norm(const Tensor& x, std::int64_t groups, const std::string& name) {
  require_rank(x, 2, "group norm", name);
  if (groups <= 0 || x.shape[1] % groups != 0) throw InputError("group_norm channels not divisible by groups");
  return norm(x, NormKind::kGroup, x.shape[1], 8, name);
}

Tensor GraphBuilder::elementwise(const Tensor& x, double flops_per_elem, bool saves_in, bool saves_out,
                                 bool in_place, const std::string& name, const char* stem) {
  Op op;
  op.kind = OpKind::kElementwise;
  op.inputs = {x.id};
  op.out_shape = x.shape;
  op.in_elems = x.elems();
  op.flops_per_out_elem = flops_per_elem;
  op.saves_input = saves_in;
  op.saves_output = saves_out;
  op.in_place = in_place;
  return out_of(push(std::move(op), name, stem));
}

Tensor GraphBuilder::binary(const Tensor& a, const Tensor& b, double flops_per_elem, bool saves_inputs,
                            const std::string& name, const char* stem) {
  Op op;
  op.kind = OpKind::kElementwise;
  op.inputs = {a.id, b.id};
  op.out_shape = a.elems() >= b.elems() ? a.shape : b.shape;
  op.in_elems = a.elems() + b.elems();
  op.flops_per_out_elem = flops_per_elem;
  op.saves_input = saves_inputs;
  return out_of(push(std::move(op), name, stem));
}

Tensor GraphBuilder::relu(const Tensor& x, bool in_place, const std::string& name) {
  Tensor y = elementwise(x, 1, false, true, in_place, name, "relu");
  graph_.ops[static_cast<std::size_t>(y.id)].pointwise = PointwiseKind::kRelu;
  return y;
}
Tensor GraphBuilder::scale(const Tensor& x, const std::string& name) {
  return elementwise(x, 1, false, false, false, name, "scale");
}
Tensor GraphBuilder::relu6(const Tensor& x, const std::string& name) {
  return elementwise(x, 2, false, true, true, name, "relu6");
}
Tensor GraphBuilder::gelu(const Tensor& x, const std::string& name) {
  Tensor y = elementwise(x, 8, true, false, false, name, "gelu");
  graph_.ops[static_cast<std::size_t>(y.id)].pointwise = PointwiseKind::kGelu;
  return y;
}
Tensor GraphBuilder::gelu_new(const Tensor& x, const std::string& name) {
  Tensor y = gelu(x, name);
  graph_.ops[static_cast<std::size_t>(y.id)].gelu_new_code = true;
  return y;
}
Tensor GraphBuilder::silu(const Tensor& x, const std::string& name) {
  return elementwise(x, 5, true, false, false, name, "silu");
}
Tensor GraphBuilder::sigmoid(const Tensor& x, const std::string& name) {
  return elementwise(x, 4, false, true, false, name, "sigmoid");
}
// Hard activations of MobileNetV3 (PyTorch hardswish / hardsigmoid). hardsigmoid = clamp(x / 6 + 1/2, 0, 1):
// one multiply-add and the two clamps, 3 flops per element; hardswish = x * hardsigmoid(x), 4. These are the
// counts the ONNX importer gives HardSigmoid and HardSwish. Both backward formulas read the input (the gradient
// is piecewise in x), so the input is kept, as for silu.
Tensor GraphBuilder::hardswish(const Tensor& x, const std::string& name) {
  return elementwise(x, 4, true, false, false, name, "hardswish");
}
Tensor GraphBuilder::hardsigmoid(const Tensor& x, const std::string& name) {
  return elementwise(x, 3, true, false, false, name, "hardsigmoid");
}
Tensor GraphBuilder::tanh(const Tensor& x, const std::string& name) {
  return elementwise(x, 4, false, true, false, name, "tanh");
}
Tensor GraphBuilder::dropout(const Tensor& x, const std::string& name) {
  // Keeps a one-byte mask of its output's shape for backward (PyTorch native_dropout's bool mask).
  Tensor y = elementwise(x, 2, false, false, false, name, "dropout");
  graph_.ops[static_cast<std::size_t>(y.id)].saves_mask = true;
  return y;
}
Tensor GraphBuilder::add(const Tensor& a, const Tensor& b, const std::string& name) {
  Tensor y = binary(a, b, 1, false, name, "add");
  graph_.ops[static_cast<std::size_t>(y.id)].pointwise = PointwiseKind::kAdd;
  return y;
}
Tensor GraphBuilder::mul(const Tensor& a, const Tensor& b, const std::string& name) {
  return binary(a, b, 1, true, name, "mul");
}
Tensor GraphBuilder::lrn(const Tensor& x, std::int64_t size, const std::string& name) {
  Tensor y = elementwise(x, 2.0 * static_cast<double>(size) + 4, true, true, false, name, "lrn");
  graph_.ops[static_cast<std::size_t>(y.id)].pointwise = PointwiseKind::kLrn;
  return y;
}

Tensor GraphBuilder::pool(const Tensor& x, PoolKind kind, Dims kernel, Dims stride, Dims pad, bool ceil_mode,
                          const std::string& name) {
  const int sd = static_cast<int>(x.shape.size()) - 2;
  Op op;
  op.kind = OpKind::kPool;
  op.pool = kind;
  op.inputs = {x.id};
  const auto k = expand(kernel, sd), s = expand(stride, sd), p = expand(pad, sd);
  op.out_shape = {x.shape[0], x.shape[1]};
  std::int64_t window = 1;
  for (int i = 0; i < sd; ++i) {
    op.out_shape.push_back(pooled(x.shape[2 + i], k[i], s[i], p[i], 1, ceil_mode));
    window *= k[i];
  }
  op.in_elems = x.elems();
  op.flops_per_out_elem = static_cast<double>(window);
  op.saves_input = true;
  op.saves_output = kind == PoolKind::kMax;  // max pooling keeps indices/output
  return out_of(push(std::move(op), name, kind == PoolKind::kMax ? "maxpool" : "avgpool"));
}

Tensor GraphBuilder::max_pool(const Tensor& x, Dims kernel, Dims stride, Dims pad, bool ceil_mode,
                              const std::string& name) {
  return pool(x, PoolKind::kMax, std::move(kernel), std::move(stride), std::move(pad), ceil_mode, name);
}
Tensor GraphBuilder::avg_pool(const Tensor& x, Dims kernel, Dims stride, Dims pad, bool ceil_mode,
                              const std::string& name) {
  return pool(x, PoolKind::kAvg, std::move(kernel), std::move(stride), std::move(pad), ceil_mode, name);
}
Tensor GraphBuilder::global_avg_pool(const Tensor& x, const std::string& name) {
  Dims k(x.shape.begin() + 2, x.shape.end());
  return pool(x, PoolKind::kAvg, k, k, {0}, false, name.empty() ? "avgpool" : name);
}

Tensor GraphBuilder::softmax(const Tensor& x, const std::string& name) {
  Op op;
  op.kind = OpKind::kSoftmax;
  op.inputs = {x.id};
  op.out_shape = x.shape;
  op.in_elems = x.elems();
  op.flops_per_out_elem = 5;
  op.saves_output = true;
  return out_of(push(std::move(op), name, "softmax"));
}

Tensor GraphBuilder::embedding(const Tensor& ids, std::int64_t vocab, std::int64_t dim, const std::string& name) {
  Op op;
  op.kind = OpKind::kEmbedding;
  op.inputs = {ids.id};
  op.out_shape = ids.shape;
  op.out_shape.push_back(dim);
  op.in_elems = ids.elems();
  op.params = vocab * dim;
  op.weight_elems = product(op.out_shape);  // rows actually gathered (ids x dim, overflow-checked)
  op.saves_input = true;
  return out_of(push(std::move(op), name, "embedding"));
}

Tensor GraphBuilder::embedding_bag(const Tensor& ids, std::vector<std::int64_t> rows, std::vector<double> pooling,
                                   std::int64_t dim, EmbeddingOptimizer optimizer, const std::string& name,
                                   std::int64_t bags_per_table) {
  PERFCAST_ASSERT(!rows.empty() && rows.size() == pooling.size(), "an embedding bag needs rows and pooling per table");
  Op op;
  op.kind = OpKind::kEmbeddingBag;
  op.inputs = {ids.id};
  const auto tables = static_cast<std::int64_t>(rows.size());
  const std::int64_t bags = bags_per_table > 0 ? bags_per_table : graph_.batch;
  op.out_shape = {bags, tables, dim};
  op.bag.batch = bags;
  op.bag.dim = dim;
  op.bag.optimizer = optimizer;
  op.bag.rows = std::move(rows);
  op.bag.pooling = std::move(pooling);
  op.in_elems = static_cast<std::int64_t>(op.bag.lookups());  // the ids
  op.params = static_cast<std::int64_t>(op.bag.table_elems());
  op.weight_elems = static_cast<std::int64_t>(op.bag.lookups()) * dim;  // rows gathered per batch
  op.saves_input = true;  // backward needs the ids (and their offsets)
  return out_of(push(std::move(op), name, "embedding_bag"));
}

Tensor GraphBuilder::dot_interaction(const Tensor& bottom, const Tensor& embeddings, const std::string& name) {
  PERFCAST_ASSERT(bottom.shape.size() == 2 && embeddings.shape.size() == 3 && bottom.shape[1] == embeddings.shape[2],
                  "dot interaction takes [N,d] and [N,T,d]");
  Op op;
  op.kind = OpKind::kInteraction;
  op.inputs = {bottom.id, embeddings.id};
  op.interaction.batch = graph_.batch;
  op.interaction.features = embeddings.shape[1] + 1;
  op.interaction.dim = bottom.shape[1];
  op.out_shape = {graph_.batch, bottom.shape[1] + op.interaction.pairs()};
  op.in_elems = bottom.elems() + embeddings.elems();
  op.saves_input = true;  // the gradient of a dot product needs the other vector
  return out_of(push(std::move(op), name, "interaction"));
}

Tensor GraphBuilder::concat(const std::vector<Tensor>& xs, int axis, const std::string& name) {
  PERFCAST_ASSERT(!xs.empty(), "concat of nothing is a zoo bug");
  Op op;
  op.kind = OpKind::kDataMovement;
  op.out_shape = xs[0].shape;
  op.out_shape[axis] = 0;
  for (const auto& x : xs) {
    op.inputs.push_back(x.id);
    op.out_shape[axis] += x.shape[axis];
    op.in_elems += x.elems();
  }
  op.flops_per_out_elem = 0;
  return out_of(push(std::move(op), name, "concat"));
}

Tensor GraphBuilder::reshape(const Tensor& x, std::vector<std::int64_t> shape_without_batch, const std::string& name) {
  Op op;
  op.kind = OpKind::kDataMovement;
  op.inputs = {x.id};
  op.out_shape = {x.shape[0]};
  op.out_shape.insert(op.out_shape.end(), shape_without_batch.begin(), shape_without_batch.end());
  if (product(op.out_shape) != x.elems()) throw InputError("reshape changes the element count");
  op.is_view = true;
  return out_of(push(std::move(op), name, "reshape"));
}

Tensor GraphBuilder::flatten(const Tensor& x, const std::string& name) {
  return reshape(x, {x.elems() / x.shape[0]}, name.empty() ? "flatten" + std::to_string(counter_) : name);
}

Tensor GraphBuilder::transpose(const Tensor& x, std::vector<std::int64_t> new_shape_without_batch,
                               const std::string& name) {
  Op op;
  op.kind = OpKind::kDataMovement;
  op.inputs = {x.id};
  op.out_shape = {x.shape[0]};
  op.out_shape.insert(op.out_shape.end(), new_shape_without_batch.begin(), new_shape_without_batch.end());
  if (product(op.out_shape) != x.elems()) throw InputError("transpose changes the element count");
  op.in_elems = x.elems();
  return out_of(push(std::move(op), name, "transpose"));
}

Tensor GraphBuilder::upsample(const Tensor& x, std::int64_t factor, const std::string& name) {
  Op op;
  op.kind = OpKind::kDataMovement;
  op.inputs = {x.id};
  op.out_shape = x.shape;
  for (std::size_t i = 2; i < op.out_shape.size(); ++i) op.out_shape[i] *= factor;
  op.in_elems = x.elems();
  return out_of(push(std::move(op), name, "upsample"));
}

Tensor GraphBuilder::streaming_pass(const std::vector<Tensor>& xs, std::vector<std::int64_t> out_shape,
                                    const std::string& name, const char* stem) {
  PERFCAST_ASSERT(!xs.empty(), "a streaming pass reads at least one tensor");
  Op op;
  op.kind = OpKind::kDataMovement;
  op.out_shape = std::move(out_shape);
  for (const auto& x : xs) {
    op.inputs.push_back(x.id);
    op.in_elems += x.elems();
  }
  op.flops_per_out_elem = 0;
  return out_of(push(std::move(op), name, stem));
}

Tensor GraphBuilder::cross_entropy(const Tensor& logits, const std::string& name) {
  Op op;
  op.kind = OpKind::kLoss;
  op.inputs = {logits.id};
  op.out_shape = {logits.shape[0]};
  op.in_elems = logits.elems();
  op.flops_per_out_elem = 6.0 * static_cast<double>(logits.elems()) / static_cast<double>(logits.shape[0]);
  op.saves_input = true;
  return out_of(push(std::move(op), name, "loss"));
}

Tensor GraphBuilder::mse_loss(const Tensor& pred, const std::string& name) {
  Op op;
  op.kind = OpKind::kLoss;
  op.inputs = {pred.id};
  op.out_shape = {pred.shape[0]};
  op.in_elems = 2 * pred.elems();  // prediction and target
  op.flops_per_out_elem = 3.0 * static_cast<double>(pred.elems()) / static_cast<double>(pred.shape[0]);
  op.saves_input = true;
  return out_of(push(std::move(op), name, "loss"));
}

Graph GraphBuilder::finish() { return std::move(graph_); }

}  // namespace perfcast
