// Builds a Graph the way model code reads: each call appends one op and returns its output tensor.
// Shapes include the batch dimension first: images [N,C,H,W] (or [N,C,L], [N,C,D,H,W]), sequences [N,S,H].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace perfcast {

// Handle to a tensor produced by an op (or the graph input, id -1).
struct Tensor {
  int id = -1;
  std::vector<std::int64_t> shape;
  std::int64_t elems() const;
};

// Spatial triple given by the caller; a single value applies to every spatial dimension.
using Dims = std::vector<std::int64_t>;

class GraphBuilder {
 public:
  GraphBuilder(std::string model_id, std::int64_t batch);

  // Graph input; `shape` excludes the batch dimension. `bytes_per_elem_on_host` is what crosses PCIe
  // per element (1 for uint8 images, 4 or 8 for token ids).
  Tensor input(std::vector<std::int64_t> shape, int bytes_per_elem_on_host = 1);

  // Name prefix for the ops that follow ("layer1.0."); names get a running index when not given.
  void set_scope(std::string scope) { scope_ = std::move(scope); }
  // The eager model code the graph's layers run (data/graph_code id; Graph::model_code).
  void set_model_code(std::string id) { graph_.model_code = std::move(id); }
  // The ops that follow belong to this layer of the model code (-1: none; Op::code_layer).
  void set_code_layer(int layer) { code_layer_ = layer; }

