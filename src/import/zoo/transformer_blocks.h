// Transformer building blocks shared by the zoo (src/import/zoo/sequence_models.cpp) and the Hugging Face
// config importer (src/import/hf_config.cpp): multi-head attention, and the BERT and GPT-2 graphs built from
// their dimensions, so that a config.json of either family gives the zoo's graph op for op.
#pragma once

#include <cstdint>
#include <string>

#include "graph/builder.h"
#include "graph/graph.h"

namespace perfcast {

// Multi-head attention block: separate q/k/v projections (with bias when `bias`), the attention core and the
// output projection. `kv` is the key/value source (the block input for self-attention, the encoder for
// cross-attention).
// head_copies: the heads are permuted views handed to torch.matmul (AttentionGeometry::head_copies).
Tensor mha(GraphBuilder& b, const Tensor& x, const Tensor& kv, std::int64_t heads, bool causal, bool bias,
           const std::string& name, bool head_copies = false);

// The dimensions of a BERT encoder with its pre-training heads; the defaults are BERT-base.
struct BertDims {
  std::int64_t vocab = 30522;
  std::int64_t positions = 512;  // learned position embeddings
  std::int64_t type_vocab = 2;   // token types (segments)
  std::int64_t layers = 12;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t intermediate = 3072;  // FFN width
  std::int64_t embedding = 0;     // factorized embedding width, projected to hidden (ALBERT, ELECTRA); 0: hidden
  std::int64_t layer_groups = 0;  // ALBERT num_hidden_groups: layers share the weights of their group; 0: none
  std::string model_code = "hf_bert";  // the eager layer code charged per layer (data/graph_code); "": none
  bool fixed_positions = false;   // DistilBERT sinusoidal_pos_embds: the position table is held, not trained
};

// The heads on an encoder (transformers' *ForPreTraining and *ForMaskedLM classes); the defaults are BERT's.
struct EncoderHeads {
  bool mlm = true;             // masked-LM head: dense, activation, LayerNorm, decoder tied to the word embeddings
  std::int64_t mlm_width = 0;  // the MLM transform's width: 0 is hidden (BERT, DistilBERT), ALBERT and ELECTRA's
                               // generator project to their embedding width
  bool sentence = true;        // pooler on [CLS] (dense, tanh) and a 2-way classifier (BERT NSP, ALBERT SOP)
  bool discriminator = false;  // ELECTRA replaced-token detection: dense, activation, one logit per token
};

// An encoder over `seq` tokens per sample with the given heads (type_vocab 0: no token-type embeddings, as
// DistilBERT), each head with its loss.
Graph bert_encoder_graph(const std::string& id, const BertDims& d, const EncoderHeads& heads, std::int64_t seq,
                         std::int64_t batch);

// BertForPreTraining over `seq` tokens per sample: word, position and token-type embeddings, post-LN encoder
// layers with a GELU FFN, a tanh pooler on [CLS], the MLM head (decoder tied to the word embeddings) and the
// 2-way next-sentence classifier, each with its loss.
Graph bert_pretraining_graph(const std::string& id, const BertDims& d, std::int64_t seq, std::int64_t batch);

// BertForQuestionAnswering (SQuAD fine-tuning and inference): the same encoder, no pooler, and a span head of two
// logits per token; the loss stands for the start/end cross-entropy.
Graph bert_squad_graph(const std::string& id, const BertDims& d, std::int64_t seq, std::int64_t batch);

// The dimensions of a GPT-2 decoder; the defaults are the released 124M model.
struct Gpt2Dims {
  std::int64_t vocab = 50257;
  std::int64_t positions = 1024;  // learned position embeddings
  std::int64_t layers = 12;
  std::int64_t hidden = 768;
  std::int64_t heads = 12;
  std::int64_t intermediate = 3072;  // MLP width
  // The MLP's GELU is Hugging Face's gelu_new as GPT2MLP runs it (Op::gelu_new_code): the zoo's GPT-2 models. A
  // config.json gives only the shape (its GPT-2 fields also stand in for Megatron, MosaicML and nanoGPT decoders),
  // so the config path leaves it off.
  bool hf_gelu_new = true;
};

// GPT2LMHeadModel over `seq` tokens per sample: token and position embeddings, pre-LN blocks of causal
// attention (the fused c_attn as three projections with its parameters) and a GELU MLP, final LN and the LM
// head tied to the token embeddings, ending in the loss.
Graph gpt2_lm_graph(const std::string& id, const Gpt2Dims& d, std::int64_t seq, std::int64_t batch);

}  // namespace perfcast
