// Hugging Face config.json import: LLaMA-style decoders (LLaMA, Mistral, Mixtral, Qwen2, Qwen2-MoE and other
// model types with the same fields), GPT-2 and BERT. The graph follows the transformers modeling code of each
// family: the same graph the zoo builds for the published models (the zoo's LLMs are these configs, see
// src/import/zoo/llm.cpp; GPT-2 and BERT are the zoo's own builders, src/import/zoo/transformer_blocks.cpp).
//
// Op names follow llama.cpp's GGUF tensor names ("blk.3.attn_v", "ffn_down", "output") so that inference can
// give each weight its GGUF block type (src/cost/quantization.cpp).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/data_files.h"
#include "core/error.h"
#include "graph/builder.h"
#include "import/model_source.h"
#include "import/zoo/transformer_blocks.h"

namespace perfcast {

namespace {

using nlohmann::json;

enum class Family { kLlama, kGpt2, kBert };

struct HfConfig {
  Family family = Family::kLlama;
  std::string model_type;
  std::string path;
  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  std::int64_t max_positions = 0;  // 0 = not given
  std::int64_t type_vocab = 2;     // BERT token types
  bool tied = false;
  bool qkv_bias = false;
  bool mlp_bias = false;
  // Mixture of experts (experts == 0: dense).
  std::int64_t experts = 0, experts_per_tok = 0, expert_ffn = 0, shared_ffn = 0;
  bool shared_gate = false;        // Qwen2-MoE: a sigmoid gate scales the shared expert
  std::int64_t sparse_step = 1, first_dense = 0;
  std::set<std::int64_t> dense_layers;
  std::vector<std::string> notes;

  bool moe_layer(std::int64_t l) const {
    if (experts == 0 || l < first_dense || dense_layers.count(l)) return false;
    return (l + 1) % sparse_step == 0;
  }
};

// Field access over the text config with the top level as fallback (multimodal configs nest the language
// model under text_config and keep a few fields, e.g. tie_word_embeddings, at the top).
class Fields {
 public:
  Fields(const json& text, const json& top, std::string path) : text_(text), top_(top), path_(std::move(path)) {}

  const json* find(const std::string& key) const {
    for (const json* j : {&text_, &top_}) {
      auto it = j->find(key);
      if (it != j->end() && !it->is_null()) return &*it;
    }
    return nullptr;
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }

  // A positive integer field; records it as missing when absent.
  std::int64_t count(const std::string& key, std::vector<std::string>& missing) const {
    const json* v = find(key);
    if (!v) {
      missing.push_back(key);
      return 0;
    }
    return positive(key, *v);
  }
  // First of several spellings (GPT-2's n_embd or hidden_size).
  std::int64_t count_any(const std::vector<std::string>& keys, std::vector<std::string>& missing) const {
    for (const auto& k : keys)
      if (const json* v = find(k)) return positive(k, *v);
    missing.push_back(keys.front());
    return 0;
  }
  std::int64_t count_or(const std::string& key, std::int64_t fallback) const {
    const json* v = find(key);
    return v ? positive(key, *v) : fallback;
  }
  std::int64_t count_or_zero(const std::string& key) const {
    const json* v = find(key);
    if (!v) return 0;
    if (v->is_number_integer() && v->get<std::int64_t>() == 0) return 0;
    return positive(key, *v);
  }
  bool flag_or(const std::string& key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) throw InputError("config '" + path_ + "': field '" + key + "' must be true or false");
    return v->get<bool>();
  }
  std::string text_or(const std::string& key, std::string fallback) const {
    const json* v = find(key);
    return v && v->is_string() ? v->get<std::string>() : fallback;
  }
  std::vector<std::int64_t> list_or_empty(const std::string& key) const {
    std::vector<std::int64_t> out;
    const json* v = find(key);
    if (!v) return out;
    if (!v->is_array()) throw InputError("config '" + path_ + "': field '" + key + "' must be a list of integers");
    for (const auto& e : *v) {
      if (!e.is_number_integer() || e.get<std::int64_t>() < 0)
        throw InputError("config '" + path_ + "': field '" + key + "' must be a list of integers");
      out.push_back(e.get<std::int64_t>());
    }
    return out;
  }

