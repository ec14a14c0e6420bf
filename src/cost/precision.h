// What a requested precision means on one GPU and runtime: the pipe the conv/GEMM math runs on, storage bytes,
// and the extra work mixed precision brings. Precisions a GPU cannot run raise UnsupportedError.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "device/architecture.h"
#include "device/device_spec.h"
#include "graph/op_arithmetic.h"
#include "runtime/runtime_profile.h"

namespace perfcast {

// Every precision name the CLI accepts.
const std::vector<std::string>& precision_names();

// The note code of a half precision that an engine builder keeps in FP32 on a GPU without fast FP16: nothing
// changes, so the advisor's precision line is this note alone.
inline constexpr std::string_view kNoteHalfWithoutFastFp16 = "note.half_without_fast_fp16";

struct PrecisionPlan {
  std::string name;             // as requested: fp32, tf32, fp16, bf16, amp, amp-bf16, int8, fp8
  Pipe conv_pipe = Pipe::kFp32;    // convolutions
  Pipe matmul_pipe = Pipe::kFp32;  // linear / matmul / attention GEMMs
  ElemBytes bytes;              // activation and weight storage as kernels read them
  bool mixed = false;           // fp32 master weights with low-precision compute copies (amp, amp-bf16)
  std::string note;             // how it runs here, for reports ("FP16 storage, FP32 math: sm_61 has no fast FP16")
  ReasonCode note_code;         // the same note as a code and its facts (report/messages.cpp renders it per language)
};

// `runtime` is the profile as the request runs it (its [[version]] rules applied); `runtime_version` the version the
// request named ("" = the profile's default_version), for the message when the precision needs a later one.
PrecisionPlan resolve_precision(const std::string& precision, const DeviceSpec& device,
                                const ArchitectureProfile& arch, const RuntimeProfile& runtime,
                                const std::string& runtime_version, bool training);

}  // namespace perfcast
