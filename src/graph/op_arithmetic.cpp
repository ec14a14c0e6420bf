#include "graph/op_arithmetic.h"

#include <algorithm>
#include <string_view>

#include "graph/op_kinds.h"

namespace perfcast {

namespace {

double prod3(const std::array<std::int64_t, 3>& a) { return static_cast<double>(a[0] * a[1] * a[2]); }

double conv_flops(const ConvGeometry& c) {
  // Transposed conv scatters every input pixel through the kernel; a normal conv gathers per output pixel.
  const double pixels = c.transposed ? prod3(c.in) : prod3(c.out);
  const double per_pixel = static_cast<double>(c.c_out) * static_cast<double>(c.c_in / c.groups) * prod3(c.kernel);
  return 2.0 * static_cast<double>(c.n) * pixels * per_pixel;
}

double attention_score_elems(const AttentionGeometry& a) {
  return static_cast<double>(a.batch * a.heads) * static_cast<double>(a.q_len) * static_cast<double>(a.kv_len);
}

}  // namespace

double gemm_flops(double rows, double n, double k) { return 2.0 * rows * n * k; }

double windowed_causal_pairs(double q_len, double kv_len, double window) {
  // Query i (0-based over all kv_len positions) sees min(i + 1, window) keys. Over positions 0..P-1 that sums to
  // T(P) = P(P+1)/2 below the window and W(W+1)/2 + (P - W) W above it; the queries are positions kv_len - q_len on.
  const auto upto = [window](double p) {
    return p <= window ? 0.5 * p * (p + 1.0) : 0.5 * window * (window + 1.0) + (p - window) * window;
  };
  return upto(kv_len) - upto(kv_len - q_len);
}

double attention_computed_share(const AttentionGeometry& a) {
  if (!a.fused || !a.causal) return 1.0;
  if (!a.window_applies()) return 0.5;
  if (a.memory_efficient) return 1.0;
  const double q = static_cast<double>(a.q_len), kv = static_cast<double>(a.kv_len);
  return windowed_causal_pairs(q, kv, static_cast<double>(a.window)) / (q * kv);
}

double matmul_flops(const MatmulGeometry& m) {
  return gemm_flops(static_cast<double>(m.batch) * static_cast<double>(m.m), static_cast<double>(m.n),
                    static_cast<double>(m.k));
}

double embedding_unique_rows(const EmbeddingBagGeometry& g) {
  double rows = 0;
  for (std::size_t t = 0; t < g.rows.size(); ++t)
    rows += std::min(static_cast<double>(g.rows[t]), g.pooling[t] * static_cast<double>(g.batch));
  return rows;
}

Work embedding_update_work(const EmbeddingBagGeometry& g) {
  const double d = static_cast<double>(g.dim);
  const double unique = embedding_unique_rows(g);
  const double row_bytes = d * g.table_elem_bytes;
  switch (g.optimizer) {
    case EmbeddingOptimizer::kSgd:
      return {2.0 * unique * d, 2.0 * unique * row_bytes};  // w -= lr * g: read and write each touched row
    case EmbeddingOptimizer::kRowwiseAdagrad:
      // One FP32 accumulator per row: s += mean(g^2); w -= lr * g / sqrt(s) (FBGEMM rowwise_adagrad).
      return {4.0 * unique * d, 2.0 * unique * (row_bytes + 4.0)};
    case EmbeddingOptimizer::kAdamLazy:
      // Touched rows only: read w, m, v and write them back (tfa.optimizers.LazyAdam updates the moments and the
      // weights of the rows in the sparse gradient's indices).
      return {12.0 * unique * d, 6.0 * unique * d * 4.0};
    case EmbeddingOptimizer::kAdamDense:
      // Every element of the tables: read w, m, v and write them back (Keras Adam's _resource_apply_sparse
      // decays m and v and updates the whole variable).
      return {12.0 * g.table_elems(), 6.0 * 4.0 * g.table_elems()};
  }
  return {};
}

std::string_view op_kind_name(OpKind kind) { return op_kind_info(kind).name; }

double second_param_elems(const Op& op) {
  switch (op.kind) {
    case OpKind::kConv:
      return op.conv.bias ? static_cast<double>(op.conv.c_out) : 0.0;
    case OpKind::kMatmul:
      return op.mm.bias ? static_cast<double>(op.mm.n) : 0.0;
    case OpKind::kNorm:  // gamma and beta; RMS norm has a scale only
      return op.norm != NormKind::kRms ? static_cast<double>(op.params) / 2 : 0.0;
    case OpKind::kAttention:
    case OpKind::kElementwise:
    case OpKind::kPool:
    case OpKind::kSoftmax:
    case OpKind::kEmbedding:
    case OpKind::kDataMovement:
    case OpKind::kLoss:
    case OpKind::kOptimizer:
    case OpKind::kEmbeddingBag:
    case OpKind::kInteraction:
    case OpKind::kCount:
      return 0.0;
  }
  return 0.0;
}

MatmulGeometry conv_as_gemm(const ConvGeometry& c) {
  MatmulGeometry g;
  g.batch = c.groups;
  const double pixels = c.transposed ? prod3(c.in) : prod3(c.out);
  g.m = static_cast<std::int64_t>(static_cast<double>(c.n) * pixels);
  g.n = c.c_out / c.groups;
  g.k = static_cast<std::int64_t>(static_cast<double>(c.c_in / c.groups) * prod3(c.kernel));
  g.weight_operand = true;
  return g;
}

Work forward_work(const Op& op, ElemBytes eb, bool training) {
  Work w;
  const double in = static_cast<double>(op.in_elems) * eb.act;
  const double out = static_cast<double>(op.out_elems) * eb.act;
  const double weights = static_cast<double>(op.weight_elems) * eb.weight;
  const double reps = static_cast<double>(op.repeats);
  switch (op.kind) {
    case OpKind::kConv:
      w.flops = conv_flops(op.conv);
      w.bytes = in + out + weights;
      break;
    case OpKind::kMatmul:
      w.flops = matmul_flops(op.mm) * reps;
      // Recurrent steps re-read their weights every launch.
      w.bytes = in + out + weights * reps;
      break;
    case OpKind::kAttention: {
      const auto& a = op.attn;
      const double scores = attention_score_elems(a);
      const double causal_share = attention_computed_share(a);
      w.flops = (4.0 * scores * static_cast<double>(a.head_dim) + 5.0 * scores) * causal_share;
      // Unfused: scores written, read by softmax, probabilities written and read by the second GEMM.
      w.bytes = in + out + (a.fused ? 0.0 : 4.0 * scores * eb.act);
      break;
    }
    case OpKind::kNorm:
      w.flops = static_cast<double>(op.out_elems) * op.flops_per_out_elem;
      // Training computes statistics in a separate pass over the input.
      w.bytes = (training ? 2.0 : 1.0) * in + out + weights;
      break;
    case OpKind::kEmbedding:
      w.flops = 0;
      w.bytes = static_cast<double>(op.in_elems) * 8.0 + 2.0 * out;  // ids, gathered rows, output
      break;
    case OpKind::kDataMovement:
      w.flops = 0;
      w.bytes = op.is_view ? 0.0 : in + out;
      break;
    case OpKind::kOptimizer:
      return optimizer_work(op.optimizer, static_cast<double>(op.params));
    case OpKind::kEmbeddingBag: {
      // Sum pooling: one add per gathered element; ids (int64) and gathered rows in, pooled rows out.
      const double gathered = op.bag.lookups() * static_cast<double>(op.bag.dim);
      w.flops = gathered;
      w.bytes = static_cast<double>(op.in_elems) * 8.0 + gathered * op.bag.table_elem_bytes + out;
      break;
    }
    case OpKind::kInteraction: {
      // The whole F x F Gram matrix per sample (kernels compute the full tile and keep the lower triangle).
      const auto& g = op.interaction;
      w.flops = 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.features * g.features) *
                static_cast<double>(g.dim);
      w.bytes = in + out;
      break;
    }
    case OpKind::kElementwise:
    case OpKind::kPool:
    case OpKind::kSoftmax:
    case OpKind::kLoss:
      w.flops = static_cast<double>(op.out_elems) * op.flops_per_out_elem;
      w.bytes = in + out + weights;
      break;
    case OpKind::kCount:
      break;
  }
  return w;
}

