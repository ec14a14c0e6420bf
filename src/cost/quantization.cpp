#include "cost/quantization.h"

#include <algorithm>

#include "core/data_files.h"
#include "core/error.h"
#include "core/find_by_id.h"
#include "core/nearest_sm.h"
#include "core/toml_reader.h"

namespace perfcast {

const std::vector<BlockType>& block_types() {
  // Block layouts of ggml/src/ggml-common.h (ggml_half = 2 bytes, QK_K = 256, K_SCALE_SIZE = 12):
  static const std::vector<BlockType> types{
      {"f32", 1, 4, false, false},
      {"f16", 1, 2, false, false},
      {"q4_0", 32, 18, true, false},    // ggml_half d; uint8_t qs[16]
      {"q4_1", 32, 20, true, false},    // ggml_half2 dm; uint8_t qs[16]
      {"q5_0", 32, 22, true, false},    // ggml_half d; uint8_t qh[4]; uint8_t qs[16]
      {"q5_1", 32, 24, true, false},    // ggml_half2 dm; uint8_t qh[4]; uint8_t qs[16]
      {"q8_0", 32, 34, true, false},    // ggml_half d; int8_t qs[32]
      {"q2_k", 256, 84, true, true},    // uint8_t scales[16]; uint8_t qs[64]; ggml_half2 dm
      {"q3_k", 256, 110, true, true},   // uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; ggml_half d
      {"q4_k", 256, 144, true, true},   // ggml_half2 dm; uint8_t scales[12]; uint8_t qs[128]
      {"q5_k", 256, 176, true, true},   // ggml_half2 dm; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]
      {"q6_k", 256, 210, true, true},   // uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; ggml_half d
      {"bf16", 1, 2, false, false},
  };
  return types;
}

const BlockType& block_type(std::string_view name) {
  return find_by_id(block_types(), name, "GGUF block type", &BlockType::name);
}

const std::vector<std::string>& llm_precision_names() {
  static const std::vector<std::string> names{"f16",    "q8_0",   "q4_0",   "q4_1",   "q5_0",   "q5_1",
                                              "q2_k",   "q3_k_s", "q3_k_m", "q4_k_s", "q4_k_m", "q5_k_s",
                                              "q5_k_m", "q6_k",   "fp32",   "fp16",   "bf16",   "int8",
                                              "int4",   "fp8"};
  return names;
}

WeightPrecision resolve_weight_precision(const std::string& name) {
  const auto& names = llm_precision_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    // The list is long; name all of it so the user sees the GGUF spelling perfcast expects.
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : " ") + n;
    const std::string near = nearest(name, names);
    ReasonCode why{near.empty() ? "weight_type.unknown" : "weight_type.unknown_near", {{"name", name}, {"valid", list}}};
    if (!near.empty()) why.args["near"] = near;
    throw InputError("unknown weight type '" + name + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?") +
                         " (valid: " + list + ")",
                     std::move(why));
  }
  WeightPrecision w;
  w.name = name;
  if (name == "fp32" || name == "fp16" || name == "bf16") {
    w.scheme = WeightScheme::kFloat;
    w.bits_per_weight = name == "fp32" ? 32 : 16;
    w.description = name + " weights";
  } else if (name == "int8") {
    w.scheme = WeightScheme::kWeightOnly;
    // Per-output-channel fp16 scale: 16 bits per row of thousands of weights, below 0.01 bit per weight.
    w.bits_per_weight = 8;
    w.description = "int8 weight-only (per-channel scales), fp16 activations";
  } else if (name == "int4") {
    // GPTQ/AWQ layout: 4-bit codes, one fp16 scale and one 4-bit zero point per group of 128 weights.
    w.scheme = WeightScheme::kWeightOnly;
    w.bits_per_weight = 4.0 + (16.0 + 4.0) / 128.0;
    w.description = "int4 weight-only (group 128, fp16 scale + 4-bit zero), fp16 activations";
  } else if (name == "fp8") {
    w.scheme = WeightScheme::kFp8;
    w.bits_per_weight = 8;
    w.description = "fp8 e4m3 weights and activations (per-tensor scales)";
  } else {
    w.scheme = WeightScheme::kGguf;
    // A GGUF file type names its main block type; _s/_m select the mixture rules.
    std::string base = name;
    if (base.size() > 2 && (base.ends_with("_s") || base.ends_with("_m")) && base.find("_k") != std::string::npos)
      base = base.substr(0, base.size() - 2);
    w.base = base;
    w.bits_per_weight = block_type(base).bits_per_weight();
    w.description = "GGUF " + name + " (" + base + " blocks, llama.cpp per-tensor mixture)";
  }
  return w;
}

