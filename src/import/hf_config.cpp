// Hugging Face config.json import: LLaMA-style decoders (LLaMA, Mistral, Mixtral, Qwen2, Qwen2-MoE and other
// model types with the same fields), GPT-2, BERT/RoBERTa, OPT, Falcon, Phi, GPT-NeoX (Pythia), GPT-J and the
// T5 / mT5 / Switch Transformers encoder-decoders, Gemma 2, OLMo / OLMo 2, StarCoder2, GPT-BigCode, GPT-Neo, BLOOM,
// MPT, DistilBERT, ELECTRA and ALBERT; families no builder here expresses are refused (unmodelled_types). The graph follows the transformers modeling code of each
// family: the same graph the zoo builds for the published models (the zoo's LLMs are these configs, see
// src/import/zoo/llm.cpp; GPT-2 and BERT are the zoo's own builders, src/import/zoo/transformer_blocks.cpp).
//
// Op names follow llama.cpp's GGUF tensor names ("blk.3.attn_v", "ffn_down", "output") so that inference can
// give each weight its GGUF block type (src/cost/quantization.cpp).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/data_files.h"
#include "core/error.h"
#include "core/limits.h"
#include "graph/builder.h"
#include "import/model_source.h"
#include "import/zoo/transformer_blocks.h"

namespace perfcast {

namespace {

using nlohmann::json;

enum class Family {
  kLlama, kGpt2, kBert, kOpt, kSwitch, kFalcon, kPhi, kNeox, kGptj,
  kStarcoder2, kBigcode, kGptNeo, kBloom, kMpt,  // GPT-style decoders (build_gpt_style)
  kEncoder                                       // DistilBERT, ELECTRA, ALBERT (bert_encoder_graph)
};

// What the families read by parse_more_families (OPT, Switch Transformers, Falcon, Phi) and the LLaMA-style
// variants (Gemma) add to the common fields.
struct FamilyExtras {
  std::string act = "silu";    // MLP activation: relu, gelu (gelu_new, gelu_pytorch_tanh), silu
  bool layer_norm = false;     // LayerNorm with bias (OPT, Falcon, Phi) instead of RMSNorm
  bool pre_ln = true;          // OPT do_layer_norm_before
  bool parallel_attn = false;  // Falcon, Phi: attention and MLP read the same normed input, both added
  bool two_norms = false;      // Falcon new_decoder_architecture: ln_attn and ln_mlp
  bool attn_bias = false;      // q/k/v projections
  bool out_bias = false;       // attention output projection
  bool lm_head_bias = false;   // Phi
  bool rotary = true;          // rotary positions (OPT: learned, ALiBi Falcon: none)
  bool embed_scale = false;    // Gemma: embeddings times sqrt(hidden)
  bool embed_dropout = false, resid_dropout = false, attn_dropout = false;  // dropout > 0 in training
  bool learned_positions = false;  // a learned position table (OPT, GPT-BigCode, GPT-Neo)
  bool embed_norm = false;         // BLOOM word_embeddings_layernorm
  bool norm_bias = true;           // MPT: LayerNorms without bias
  bool norm_params = true;         // OLMo: non-parametric LayerNorms (no weight, no bias)
  bool pre_norms = true;           // a norm before attention and MLP (OLMo 2: none)
  bool post_norms = false;         // Gemma 2, OLMo 2: a norm on the attention and MLP outputs before the residual add
  bool qk_norm = false;            // OLMo 2: RMSNorm over all of q and over all of k
  bool final_softcap = false;      // Gemma 2 final_logit_softcapping: logits / cap, tanh, times cap
  std::string eager_only;          // why transformers runs this family's own attention only ("": sdpa and flash too)
  std::int64_t positions_offset = 0;  // learned positions beyond the sequence limit (OPT, RoBERTa: 2)
  std::int64_t embed_proj = 0;        // OPT word_embed_proj_dim (project_in/out when it differs from hidden)
  // Switch Transformers (T5-style encoder-decoder).
  std::int64_t decoder_layers = 0;
  std::int64_t encoder_sparse_step = 0, decoder_sparse_step = 0;  // layer i is sparse when i % step == 1 (0: none)
  std::int64_t expert_capacity = 0;                               // tokens per expert per sequence (0: unlimited)
  std::int64_t relative_buckets = 32;
  bool gated_ff = false;  // T5 v1.1 / mT5 feed_forward_proj "gated-gelu": act(wi_0) * wi_1 -> wo
  // DistilBERT, ELECTRA, ALBERT.
  EncoderHeads heads;
  std::int64_t layer_groups = 0;  // ALBERT num_hidden_groups
  std::string layer_code;         // data/graph_code id of the eager layer ("": none counted)
  bool fixed_positions = false;   // a held (untrained) position table: DistilBERT sinusoidal_pos_embds
};

struct HfConfig {
  Family family = Family::kLlama;
  std::string model_type;
  std::string path;
  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
  std::int64_t max_positions = 0;  // 0 = not given
  std::int64_t sliding_window = 0;  // causal attention over this many latest keys in every layer; 0 = none
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
  FamilyExtras x;

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