 private:
  std::int64_t positive(const std::string& key, const json& v) const {
    // Configs written by Python sometimes carry integral floats (4096.0).
    if (v.is_number_integer() && v.get<std::int64_t>() > 0) return v.get<std::int64_t>();
    if (v.is_number_float() && v.get<double>() > 0 && v.get<double>() == std::floor(v.get<double>()) &&
        v.get<double>() < 9e15)
      return static_cast<std::int64_t>(v.get<double>());
    throw InputError("config '" + path_ + "': field '" + key + "' must be a positive integer, got " + v.dump());
  }

  const json& text_;
  const json& top_;
  std::string path_;
};

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

json read_json(const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError("config '" + path + "' is not valid JSON: " + std::string(e.what()));
  }
}

// Model types built as LLaMA-style decoders: RMSNorm, rotary positions, SwiGLU MLP, optional GQA and MoE.
const std::set<std::string>& llama_like_types() {
  static const std::set<std::string> types{"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe"};
  return types;
}

HfConfig parse_config(const std::string& path) {
  const json root = read_json(path);
  if (!root.is_object()) throw InputError("config '" + path + "' is not a JSON object");
  const json* text = &root;
  auto tc = root.find("text_config");
  if (tc != root.end() && tc->is_object()) text = &*tc;
  const Fields f(*text, root, path);

  HfConfig c;
  c.path = path;
  c.model_type = f.text_or("model_type", "");
  if (c.model_type == "gpt2" || (c.model_type.empty() && f.has("n_embd"))) c.family = Family::kGpt2;
  else if (c.model_type == "bert") c.family = Family::kBert;
  else c.family = Family::kLlama;
  if (c.family == Family::kLlama && !c.model_type.empty() && !llama_like_types().count(c.model_type))
    c.notes.push_back("model_type '" + c.model_type + "' is built as a LLaMA-style decoder (RMSNorm, rotary, SwiGLU)");
  if (f.has("kv_lora_rank"))
    throw UnsupportedError("config '" + path + "': multi-head latent attention (kv_lora_rank) is not modelled");

  std::vector<std::string> missing;
  if (c.family == Family::kGpt2) {
    c.hidden = f.count_any({"n_embd", "hidden_size"}, missing);
    c.layers = f.count_any({"n_layer", "num_hidden_layers"}, missing);
    c.heads = f.count_any({"n_head", "num_attention_heads"}, missing);
    c.vocab = f.count("vocab_size", missing);
    c.max_positions = f.count_any({"n_positions", "n_ctx", "max_position_embeddings"}, missing);
    c.intermediate = f.count_or("n_inner", 4 * c.hidden);
    c.kv_heads = c.heads;
    c.tied = true;  // GPT2LMHeadModel always ties the LM head to wte
  } else if (c.family == Family::kBert) {
    c.hidden = f.count("hidden_size", missing);
    c.layers = f.count("num_hidden_layers", missing);
    c.heads = f.count("num_attention_heads", missing);
    c.intermediate = f.count("intermediate_size", missing);
    c.vocab = f.count("vocab_size", missing);
    c.max_positions = f.count("max_position_embeddings", missing);
    c.type_vocab = f.count_or("type_vocab_size", 2);
    c.kv_heads = c.heads;
    c.tied = true;  // the MLM decoder shares the word embeddings
  } else {
    c.hidden = f.count("hidden_size", missing);
    c.layers = f.count("num_hidden_layers", missing);
    c.heads = f.count("num_attention_heads", missing);
    c.vocab = f.count("vocab_size", missing);
    c.kv_heads = f.count_or("num_key_value_heads", c.heads);
    c.head_dim = f.count_or("head_dim", 0);
    c.max_positions = f.count_or("max_position_embeddings", 0);
    c.tied = f.flag_or("tie_word_embeddings", false);
    c.qkv_bias = c.model_type == "qwen2" || c.model_type == "qwen2_moe" || f.flag_or("attention_bias", false);
    c.mlp_bias = f.flag_or("mlp_bias", false);
    c.experts = f.count_or_zero("num_local_experts");
    if (c.experts == 0) c.experts = f.count_or_zero("num_experts");
    if (c.experts == 0) c.experts = f.count_or_zero("n_routed_experts");
    if (c.experts > 0) {
      c.experts_per_tok = f.count("num_experts_per_tok", missing);
      c.sparse_step = f.count_or("decoder_sparse_step", 1);
      c.first_dense = f.count_or_zero("first_k_dense_replace");
      for (auto l : f.list_or_empty("mlp_only_layers")) c.dense_layers.insert(l);
    }
    // Dense MLP width: every dense layer needs it; Mixtral's experts use it too (no moe_intermediate_size).
    bool any_dense = c.experts == 0;
    for (std::int64_t l = 0; l < c.layers && !any_dense; ++l) any_dense = !c.moe_layer(l);
    if (any_dense || (c.experts > 0 && !f.has("moe_intermediate_size")))
      c.intermediate = f.count("intermediate_size", missing);
    if (c.experts > 0) {
      c.expert_ffn = f.has("moe_intermediate_size") ? f.count("moe_intermediate_size", missing) : c.intermediate;
      if (f.has("shared_expert_intermediate_size")) {  // Qwen2-MoE
        c.shared_ffn = f.count("shared_expert_intermediate_size", missing);
        c.shared_gate = true;
      } else if (f.has("n_shared_experts")) {  // DeepSeek-MoE
        c.shared_ffn = f.count("n_shared_experts", missing) * c.expert_ffn;
      }
    }
  }
  if (!missing.empty())
    throw InputError("config '" + path + "' (" + (c.model_type.empty() ? "no model_type" : c.model_type) +
                     ") lacks the field" + (missing.size() > 1 ? "s " : " ") + join(missing));
  if (c.head_dim == 0) {
    if (c.hidden % c.heads != 0)
      throw InputError("config '" + path + "': hidden size " + std::to_string(c.hidden) + " is not divisible by " +
                       std::to_string(c.heads) + " heads and no head_dim is given");
    c.head_dim = c.hidden / c.heads;
  }
  if (c.heads % c.kv_heads != 0)
    throw InputError("config '" + path + "': " + std::to_string(c.heads) + " attention heads are not a multiple of " +
                     std::to_string(c.kv_heads) + " key/value heads");
  if (c.experts > 0 && c.experts_per_tok > c.experts)
    throw InputError("config '" + path + "': num_experts_per_tok " + std::to_string(c.experts_per_tok) +
                     " exceeds the " + std::to_string(c.experts) + " experts");
  constexpr std::int64_t kLimit = std::int64_t{1} << 20;  // keeps every product inside 64 bits
  for (auto [name, v] : {std::pair{"hidden size", c.hidden}, {"layers", c.layers}, {"heads", c.heads},
                         {"intermediate size", c.intermediate}, {"experts", c.experts}})
    if (v > kLimit) throw InputError("config '" + path + "': " + std::string(name) + " " + std::to_string(v) + " is implausibly large");
  if (c.vocab > (std::int64_t{1} << 24))
    throw InputError("config '" + path + "': vocab_size " + std::to_string(c.vocab) + " is implausibly large");
  return c;
}