namespace {

// llama.cpp: layers that get more bits in the _M mixtures (first and last eighth, every third in between).
bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// A k-quant needs rows that are whole 256-weight super-blocks; llama.cpp falls back per tensor
// (q2_k/q3_k -> iq4_nl, same 4.5 bits as q4_0; q4_k -> q5_0; q5_k -> q5_1; q6_k -> q8_0).
const BlockType& fit_rows(const BlockType& t, std::int64_t row_elems) {
  if (row_elems <= 0 || row_elems % t.block_elems == 0) return t;
  if (t.name == "q2_k" || t.name == "q3_k") return block_type("q4_0");
  if (t.name == "q4_k") return block_type("q5_0");
  if (t.name == "q5_k") return block_type("q5_1");
  if (t.name == "q6_k") return block_type("q8_0");
  return block_type("f16");
}

}  // namespace

const BlockType& gguf_tensor_type(const WeightPrecision& w, const TensorInfo& t) {
  if (w.scheme != WeightScheme::kGguf) throw std::logic_error("internal error: gguf_tensor_type on a non-GGUF precision");
  const std::string& f = w.name;  // file type
  if (w.base == "f16") return block_type("f16");
  std::string type = w.base;
  const bool moe8 = t.n_expert == 8;
  switch (t.role) {
    case TensorRole::kRouter:
      return block_type("f32");  // ffn_gate_inp is never quantized
    case TensorRole::kOutput:
      type = w.base == "q8_0" ? "q8_0" : "q6_k";
      if (t.row_elems % 256 != 0) type = "q8_0";
      break;
    case TensorRole::kTokenEmbedding:
      // Tied embeddings are the output tensor and get its type.
      if (!t.has_output) type = w.base == "q8_0" || t.row_elems % 256 != 0 ? "q8_0" : "q6_k";
      break;
    case TensorRole::kAttnV:
      if (f == "q2_k") type = t.n_gqa >= 4 ? "q4_k" : "q3_k";
      else if (f == "q3_k_m") type = t.layer < 2 ? "q5_k" : "q4_k";
      else if ((f == "q4_k_m" || f == "q5_k_m") && use_more_bits(t.layer, t.n_layers)) type = "q6_k";
      else if (f == "q4_k_s" && t.layer < 4) type = "q5_k";
      if (t.model_70b && (type == "q3_k" || type == "q4_k")) type = "q5_k";
      if (moe8) type = "q8_0";
      break;
    case TensorRole::kAttnK:
      if (moe8) type = "q8_0";
      break;
    case TensorRole::kAttnQkv:  // fused q/k/v projection (GPT-2 family)
      if (f == "q3_k_m") type = "q4_k";
      else if (f == "q4_k_m") type = "q5_k";
      else if (f == "q5_k_m") type = "q6_k";
      break;
    case TensorRole::kFfnDown:
      if (f == "q2_k") type = "q3_k";
      else if (f == "q3_k_m") type = t.layer < t.n_layers / 16 ? "q5_k" : "q4_k";
      else if (f == "q4_k_m" && use_more_bits(t.layer, t.n_layers)) type = "q6_k";
      else if (f == "q5_k_m" && use_more_bits(t.layer, t.n_layers)) type = "q6_k";
      else if (f == "q4_k_s" && t.layer < t.n_layers / 8) type = "q5_k";
      break;
    case TensorRole::kAttnOutput:
      if (moe8) {
        if (f == "q2_k" || f == "q3_k_s" || f == "q3_k_m" || f == "q4_k_s" || f == "q4_k_m") type = "q5_k";
      } else if (f == "q2_k") {
        type = "q3_k";
      } else if (f == "q3_k_m") {
        type = "q4_k";
      }
      break;
    default:
      break;
  }
  return fit_rows(block_type(type), t.row_elems);
}

// ---- kernel constants -----------------------------------------------------------------------------------

const IssueRates& QuantKernelConstants::issue_rates(int sm) const {
  // Older than every listed capability: the oldest listed.
  const auto* e = nearest_sm_at_or_below(issue, sm, [](const auto& kv) { return kv.first; });
  return e ? e->second : issue.begin()->second;
}

double QuantKernelConstants::mmvq_slots_per_weight(const std::string& type, int sm) const {
  auto it = mmvq.find(type);
  if (it == mmvq.end()) return 0;
  return slots(it->second, sm);
}

double QuantKernelConstants::masked_mha_slots_per_element(double kv_bytes, int sm) const {
  const char* cache = kv_bytes <= 1.0 ? "kv8" : kv_bytes <= 2.0 ? "kv16" : "kv32";
  return slots(masked_mha.at(cache), sm);
}

