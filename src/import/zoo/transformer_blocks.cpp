#include "import/zoo/transformer_blocks.h"

namespace perfcast {

Tensor mha(GraphBuilder& b, const Tensor& x, const Tensor& kv, std::int64_t heads, bool causal, bool bias,
           const std::string& name, bool head_copies) {
  const std::int64_t d = x.shape.back();
  Tensor q = b.linear(x, d, bias, name + ".q");
  Tensor k = b.linear(kv, d, bias, name + ".k");
  Tensor v = b.linear(kv, d, bias, name + ".v");
  // BERT (attention_probs_dropout_prob), GPT-2 (attn_pdrop) and the Transformer base train with 0.1 attention
  // dropout.
  Tensor a = b.attention(q, k, v, heads, heads, causal, false, name + ".core", /*dropout=*/true, head_copies);
  return b.linear(a, d, bias, name + ".out");
}

namespace {

// Embeddings and the post-LN encoder stack shared by every BERT head; returns the last hidden states [S, H].
Tensor bert_encoder(GraphBuilder& b, const BertDims& d, std::int64_t seq) {
  Tensor ids = b.input({seq}, 8);

  // Position and token-type ids index their tables with the same [N, S] shape as the token ids.
  b.set_scope("embeddings.");
  const std::int64_t e = d.embedding > 0 ? d.embedding : d.hidden;
  Tensor x = b.embedding(ids, d.vocab, e, "word_embeddings");
  const Tensor positions = b.embedding(ids, d.positions, e, "position_embeddings");
  // DistilBERT's create_sinusoidal_embeddings sets the table's requires_grad to False: read each step (weight_elems
  // kept) but owning no trained parameters, so no gradient or optimizer state, as ALBERT's shared layers.
  if (d.fixed_positions) b.graph_for_update().ops.back().params = 0;
  x = b.add(x, positions, "add_position");
  if (d.type_vocab > 0) x = b.add(x, b.embedding(ids, d.type_vocab, e, "token_type_embeddings"), "add_token_type");
  x = b.layer_norm(x, "LayerNorm");
  x = b.dropout(x, "dropout");
  // ELECTRA's embeddings_project, ALBERT's embedding_hidden_mapping_in.
  if (e != d.hidden) x = b.linear(x, d.hidden, true, "project");
  // Hugging Face BertLayer: the host model charges each layer's counted torch and module calls (data/graph_code).
  if (!d.model_code.empty()) b.set_model_code(d.model_code);
  std::int64_t group = -1;
  for (std::int64_t l = 0; l < d.layers; ++l) {
    b.set_scope("encoder.layer." + std::to_string(l) + ".");
    if (!d.model_code.empty()) b.set_code_layer(static_cast<int>(l));
    // AlbertTransformer: layer l runs group int(l / (layers / groups)); a group's later layers reuse its weights
    // (read again, one gradient each, held and updated once).
    const std::size_t first_op = b.graph_for_update().ops.size();
    const std::int64_t g = d.layer_groups > 0 ? l * d.layer_groups / d.layers : l;
    const bool shared = d.layer_groups > 0 && g == group;
    group = g;
    // BertSelfAttention (Hugging Face, NVIDIA DeepLearningExamples): transpose_for_scores, then torch.matmul.
    Tensor a = mha(b, x, x, d.heads, false, true, "attention", /*head_copies=*/true);
    a = b.dropout(a, "attention.dropout");
    x = b.layer_norm(b.add(a, x, "attention.residual"), "attention.LayerNorm");
    Tensor f = b.gelu(b.linear(x, d.intermediate, true, "intermediate.dense"), "intermediate.gelu");
    f = b.dropout(b.linear(f, d.hidden, true, "output.dense"), "output.dropout");
    x = b.layer_norm(b.add(f, x, "output.residual"), "output.LayerNorm");
    if (shared)
      for (std::size_t i = first_op; i < b.graph_for_update().ops.size(); ++i) b.graph_for_update().ops[i].params = 0;
  }
  b.set_code_layer(-1);
  return x;
}

}  // namespace

Graph bert_encoder_graph(const std::string& id, const BertDims& d, const EncoderHeads& heads, std::int64_t seq,
                         std::int64_t batch) {
  GraphBuilder b(id, batch);
  b.set_sequence(seq);
  const Tensor x = bert_encoder(b, d, seq);

  Tensor pooled;
  if (heads.sentence) {
    // Pooler on the first token. hidden[:, 0] is taken with a 1x1 window at stride seq over the [S, H] plane,
    // which selects exactly row 0 (the builder has no slice op).
    b.set_scope("pooler.");
    Tensor cls = b.reshape(x, {1, seq, d.hidden}, "plane_view");
    cls = b.avg_pool(cls, {1, 1}, {seq, 1}, {0}, false, "first_token");
    cls = b.reshape(cls, {1, d.hidden}, "cls_view");
    pooled = b.tanh(b.linear(cls, d.hidden, true, "dense"), "activation");
  }

  b.set_scope("cls.");
  if (heads.mlm) {
    const std::int64_t w = heads.mlm_width > 0 ? heads.mlm_width : d.hidden;
    Tensor t = b.gelu(b.linear(x, w, true, "predictions.transform.dense"), "predictions.transform.gelu");
    t = b.layer_norm(t, "predictions.transform.LayerNorm");
    Tensor mlm = b.linear(t, d.vocab, true, "predictions.decoder", /*tied_weight=*/true);
    b.cross_entropy(mlm, heads.sentence ? "mlm_loss" : "loss");
  }
  if (heads.discriminator) {
    Tensor t = b.gelu(b.linear(x, d.hidden, true, "discriminator.dense"), "discriminator.gelu");
    b.cross_entropy(b.linear(t, 1, true, "discriminator.dense_prediction"), heads.mlm ? "rtd_loss" : "loss");
  }
  if (heads.sentence) {
    Tensor nsp = b.linear(pooled, 2, true, "seq_relationship");
    b.set_scope("");
    b.cross_entropy(nsp, "loss");
  }
  b.set_scope("");
  return b.finish();
}

Graph bert_pretraining_graph(const std::string& id, const BertDims& d, std::int64_t seq, std::int64_t batch) {
  return bert_encoder_graph(id, d, EncoderHeads{}, seq, batch);
}

Graph bert_squad_graph(const std::string& id, const BertDims& d, std::int64_t seq, std::int64_t batch) {
  GraphBuilder b(id, batch);
  b.set_sequence(seq);
  const Tensor x = bert_encoder(b, d, seq);
  // HF BertForQuestionAnswering: no pooler; qa_outputs maps every token to a start and an end logit.
  b.set_scope("");
  Tensor logits = b.linear(x, 2, true, "qa_outputs");
  b.cross_entropy(logits, "loss");
  return b.finish();
}

Graph gpt2_lm_graph(const std::string& id, const Gpt2Dims& d, std::int64_t seq, std::int64_t batch) {
  GraphBuilder b(id, batch);
  b.set_sequence(seq);
  Tensor ids = b.input({seq}, 8);

  Tensor x = b.embedding(ids, d.vocab, d.hidden, "wte");
  x = b.add(x, b.embedding(ids, d.positions, d.hidden, "wpe"), "add_wpe");  // position ids share the ids' shape
  x = b.dropout(x, "drop");
  // Hugging Face GPT2Block: the host model charges each block's counted torch and module calls (data/graph_code).
  b.set_model_code("hf_gpt2");
  for (std::int64_t l = 0; l < d.layers; ++l) {
    b.set_scope("h." + std::to_string(l) + ".");
    b.set_code_layer(static_cast<int>(l));
    Tensor h = b.layer_norm(x, "ln_1");
    Tensor a = b.dropout(mha(b, h, h, d.heads, /*causal=*/true, true, "attn", /*head_copies=*/true), "attn.resid_dropout");
    x = b.add(x, a, "attn.residual");
    h = b.layer_norm(x, "ln_2");
    // GPT2MLP's act is ACT2FN[activation_function], "gelu_new" in the GPT-2 checkpoints: NewGELUActivation.
    const Tensor fc = b.linear(h, d.intermediate, true, "mlp.c_fc");
    h = d.hf_gelu_new ? b.gelu_new(fc, "mlp.gelu") : b.gelu(fc, "mlp.gelu");
    h = b.dropout(b.linear(h, d.hidden, true, "mlp.c_proj"), "mlp.dropout");
    x = b.add(x, h, "mlp.residual");
  }
  b.set_code_layer(-1);
  b.set_scope("");
  x = b.layer_norm(x, "ln_f");
  Tensor logits = b.linear(x, d.vocab, false, "lm_head", /*tied_weight=*/true);
  b.cross_entropy(logits);
  return b.finish();
}

}  // namespace perfcast
