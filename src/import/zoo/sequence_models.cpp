// Sequence models: BERT pre-training, GPT-2 language modelling, the base Transformer for translation and GNMT.
// Each graph is one training step's forward pass over `seq` tokens per sample (ModelOptions.seq, 0 = default),
// ending in the training loss. The parameter arithmetic behind each total is in tests/zoo_dense_seq_test.cpp.
#include <functional>
#include <utility>

#include "core/error.h"
#include "graph/builder.h"
#include "import/zoo/transformer_blocks.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

std::int64_t resolve_seq(const std::string& id, const ModelOptions& o, std::int64_t fallback, std::int64_t max_seq) {
  if (o.seq < 0) throw InputError(id + ": sequence length must be positive, got " + std::to_string(o.seq));
  const std::int64_t seq = o.seq == 0 ? fallback : o.seq;
  if (max_seq > 0 && seq > max_seq)
    throw InputError(id + ": sequence length " + std::to_string(seq) + " exceeds its " + std::to_string(max_seq) +
                     " learned positions");
  return seq;
}

// ---- BERT ----------------------------------------------------------------------------------------------------
// Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding" (NAACL
// 2019), arXiv:1810.04805, with the module layout of google-research/bert and HF BertForPreTraining: word
// (30522), position (512) and token-type (2) embeddings, post-LN encoder layers with GELU FFN of 4H, a tanh
// pooler on [CLS], and the pre-training heads: the MLM transform (dense + GELU + LN) with a decoder tied to the
// word embeddings (only its bias is owned) and the 2-way next-sentence classifier.

Graph build_bert(const std::string& id, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                 const ModelOptions& o) {
  // Vocabulary 30522, 512 positions and 2 token types as BertDims has them.
  const BertDims d{.layers = layers, .hidden = hidden, .heads = heads, .intermediate = 4 * hidden};
  return bert_pretraining_graph(id, d, resolve_seq(id, o, 128, d.positions), o.batch);
}

// The fine-tuned question-answering form (HF BertForQuestionAnswering, the SQuAD models of NVIDIA's BERT
// examples, TensorRT demoBERT and ONNX Runtime's BERT notebooks): the encoder and a 2-way span head per token,
// without the pre-training heads (whose 30522-way MLM decoder is ~20% of BERT-base's FLOPs at seq 128).
Graph build_bert_squad(const std::string& id, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                       const ModelOptions& o) {
  const BertDims d{.layers = layers, .hidden = hidden, .heads = heads, .intermediate = 4 * hidden};
  return bert_squad_graph(id, d, resolve_seq(id, o, 384, d.positions), o.batch);
}

// ---- GPT-2 ---------------------------------------------------------------------------------------------------
// Radford et al., "Language Models are Unsupervised Multitask Learners" (2019), the 124M model as released
// (openai/gpt-2 hparams, HF GPT2LMHeadModel): 12 pre-LN blocks, d=768, 12 heads, vocab 50257, 1024 learned
// positions, final LN, LM head tied to the token embeddings. The fused c_attn projection (768 -> 2304) is built
// as three 768 -> 768 projections with the same parameters and MACs (the builder has no split op).

Graph build_gpt2(const ModelOptions& o) {
  const Gpt2Dims d;  // the 124M model: vocabulary 50257, 1024 positions, 12 layers, d=768, 12 heads, MLP 4d
  return gpt2_lm_graph("gpt2", d, resolve_seq("gpt2", o, 1024, d.positions), o.batch);
}

// The larger released GPT-2 models (openai/gpt-2 hparams for 355M, 774M and 1558M): same vocabulary and
// positions, more and wider layers, MLP 4d.
Graph build_gpt2_sized(const std::string& id, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                       const ModelOptions& o) {
  Gpt2Dims d;
  d.layers = layers;
  d.hidden = hidden;
  d.heads = heads;
  d.intermediate = 4 * hidden;
  return gpt2_lm_graph(id, d, resolve_seq(id, o, 1024, d.positions), o.batch);
}