Work backward_work(const Op& op, ElemBytes eb) {
  Work w;
  const double in = static_cast<double>(op.in_elems) * eb.act;
  const double out = static_cast<double>(op.out_elems) * eb.act;
  const double weights = static_cast<double>(op.weight_elems) * eb.weight;
  const double reps = static_cast<double>(op.repeats);
  switch (op.kind) {
    case OpKind::kConv: {
      const double f = conv_flops(op.conv);
      w.flops = f;                     // weight gradient
      w.bytes = in + out + weights;    // x, dy -> dw
      if (op.needs_input_grad) {
        w.flops += f;                  // data gradient
        w.bytes += out + weights + in; // dy, w -> dx
      }
      break;
    }
    case OpKind::kMatmul: {
      const double f = matmul_flops(op.mm) * reps;
      // Gradient of the [k,n] operand: a weight gradient (tied weights get one too) or an activation gradient.
      w.flops += f;
      w.bytes += in + out + (op.mm.weight_operand ? weights : 0.0);
      if (op.needs_input_grad) {
        w.flops += f;
        w.bytes += out + weights * reps + in;
      }
      break;
    }
    case OpKind::kAttention: {
      const auto& a = op.attn;
      const double scores = attention_score_elems(a);
      const double causal_share = attention_computed_share(a);
      // dV, dP, dQ, dK GEMMs (+ the QK^T recompute for fused kernels) and the softmax gradient.
      const double gemms = a.fused ? 5.0 : 4.0;
      w.flops = (gemms * 2.0 * scores * static_cast<double>(a.head_dim) + 5.0 * scores) * causal_share;
      w.bytes = 2.0 * in + 2.0 * out + (a.fused ? 0.0 : 4.0 * scores * eb.act);
      break;
    }
    case OpKind::kNorm:
      w.flops = 2.0 * static_cast<double>(op.out_elems) * op.flops_per_out_elem;
      // Reduction pass over x and dy, then the apply pass reading them again and writing dx.
      w.bytes = 2.0 * in + 2.0 * out + in + weights;
      break;
    case OpKind::kElementwise:
      w.flops = static_cast<double>(op.out_elems) * op.flops_per_out_elem;
      // dy and the saved tensor in, dx out (two dx for binary ops).
      w.bytes = out + in + (op.inputs.size() > 1 ? 0.0 : out);
      break;
    case OpKind::kPool:
      w.flops = static_cast<double>(op.out_elems) * op.flops_per_out_elem;
      w.bytes = 2.0 * in + out;
      break;
    case OpKind::kSoftmax:
      w.flops = 3.0 * static_cast<double>(op.out_elems);
      w.bytes = 3.0 * out;
      break;
    case OpKind::kEmbedding:
      w.flops = static_cast<double>(op.out_elems);
      w.bytes = 2.0 * out + static_cast<double>(op.in_elems) * 8.0;
      break;
    case OpKind::kDataMovement:
      w.bytes = op.is_view ? 0.0 : in + out;
      break;
    case OpKind::kLoss:
      w.flops = static_cast<double>(op.in_elems) * 2.0;
      w.bytes = 2.0 * in;
      break;
    case OpKind::kEmbeddingBag: {
      // Each lookup reads its bag's output gradient and adds it into its row; the optimizer runs in the same
      // kernel on the rows touched (FBGEMM split_embedding_backward_codegen_*, HugeCTR), or over every row.
      const double gathered = op.bag.lookups() * static_cast<double>(op.bag.dim);
      w.flops = gathered;
      w.bytes = static_cast<double>(op.in_elems) * 8.0 + gathered * eb.act;
      w += embedding_update_work(op.bag);
      break;
    }
    case OpKind::kInteraction: {
      // dX = (dZ + dZ^T) X per sample: one batched product of the Gram matrix's size; X and dZ in, dX out.
      const auto& g = op.interaction;
      w.flops = 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.features * g.features) *
                static_cast<double>(g.dim);
      w.bytes = 2.0 * in + out;
      break;
    }
    case OpKind::kOptimizer:
    case OpKind::kCount:
      break;
  }
  return w;
}

