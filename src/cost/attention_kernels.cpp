#include "cost/attention_kernels.h"

#include <algorithm>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

std::vector<std::string> texts(const TomlFields& f, std::string_view key) {
  std::vector<std::string> out;
  const auto* arr = f.raw()[key].as_array();
  if (!arr) f.fail(key, "is missing or not a list of strings");
  for (const auto& e : *arr) {
    const auto v = e.value<std::string>();
    if (!v) f.fail(key, "must be a list of strings");
    out.push_back(*v);
  }
  return out;
}

template <class T>
std::vector<T> pair_of(const TomlFields& f, std::string_view key) {
  std::vector<T> out;
  const auto* arr = f.raw()[key].as_array();
  if (!arr || arr->size() != 2) f.fail(key, "must be a list of two integers");
  for (const auto& e : *arr) {
    const auto v = e.value<std::int64_t>();
    if (!v) f.fail(key, "must be a list of two integers");
    out.push_back(static_cast<T>(*v));
  }
  return out;
}

AttentionRules load() {
  const auto path = data_dir() / "attention.toml";
  const toml::table root = parse_toml_file(path);
  const TomlFields top(root, path.string());
  AttentionRules r;
  r.sdpa_min_version = top.text("sdpa_min_version");
  r.flash_attn_min_version = top.text("flash_attn_min_version");
  const TomlFields fl(top.table("flash"), path.string() + " [flash]");
  r.flash_min_sm = fl.count("min_sm");
  r.flash_precisions = texts(fl, "precisions");
  r.flash_max_head_dim = fl.count("max_head_dim");
  r.flash_training_gap_sm = pair_of<int>(fl, "consumer_training_gap_sm");
  r.flash_training_gap_head_dim = pair_of<std::int64_t>(fl, "consumer_training_gap_head_dim");
  const TomlFields f1(top.table("flash1"), path.string() + " [flash1]");
  r.flash1_sms = f1.count_list("sms", 50, 200);
  r.flash1_bf16_min_sm = f1.count("bf16_min_sm");
  r.flash1_precisions = texts(f1, "precisions");
  r.flash1_max_head_dim = f1.count("max_head_dim");
  r.flash1_head_dim_multiple = f1.count("head_dim_multiple");
  if (r.flash1_head_dim_multiple < 1) f1.fail("head_dim_multiple", "must be at least 1");
  r.flash1_training_wide_head_sms = f1.count_list("training_wide_head_sms", 50, 200);
  r.flash1_training_wide_head_dim = f1.count("training_wide_head_dim");
  const TomlFields me(top.table("memory_efficient"), path.string() + " [memory_efficient]");
  r.mem_efficient_min_sm = me.count("min_sm");
  r.mem_efficient_precisions_below_sm80 = texts(me, "precisions_below_sm80");
  r.mem_efficient_precisions_sm80 = texts(me, "precisions_sm80");
  r.tensor_core_alignment_bits = me.count("tensor_core_alignment_bits");
  r.min_alignment_elems_sm80 = me.count("min_alignment_elems_sm80");
  r.mem_efficient_relative_rate = me.number("relative_rate");
  if (r.mem_efficient_relative_rate <= 0 || r.mem_efficient_relative_rate > 1)
    me.fail("relative_rate", "must be in (0, 1]");
  const TomlFields ort(top.table("onnxruntime_fused_mha"), path.string() + " [onnxruntime_fused_mha]");
  r.ort_fmha_precisions = texts(ort, "precisions");
  r.ort_fmha_sms = ort.count_list("sms", 50, 200);
  r.ort_fmha_head_dims = ort.count_list("head_dims", 1, 1024);
  r.ort_fmha_head_dim_32_min_sm = ort.count("head_dim_32_min_sm");
  r.ort_fmha_max_seq = ort.count("max_seq");
  if (r.ort_fmha_max_seq < 1) ort.fail("max_seq", "must be at least 1");
  const TomlFields sw(top.table("sliding_window"), path.string() + " [sliding_window]");
  r.window_flash_skips = sw.boolean("flash_skips");
  r.window_flash1_skips = sw.boolean("flash1_skips");
  r.window_sdpa_explicit_mask = sw.boolean("sdpa_explicit_mask");
  return r;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string sm_text(int sm) { return "sm_" + std::to_string(sm); }

// The memory-efficient (xFormers CUTLASS) kernel: architectures, element types and the head_dim alignment of
// its GEMMs (sdp_utils.cpp minimum_gemm_alignment).
bool memory_efficient_runs(const AttentionGeometry& a, const AttentionTarget& t) {
  const auto& r = attention_rules();
  if (t.sm_version < r.mem_efficient_min_sm) return false;
  const bool sm80 = t.sm_version >= 80;
  if (!contains(sm80 ? r.mem_efficient_precisions_sm80 : r.mem_efficient_precisions_below_sm80, t.dtype)) return false;
  const bool half = t.dtype != "fp32";
  const bool tensor_cores = sm80 || (t.sm_version >= 70 && half);
  std::int64_t align = sm80 ? r.min_alignment_elems_sm80 : 1;
  if (tensor_cores) align = std::max<std::int64_t>(align, r.tensor_core_alignment_bits / (half ? 16 : 32));
  return a.head_dim % align == 0;
}

}  // namespace