  // ---- compute-heavy ops
  Tensor conv(const Tensor& x, std::int64_t c_out, Dims kernel, Dims stride = {1}, Dims pad = {0},
              Dims dilation = {1}, std::int64_t groups = 1, bool bias = false, const std::string& name = "");
  // Transposed convolution (upsampling), output = (in-1)*stride - 2*pad + kernel.
  Tensor conv_transpose(const Tensor& x, std::int64_t c_out, Dims kernel, Dims stride, Dims pad = {0},
                        bool bias = true, const std::string& name = "");
  // y = x W (+b) over the last dimension.
  Tensor linear(const Tensor& x, std::int64_t out_features, bool bias = true, const std::string& name = "",
                bool tied_weight = false);
  // Batched matmul of two activations: a [..., m, k] x b [..., k, n].
  Tensor matmul(const Tensor& a, const Tensor& b, const std::string& name = "");
  // Attention core on q [N,Sq,heads*d], k/v [N,Skv,kv_heads*d]; returns [N,Sq,heads*d]. window > 0: causal
  // attention over the `window` latest keys (AttentionGeometry::window).
  Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, std::int64_t heads, std::int64_t kv_heads,
                   bool causal, bool fused = false, const std::string& name = "", bool dropout = false,
                   bool head_copies = false, std::int64_t window = 0);
  // LSTM layer over x [N,S,in] (time-major loop): input projection as one GEMM, the recurrent GEMM and the
  // gate elementwise kernels launched once per time step. Returns [N,S,hidden].
  Tensor lstm(const Tensor& x, std::int64_t hidden, const std::string& name = "");

  // ---- normalisation
  Tensor batch_norm(const Tensor& x, const std::string& name = "");
  Tensor layer_norm(const Tensor& x, const std::string& name = "");
  Tensor rms_norm(const Tensor& x, const std::string& name = "");
  Tensor group_norm(const Tensor& x, std::int64_t groups, const std::string& name = "");

  // ---- elementwise (flops per output element given where not obvious)
  Tensor relu(const Tensor& x, bool in_place = true, const std::string& name = "");
  Tensor relu6(const Tensor& x, const std::string& name = "");
  Tensor gelu(const Tensor& x, const std::string& name = "");
  // Hugging Face's gelu_new (NewGELUActivation): the same GELU, marked as written in torch calls (Op::gelu_new_code).
  Tensor gelu_new(const Tensor& x, const std::string& name = "");
  Tensor silu(const Tensor& x, const std::string& name = "");
  Tensor sigmoid(const Tensor& x, const std::string& name = "");
  Tensor hardswish(const Tensor& x, const std::string& name = "");    // x * relu6(x + 3) / 6 (MobileNetV3)
  Tensor hardsigmoid(const Tensor& x, const std::string& name = "");  // relu6(x + 3) / 6 (MobileNetV3 SE gate)
  Tensor tanh(const Tensor& x, const std::string& name = "");
  Tensor dropout(const Tensor& x, const std::string& name = "");
  Tensor add(const Tensor& a, const Tensor& b, const std::string& name = "");  // residual add
  Tensor mul(const Tensor& a, const Tensor& b, const std::string& name = "");  // gating
  Tensor scale(const Tensor& x, const std::string& name = "");  // times a constant (Gemma's embedding scale)
  Tensor lrn(const Tensor& x, std::int64_t size = 5, const std::string& name = "");  // local response norm

  // ---- pooling
  Tensor max_pool(const Tensor& x, Dims kernel, Dims stride, Dims pad = {0}, bool ceil_mode = false,
                  const std::string& name = "");
  Tensor avg_pool(const Tensor& x, Dims kernel, Dims stride, Dims pad = {0}, bool ceil_mode = false,
                  const std::string& name = "");
  Tensor global_avg_pool(const Tensor& x, const std::string& name = "");  // -> [N,C,1,...]

  // ---- other
  Tensor softmax(const Tensor& x, const std::string& name = "");
  // ids [N,S] -> [N,S,dim]; table of vocab x dim parameters.
  Tensor embedding(const Tensor& ids, std::int64_t vocab, std::int64_t dim, const std::string& name = "");
  // Table-batched embedding bag (recommendation models): ids holds every table's lookups of a sample; one pooled
  // (summed) row per table and sample -> [N, tables, dim]. `rows` and `pooling` are per table.
  // `bags_per_table` (0 = the batch) is the samples each table pools for: a table-wise sharded GPU serves the
  // global batch (a profiler trace of one rank of a TorchRec job).
  Tensor embedding_bag(const Tensor& ids, std::vector<std::int64_t> rows, std::vector<double> pooling, std::int64_t dim,
                       EmbeddingOptimizer optimizer, const std::string& name = "", std::int64_t bags_per_table = 0);
  // DLRM dot interaction of the bottom MLP's output [N,dim] with the pooled embeddings [N,tables,dim]:
  // -> [N, dim + F(F-1)/2] with F = tables + 1 (the pairwise dot products after the bottom output).
  Tensor dot_interaction(const Tensor& bottom, const Tensor& embeddings, const std::string& name = "");
  Tensor concat(const std::vector<Tensor>& xs, int axis = 1, const std::string& name = "");
  Tensor reshape(const Tensor& x, std::vector<std::int64_t> shape_without_batch, const std::string& name = "");
  Tensor flatten(const Tensor& x, const std::string& name = "");  // -> [N, prod(rest)]
  Tensor transpose(const Tensor& x, std::vector<std::int64_t> new_shape_without_batch, const std::string& name = "");
  Tensor upsample(const Tensor& x, std::int64_t factor, const std::string& name = "");  // nearest, by copy
  // A memory-bound pass that reads `xs` once and writes a tensor of `out_shape` (a profiler trace's reductions,
  // stacks, gathers and interpolations): a data-movement op, bytes read + written, backward the same traffic.
  Tensor streaming_pass(const std::vector<Tensor>& xs, std::vector<std::int64_t> out_shape, const std::string& name,
                        const char* stem);
  Tensor cross_entropy(const Tensor& logits, const std::string& name = "loss");
  Tensor mse_loss(const Tensor& pred, const std::string& name = "loss");

  // Sequence models: tokens per sample (for tokens/s) and mark the graph as a sequence model.
  void set_sequence(std::int64_t seq);

  Graph finish();
  // The graph being built, for importers that refine the op just added (a traced table's element size).
  Graph& graph_for_update() { return graph_; }

 private:
  Op& push(Op op, const std::string& name, const char* default_stem);
  Tensor out_of(const Op& op) const;
  Tensor elementwise(const Tensor& x, double flops_per_elem, bool saves_in, bool saves_out, bool in_place,
                     const std::string& name, const char* stem);
  Tensor binary(const Tensor& a, const Tensor& b, double flops_per_elem, bool saves_inputs,
                const std::string& name, const char* stem);
  Tensor pool(const Tensor& x, PoolKind kind, Dims kernel, Dims stride, Dims pad, bool ceil_mode,
              const std::string& name);
  Tensor norm(const Tensor& x, NormKind kind, std::int64_t channels, double flops_per_elem, const std::string& name);

  Graph graph_;
  std::string scope_;
  int counter_ = 0;
  int code_layer_ = -1;
};

}  // namespace perfcast