Work optimizer_work(OptimizerKind kind, double params) {
  // fp32 master weights, gradients and state: bytes read + written per parameter.
  switch (kind) {
    case OptimizerKind::kSgdMomentum:
      return {3.0 * params, 5.0 * 4.0 * params};  // read w, g, m; write w, m
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      return {12.0 * params, 7.0 * 4.0 * params};  // read w, g, m, v; write w, m, v
    case OptimizerKind::kLamb:
      return {16.0 * params, 10.0 * 4.0 * params};  // Adam plus a second pass for the trust-ratio norms
  }
  return {};
}

int unfused_optimizer_ops(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgdMomentum:
      return 4;
    case OptimizerKind::kAdam:
      return 8;
    case OptimizerKind::kAdamW:
      return 9;
    case OptimizerKind::kLamb:
      return 1;
  }
  return 1;
}

Work unfused_optimizer_work(OptimizerKind kind, double params) {
  // fp32 tensor accesses per parameter, counted from PyTorch 1.12's torch/optim/sgd.py and adam.py / adamw.py
  // (_single_tensor_* and _multi_tensor_*: the foreach form launches fewer kernels but makes the same passes; 2.x's
  // Adam updates the first moment with lerp_, two accesses fewer).
  switch (kind) {
    case OptimizerKind::kSgdMomentum:
      // d_p = grad + wd * param (3), buf.mul_(m) (2), buf.add_(d_p) (3), param.add_(buf, -lr) (3)
      return {4.0 * params, 11.0 * 4.0 * params};
    case OptimizerKind::kAdam:
      // m.mul_ (2), m.add_(g) (3), v.mul_ (2), v.addcmul_(g, g) (3), v.sqrt() (2), / bias_correction (2),
      // .add_(eps) (2), param.addcdiv_(m, denom) (4)
      return {12.0 * params, 20.0 * 4.0 * params};
    case OptimizerKind::kAdamW:
      return {13.0 * params, 22.0 * 4.0 * params};  // Adam plus param.mul_(1 - lr * wd)
    case OptimizerKind::kLamb:
      return optimizer_work(kind, params);  // torch.optim has no LAMB: apex's FusedLAMB
  }
  return {};
}

double conv_linear_macs(const Graph& g) {
  double macs = 0;
  for (const auto& op : g.ops) {
    if (op.kind == OpKind::kConv) macs += conv_flops(op.conv) / 2.0;
    if (op.kind == OpKind::kMatmul) macs += matmul_flops(op.mm) * static_cast<double>(op.repeats) / 2.0;
  }
  return macs / static_cast<double>(g.batch);
}

}  // namespace perfcast
