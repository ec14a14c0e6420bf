// One operator of a model graph: what is computed, with shapes, independent of device and precision.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

// Closed set of operator classes. Adding one touches:
//   1. its row in kOpKinds (graph/op_kinds.h): name, cost rule, trace class, library call, update in backward;
//      static_asserts fail until the row exists at the kind's enum value;
//   2. its formulas, in switches over OpKind with no `default:` that -Werror=switch flags until they have a case:
//      forward_work, backward_work and second_param_elems (graph/op_arithmetic.cpp), the ONNX export's
//      write_op and input_shape (import/onnx_export.cpp) and the ONNX importer's generic() (onnx_emitter.h);
//   3. a new CostRule only if none of the existing ones times it (then cost_op in cost/op_cost.cpp and
//      cost_cpu_op in cost/cpu_cost.cpp fail until they handle it);
//   4. a builder call (graph/builder.cpp) and a test for the importers that produce it.
enum class OpKind : std::uint8_t {
  kConv,          // 1D/2D/3D convolution with groups, stride, dilation, padding (and transposed)
  kMatmul,        // linear layer, matmul, batched matmul: batch x [m,k] x [k,n]
  kAttention,     // scaled dot-product attention core: QK^T, softmax, AV (unfused or fused/flash)
  kElementwise,   // activations, add, mul, dropout, casts, bias
  kNorm,          // batch, layer, group, RMS norm
  kPool,          // max, average, global pooling
  kSoftmax,       // standalone softmax over the last axis
  kEmbedding,     // table lookup
  kDataMovement,  // concat, transpose, pad, upsample-by-copy; reshape/view moves nothing
  kLoss,          // cross-entropy, MSE, ...
  kOptimizer,     // weight update (added by the step scheduler, not by importers)
  kEmbeddingBag,  // pooled lookups into embedding tables (FBGEMM table-batched): row gathers, sum pooling
  kInteraction,   // DLRM dot interaction: pairwise dot products of the feature vectors of each sample
  kCount
};

inline constexpr int kOpKindCount = static_cast<int>(OpKind::kCount);

// Stable lower-case name of an op kind ("conv", "matmul", ...), used in JSON and tables.
std::string_view op_kind_name(OpKind kind);

enum class NormKind : std::uint8_t { kBatch, kLayer, kGroup, kRms };
enum class PoolKind : std::uint8_t { kMax, kAvg };
enum class OptimizerKind : std::uint8_t { kSgdMomentum, kAdam, kAdamW, kLamb };
// How a training step updates embedding tables. The sparse kinds run inside the backward kernel on the rows the
// batch touched (FBGEMM's fused backward-optimizer, HugeCTR, TensorFlow Addons' LazyAdam: kAdamLazy); kAdamDense
// updates every row (Keras's Adam applies its moment decay and update to the whole variable even for sparse
// gradients).
enum class EmbeddingOptimizer : std::uint8_t { kSgd, kRowwiseAdagrad, kAdamDense, kAdamLazy };
// Which elementwise op, where a runtime's fusion rules depend on it (TF fuses batch norm + add + ReLU; TensorRT runs
// local response normalization, a window across channels, as a layer of its own) or its memory does (a graph
// framework that runs GELU as a chain of primitive ops keeps the chain's intermediates: schedule/memory.cpp).
enum class PointwiseKind : std::uint8_t { kOther, kRelu, kAdd, kLrn, kGelu };

// Convolution geometry. Spatial arrays hold `spatial_dims` entries (1, 2 or 3); unused entries are 1.
struct ConvGeometry {
  int spatial_dims = 2;
  std::int64_t n = 1;      // batch
  std::int64_t c_in = 1;   // input channels
  std::int64_t c_out = 1;  // output channels
  std::int64_t groups = 1;
  std::array<std::int64_t, 3> in{1, 1, 1};   // input spatial size
  std::array<std::int64_t, 3> out{1, 1, 1};  // output spatial size
  std::array<std::int64_t, 3> kernel{1, 1, 1};
  std::array<std::int64_t, 3> stride{1, 1, 1};
  std::array<std::int64_t, 3> pad{0, 0, 0};
  std::array<std::int64_t, 3> dilation{1, 1, 1};
  bool transposed = false;  // transposed (fractionally strided) convolution: in/out swap roles in the GEMM
  bool bias = false;
};

// GEMM geometry: `batch` independent products of [m,k] x [k,n].
struct MatmulGeometry {
  std::int64_t batch = 1;
  std::int64_t m = 1;
  std::int64_t n = 1;
  std::int64_t k = 1;
  bool weight_operand = true;  // the [k,n] operand is a learned weight (linear) rather than an activation
  bool bias = false;
};