double QuantKernelConstants::slots(const InstructionMix& m, int sm) const {
  const IssueRates* r = &issue_rates(sm);
  // Lane slots: an instruction class running at `rate` per SM-clock costs full/rate full-rate slots.
  const double full = full_rate_lanes_per_sm_clk;
  const double integer = full * (m.alu / r->alu + m.shift / r->shift + m.imul / r->imul + m.dp4a / r->dp4a);
  const double convert = full * (m.cvt / r->cvt + m.video / r->video);
  const double fp = full * m.fp / r->fp;
  // Pascal issues integer and fp32 work to the same lanes; later GPUs overlap the fp32 pipe with the integer one.
  return r->shared_int_fp ? integer + convert + fp : std::max(integer + convert, fp);
}

double QuantKernelConstants::mmq_relative_rate(const std::string& type) const {
  auto it = mmq_rate.find(type);
  return it == mmq_rate.end() ? 1.0 : it->second;
}

namespace {

QuantKernelConstants load_quant_constants() {
  const auto path = data_dir() / "quantization.toml";
  const toml::table root = parse_toml_file(path);
  const std::string where = path.string();
  TomlFields top(root, where);
  QuantKernelConstants c;
  TomlFields k(top.table("kernels"), where + " [kernels]");
  c.mmq_dp4a_efficiency = k.number("mmq_dp4a_efficiency");
  c.weight_only_dequant_efficiency = k.number("weight_only_dequant_efficiency");
  c.full_rate_lanes_per_sm_clk = k.number("full_rate_lanes_per_sm_clk");
  c.skinny_gemm_below_tokens = k.number("skinny_gemm_below_tokens");
  k.has("sources");
  k.refuse_unknown_keys();
  TomlFields d(top.table("dmmv_f16"), where + " [dmmv_f16]");
  c.dmmv_f16_warps_per_block = d.number("warps_per_block");
  c.dmmv_f16_bytes_in_flight_per_warp = d.number("bytes_in_flight_per_warp");
  c.dmmv_f16_little_cap = d.boolean("little_cap");
  d.refuse_unknown_keys();
  const auto read_mixes = [&](const char* table, std::map<std::string, InstructionMix>& into) {
    for (const auto& [name, node] : top.table(table)) {
      const auto* t = node.as_table();
      if (!t) continue;
      TomlFields f(*t, where + " [" + table + "." + std::string(name.str()) + "]");
      InstructionMix m;
      m.alu = f.number_or("alu", 0);
      m.shift = f.number_or("shift", 0);
      m.imul = f.number_or("imul", 0);
      m.cvt = f.number_or("cvt", 0);
      m.fp = f.number_or("fp", 0);
      m.dp4a = f.number_or("dp4a", 0);
      m.video = f.number_or("video", 0);
      f.refuse_unknown_keys();
      into[std::string(name.str())] = m;
    }
  };
  read_mixes("mmvq", c.mmvq);
  read_mixes("masked_mha", c.masked_mha);
  for (const char* cache : {"kv8", "kv16", "kv32"})
    if (!c.masked_mha.contains(cache))
      throw InputError(where + " [masked_mha]: missing entry '" + std::string(cache) + "'");
  for (const auto& [name, node] : top.table("mmq_rate"))
    if (auto v = node.value<double>()) c.mmq_rate[std::string(name.str())] = *v;
  for (const auto& [name, node] : top.table("issue")) {
    const auto* t = node.as_table();
    const std::string key(name.str());
    if (!t || !key.starts_with("sm_")) continue;
    TomlFields f(*t, where + " [issue." + key + "]");
    IssueRates r;
    r.alu = f.number("alu");
    r.shift = f.number("shift");
    r.imul = f.number("imul");
    r.cvt = f.number("cvt");
    r.fp = f.number("fp");
    r.dp4a = f.number("dp4a");
    r.shared_int_fp = f.boolean("shared_int_fp");
    r.video = f.number("video");
    r.mmvq_efficiency = f.number("mmvq_efficiency");
    f.has("sources");
    f.refuse_unknown_keys();
    c.issue[std::stoi(key.substr(3))] = r;
  }
  if (c.issue.empty()) TomlFields(top.table("issue"), where).fail("sm_61", "is missing");
  if (const auto* s = top.has("sources") ? root["sources"].as_table() : nullptr)
    for (const auto& [key, v] : *s) c.sources[std::string(key.str())] = v.value_or(std::string{});
  top.refuse_unknown_keys();
  return c;
}

}  // namespace

const QuantKernelConstants& quant_kernel_constants() {
  static const QuantKernelConstants c = load_quant_constants();
  return c;
}

}  // namespace perfcast