  // For a missing field, the config's own key that looks like a typo of it ("hidden_sizee" for "hidden_size"), or
  // "". A key much longer than the field is another field that contains its name (moe_intermediate_size).
  std::string misspelt(const std::string& field) const {
    for (const json* j : {&text_, &top_}) {
      if (!j->is_object()) continue;
      for (const auto& [k, v] : j->items())
        if (k != field && k.size() <= field.size() + 2 &&
            std::all_of(k.begin(), k.end(), [](char ch) { return ch > ' ' && ch < 127; }) &&
            !nearest(field, {k}).empty())
          return k;
    }
    return "";
  }

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
    if (static_cast<std::int64_t>(v->size()) > input_limits().max_layers)
      throw InputError("config '" + path_ + "': field '" + key + "' lists " + std::to_string(v->size()) +
                       " layers, beyond any published model (limit " + std::to_string(input_limits().max_layers) +
                       ", data/limits.toml max_layers)");
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
    std::int64_t n = 0;
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) n = INT64_MAX;
    else if (v.is_number_integer() && v.get<std::int64_t>() > 0) n = v.get<std::int64_t>();
    else if (v.is_number_float() && v.get<double>() > 0 && v.get<double>() == std::floor(v.get<double>()))
      n = v.get<double>() < 9e18 ? static_cast<std::int64_t>(v.get<double>()) : INT64_MAX;
    else
      throw InputError("config '" + path_ + "': field '" + key + "' must be a positive integer, got " + short_dump(v));
    // Every count is bounded as soon as it is read: later loops and products run over it.
    const auto [limit, limit_key] = limit_for(key);
    if (n > limit)
      throw InputError("config '" + path_ + "': field '" + key + "' is " + (n == INT64_MAX ? std::string("beyond 2^63") : std::to_string(n)) +
                       ", beyond any published model (limit " + std::to_string(limit) + ", data/limits.toml " + limit_key + ")");
    return n;
  }
  // At most 40 characters of a value, for messages.
  static std::string short_dump(const json& v) {
    std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
    return s.size() > 40 ? s.substr(0, 40) + "..." : s;
  }
  // The limit a count field is checked against, and its key in data/limits.toml.
  static std::pair<std::int64_t, std::string> limit_for(const std::string& key) {
    const InputLimits& l = input_limits();
    static const std::map<std::string, int, std::less<>> kKind{
        {"hidden_size", 0}, {"n_embd", 0}, {"n_embed", 0}, {"d_model", 0}, {"head_dim", 0}, {"d_kv", 0},
        {"word_embed_proj_dim", 0},
        {"num_hidden_layers", 1}, {"n_layer", 1}, {"num_layers", 1}, {"num_decoder_layers", 1},
        {"decoder_sparse_step", 1}, {"first_k_dense_replace", 1}, {"num_ln_in_parallel_attn", 1},
        {"num_attention_heads", 2}, {"n_head", 2}, {"num_heads", 2}, {"num_key_value_heads", 2},
        {"num_kv_heads", 2}, {"n_head_kv", 2}, {"relative_attention_num_buckets", 2},
        {"intermediate_size", 3}, {"n_inner", 3}, {"moe_intermediate_size", 3}, {"shared_expert_intermediate_size", 3},
        {"d_ff", 3}, {"ffn_dim", 3}, {"ffn_hidden_size", 3},
        {"vocab_size", 4}, {"type_vocab_size", 4},
        {"max_position_embeddings", 5}, {"n_positions", 5}, {"n_ctx", 5},
        {"num_local_experts", 6}, {"num_experts", 6}, {"n_routed_experts", 6}, {"num_experts_per_tok", 6},
        {"n_shared_experts", 6}, {"expert_capacity", 5}};
    const auto it = kKind.find(key);
    switch (it == kKind.end() ? 0 : it->second) {
      case 1: return {l.max_layers, "max_layers"};
      case 2: return {l.max_heads, "max_heads"};
      case 3: return {l.max_intermediate_size, "max_intermediate_size"};
      case 4: return {l.max_vocab_size, "max_vocab_size"};
      case 5: return {l.max_positions, "max_positions"};
      case 6: return {l.max_experts, "max_experts"};
      default: return {l.max_hidden_size, "max_hidden_size"};
    }
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

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count), stopping once it
// passes `limit`: a pre-scan, so that no recursive step (parsing, copying, destroying a json) sees a deeper one.
int nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (in_string) {
      if (c == '\\') ++k;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

json read_json(const std::string& path) {
  const std::string text = read_text_file(path);
  const int limit = input_limits().max_nesting_depth;
  if (nesting_depth(text, limit) > limit)
    throw InputError("config '" + path + "' nests arrays or objects more than " + std::to_string(limit) +
                     " levels deep (data/limits.toml max_nesting_depth)");
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for numbers beyond a double (1e400).
    throw InputError("config '" + path + "' is not valid JSON: " + std::string(e.what()));
  }
}

// Model types built as LLaMA-style decoders: RMSNorm, rotary positions, SwiGLU MLP, optional GQA and MoE.
const std::set<std::string>& llama_like_types() {
  static const std::set<std::string> types{"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
                                           "qwen3_moe", "gemma", "gemma2", "phi3", "olmo", "olmo2"};
  return types;
}

// ---- OPT, Switch Transformers, Falcon, Phi and the Gemma variant: field mapping ----------------------------

Family family_of_more_types(const std::string& model_type, Family fallback) {
  if (model_type == "opt") return Family::kOpt;
  // T5 and mT5 are Switch Transformers' encoder-decoder without experts (transformers' SwitchTransformers
  // modeling code copies T5's attention, layer norm and dense feed-forward).
  if (model_type == "switch_transformers" || model_type == "t5" || model_type == "mt5") return Family::kSwitch;
  if (model_type == "gpt_neox") return Family::kNeox;
  if (model_type == "gptj") return Family::kGptj;
  if (model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel") return Family::kFalcon;
  if (model_type == "phi") return Family::kPhi;
  if (model_type == "starcoder2") return Family::kStarcoder2;
  if (model_type == "gpt_bigcode") return Family::kBigcode;
  if (model_type == "gpt_neo") return Family::kGptNeo;
  if (model_type == "bloom") return Family::kBloom;
  if (model_type == "mpt") return Family::kMpt;
  if (model_type == "distilbert" || model_type == "electra" || model_type == "albert") return Family::kEncoder;
  return fallback;
}

// RoBERTa and XLM-RoBERTa are BERT's encoder with other embeddings sizes (transformers' RobertaModel copies
// BertModel's layers; max_position_embeddings 514, type_vocab_size 1 are read as BERT's fields).
bool is_bert_type(const std::string& model_type) {
  return model_type == "bert" || model_type == "roberta" || model_type == "xlm-roberta";
}

// Whether a config of a model_type perfcast has no family for can be built as a LLaMA-style decoder: not an
// encoder-decoder, and its architectures (when listed) include a causal LM or a generation head (multimodal
// models nest the decoder in text_config). An encoder (DistilBertForMaskedLM), a classifier or a vision model
// (ViTForImageClassification) is not a decoder of another shape: building it as one counted wrong parameters.
bool decoder_like(const json& root) {
  auto ed = root.find("is_encoder_decoder");
  if (ed != root.end() && ed->is_boolean() && ed->get<bool>()) return false;
  auto arch = root.find("architectures");
  if (arch == root.end() || !arch->is_array() || arch->empty()) return true;
  for (const auto& a : *arch) {
    if (!a.is_string()) continue;
    const std::string name = a.get<std::string>();
    if (name.ends_with("ForCausalLM") || name.ends_with("LMHeadModel") || name.ends_with("ForConditionalGeneration"))
      return true;
  }
  return false;
}

bool is_more_family(Family f) {
  return f == Family::kOpt || f == Family::kSwitch || f == Family::kFalcon || f == Family::kPhi ||
         f == Family::kNeox || f == Family::kGptj || f == Family::kStarcoder2 || f == Family::kBigcode ||
         f == Family::kGptNeo || f == Family::kBloom || f == Family::kMpt || f == Family::kEncoder;
}

// Families of the Hub that no switch of the builders here expresses, with what each has that they lack (from the
// transformers modeling code of each, models/<type>/modeling_<type>.py). They are refused rather than built as a
// LLaMA-style decoder or a BERT of the wrong shape.
const std::map<std::string, std::string>& unmodelled_types() {
  static const std::map<std::string, std::string> types{
      {"deberta-v2", "disentangled relative-position attention"},
      {"deberta", "disentangled relative-position attention"},
  };
  return types;
}

// A probability or factor field (dropout, partial_rotary_factor): a number in [0, 1].
double fraction_or(const Fields& f, const std::string& key, double fallback, const std::string& path) {
  const json* v = f.find(key);
  if (!v) return fallback;
  if (!v->is_number() || v->get<double>() < 0 || v->get<double>() > 1)
    throw InputError("config '" + path + "': field '" + key + "' must be a number from 0 to 1, got " + v->dump());
  return v->get<double>();
}

// The MLP activation named by a config (activation_function, hidden_act, hidden_activation, dense_act_fn).
std::string activation_of(const Fields& f, const std::vector<std::string>& keys, const std::string& fallback,
                          const std::string& path) {
  for (const auto& k : keys) {
    if (!f.has(k)) continue;
    const std::string a = f.text_or(k, "");
    if (a == "relu") return "relu";
    if (a == "gelu" || a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast") return "gelu";
    if (a == "silu" || a == "swish") return "silu";
    throw InputError("config '" + path + "': activation '" + a + "' in field '" + k +
                     "' is not modelled (relu, gelu, gelu_new, gelu_pytorch_tanh, silu)");
  }
  return fallback;
}

// Switch Transformers sparse layers (SwitchTransformersConfig): with num_sparse_*_layers > 0 every
// (layers / sparse)-th layer is sparse, SwitchTransformersStack taking layer i when i % step == 1 (every layer
// for step 1); 0 sparse layers leaves the stack dense.
std::int64_t switch_sparse_step(const Fields& f, const std::string& sparse_key, const std::string& step_key,
                                std::int64_t layers) {
  if (f.has(sparse_key)) {
    const std::int64_t sparse = f.count_or_zero(sparse_key);
    return sparse == 0 ? 0 : std::max<std::int64_t>(1, layers / sparse);
  }
  return f.count_or_zero(step_key);
}

bool switch_sparse_layer(std::int64_t l, std::int64_t step) { return step > 0 && (step == 1 || l % step == 1); }

// Local (sliding-window) attention in `local` of the layers: costed as full causal attention, which eager and sdpa
// attention run (every score computed, the far ones masked); flash_attention_2 skips the blocks beyond the window.
void note_local_attention(HfConfig& c, std::int64_t window, std::int64_t local) {
  if (window <= 0 || local <= 0) return;
  c.notes.push_back("sliding-window attention (" + std::to_string(window) + " tokens) in " + std::to_string(local) +
                    " of " + std::to_string(c.layers) +
                    " layers: a sequence longer than the window is costed as full causal attention (as eager and sdpa "
                    "run it; flash_attention_2 skips the masked blocks); up to the window nothing differs");
}

// GPT-Neo attention_types, e.g. [[["global", "local"], 12]]: how many layers are local.
// The local-attention layers of a GPT-Neo config. transformers GPTNeoConfig expands attention_types, a list of
// [[types...], repeat] pairs, to one type per layer and raises unless the expansion has num_layers entries; its
// attention module takes "global" or "local" only. The same refused here (InputError), so that a config transformers
// cannot load is not predicted. Absent: global and local alternate (layers / 2 local).
std::int64_t gpt_neo_local_layers(const Fields& f, std::int64_t layers, const std::string& path) {
  const json* types = f.find("attention_types");
  if (!types) return layers / 2;
  const std::string where = "config '" + path + "': field 'attention_types'";
  const std::string form = " must be a list of [[\"global\" or \"local\", ...], repeat] pairs";
  if (!types->is_array()) throw InputError(where + form);
  std::int64_t expanded = 0, local = 0;
  for (const auto& entry : *types) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_array() || !entry[1].is_number_integer() ||
        entry[1].get<std::int64_t>() < 0)
      throw InputError(where + form);
    std::int64_t per = 0, per_local = 0;
    for (const auto& t : entry[0]) {
      if (!t.is_string() || (t.get<std::string>() != "global" && t.get<std::string>() != "local"))
        throw InputError(where + form);
      ++per;
      per_local += t.get<std::string>() == "local";
    }
    // Past num_layers the expansion cannot match: stop counting before a huge repeat overflows.
    const std::int64_t repeat = entry[1].get<std::int64_t>();
    if (per > 0 && repeat > layers) {
      expanded = layers + 1;
      break;
    }
    expanded += per * repeat;
    local += per_local * repeat;
    if (expanded > layers) break;
  }
  if (expanded != layers)
    throw InputError(where + " expands to " + (expanded > layers ? "more than " + std::to_string(layers) :
                     std::to_string(expanded)) + " layer types; num_layers is " + std::to_string(layers) +
                     " (transformers GPTNeoConfig requires one per layer)");
  return local;
}

void parse_more_families(HfConfig& c, const Fields& f, std::vector<std::string>& missing) {
  auto& x = c.x;
  x.layer_norm = true;
  x.act = "gelu";
  switch (c.family) {
    case Family::kOpt:
      // transformers OPTConfig / OPTDecoder: learned positions with an offset of 2, biases everywhere, the
      // embeddings (word_embed_proj_dim) projected in and out when narrower than the model (opt-350m).
      c.hidden = f.count("hidden_size", missing);
      c.layers = f.count("num_hidden_layers", missing);
      c.heads = c.kv_heads = f.count("num_attention_heads", missing);
      c.intermediate = f.count("ffn_dim", missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count("max_position_embeddings", missing);
      x.embed_proj = f.count_or("word_embed_proj_dim", c.hidden);
      x.pre_ln = f.flag_or("do_layer_norm_before", true);
      x.act = activation_of(f, {"activation_function"}, "relu", c.path);
      x.attn_bias = x.out_bias = c.mlp_bias = f.flag_or("enable_bias", true);
      x.rotary = false;
      x.learned_positions = true;
      x.positions_offset = 2;
      x.embed_dropout = x.resid_dropout = fraction_or(f, "dropout", 0.1, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", true);
      break;
    case Family::kFalcon: {
      // transformers FalconConfig / FalconDecoderLayer (and the older RefinedWeb field names): one fused
      // query_key_value projection, multi-query (one key/value head) or, with new_decoder_architecture, grouped
      // key/value heads and separate ln_attn / ln_mlp; parallel attention and MLP; GELU MLP of 4x hidden.
      c.hidden = f.count_any({"hidden_size", "n_embed"}, missing);
      c.layers = f.count_any({"num_hidden_layers", "n_layer"}, missing);
      c.heads = f.count_any({"num_attention_heads", "n_head"}, missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("max_position_embeddings", 0);
      const bool new_arch = f.flag_or("new_decoder_architecture", false);
      if (new_arch)
        c.kv_heads = f.count_any({"num_kv_heads", "n_head_kv"}, missing);
      else
        c.kv_heads = f.flag_or("multi_query", true) ? 1 : c.heads;
      if (c.heads > 0 && c.hidden > 0) c.intermediate = f.count_or("ffn_hidden_size", 4 * c.hidden);
      x.two_norms = new_arch && f.count_or("num_ln_in_parallel_attn", 2) == 2;
      x.parallel_attn = new_arch || f.flag_or("parallel_attn", true);
      x.attn_bias = x.out_bias = c.mlp_bias = f.flag_or("bias", false);
      if (f.flag_or("alibi", false)) {
        x.rotary = false;
        c.notes.push_back("ALiBi position biases are added to the attention scores: not costed");
      }
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      x.resid_dropout = fraction_or(f, "hidden_dropout", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", true);
      break;
    }
    case Family::kPhi:
      // transformers PhiConfig / PhiDecoderLayer (phi-1, phi-1.5, phi-2): LayerNorm, q/k/v and dense with bias,
      // partial rotary embedding, parallel attention and GELU MLP, an LM head with bias.
      c.hidden = f.count("hidden_size", missing);
      c.layers = f.count("num_hidden_layers", missing);
      c.heads = f.count("num_attention_heads", missing);
      c.intermediate = f.count("intermediate_size", missing);
      c.vocab = f.count("vocab_size", missing);
      c.kv_heads = f.count_or("num_key_value_heads", c.heads);
      c.max_positions = f.count_or("max_position_embeddings", 0);
      x.act = activation_of(f, {"hidden_act"}, "gelu", c.path);
      x.parallel_attn = true;
      x.attn_bias = x.out_bias = c.mlp_bias = x.lm_head_bias = true;
      if (fraction_or(f, "partial_rotary_factor", 0.5, c.path) < 1)
        c.notes.push_back("partial rotary embedding (partial_rotary_factor) costed as a pass over all of q and k");
      if (f.flag_or("qk_layernorm", false)) c.notes.push_back("qk_layernorm: the q and k LayerNorms are not costed");
      x.embed_dropout = fraction_or(f, "embd_pdrop", 0.0, c.path) > 0;
      x.resid_dropout = fraction_or(f, "resid_pdrop", 0.0, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", false);
      break;
    case Family::kNeox: {
      // transformers GPTNeoXConfig / GPTNeoXLayer (Pythia, GPT-NeoX-20B): LayerNorm, one fused query_key_value
      // and dense projection with bias (attention_bias), rotary on rotary_pct of each head, a GELU MLP with bias
      // (dense_h_to_4h, dense_4h_to_h); with use_parallel_residual attention reads input_layernorm(x) and the MLP
      // post_attention_layernorm(x), both added to x; an untied embed_out without bias.
      c.hidden = f.count("hidden_size", missing);
      c.layers = f.count("num_hidden_layers", missing);
      c.heads = c.kv_heads = f.count("num_attention_heads", missing);
      c.intermediate = f.count("intermediate_size", missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("max_position_embeddings", 0);
      x.act = activation_of(f, {"hidden_act"}, "gelu", c.path);
      x.parallel_attn = x.two_norms = f.flag_or("use_parallel_residual", true);
      x.attn_bias = x.out_bias = f.flag_or("attention_bias", true);
      c.mlp_bias = true;
      if (fraction_or(f, "rotary_pct", 0.25, c.path) < 1)
        c.notes.push_back("partial rotary embedding (rotary_pct) costed as a pass over all of q and k");
      x.embed_dropout = x.resid_dropout = fraction_or(f, "hidden_dropout", 0.0, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", false);
      break;
    }
    case Family::kGptj:
      // transformers GPTJConfig / GPTJBlock (GPT-J-6B): one LayerNorm (ln_1) read by attention and MLP in
      // parallel, q/k/v and out_proj without bias, rotary on rotary_dim of each head, fc_in/fc_out with bias,
      // an untied lm_head with bias.
      c.hidden = f.count("n_embd", missing);
      c.layers = f.count("n_layer", missing);
      c.heads = c.kv_heads = f.count("n_head", missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("n_positions", 0);
      if (c.hidden > 0) c.intermediate = f.count_or("n_inner", 4 * c.hidden);
      x.act = activation_of(f, {"activation_function"}, "gelu", c.path);
      x.parallel_attn = true;
      c.mlp_bias = x.lm_head_bias = true;
      if (f.has("rotary_dim")) c.notes.push_back("partial rotary embedding (rotary_dim) costed as a pass over all of q and k");
      x.embed_dropout = fraction_or(f, "embd_pdrop", 0.0, c.path) > 0;
      x.resid_dropout = fraction_or(f, "resid_pdrop", 0.0, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attn_pdrop", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", false);
      break;
    case Family::kSwitch: {
      // transformers SwitchTransformersConfig / SwitchTransformersForConditionalGeneration: a T5 encoder and
      // decoder (RMS layer norms, no biases, relative position buckets), every n-th feed-forward replaced by
      // top-1 routed experts of the same width.
      c.hidden = f.count("d_model", missing);
      c.layers = f.count("num_layers", missing);
      c.heads = f.count("num_heads", missing);
      c.head_dim = f.count("d_kv", missing);
      c.intermediate = f.count("d_ff", missing);
      c.vocab = f.count("vocab_size", missing);
      c.kv_heads = c.heads;
      c.experts = f.count_or_zero("num_experts");
      c.experts_per_tok = 1;  // SwitchTransformersTop1Router
      c.expert_ffn = c.intermediate;
      x.layer_norm = false;
      // T5Config: feed_forward_proj "relu", "gelu" or "gated-gelu" (T5 v1.1, mT5): a gated one has wi_0 and wi_1.
      if (const std::string proj = f.text_or("feed_forward_proj", ""); proj.starts_with("gated-")) {
        x.gated_ff = true;
        const std::string act = proj.substr(6);
        if (act != "gelu" && act != "relu" && act != "silu")
          throw InputError("config '" + c.path + "': feed_forward_proj '" + proj +
                           "' is not modelled (relu, gelu, gated-gelu, gated-relu, gated-silu)");
        x.act = activation_of(f, {"dense_act_fn"}, act, c.path);
      } else {
        x.act = activation_of(f, {"dense_act_fn", "feed_forward_proj"}, "relu", c.path);
      }
      x.gated_ff = x.gated_ff || f.flag_or("is_gated_act", false);
      if (x.gated_ff && c.experts > 0)
        throw UnsupportedError("config '" + c.path +
                               "': gated feed-forward (is_gated_act) Switch Transformers experts are not modelled");
      x.decoder_layers = f.count_or("num_decoder_layers", c.layers);
      x.encoder_sparse_step =
          c.experts ? switch_sparse_step(f, "num_sparse_encoder_layers", "encoder_sparse_step", c.layers) : 0;
      x.decoder_sparse_step =
          c.experts ? switch_sparse_step(f, "num_sparse_decoder_layers", "decoder_sparse_step", x.decoder_layers) : 0;
      x.expert_capacity = f.count_or_zero("expert_capacity");
      x.relative_buckets = f.count_or("relative_attention_num_buckets", 32);
      x.rotary = false;
      x.embed_dropout = x.resid_dropout = x.attn_dropout = fraction_or(f, "dropout_rate", 0.1, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", true);
      if (f.flag_or("router_bias", false)) c.notes.push_back("router_bias: the router's bias is not counted");
      break;
    }
    case Family::kStarcoder2:
      // transformers Starcoder2Config / Starcoder2DecoderLayer: pre-LN (LayerNorm with bias), q/k/v/o with bias
      // (use_bias) and grouped key/value heads, rotary, a plain GELU MLP (c_fc, c_proj, use_bias), a final LayerNorm
      // and an LM head tied to the embedding by default.
      c.hidden = f.count("hidden_size", missing);
      c.layers = f.count("num_hidden_layers", missing);
      c.heads = f.count("num_attention_heads", missing);
      c.kv_heads = f.count_or("num_key_value_heads", c.heads);
      c.intermediate = f.count("intermediate_size", missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("max_position_embeddings", 0);
      x.act = activation_of(f, {"hidden_act"}, "gelu", c.path);
      x.attn_bias = x.out_bias = c.mlp_bias = f.flag_or("use_bias", true);
      x.embed_dropout = fraction_or(f, "embedding_dropout", 0.0, c.path) > 0;
      x.resid_dropout = fraction_or(f, "residual_dropout", 0.0, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", true);
      note_local_attention(c, f.count_or_zero("sliding_window"), c.layers);
      break;
    case Family::kBigcode:
      // transformers GPTBigCodeConfig / GPTBigCodeBlock (SantaCoder, StarCoder): GPT-2's block with multi-query
      // attention (one key/value head, c_attn of hidden + 2 x head_dim outputs), biases everywhere, learned
      // positions, the LM head tied to wte.
      c.hidden = f.count_any({"n_embd", "hidden_size"}, missing);
      c.layers = f.count_any({"n_layer", "num_hidden_layers"}, missing);
      c.heads = f.count_any({"n_head", "num_attention_heads"}, missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_any({"n_positions", "max_position_embeddings"}, missing);
      if (c.hidden > 0) c.intermediate = f.count_or("n_inner", 4 * c.hidden);
      c.kv_heads = f.flag_or("multi_query", true) ? 1 : c.heads;
      x.act = activation_of(f, {"activation_function"}, "gelu", c.path);
      x.attn_bias = x.out_bias = c.mlp_bias = true;
      x.rotary = false;
      x.learned_positions = true;
      x.embed_dropout = fraction_or(f, "embd_pdrop", 0.1, c.path) > 0;
      x.resid_dropout = fraction_or(f, "resid_pdrop", 0.1, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attn_pdrop", 0.1, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", true);
      break;
    case Family::kGptNeo:
      // transformers GPTNeoConfig / GPTNeoBlock: GPT-2's block with q/k/v projections without bias, out_proj and
      // the MLP with bias, learned positions, a tied LM head; local attention (window_size) in the layers
      // attention_types names, and unscaled scores (no cost of their own).
      c.hidden = f.count("hidden_size", missing);
      c.layers = f.count("num_layers", missing);
      c.heads = c.kv_heads = f.count("num_heads", missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count("max_position_embeddings", missing);
      if (c.hidden > 0) c.intermediate = f.count_or("intermediate_size", 4 * c.hidden);
      x.act = activation_of(f, {"activation_function"}, "gelu", c.path);
      x.out_bias = c.mlp_bias = true;
      x.rotary = false;
      x.learned_positions = true;
      x.embed_dropout = fraction_or(f, "embed_dropout", 0.0, c.path) > 0;
      x.resid_dropout = fraction_or(f, "resid_dropout", 0.0, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      c.tied = f.flag_or("tie_word_embeddings", true);
      if (c.layers > 0) note_local_attention(c, f.count_or("window_size", 256), gpt_neo_local_layers(f, c.layers, c.path));
      break;
    case Family::kBloom:
      // transformers BloomConfig / BloomBlock: a LayerNorm after the word embedding, pre-LN blocks with one fused
      // query_key_value and dense projection (bias), a GELU MLP of 4x hidden (bias), no position embedding: ALiBi
      // biases enter the score GEMM (baddbmm), no pass of their own. Eager attention only; the LM head is tied.
      c.hidden = f.count_any({"hidden_size", "n_embed"}, missing);
      c.layers = f.count_any({"n_layer", "num_hidden_layers"}, missing);
      c.heads = c.kv_heads = f.count_any({"n_head", "num_attention_heads"}, missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("seq_length", 0);
      c.intermediate = 4 * c.hidden;
      x.attn_bias = x.out_bias = c.mlp_bias = true;
      x.rotary = false;
      x.embed_norm = true;
      x.resid_dropout = fraction_or(f, "hidden_dropout", 0.0, c.path) > 0;
      x.attn_dropout = fraction_or(f, "attention_dropout", 0.0, c.path) > 0;
      x.eager_only = "Hugging Face's bloom has eager attention only (ALiBi biases enter its baddbmm score GEMM)";
      c.tied = f.flag_or("tie_word_embeddings", true);
      break;
    case Family::kMpt: {
      // transformers MptConfig / MptBlock: LayerNorms without bias, a fused Wqkv and out_proj, up_proj -> GELU ->
      // down_proj of expansion_ratio x d_model (bias when no_bias is false), ALiBi added to the eager scores,
      // no position embedding, the LM head tied to wte.
      c.hidden = f.count("d_model", missing);
      c.layers = f.count("n_layers", missing);
      c.heads = c.kv_heads = f.count("n_heads", missing);
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("max_seq_len", 0);
      c.intermediate = f.count_or("expansion_ratio", 4) * c.hidden;
      check_limit("config '" + c.path + "': expansion_ratio x d_model", c.intermediate,
                  input_limits().max_intermediate_size, "max_intermediate_size");
      x.attn_bias = x.out_bias = c.mlp_bias = !f.flag_or("no_bias", true);
      x.norm_bias = false;
      x.rotary = false;
      x.embed_dropout = fraction_or(f, "emb_pdrop", 0.0, c.path) > 0;
      x.resid_dropout = fraction_or(f, "resid_pdrop", 0.0, c.path) > 0;
      if (const json* a = f.find("attn_config"); a && a->is_object()) {
        const Fields attn(*a, *a, c.path);
        x.attn_dropout = fraction_or(attn, "attn_pdrop", 0.0, c.path) > 0;
        if (attn.has("clip_qkv")) c.notes.push_back("clip_qkv: the clamp of q, k and v is not costed");
        if (attn.flag_or("qk_ln", false))
          throw UnsupportedError("config '" + c.path + "' (mpt): attn_config qk_ln is not modelled (transformers' "
                                 "MptAttention has no q/k LayerNorm): export the model to ONNX and pass the .onnx file");
      }
      c.notes.push_back("ALiBi position biases: one add over the attention scores, not costed");
      x.eager_only = "Hugging Face's mpt has eager attention only (ALiBi biases are added to the scores)";
      c.tied = f.flag_or("tie_word_embeddings", true);
      break;
    }
    case Family::kEncoder: {
      // transformers DistilBertForMaskedLM (dim, n_layers, n_heads, hidden_dim; no token types, no pooler),
      // ElectraForPreTraining / ElectraForMaskedLM (BERT's encoder under an embedding of embedding_size projected
      // to hidden; the discriminator's or the generator's head) and AlbertForPreTraining / AlbertForMaskedLM
      // (factorized embedding, layers sharing num_hidden_groups groups of weights, an MLM head at the embedding
      // width, the sentence-order head on the pooler). Post-LN BERT layers with biases throughout.
      auto& h = x.heads;
      if (c.model_type == "distilbert") {
        c.hidden = f.count("dim", missing);
        c.layers = f.count("n_layers", missing);
        c.heads = f.count("n_heads", missing);
        c.intermediate = f.count("hidden_dim", missing);
        c.type_vocab = 0;
        h.sentence = false;
        x.fixed_positions = f.flag_or("sinusoidal_pos_embds", false);
        if (x.fixed_positions)
          c.notes.push_back("sinusoidal_pos_embds: the position table is fixed (not trained: no gradient or optimizer "
                            "state) and not counted in the parameters or the weight memory");
        x.layer_code = "hf_distilbert";  // TransformerBlock, not BertLayer (data/graph_code/hf_distilbert.toml)
      } else {
        c.hidden = f.count("hidden_size", missing);
        c.layers = f.count("num_hidden_layers", missing);
        c.heads = f.count("num_attention_heads", missing);
        c.intermediate = f.count("intermediate_size", missing);
        c.type_vocab = f.count_or("type_vocab_size", 2);
        x.embed_proj = f.count_or("embedding_size", 128);  // ElectraConfig and AlbertConfig default
        bool masked_lm = false;
        if (const json* arch = f.find("architectures"); arch && arch->is_array())
          for (const auto& a : *arch) masked_lm = masked_lm || (a.is_string() && a.get<std::string>().ends_with("ForMaskedLM"));
        if (c.model_type == "electra") {
          x.layer_code = "hf_bert";  // ElectraLayer is transformers' BertLayer, copied
          h.sentence = false;
          h.mlm = masked_lm;  // the generator
          h.mlm_width = x.embed_proj;
          h.discriminator = !masked_lm;
        } else {
          x.layer_groups = f.count_or("num_hidden_groups", 1);
          if (f.count_or("inner_group_num", 1) != 1)
            throw UnsupportedError("config '" + c.path + "' (albert): inner_group_num above 1 is not modelled: export "
                                   "the model to ONNX and pass the .onnx file");
          if (x.layer_groups > c.layers)
            throw InputError("config '" + c.path + "': num_hidden_groups " + std::to_string(x.layer_groups) +
                             " exceeds the " + std::to_string(c.layers) + " layers");
          h.mlm_width = x.embed_proj;
          h.sentence = !masked_lm;  // AlbertForMaskedLM has no pooler
          // AlbertLayer under its AlbertLayerGroup (data/graph_code/hf_albert.toml), counted with gelu_new
          // (AlbertConfig's default, the v2 checkpoints); the v1 checkpoints' plain gelu is not counted.
          if (f.text_or("hidden_act", "gelu_new") == "gelu_new")
            x.layer_code = "hf_albert";
          else
            c.notes.push_back("ALBERT's per-layer eager Python and torch calls (AlbertLayer) are counted for "
                              "hidden_act gelu_new only (data/graph_code/hf_albert.toml); with this config's "
                              "activation they are not costed, so host time at small batches is low");
        }
      }
      c.kv_heads = c.heads;
      c.vocab = f.count("vocab_size", missing);
      c.max_positions = f.count_or("max_position_embeddings", 512);
      x.act = activation_of(f, {"activation", "hidden_act"}, "gelu", c.path);
      c.tied = true;  // the MLM decoder shares the word embeddings
      break;
    }
    default:
      break;
  }
  // Every count above was bounded as it was read (Fields::positive, data/limits.toml).
}

// Model types built by build_llama with their own variations: Gemma's GeGLU MLP (gelu on the gate), embeddings
// scaled by sqrt(hidden) and tied LM head by default (transformers GemmaConfig / GemmaModel).
// Gemma 2 (transformers Gemma2DecoderLayer) adds a norm on the attention and MLP outputs (four RMSNorms a block),
// soft-caps the final logits (divide, tanh, multiply) and the attention scores, and alternates sliding-window and
// global attention. OLMo (OlmoDecoderLayer) uses LayerNorms without weight or bias; OLMo 2 (Olmo2DecoderLayer)
// norms the attention and MLP outputs only (no pre-norm) and RMS-norms all of q and all of k.
void apply_llama_variants(HfConfig& c, const Fields& f) {
  if (c.model_type == "gemma" || c.model_type == "gemma2") {
    c.x.act = activation_of(f, {"hidden_activation", "hidden_act"}, "gelu", c.path);
    c.x.embed_scale = true;
    c.tied = f.flag_or("tie_word_embeddings", true);
  }
  if (c.model_type == "gemma2") {
    c.x.post_norms = true;
    c.x.final_softcap = f.has("final_logit_softcapping");
    if (f.has("attn_logit_softcapping"))
      c.notes.push_back("attention logit soft-capping (tanh over the scores in eager attention) not costed");
    // Gemma2DecoderLayer: even layers slide, odd layers attend globally.
    note_local_attention(c, f.count_or_zero("sliding_window"), (c.layers + 1) / 2);
  }
  // transformers MistralAttention / MixtralAttention hand config.sliding_window (null = none) to every layer's
  // attention (Mistral 7B v0.1: 4096; v0.2 on and Mixtral: null).
  if (c.model_type == "mistral" || c.model_type == "mixtral") c.sliding_window = f.count_or_zero("sliding_window");
  if (c.model_type == "olmo") {
    c.x.layer_norm = true;
    c.x.norm_params = false;
    if (f.has("clip_qkv")) c.notes.push_back("clip_qkv: the clamp of q, k and v is not costed");
  }
  if (c.model_type == "olmo2") {
    c.x.pre_norms = false;
    c.x.post_norms = c.x.qk_norm = true;
  }
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
  else if (is_bert_type(c.model_type)) c.family = Family::kBert;
  else c.family = Family::kLlama;
  c.family = family_of_more_types(c.model_type, c.family);
  if (const auto it = unmodelled_types().find(c.model_type); it != unmodelled_types().end())
    throw UnsupportedError("config '" + path + "' (" + c.model_type + ") is not modelled (" + it->second +
                           "): export the model to ONNX and pass the .onnx file");
  if (c.family == Family::kBert && c.model_type != "bert")
    c.notes.push_back("model_type '" + c.model_type + "' is built as BERT with its pre-training heads (MLM and NSP)");
  if (c.family == Family::kLlama && !c.model_type.empty() && !llama_like_types().count(c.model_type)) {
    if (!decoder_like(root))
      throw UnsupportedError("config '" + path + "' (" + c.model_type +
                             ") is not a decoder LLM and its family is not modelled: perfcast reads LLaMA-style "
                             "decoders, GPT-2, GPT-NeoX/Pythia, GPT-J, GPT-Neo, GPT-BigCode, StarCoder2, BLOOM, MPT, "
                             "BERT/RoBERTa, DistilBERT, ELECTRA, ALBERT, OPT, Falcon, Phi, T5/mT5 and "
                             "Switch Transformers configs; export "
                             "the model to ONNX and pass the .onnx file");
    c.notes.push_back("model_type '" + c.model_type + "' is built as a LLaMA-style decoder (RMSNorm, rotary, SwiGLU)");
  }
  if (f.has("kv_lora_rank"))
    throw UnsupportedError("config '" + path + "': multi-head latent attention (kv_lora_rank) is not modelled");

  std::vector<std::string> missing;
  if (is_more_family(c.family)) {
    parse_more_families(c, f, missing);
  } else if (c.family == Family::kGpt2) {
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
    if (c.model_type != "bert" && c.max_positions > 0) {
      // RobertaEmbeddings numbers positions from padding_idx + 1 (pad_token_id 1): of the 514 learned positions
      // the first two are never a token's, so the sequence limit is 512.
      c.x.positions_offset = (f.has("pad_token_id") ? f.count_or_zero("pad_token_id") : 1) + 1;
      if (c.max_positions <= c.x.positions_offset)
        throw InputError("config '" + path + "': max_position_embeddings " + std::to_string(c.max_positions) +
                         " leaves no position after the padding offset " + std::to_string(c.x.positions_offset));
      c.max_positions -= c.x.positions_offset;
    }
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
  if (c.family == Family::kLlama) apply_llama_variants(c, f);
  if (!missing.empty()) {
    std::string hint;
    for (const auto& m : missing)
      if (const std::string k = f.misspelt(m); !k.empty()) {
        hint = "; it has '" + k.substr(0, 40) + "': did you mean '" + m + "'?";
        break;
      }
    throw InputError("config '" + path + "' (" + (c.model_type.empty() ? "no model_type" : c.model_type) +
                     ") lacks the field" + (missing.size() > 1 ? "s " : " ") + join(missing) + hint);
  }
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
  // GPT-2 and BERT run at their learned positions by default: the sequence limit applies to them.
  if (c.family != Family::kLlama)
    check_limit("config '" + path + "': learned positions", c.max_positions, input_limits().max_seq, "max_seq");
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

// The block's norm: RMSNorm, or LayerNorm (with bias; MPT's without; OLMo's without weight or bias either).
Tensor norm_of(GraphBuilder& b, const Tensor& x, const HfConfig& c, const std::string& name) {
  const Tensor y = c.x.layer_norm ? b.layer_norm(x, name) : b.rms_norm(x, name);
  if (c.x.layer_norm && (!c.x.norm_bias || !c.x.norm_params)) {
    Op& op = b.graph_for_update().ops[static_cast<std::size_t>(y.id)];
    op.params = op.weight_elems = c.x.norm_params ? x.shape.back() : 0;
  }
  return y;
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
  if (c.x.embed_scale) x = b.scale(x, "token_embd_scale");
  std::vector<int> expert_ops;
  for (std::int64_t l = 0; l < c.layers; ++l) {
    b.set_scope("blk." + std::to_string(l) + ".");
    Tensor h = c.x.pre_norms ? norm_of(b, x, c, "attn_norm") : x;
    Tensor q = b.linear(h, c.heads * c.head_dim, c.qkv_bias, "attn_q");
    Tensor k = b.linear(h, c.kv_heads * c.head_dim, c.qkv_bias, "attn_k");
    Tensor v = b.linear(h, c.kv_heads * c.head_dim, c.qkv_bias, "attn_v");
    if (c.x.qk_norm) {
      q = norm_of(b, q, c, "attn_q_norm");
      k = norm_of(b, k, c, "attn_k_norm");
    }
    // Rotary embedding: one elementwise pass over q and over k reading the cos/sin table (the builder has no
    // rotary op; an add of the same tensor has the same traffic and no saved state).
    q = b.add(q, q, "rope_q");
    k = b.add(k, k, "rope_k");
    Tensor a = b.attention(q, k, v, c.heads, c.kv_heads, /*causal=*/true, /*fused=*/false, "attn", false,
                               /*head_copies=*/true, c.sliding_window);
    Tensor o = b.linear(a, c.hidden, false, "attn_output");
    if (c.x.post_norms) o = norm_of(b, o, c, "post_attention_norm");
    x = b.add(x, o, "attn_residual");
    h = c.x.pre_norms ? norm_of(b, x, c, "ffn_norm") : x;
    Tensor f;
    if (c.moe_layer(l)) {
      f = moe_ffn(b, h, c, expert_ops);
    } else {
      Tensor g = b.linear(h, c.intermediate, c.mlp_bias, "ffn_gate");
      Tensor u = b.linear(h, c.intermediate, c.mlp_bias, "ffn_up");
      const Tensor act = c.x.act == "gelu" ? b.gelu(g, "ffn_gelu") : b.silu(g, "ffn_silu");
      f = b.linear(b.mul(act, u, "ffn_mul"), c.hidden, c.mlp_bias, "ffn_down");
    }
    if (c.x.post_norms) f = norm_of(b, f, c, "post_ffw_norm");
    x = b.add(x, f, "ffn_residual");
  }
  b.set_scope("");
  x = norm_of(b, x, c, "output_norm");
  Tensor logits = b.linear(x, c.vocab, false, "output", /*tied_weight=*/c.tied);
  if (c.x.final_softcap)  // Gemma2ForCausalLM: logits / cap, tanh, * cap, three passes over the logits
    logits = b.scale(b.tanh(b.scale(logits, "output_softcap_div"), "output_softcap_tanh"), "output_softcap_mul");
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
                   .heads = c.heads, .intermediate = c.intermediate, .hf_gelu_new = false};
  return gpt2_lm_graph(id, d, seq, o.batch);
}

// ---- BERT (as zoo bert_base/bert_large: BertForPreTraining with MLM and NSP heads) ---------------------------
Graph build_bert(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  const std::int64_t seq = o.seq == 0 ? std::min<std::int64_t>(128, c.max_positions) : sequence_length(c, id, o, true);
  const BertDims d{.vocab = c.vocab, .positions = c.max_positions + c.x.positions_offset, .type_vocab = c.type_vocab, .layers = c.layers,
                   .hidden = c.hidden, .heads = c.heads, .intermediate = c.intermediate};
  return bert_pretraining_graph(id, d, seq, o.batch);
}

// ---- DistilBERT, ELECTRA, ALBERT: BERT's encoder with their embeddings, layer sharing and heads ---------------
Graph build_encoder(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  const std::int64_t seq = o.seq == 0 ? std::min<std::int64_t>(128, c.max_positions) : sequence_length(c, id, o, true);
  const BertDims d{.vocab = c.vocab, .positions = c.max_positions, .type_vocab = c.type_vocab, .layers = c.layers,
                   .hidden = c.hidden, .heads = c.heads, .intermediate = c.intermediate, .embedding = c.x.embed_proj,
                   .layer_groups = c.x.layer_groups, .model_code = c.x.layer_code,
                   .fixed_positions = c.x.fixed_positions};
  return bert_encoder_graph(id, d, c.x.heads, seq, o.batch);
}

// ---- OPT, Falcon, Phi: GPT-style decoders with LayerNorm -------------------------------------------------
// transformers OPTDecoderLayer (sequential, pre- or post-LN), FalconDecoderLayer and PhiDecoderLayer (attention
// and MLP in parallel from the same normed input). Op names follow llama.cpp's GGUF tensor names as in
// build_llama, so that serving and quantized weights work the same; learned positions are "wpe" as in GPT-2.

Tensor activation(GraphBuilder& b, const Tensor& x, const std::string& act) {
  if (act == "relu") return b.relu(x, /*in_place=*/false, "ffn_relu");
  if (act == "silu") return b.silu(x, "ffn_silu");
  return b.gelu(x, "ffn_gelu");
}

Tensor plain_mlp(GraphBuilder& b, const Tensor& h, const HfConfig& c) {
  Tensor u = activation(b, b.linear(h, c.intermediate, c.mlp_bias, "ffn_up"), c.x.act);
  return b.linear(u, c.hidden, c.mlp_bias, "ffn_down");
}

Graph build_gpt_style(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  const auto& x_ = c.x;
  const bool learned = x_.learned_positions;
  const std::int64_t seq = sequence_length(c, id, o, learned);
  GraphBuilder b(id, o.batch);
  b.set_sequence(seq);
  Tensor ids = b.input({seq}, 8);
  const std::int64_t embed_dim = x_.embed_proj > 0 ? x_.embed_proj : c.hidden;
  Tensor x = b.embedding(ids, c.vocab, embed_dim, "token_embd");
  if (embed_dim != c.hidden) x = b.linear(x, c.hidden, false, "project_in");
  if (learned) x = b.add(x, b.embedding(ids, c.max_positions + x_.positions_offset, c.hidden, "wpe"), "add_wpe");
  if (x_.embed_norm) x = norm_of(b, x, c, "token_embd_norm");
  if (x_.embed_dropout) x = b.dropout(x, "embd_dropout");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    b.set_scope("blk." + std::to_string(l) + ".");
    const Tensor h = x_.pre_ln ? norm_of(b, x, c, "attn_norm") : x;
    Tensor q = b.linear(h, c.heads * c.head_dim, x_.attn_bias, "attn_q");
    Tensor k = b.linear(h, c.kv_heads * c.head_dim, x_.attn_bias, "attn_k");
    Tensor v = b.linear(h, c.kv_heads * c.head_dim, x_.attn_bias, "attn_v");
    if (x_.rotary) {  // as in build_llama: one elementwise pass over q and over k
      q = b.add(q, q, "rope_q");
      k = b.add(k, k, "rope_k");
    }
    Tensor a = b.attention(q, k, v, c.heads, c.kv_heads, /*causal=*/true, /*fused=*/false, "attn", x_.attn_dropout,
                               /*head_copies=*/true);
    a = b.linear(a, c.hidden, x_.out_bias, "attn_output");
    if (x_.resid_dropout) a = b.dropout(a, "attn_resid_dropout");
    if (x_.parallel_attn) {
      Tensor m = plain_mlp(b, x_.two_norms ? norm_of(b, x, c, "ffn_norm") : h, c);
      if (x_.resid_dropout) m = b.dropout(m, "ffn_resid_dropout");
      x = b.add(b.add(x, a, "attn_residual"), m, "ffn_residual");
    } else {
      x = b.add(x, a, "attn_residual");
      if (!x_.pre_ln) x = norm_of(b, x, c, "attn_norm");
      Tensor m = plain_mlp(b, x_.pre_ln ? norm_of(b, x, c, "ffn_norm") : x, c);
      if (x_.resid_dropout) m = b.dropout(m, "ffn_resid_dropout");
      x = b.add(x, m, "ffn_residual");
      if (!x_.pre_ln) x = norm_of(b, x, c, "ffn_norm");
    }
  }
  b.set_scope("");
  if (x_.pre_ln) x = norm_of(b, x, c, "output_norm");  // OPT without do_layer_norm_before has no final norm
  if (embed_dim != c.hidden) x = b.linear(x, embed_dim, false, "project_out");
  Tensor logits = b.linear(x, c.vocab, x_.lm_head_bias, "output", /*tied_weight=*/c.tied);
  b.cross_entropy(logits);
  return b.finish();
}

// ---- Switch Transformers: T5 encoder-decoder with top-1 routed experts ----------------------------------------
// transformers SwitchTransformersForConditionalGeneration: shared token embedding; per block RMS layer norm ->
// self-attention (q/k/v/o without bias, heads x d_kv; scores plus a relative position bias, no 1/sqrt(d) scale)
// -> dropout -> residual; the decoder adds cross-attention over the encoder output; then the feed-forward: dense
// (wi -> ReLU -> wo) or sparse (router in fp32, top-1 dispatch, each expert's wi/wo, combine). The decoder runs
// over as many tokens as the encoder. The tied LM head rescales its input by d_model^-0.5.

Tensor t5_attention(GraphBuilder& b, const Tensor& x, const Tensor& kv, const HfConfig& c, bool causal,
                    const std::string& name) {
  const std::int64_t inner = c.heads * c.head_dim;
  Tensor q = b.linear(x, inner, false, name + ".q");
  Tensor k = b.linear(kv, inner, false, name + ".k");
  Tensor v = b.linear(kv, inner, false, name + ".v");
  Tensor a = b.attention(q, k, v, c.heads, c.heads, causal, /*fused=*/false, name + ".core", c.x.attn_dropout,
                             /*head_copies=*/true);
  return b.linear(a, c.hidden, false, name + ".o");
}

// The sparse MLP: the router, a copy of every token to its expert, the experts' wi -> ReLU -> wo over the routed
// rows and the combine. Expert GEMMs are listed in `expert_ops` to take the experts' weights after finish().
Tensor switch_sparse_mlp(GraphBuilder& b, const Tensor& h, const HfConfig& c, std::vector<int>& expert_ops) {
  Tensor router = b.linear(h, c.experts, false, "mlp.router.classifier");
  b.softmax(router, "mlp.router.softmax");
  Tensor routed = b.upsample(h, 1, "mlp.dispatch");
  Tensor wi = b.linear(routed, c.expert_ffn, false, "mlp.experts.wi");
  expert_ops.push_back(wi.id);
  Tensor u = activation(b, wi, c.x.act);
  if (c.x.resid_dropout) u = b.dropout(u, "mlp.experts.dropout");
  Tensor wo = b.linear(u, c.hidden, false, "mlp.experts.wo");
  expert_ops.push_back(wo.id);
  return b.scale(wo, "mlp.combine");  // each token's output times its router probability
}

// Tokens per sample when --seq is not given: the 512-token inputs of the Switch Transformer's pre-training
// (Fedus, Zoph and Shazeer, JMLR 2022, arXiv:2101.03961, as T5: Raffel et al. 2020).
constexpr std::int64_t kSwitchDefaultSeq = 512;

Graph build_switch(const HfConfig& c, const std::string& id, const ModelOptions& o) {
  if (o.seq < 0) throw InputError(id + ": sequence length must be positive, got " + std::to_string(o.seq));
  const std::int64_t seq = o.seq == 0 ? kSwitchDefaultSeq : o.seq;
  const auto& x_ = c.x;
  GraphBuilder b(id, o.batch);
  b.set_sequence(seq);
  std::vector<int> expert_ops;
  const auto ff = [&](const Tensor& x, bool sparse) {
    const Tensor h = b.rms_norm(x, "layer_norm.ff");
    Tensor f;
    if (sparse) {
      f = switch_sparse_mlp(b, h, c, expert_ops);
    } else if (x_.gated_ff) {  // T5DenseGatedActDense
      Tensor g = activation(b, b.linear(h, c.intermediate, false, "DenseReluDense.wi_0"), x_.act);
      Tensor u = b.mul(g, b.linear(h, c.intermediate, false, "DenseReluDense.wi_1"), "DenseReluDense.gate");
      if (x_.resid_dropout) u = b.dropout(u, "DenseReluDense.dropout");
      f = b.linear(u, c.hidden, false, "DenseReluDense.wo");
    } else {
      Tensor u = activation(b, b.linear(h, c.intermediate, false, "DenseReluDense.wi"), x_.act);
      if (x_.resid_dropout) u = b.dropout(u, "DenseReluDense.dropout");
      f = b.linear(u, c.hidden, false, "DenseReluDense.wo");
    }
    if (x_.resid_dropout) f = b.dropout(f, "ff.dropout");
    return b.add(x, f, "ff.residual");
  };

  Tensor src = b.input({seq}, 8);
  Tensor x = b.embedding(src, c.vocab, c.hidden, "shared");
  if (x_.embed_dropout) x = b.dropout(x, "encoder.dropout");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    b.set_scope("encoder.block." + std::to_string(l) + ".");
    if (l == 0) b.embedding(src, x_.relative_buckets, c.heads, "relative_attention_bias");
    const Tensor hs = b.rms_norm(x, "layer_norm.self");
    Tensor a = t5_attention(b, hs, hs, c, false, "SelfAttention");
    if (x_.resid_dropout) a = b.dropout(a, "self.dropout");
    x = b.add(x, a, "self.residual");
    x = ff(x, switch_sparse_layer(l, x_.encoder_sparse_step));
  }
  b.set_scope("encoder.");
  Tensor enc = b.rms_norm(x, "final_layer_norm");
  if (x_.embed_dropout) enc = b.dropout(enc, "final_dropout");

  Tensor tgt = b.input({seq}, 8);
  b.set_scope("decoder.");
  Tensor y = b.embedding(tgt, c.vocab, c.hidden, "embed_tokens");
  const int decoder_embedding = y.id;
  if (x_.embed_dropout) y = b.dropout(y, "dropout");
  for (std::int64_t l = 0; l < x_.decoder_layers; ++l) {
    b.set_scope("decoder.block." + std::to_string(l) + ".");
    if (l == 0) b.embedding(tgt, x_.relative_buckets, c.heads, "relative_attention_bias");
    const Tensor hs = b.rms_norm(y, "layer_norm.self");
    Tensor a = t5_attention(b, hs, hs, c, true, "SelfAttention");
    if (x_.resid_dropout) a = b.dropout(a, "self.dropout");
    y = b.add(y, a, "self.residual");
    Tensor ca = t5_attention(b, b.rms_norm(y, "layer_norm.cross"), enc, c, false, "EncDecAttention");
    if (x_.resid_dropout) ca = b.dropout(ca, "cross.dropout");
    y = b.add(y, ca, "cross.residual");
    y = ff(y, switch_sparse_layer(l, x_.decoder_sparse_step));
  }
  b.set_scope("decoder.");
  y = b.rms_norm(y, "final_layer_norm");
  if (x_.embed_dropout) y = b.dropout(y, "final_dropout");
  b.set_scope("");
  if (c.tied) y = b.scale(y, "lm_head_rescale");
  Tensor logits = b.linear(y, c.vocab, false, "lm_head", /*tied_weight=*/c.tied);
  b.cross_entropy(logits);
  Graph g = b.finish();
  // The decoder reads the shared embedding: its table is the encoder's.
  g.ops[static_cast<std::size_t>(decoder_embedding)].params = 0;
  // transformers runs the experts in a Python loop: per expert, its tokens through wi and wo (one launch each),
  // at most expert_capacity tokens of every sequence.
  for (int i : expert_ops) {
    Op& op = g.ops[static_cast<std::size_t>(i)];
    std::int64_t rows = (op.mm.m + c.experts - 1) / c.experts;
    if (x_.expert_capacity > 0) rows = std::min(rows, x_.expert_capacity * o.batch);
    op.params *= c.experts;
    op.repeats = c.experts;
    op.mm.m = rows;
  }
  return g;
}

std::string describe(const HfConfig& c) {
  std::ostringstream s;
  const std::string type = c.model_type.empty() ? (c.family == Family::kGpt2 ? "gpt2" : "decoder") : c.model_type;
  s << type << ": " << c.layers << " layers, d=" << c.hidden << ", " << c.heads << " heads";
  if (c.kv_heads != c.heads) s << " (" << c.kv_heads << " kv)";
  if (c.head_dim * c.heads != c.hidden) s << ", head_dim " << c.head_dim;
  if (c.family == Family::kSwitch) s << ", " << c.x.decoder_layers << " decoder layers";
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
  m.max_positions = c.max_positions;
  m.trained_positions = c.max_positions;
  // The families that build a learned position table ("wpe", BERT's and the encoders' position embeddings, OPT's
  // offset table, GPT-Neo's and GPT-BigCode's wpe). DistilBERT's sinusoidal table is a fixed table of
  // max_position_embeddings rows too (create_sinusoidal_embeddings).
  m.learned_positions = c.family == Family::kGpt2 || c.family == Family::kBert || c.family == Family::kEncoder ||
                        c.x.learned_positions || c.x.positions_offset > 0;
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
    case Family::kOpt:
    case Family::kFalcon:
    case Family::kPhi:
    case Family::kNeox:
    case Family::kGptj:
    case Family::kStarcoder2:
    case Family::kBigcode:
    case Family::kGptNeo:
    case Family::kBloom:
    case Family::kMpt:
      m.family = "llm";
      m.decoder_llm = true;
      m.default_seq = std::min<std::int64_t>(c.max_positions ? c.max_positions : 2048, 2048);
      m.eager_attention_only = c.x.eager_only;
      m.build = [c, path](const ModelOptions& o) { return build_gpt_style(c, path, o); };
      break;
    case Family::kEncoder:
      m.family = "transformer";
      m.default_seq = std::min<std::int64_t>(128, c.max_positions);
      m.build = [c, path](const ModelOptions& o) { return build_encoder(c, path, o); };
      break;
    case Family::kSwitch:
      m.family = "transformer";
      m.default_seq = kSwitchDefaultSeq;
      m.eager_attention_only =
          "Hugging Face's " + c.model_type + " has eager attention only (its relative position bias is added to the "
          "scores; attn_implementation 'sdpa' and 'flash_attention_2' are refused)";
      m.build = [c, path](const ModelOptions& o) { return build_switch(c, path, o); };
      break;
  }
  return m;
}

}  // namespace perfcast