// Attention core geometry (the projections around it are separate kMatmul ops).
struct AttentionGeometry {
  std::int64_t batch = 1;
  std::int64_t heads = 1;     // query heads
  std::int64_t kv_heads = 1;  // key/value heads (grouped-query attention when < heads)
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t head_dim = 64;
  bool causal = false;
  // Sliding-window (local) causal attention: each query sees the `window` latest keys, itself included (Mistral
  // 7B v0.1: 4096); 0 = none. Only a sequence longer than the window differs from full causal attention.
  std::int64_t window = 0;
  bool fused = false;  // flash-style kernel: no materialised score matrix
  bool memory_efficient = false;  // PyTorch's memory-efficient kernel, not FlashAttention (--attention sdpa)
  bool dropout = false;  // dropout on the probabilities in training (BERT/GPT-2 0.1; Llama-family 0: no kernel)
  // The model code splits heads as permuted views of the [N, S, hidden] projections and calls torch.matmul on them
  // (BERT's transpose_for_scores, GPT-2's _split_heads, Hugging Face eager attention), then makes the context
  // contiguous: Q, K, V and the context are each copied once per phase where the runtime says so
  // (RuntimeProfile::attention_head_copies). nn.MultiheadAttention and fairseq hand bmm strided views instead.
  bool head_copies = false;
  bool window_applies() const { return causal && window > 0 && kv_len > window; }
};

// Table-batched embedding-bag geometry: one lookup op over all tables of a model, as FBGEMM and HugeCTR run them.
struct EmbeddingBagGeometry {
  std::int64_t batch = 1;
  std::int64_t dim = 1;                // row length (every table of one op shares it)
  std::vector<std::int64_t> rows;      // rows per table
  std::vector<double> pooling;         // lookups per sample per table (1: one-hot; > 1: multi-hot, summed)
  double table_elem_bytes = 4;         // storage of a table element (FP32 in the DLRM references, also under AMP)
  double zipf_alpha = 0;               // ids drawn by rank with P(r) ~ r^-alpha (0: uniform); sets the cache hit rate
  EmbeddingOptimizer optimizer = EmbeddingOptimizer::kSgd;
  // Lookup ops the framework issues for these tables, each its own kernels and dispatch: 1 for a table-batched
  // kernel (FBGEMM), the local table count where the model code calls one embedding layer per table.
  std::int64_t lookup_ops = 1;
  double lookups() const;              // per batch, all tables
  double table_elems() const;          // all tables
};

// Dot interaction geometry: `features` vectors of length `dim` per sample (the bottom MLP's output and one pooled
// embedding per table); the output is the strictly lower triangle of their Gram matrix, concatenated after the
// bottom MLP's output (DLRM, Naumov et al. 2019).
struct InteractionGeometry {
  std::int64_t batch = 1;
  std::int64_t features = 1;
  std::int64_t dim = 1;
  std::int64_t pairs() const { return features * (features - 1) / 2; }
};

struct Op {
  std::string name;  // unique within a graph, e.g. "layer1.0.conv2"
  OpKind kind = OpKind::kElementwise;
  std::vector<int> inputs;  // ids of producing ops; -1 for a graph input
  std::vector<std::int64_t> out_shape;  // output tensor shape including batch

  // Geometry for the kinds that need it.
  ConvGeometry conv;
  MatmulGeometry mm;
  AttentionGeometry attn;
  EmbeddingBagGeometry bag;
  InteractionGeometry interaction;
  NormKind norm = NormKind::kBatch;
  PoolKind pool = PoolKind::kMax;
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
  PointwiseKind pointwise = PointwiseKind::kOther;  // elementwise ops only

  std::int64_t in_elems = 0;   // elements read from all activation inputs (forward)
  std::int64_t out_elems = 0;  // elements written (forward)
  double flops_per_out_elem = 0;  // elementwise/norm/pool/softmax/loss arithmetic per output element
  std::int64_t params = 0;        // learned parameters owned by this op (0 when shared/tied)
  std::int64_t weight_elems = 0;  // weight elements read per execution (tied weights are read but not owned)
  std::int64_t repeats = 1;       // the kernel is launched this many times with this geometry (RNN steps)

  bool needs_input_grad = true;   // false for ops fed only by the graph input (no dgrad)
  bool saves_output = false;      // output is kept for backward (activation memory)
  bool saves_input = false;       // input is kept for backward
  bool saves_mask = false;        // a 1-byte mask of the output's shape is kept for backward (dropout)
  bool in_place = false;          // writes into its input's buffer (no new allocation)
  // A GELU the model's own code writes as Hugging Face's gelu_new (NewGELUActivation: the tanh formula as eight
  // torch calls); an eager runtime with RuntimeProfile::gelu_new_kernels runs it as that chain of kernels
  // (data/eager_activations.toml).
  bool gelu_new_code = false;
  bool is_view = false;           // reshape/flatten/view: no kernel, no traffic
  // The repeated layer of the graph's eager model code (Graph::model_code) this op belongs to, -1 outside one: the
  // host model charges that layer's counted torch and module calls over its ops (schedule/step.cpp).
  int code_layer = -1;
};

}  // namespace perfcast