const AttentionRules& attention_rules() {
  static const AttentionRules r = load();
  return r;
}

AttentionImpl parse_attention_impl(std::string_view name) {
  if (name.empty()) return AttentionImpl::kRuntime;
  if (name == "eager") return AttentionImpl::kEager;
  if (name == "sdpa") return AttentionImpl::kSdpa;
  if (name == "flash" || name == "flash_attention_2") return AttentionImpl::kFlash;
  if (name == "flash1") return AttentionImpl::kFlash1;
  throw_unknown("attention implementation", name, {"eager", "sdpa", "flash", "flash1", "xqa", "mmha"});
}

std::optional<bool> parse_generation_kernel(std::string_view name) {
  if (name == "xqa") return true;
  if (name == "mmha") return false;
  return std::nullopt;
}

std::string_view attention_impl_name(AttentionImpl impl) {
  switch (impl) {
    case AttentionImpl::kEager:
      return "eager";
    case AttentionImpl::kSdpa:
      return "sdpa";
    case AttentionImpl::kFlash:
      return "flash";
    case AttentionImpl::kFlash1:
      return "flash1";
    case AttentionImpl::kRuntime:
      break;
  }
  return "runtime";
}

std::string attention_dtype(std::string_view precision) {
  if (precision == "fp32" || precision == "tf32") return "fp32";
  if (precision == "bf16" || precision == "amp-bf16") return "bf16";
  return "fp16";
}

std::string flash_refusal(const AttentionGeometry& a, const AttentionTarget& t) {
  const auto& r = attention_rules();
  if (t.sm_version < r.flash_min_sm)
    return "FlashAttention-2 needs " + sm_text(r.flash_min_sm) + " or newer; " + t.gpu + " is " + sm_text(t.sm_version);
  if (!contains(r.flash_precisions, t.dtype))
    return "FlashAttention-2 runs fp16 and bf16 only, not " + t.dtype +
           " (use --precision amp, amp-bf16, fp16 or bf16)";
  if (a.head_dim > r.flash_max_head_dim)
    return "FlashAttention-2 takes head dimensions up to " + std::to_string(r.flash_max_head_dim) + ", not " +
           std::to_string(a.head_dim);
  const auto& sm = r.flash_training_gap_sm;
  const auto& hd = r.flash_training_gap_head_dim;
  if (t.training && t.sm_version >= sm[0] && t.sm_version <= sm[1] &&
      ((a.head_dim > hd[0] && a.head_dim <= hd[1]) || (a.head_dim > hd[1] && a.dropout)))
    return "FlashAttention-2 cannot train head dimension " + std::to_string(a.head_dim) + " on " +
           sm_text(t.sm_version) + " (backward limit of sm_86/sm_89)";
  if (a.causal && a.q_len != a.kv_len)
    return "PyTorch's FlashAttention-2 takes no causal mask when query and key lengths differ";
  return "";
}