// ---- Transformer (base) ---------------------------------------------------------------------------------------
// Vaswani et al., "Attention Is All You Need" (NeurIPS 2017), arXiv:1706.03762, base model of Table 3: N=6
// encoder and 6 decoder layers, d_model=512, d_ff=2048 (ReLU), h=8, P_drop=0.1 on every sub-layer output and on
// the embedding sums, post-LN residuals (Sec. 3.1), sinusoidal positions (no parameters), and one shared
// 37000-token BPE vocabulary (Sec. 5.1) whose table serves both embeddings and the pre-softmax projection
// (Sec. 3.4). The embedding scale by sqrt(d_model) and the position add are fused into the embedding dropout.
// The decoder's lookup into the shared table is an embedding of vocabulary 0: it gathers rows and owns no
// parameters (the builder has no tied embedding).

Tensor post_ln_sublayer(GraphBuilder& b, const Tensor& x, const Tensor& y, const std::string& name) {
  return b.layer_norm(b.add(b.dropout(y, name + ".dropout"), x, name + ".residual"), name + ".layer_norm");
}

Tensor relu_ffn(GraphBuilder& b, const Tensor& x, std::int64_t d_ff) {
  Tensor h = b.relu(b.linear(x, d_ff, true, "ffn.fc1"), false, "ffn.relu");
  return b.linear(h, x.shape.back(), true, "ffn.fc2");
}

Graph build_transformer_base(const ModelOptions& o) {
  constexpr std::int64_t kVocab = 37000, kD = 512, kFf = 2048, kHeads = 8, kLayers = 6;
  const std::int64_t seq = resolve_seq("transformer_base", o, 128, 0);
  GraphBuilder b("transformer_base", o.batch);
  b.set_sequence(seq);
  Tensor src = b.input({seq}, 8);
  Tensor tgt = b.input({seq}, 8);

  b.set_scope("encoder.");
  Tensor x = b.dropout(b.embedding(src, kVocab, kD, "embed_tokens"), "embed_dropout");
  for (std::int64_t l = 0; l < kLayers; ++l) {
    b.set_scope("encoder.layers." + std::to_string(l) + ".");
    x = post_ln_sublayer(b, x, mha(b, x, x, kHeads, false, true, "self_attn"), "self_attn");
    x = post_ln_sublayer(b, x, relu_ffn(b, x, kFf), "ffn");
  }
  const Tensor memory = x;

  b.set_scope("decoder.");
  Tensor y = b.dropout(b.embedding(tgt, 0, kD, "embed_tokens_shared"), "embed_dropout");
  for (std::int64_t l = 0; l < kLayers; ++l) {
    b.set_scope("decoder.layers." + std::to_string(l) + ".");
    y = post_ln_sublayer(b, y, mha(b, y, y, kHeads, /*causal=*/true, true, "self_attn"), "self_attn");
    y = post_ln_sublayer(b, y, mha(b, y, memory, kHeads, false, true, "encoder_attn"), "encoder_attn");
    y = post_ln_sublayer(b, y, relu_ffn(b, y, kFf), "ffn");
  }
  b.set_scope("decoder.");
  Tensor logits = b.linear(y, kVocab, false, "output_projection", /*tied_weight=*/true);
  b.set_scope("");
  b.cross_entropy(logits);  // label-smoothed cross-entropy (eps 0.1)
  return b.finish();
}

// ---- GNMT ----------------------------------------------------------------------------------------------------
// Wu et al., "Google's Neural Machine Translation System" (2016), arXiv:1609.08144, in the GNMT v2 form of the
// MLPerf reference / NVIDIA DeepLearningExamples PyTorch/Translation/GNMT (seq2seq/models/{encoder,decoder,
// attention}.py): hidden 1024, shared 32320-token embedding, dropout 0.2 on LSTM inputs. Encoder: bidirectional
// LSTM, then 3 LSTMs (2048 -> 1024, then two 1024 -> 1024 with residuals). Decoder: an LSTM whose outputs
// query a normalised Bahdanau attention over the encoder outputs, then 3 LSTMs fed [x, context] (2048 -> 1024,
// residuals on the last two) and a 1024 -> 32320 classifier. Source and target lengths are both `seq`.
//
// Attention: score(q_i, k_j) = v . tanh(W_q q_i + W_k k_j + b) over the expanded [N, T, S, 1024] tensor,
// softmax over S and context = scores x keys. The bias b (normalize_bias) is carried as the bias of W_q, which
// is the same function; the expand of the query is an up-sampling copy (the add then writes the expanded
// tensor, as PyTorch's broadcasting add does), and v is a 1024 -> 1 projection. The scalar normalize_scalar
// (1 parameter) is not represented.