std::int64_t sequence_length(const HfConfig& c, const std::string& id, const ModelOptions& o, bool learned_positions) {
  if (o.seq < 0) throw InputError(id + ": sequence length must be positive, got " + std::to_string(o.seq));
  const std::int64_t seq = o.seq == 0 ? std::min<std::int64_t>(c.max_positions ? c.max_positions : 2048, 2048) : o.seq;
  if (learned_positions && seq > c.max_positions)
    throw InputError(id + ": sequence length " + std::to_string(seq) + " exceeds its " +
                     std::to_string(c.max_positions) + " learned positions");
  return seq;
}

// ---- LLaMA-style decoder ---------------------------------------------------------------------------------
// transformers LlamaForCausalLM / MistralForCausalLM / MixtralForCausalLM / Qwen2(Moe)ForCausalLM: token
// embedding, per block RMSNorm -> q/k/v projections (bias for Qwen2) -> rotary embedding on q and k -> causal
// attention with grouped key/value heads -> o projection -> residual, RMSNorm -> SwiGLU MLP (or routed
// experts) -> residual; final RMSNorm and the LM head (tied to the embedding when tie_word_embeddings).

// Routed experts: the router (hidden -> experts, kept in fp32 by every runtime) and its softmax/top-k, the
// dispatch copying each token to its k experts (an up-sampling copy, the builder has no gather), the expert
// SwiGLU MLPs as grouped GEMMs over all routed rows, and the weighted combine (a k-window average pool).
Tensor moe_ffn(GraphBuilder& b, const Tensor& h, const HfConfig& c, std::vector<int>& expert_ops) {
  const std::int64_t seq = h.shape[1], d = h.shape[2], k = c.experts_per_tok;
  Tensor router = b.linear(h, c.experts, false, "ffn_gate_inp");
  b.softmax(router, "ffn_gate_softmax");
  Tensor routed = b.reshape(b.upsample(h, k, "ffn_dispatch"), {seq * k, d}, "ffn_dispatch_view");
  Tensor g = b.linear(routed, c.expert_ffn, c.mlp_bias, "ffn_gate_exps");
  expert_ops.push_back(g.id);
  Tensor u = b.linear(routed, c.expert_ffn, c.mlp_bias, "ffn_up_exps");
  expert_ops.push_back(u.id);
  Tensor a = b.mul(b.silu(g, "ffn_silu_exps"), u, "ffn_mul_exps");
  Tensor dn = b.linear(a, d, c.mlp_bias, "ffn_down_exps");
  expert_ops.push_back(dn.id);
  Tensor planes = b.reshape(dn, {1, seq * k, d}, "ffn_combine_view");
  Tensor out = b.reshape(b.avg_pool(planes, {k, 1}, {k, 1}, {0}, false, "ffn_combine"), {seq, d}, "ffn_moe_out");
  if (c.shared_ffn > 0) {
    Tensor sg = b.linear(h, c.shared_ffn, c.mlp_bias, "ffn_gate_shexp");
    Tensor su = b.linear(h, c.shared_ffn, c.mlp_bias, "ffn_up_shexp");
    Tensor s = b.linear(b.mul(b.silu(sg, "ffn_silu_shexp"), su, "ffn_mul_shexp"), d, c.mlp_bias, "ffn_down_shexp");
    if (c.shared_gate) s = b.mul(s, b.sigmoid(b.linear(h, 1, false, "ffn_gate_inp_shexp"), "ffn_shexp_sigmoid"), "ffn_shexp_scale");
    out = b.add(out, s, "ffn_shexp_add");
  }
  return out;
}