std::string flash1_refusal(const AttentionGeometry& a, const AttentionTarget& t) {
  const auto& r = attention_rules();
  const auto listed = [](const std::vector<int>& v, int sm) { return std::find(v.begin(), v.end(), sm) != v.end(); };
  if (!listed(r.flash1_sms, t.sm_version))
    return "flash_attn 1.x runs on Turing, Ampere, Ada and Hopper (sm_75, sm_80, sm_86, sm_89, sm_90); " + t.gpu +
           " is " + sm_text(t.sm_version);
  if (!contains(r.flash1_precisions, t.dtype))
    return "flash_attn 1.x runs fp16 and bf16 only, not " + t.dtype + " (use --precision amp, amp-bf16, fp16 or bf16)";
  if (t.dtype == "bf16" && t.sm_version < r.flash1_bf16_min_sm)
    return "flash_attn 1.x runs bf16 from " + sm_text(r.flash1_bf16_min_sm) + " only; " + t.gpu + " is " +
           sm_text(t.sm_version) + " (use fp16)";
  if (a.head_dim > r.flash1_max_head_dim || a.head_dim % r.flash1_head_dim_multiple != 0)
    return "flash_attn 1.x takes head dimensions that are multiples of " + std::to_string(r.flash1_head_dim_multiple) +
           " up to " + std::to_string(r.flash1_max_head_dim) + ", not " + std::to_string(a.head_dim);
  if (t.training && a.head_dim > r.flash1_training_wide_head_dim && !listed(r.flash1_training_wide_head_sms, t.sm_version))
    return "flash_attn 1.x trains head dimensions above " + std::to_string(r.flash1_training_wide_head_dim) +
           " on sm_80 and sm_90 (A100, H100) only; " + t.gpu + " is " + sm_text(t.sm_version) +
           " and the head dimension " + std::to_string(a.head_dim);
  return "";
}

std::string attention_min_torch_version(AttentionImpl impl) {
  const auto& r = attention_rules();
  switch (impl) {
    case AttentionImpl::kSdpa:
      return r.sdpa_min_version;
    case AttentionImpl::kFlash:
    case AttentionImpl::kFlash1:
      return r.flash_attn_min_version;
    case AttentionImpl::kEager:
    case AttentionImpl::kRuntime:
      break;
  }
  return "";
}

AttentionKernel select_attention_kernel(AttentionImpl impl, const AttentionGeometry& a, const AttentionTarget& t) {
  PERFCAST_ASSERT(impl != AttentionImpl::kRuntime, "the runtime's own attention is decided by its profile");
  if (impl == AttentionImpl::kEager) return AttentionKernel::kUnfused;
  if (impl == AttentionImpl::kFlash1) {
    const std::string why1 = flash1_refusal(a, t);
    if (!why1.empty()) throw UnsupportedError("--attention flash1: " + why1);
    return AttentionKernel::kFlash;
  }
  const std::string why = flash_refusal(a, t);
  if (impl == AttentionImpl::kFlash) {
    if (!why.empty()) throw UnsupportedError("--attention flash: " + why);
    return AttentionKernel::kFlash;
  }
  // sdpa: a window the sequence exceeds arrives as an explicit mask, which FlashAttention-2 does not take.
  const bool masked = a.window_applies() && attention_rules().window_sdpa_explicit_mask;
  if (why.empty() && !masked) return AttentionKernel::kFlash;
  return memory_efficient_runs(a, t) ? AttentionKernel::kMemoryEfficient : AttentionKernel::kUnfused;
}

void apply_window_rules(AttentionGeometry& a, AttentionImpl impl) {
  if (!a.window_applies() || !a.fused) return;
  const auto& r = attention_rules();
  switch (impl) {
    case AttentionImpl::kFlash:
      if (!r.window_flash_skips) a.window = 0;
      break;
    case AttentionImpl::kFlash1:
      if (!r.window_flash1_skips) a.window = 0;
      break;
    case AttentionImpl::kRuntime:  // the runtime's fused attention is Hugging Face's sdpa path
    case AttentionImpl::kSdpa:
      if (r.window_sdpa_explicit_mask) a.memory_efficient = true;
      break;
    case AttentionImpl::kEager:
      break;
  }
}

double fused_attention_rate(const AttentionGeometry& a) {
  return a.memory_efficient ? attention_rules().mem_efficient_relative_rate : 1.0;
}

bool onnxruntime_fused_mha_runs(const AttentionGeometry& a, const AttentionTarget& t) {
  const auto& r = attention_rules();
  const auto listed = [](const std::vector<int>& v, std::int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (t.training || a.causal || a.q_len != a.kv_len || a.q_len > r.ort_fmha_max_seq) return false;
  if (!contains(r.ort_fmha_precisions, t.dtype) || !listed(r.ort_fmha_sms, t.sm_version)) return false;
  if (!listed(r.ort_fmha_head_dims, a.head_dim)) return false;
  return a.head_dim != 32 || t.sm_version >= r.ort_fmha_head_dim_32_min_sm;
}

}  // namespace perfcast