Graph build_gnmt(const ModelOptions& o) {
  constexpr std::int64_t kVocab = 32320, kH = 1024;
  const std::int64_t seq = resolve_seq("gnmt", o, 50, 0);
  GraphBuilder b("gnmt", o.batch);
  b.set_sequence(seq);
  Tensor src = b.input({seq}, 8);
  Tensor tgt = b.input({seq}, 8);

  b.set_scope("encoder.");
  Tensor x = b.dropout(b.embedding(src, kVocab, kH, "embedder"), "dropout0");
  // Bidirectional first layer: a forward and a backward (time-reversed) LSTM, outputs concatenated.
  Tensor fwd = b.lstm(x, kH, "rnn0.fwd");
  Tensor bwd = b.lstm(x, kH, "rnn0.bwd");
  x = b.concat({fwd, bwd}, 2, "rnn0.concat");
  x = b.lstm(b.dropout(x, "dropout1"), kH, "rnn1");
  for (int i = 2; i < 4; ++i) {
    const std::string n = std::to_string(i);
    Tensor r = b.lstm(b.dropout(x, "dropout" + n), kH, "rnn" + n);
    x = b.add(r, x, "residual" + n);
  }
  const Tensor memory = x;

  b.set_scope("decoder.");
  Tensor y = b.embedding(tgt, 0, kH, "embedder_shared");  // shares the encoder's table
  y = b.lstm(y, kH, "att_rnn.rnn");

  // Normalised Bahdanau attention, queries = att_rnn outputs [N,T,H], keys = values = encoder outputs [N,S,H].
  Tensor pq = b.linear(y, kH, /*bias=normalize_bias*/ true, "att_rnn.attn.linear_q");
  Tensor pk = b.linear(memory, kH, false, "att_rnn.attn.linear_k");
  Tensor sum = b.add(b.upsample(pq, seq, "att_rnn.attn.expand_q"), pk, "att_rnn.attn.sum_qk");  // [N,T,S*H]
  Tensor e = b.reshape(b.tanh(sum, "att_rnn.attn.tanh"), {seq * seq, kH}, "att_rnn.attn.view");
  Tensor scores = b.linear(e, 1, false, "att_rnn.attn.linear_att");  // [N,T*S,1]
  scores = b.softmax(b.reshape(scores, {seq, seq}, "att_rnn.attn.scores_view"), "att_rnn.attn.softmax");
  const Tensor context = b.matmul(scores, memory, "att_rnn.attn.context");  // [N,T,H]

  y = b.dropout(y, "dropout1");
  y = b.lstm(b.concat({y, context}, 2, "concat1"), kH, "rnn1");
  for (int i = 2; i < 4; ++i) {
    const std::string n = std::to_string(i);
    Tensor in = b.concat({b.dropout(y, "dropout" + n), context}, 2, "concat" + n);
    y = b.add(b.lstm(in, kH, "rnn" + n), y, "residual" + n);
  }
  Tensor logits = b.linear(y, kVocab, true, "classifier");
  b.set_scope("");
  b.cross_entropy(logits);  // label-smoothed cross-entropy (eps 0.1)
  return b.finish();
}

void add(std::vector<ZooModel>& out, const std::string& id, const std::string& family, const std::string& desc,
         const std::string& cite, std::int64_t default_seq, std::function<Graph(const ModelOptions&)> build) {
  out.push_back(ZooModel{id, family, desc, cite, true, default_seq, std::move(build)});
}