Graph build_llama(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  const std::int64_t seq = sequence_length(c, id, o, false);
  GraphBuilder b(id, o.batch);
  b.set_sequence(seq);
  Tensor ids = b.input({seq}, 4);
  Tensor x = b.embedding(ids, c.vocab, c.hidden, "token_embd");
  std::vector<int> expert_ops;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    b.set_scope("blk." + std::to_string(l) + ".");
    Tensor h = b.rms_norm(x, "attn_norm");
    Tensor q = b.linear(h, c.heads * c.head_dim, c.qkv_bias, "attn_q");
    Tensor k = b.linear(h, c.kv_heads * c.head_dim, c.qkv_bias, "attn_k");
    Tensor v = b.linear(h, c.kv_heads * c.head_dim, c.qkv_bias, "attn_v");
    // Rotary embedding: one elementwise pass over q and over k reading the cos/sin table (the builder has no
    // rotary op; an add of the same tensor has the same traffic and no saved state).
    q = b.add(q, q, "rope_q");
    k = b.add(k, k, "rope_k");
    Tensor a = b.attention(q, k, v, c.heads, c.kv_heads, /*causal=*/true, /*fused=*/false, "attn");
    x = b.add(x, b.linear(a, c.hidden, false, "attn_output"), "attn_residual");
    h = b.rms_norm(x, "ffn_norm");
    Tensor f;
    if (c.moe_layer(l)) {
      f = moe_ffn(b, h, c, expert_ops);
    } else {
      Tensor g = b.linear(h, c.intermediate, c.mlp_bias, "ffn_gate");
      Tensor u = b.linear(h, c.intermediate, c.mlp_bias, "ffn_up");
      f = b.linear(b.mul(b.silu(g, "ffn_silu"), u, "ffn_mul"), c.hidden, c.mlp_bias, "ffn_down");
    }
    x = b.add(x, f, "ffn_residual");
  }
  b.set_scope("");
  x = b.rms_norm(x, "output_norm");
  Tensor logits = b.linear(x, c.vocab, false, "output", /*tied_weight=*/c.tied);
  b.cross_entropy(logits);
  Graph g = b.finish();
  // Each expert GEMM above ran over all routed rows with one expert's weights; the experts own E times the
  // weights and run as E grouped GEMMs of the routed rows each receives (FLOPs unchanged).
  for (int i : expert_ops) {
    Op& op = g.ops[static_cast<std::size_t>(i)];
    const std::int64_t rows = op.mm.m;
    op.params *= c.experts;
    op.weight_elems *= c.experts;
    op.mm.batch = c.experts;
    op.mm.m = (rows + c.experts - 1) / c.experts;
  }
  return g;
}

