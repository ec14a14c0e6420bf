#include "cost/precision.h"

#include <algorithm>

#include "core/error.h"
#include "cost/precision_note.h"

namespace perfcast {

const std::vector<std::string>& precision_names() {
  static const std::vector<std::string> names{"fp32", "tf32", "fp16", "bf16", "amp", "amp-bf16", "int8", "fp8"};
  return names;
}

namespace {

double storage_bytes(const std::string& p) {
  if (p == "fp32" || p == "tf32") return 4;
  if (p == "int8" || p == "fp8") return 1;
  return 2;
}

// Why `device` cannot run precision `p`: the hardware it needs, as a reason code and as the English sentence.
UnsupportedError precision_unsupported(const std::string& p, const DeviceSpec& device) {
  ReasonCode why{"precision.needs_hardware",
                 {{"precision", p}, {"gpu", device.id}, {"sm", std::to_string(device.sm_version)}}};
  const auto tensor_cores = [&](const char* unit, const char* min_sm) {
    why.id = "precision.needs_tensor_cores";
    why.args["unit"] = unit;
    why.args["min_sm"] = min_sm;
  };
  if (p == "tf32") tensor_cores("TF32", "80");
  if (p == "bf16" || p == "amp-bf16") tensor_cores("BF16", "80");
  if (p == "fp8") tensor_cores("FP8", "89");
  if (p == "int8") why.id = "precision.needs_int8";
  const std::string needed = why.id == "precision.needs_tensor_cores"
                                 ? why.args["unit"] + " tensor cores (sm_" + why.args["min_sm"] + " or newer)"
                             : why.id == "precision.needs_int8" ? "INT8 dp4a (sm_61 or newer) or INT8 tensor cores"
                                                                : "hardware support";
  return UnsupportedError("precision '" + p + "' is not supported on " + device.id + " (sm_" +
                              std::to_string(device.sm_version) + "): it needs " + needed,
                          std::move(why));
}

// The note of a runtime that runs fp32 `convs` and/or `matmuls` as TF32 by default (neither: no note).
void set_tf32_default_note(PrecisionPlan& plan, const RuntimeProfile& runtime, bool convs, bool matmuls) {
  if (!convs && !matmuls) {
    plan.note.clear();
    plan.note_code = ReasonCode{};
    return;
  }
  const bool both = convs && matmuls;
  const std::string what = both ? "convolutions and matmuls" : convs ? "convolutions" : "matmuls";
  plan.note = runtime.id + " runs fp32 " + what + " as TF32 on tensor cores by default";
  plan.note_code = {both ? "note.tf32_default_all" : convs ? "note.tf32_default_conv" : "note.tf32_default_matmul",
                    {{"runtime", runtime.id}}};
}

}  // namespace

MathOpsPresent math_ops_present(const Graph& graph) {
  MathOpsPresent present{false, false};
  for (const Op& op : graph.ops) {
    if (op.kind == OpKind::kConv) present.convolutions = true;
    if (op.kind == OpKind::kMatmul || op.kind == OpKind::kAttention || op.kind == OpKind::kInteraction)
      present.matmuls = true;
  }
  return present;
}

void note_only_present_ops(PrecisionPlan& plan, const RuntimeProfile& runtime, MathOpsPresent present) {
  if (!plan.note_code.id.starts_with("note.tf32_default")) return;
  set_tf32_default_note(plan, runtime, runtime.tf32_conv_default && present.convolutions,
                        runtime.tf32_matmul_default && present.matmuls);
}

PrecisionPlan resolve_precision(const std::string& precision, const DeviceSpec& device,
                                const ArchitectureProfile& arch, const RuntimeProfile& runtime,
                                const std::string& runtime_version, bool training) {
  const auto& names = precision_names();
  if (std::find(names.begin(), names.end(), precision) == names.end()) throw_unknown("precision", precision, names);
  if (training && (precision == "int8" || precision == "fp8"))
    throw UnsupportedError("precision '" + precision + "' is for inference only; training needs fp32, tf32, amp, amp-bf16, fp16 or bf16",
                           {"precision.inference_only", {{"precision", precision}}});

  if (std::find(runtime.unsupported_precisions.begin(), runtime.unsupported_precisions.end(), precision) !=
      runtime.unsupported_precisions.end())
    throw UnsupportedError("precision '" + precision + "' is not supported on " + device.id + " (sm_" +
                               std::to_string(device.sm_version) + ") by " + runtime.id,
                           {"precision.unsupported_by_runtime",
                            {{"precision", precision}, {"gpu", device.id}, {"sm", std::to_string(device.sm_version)},
                             {"runtime", runtime.id}}});

  if (precision == "tf32" && !runtime.tf32_available) {
    const std::string version = runtime_version.empty() ? runtime.default_version : runtime_version;
    throw UnsupportedError("precision 'tf32' is not available in " + runtime.id + " " + version +
                               " (TF32 arrived in later versions of the framework)",
                           {"precision.runtime_version",
                            {{"precision", precision}, {"runtime", runtime.id}, {"version", version}}});
  }
  const std::string arch_key = precision == "amp-bf16" ? "amp_bf16" : precision;
  const auto pipe = arch.math_pipe(arch_key);
  if (!pipe || device.peak(*pipe) <= 0) throw precision_unsupported(precision, device);

  PrecisionPlan plan;
  plan.name = precision;
  plan.conv_pipe = plan.matmul_pipe = *pipe;
  plan.mixed = precision == "amp" || precision == "amp-bf16";
  plan.bytes.act = storage_bytes(precision);
  // Mixed precision keeps fp32 masters but the kernels read the low-precision copy.
  plan.bytes.weight = storage_bytes(precision);

  if (precision == "fp32") {
    // Frameworks route "fp32" convolutions / matmuls through TF32 tensor cores on Ampere+ by default.
    const auto tf32 = arch.math_pipe("tf32");
    const bool has_tf32 = tf32 && device.peak(*tf32) > 0;
    if (has_tf32 && runtime.tf32_conv_default) plan.conv_pipe = *tf32;
    if (has_tf32 && runtime.tf32_matmul_default) plan.matmul_pipe = *tf32;
    if (has_tf32) set_tf32_default_note(plan, runtime, runtime.tf32_conv_default, runtime.tf32_matmul_default);
  }
  if (plan.mixed && !is_tensor_pipe(*pipe)) {
    plan.note = "no tensor cores on sm_" + std::to_string(device.sm_version) +
                ": mixed precision stores FP16 and computes in " + std::string(pipe_name(*pipe)) +
                "; it saves memory traffic and capacity, not math";
    plan.note_code = {"note.no_tensor_cores",
                      {{"sm", std::to_string(device.sm_version)}, {"pipe", std::string(pipe_name(*pipe))}}};
  }
  if (precision == "int8" && !runtime.int8_convolution) {
    // No whole-network INT8 engine: torch._int_mm / torchao quantize the linear layers' GEMMs (weights stored in
    // INT8, each input quantized on the fly); the tensors between ops stay FP16. Convolutions are refused before
    // this (check_int8_convolutions).
    plan.bytes.act = storage_bytes("fp16");
    plan.note = runtime.id + " runs INT8 only in the GEMMs torch._int_mm / torchao quantize; activations stay FP16";
    plan.note_code = {"note.int8_gemm_only", {{"runtime", runtime.id}}};
  }
  const bool slow_fp16 = device.peak(Pipe::kFp16) < device.peak(Pipe::kFp32);
  // How many times FP16 math runs below FP32 (only when it does), and the sm, for the notes below.
  const std::string factor =
      slow_fp16 ? std::to_string(static_cast<int>(device.peak(Pipe::kFp32) / device.peak(Pipe::kFp16) + 0.5)) : "";
  const std::string sm = std::to_string(device.sm_version);
  if ((precision == "fp16" || precision == "amp") && runtime.half_needs_fast_fp16 &&
      !is_tensor_pipe(*pipe) && slow_fp16) {
    // The engine builder keeps FP32 kernels (and so FP32 tensors) on a GPU without fast FP16: nothing changes
    // (RuntimeProfile::half_needs_fast_fp16; its sources in data/runtimes/tensorrt.toml).
    plan.mixed = false;
    plan.bytes.act = plan.bytes.weight = storage_bytes("fp32");
    plan.note = runtime.id + " builds FP16 kernels only on GPUs with fast FP16; FP16 on sm_" + sm + " runs " + factor +
                "x below FP32, so the engine stays FP32: " + precision + " gains nothing here";
    plan.note_code = {std::string(kNoteHalfWithoutFastFp16),
                      {{"runtime", runtime.id}, {"sm", sm}, {"factor", factor}, {"precision", precision}}};
    return plan;
  }
  if (precision == "fp16" && slow_fp16) {
    if (*pipe == Pipe::kFp16) {
      plan.note = "native FP16 math on sm_" + sm + " runs at " + factor + "x below FP32";
      plan.note_code = {"note.fp16_slow", {{"sm", sm}, {"factor", factor}}};
    } else {
      plan.note = "FP16 math on sm_" + sm + " runs " + factor + "x below FP32, so cuDNN/cuBLAS compute FP16 tensors in " +
                  std::string(pipe_name(*pipe)) + ": fp16 saves memory traffic and capacity, not math";
      plan.note_code = {"note.fp16_pseudo_half", {{"sm", sm}, {"factor", factor}, {"pipe", std::string(pipe_name(*pipe))}}};
    }
  }
  return plan;
}

}  // namespace perfcast