// The last model added reads a learned position table of `rows` rows: its context (check_context).
void with_position_table(std::vector<ZooModel>& out, std::int64_t rows) {
  out.back().max_positions = rows;
  out.back().learned_positions = true;
}

}  // namespace

void register_sequence_models(std::vector<ZooModel>& out) {
  const std::string devlin = "Devlin et al. 2019, arXiv:1810.04805; module layout as HF BertForPreTraining";
  add(out, "bert_base", "transformer", "BERT-base pre-training (MLM + NSP), L=12 H=768 A=12, vocab 30522", devlin,
      128, [](const ModelOptions& o) { return build_bert("bert_base", 12, 768, 12, o); });
  with_position_table(out, BertDims{}.positions);
  add(out, "bert_large", "transformer", "BERT-large pre-training (MLM + NSP), L=24 H=1024 A=16, vocab 30522", devlin,
      128, [](const ModelOptions& o) { return build_bert("bert_large", 24, 1024, 16, o); });
  with_position_table(out, BertDims{}.positions);
  add(out, "bert_base_squad", "transformer", "BERT-base for question answering (SQuAD span head, no pre-training heads)",
      devlin + "; HF BertForQuestionAnswering", 384,
      [](const ModelOptions& o) { return build_bert_squad("bert_base_squad", 12, 768, 12, o); });
  with_position_table(out, BertDims{}.positions);
  add(out, "bert_large_squad", "transformer", "BERT-large for question answering (SQuAD span head, no pre-training heads)",
      devlin + "; HF BertForQuestionAnswering", 384,
      [](const ModelOptions& o) { return build_bert_squad("bert_large_squad", 24, 1024, 16, o); });
  with_position_table(out, BertDims{}.positions);
  add(out, "gpt2", "transformer", "GPT-2 small (124M), 12 layers, d=768, 12 heads, causal LM, tied head",
      "Radford et al. 2019; shapes as openai/gpt-2 124M hparams / HF GPT2LMHeadModel", 1024, build_gpt2);
  with_position_table(out, Gpt2Dims{}.positions);
  const std::string radford = "Radford et al. 2019; shapes as openai/gpt-2 hparams / HF GPT2LMHeadModel";
  add(out, "gpt2_medium", "transformer", "GPT-2 medium (355M), 24 layers, d=1024, 16 heads, causal LM, tied head",
      radford, 1024, [](const ModelOptions& o) { return build_gpt2_sized("gpt2_medium", 24, 1024, 16, o); });
  with_position_table(out, Gpt2Dims{}.positions);
  add(out, "gpt2_large", "transformer", "GPT-2 large (774M), 36 layers, d=1280, 20 heads, causal LM, tied head",
      radford, 1024, [](const ModelOptions& o) { return build_gpt2_sized("gpt2_large", 36, 1280, 20, o); });
  with_position_table(out, Gpt2Dims{}.positions);
  add(out, "gpt2_xl", "transformer", "GPT-2 XL (1558M), 48 layers, d=1600, 25 heads, causal LM, tied head", radford,
      1024, [](const ModelOptions& o) { return build_gpt2_sized("gpt2_xl", 48, 1600, 25, o); });
  with_position_table(out, Gpt2Dims{}.positions);
  add(out, "transformer_base", "transformer",
      "Transformer base, 6+6 layers, d=512, ff=2048, 8 heads, shared 37000 BPE vocab; src len = tgt len = seq",
      "Vaswani et al. 2017, arXiv:1706.03762, Table 3 (base)", 128, build_transformer_base);
  add(out, "gnmt", "rnn",
      "GNMT v2, 4-layer LSTM encoder (1st bidirectional) + 4-layer decoder with Bahdanau attention, hidden 1024, "
      "vocab 32320; src len = tgt len = seq",
      "Wu et al. 2016, arXiv:1609.08144; GNMT v2 as MLPerf / NVIDIA DeepLearningExamples PyTorch GNMT", 50,
      build_gnmt);
}

}  // namespace perfcast