// ---- GPT-2 (as zoo gpt2: separate q/k/v projections with the fused c_attn's parameters) -------------------
Graph build_gpt2(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  const std::int64_t seq = o.seq == 0 ? c.max_positions : sequence_length(c, id, o, true);
  const Gpt2Dims d{.vocab = c.vocab, .positions = c.max_positions, .layers = c.layers, .hidden = c.hidden,
                   .heads = c.heads, .intermediate = c.intermediate};
  return gpt2_lm_graph(id, d, seq, o.batch);
}

// ---- BERT (as zoo bert_base/bert_large: BertForPreTraining with MLM and NSP heads) ---------------------------
Graph build_bert(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  const std::int64_t seq = o.seq == 0 ? std::min<std::int64_t>(128, c.max_positions) : sequence_length(c, id, o, true);
  const BertDims d{.vocab = c.vocab, .positions = c.max_positions, .type_vocab = c.type_vocab, .layers = c.layers,
                   .hidden = c.hidden, .heads = c.heads, .intermediate = c.intermediate};
  return bert_pretraining_graph(id, d, seq, o.batch);
}

std::string describe(const HfConfig& c) {
  std::ostringstream s;
  const std::string type = c.model_type.empty() ? (c.family == Family::kGpt2 ? "gpt2" : "decoder") : c.model_type;
  s << type << ": " << c.layers << " layers, d=" << c.hidden << ", " << c.heads << " heads";
  if (c.kv_heads != c.heads) s << " (" << c.kv_heads << " kv)";
  if (c.head_dim * c.heads != c.hidden) s << ", head_dim " << c.head_dim;
  if (c.experts > 0)
    s << ", " << c.experts << " experts (top-" << c.experts_per_tok << ", ffn " << c.expert_ffn << ")";
  else
    s << ", ffn " << c.intermediate;
  s << ", vocab " << c.vocab << (c.tied ? ", tied head" : "");
  return s.str();
}

}  // namespace

ModelSource model_from_hf_config(const std::string& path) {
  const HfConfig c = parse_config(path);
  ModelSource m;
  m.id = path;
  m.sequence = true;
  m.description = describe(c);
  m.uncosted = c.notes;
  switch (c.family) {
    case Family::kBert:
      m.family = "transformer";
      m.default_seq = std::min<std::int64_t>(128, c.max_positions);
      m.build = [c, path](const ModelOptions& o) { return build_bert(c, path, o); };
      break;
    case Family::kGpt2:
      m.family = "llm";
      m.decoder_llm = true;
      m.default_seq = c.max_positions;
      m.build = [c, path](const ModelOptions& o) { return build_gpt2(c, path, o); };
      break;
    case Family::kLlama:
      m.family = "llm";
      m.decoder_llm = true;
      m.default_seq = std::min<std::int64_t>(c.max_positions ? c.max_positions : 2048, 2048);
      m.build = [c, path](const ModelOptions& o) { return build_llama(c, path, o); };
      break;
  }
  return m;
}

}  // namespace perfcast
