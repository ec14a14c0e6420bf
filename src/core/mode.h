// What a prediction runs: training, inference, one language-model pass, or serving under load. Parsed once where
// a request enters (CLI flags, a --configs row, a profiler trace); everything after reads the enum.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

enum class Mode {
  kTrain,     // forward, backward and the weight update
  kInfer,     // forward only
  kPrefill,   // a language model reads --seq prompt tokens
  kDecode,    // a language model generates --seq tokens after --context cached ones
  kGenerate,  // prefill of --context tokens, then decode of --seq
  kServe,     // continuous batching of a request stream (predict --mode serve)
  kCount
};

// The names users type and reports print, in enum order (the JSON "mode" key and the CSV column).
inline constexpr std::array<std::string_view, static_cast<std::size_t>(Mode::kCount)> kModeNames{
    "train", "infer", "prefill", "decode", "generate", "serve"};
static_assert(kModeNames.size() == static_cast<std::size_t>(Mode::kCount), "every Mode has a name");

// The mode's name ("train", ...).
constexpr std::string_view mode_name(Mode m) { return kModeNames[static_cast<std::size_t>(m)]; }
// The mode's name as a string, for messages and reports.
inline std::string mode_string(Mode m) { return std::string(mode_name(m)); }

// The mode named `text`; an InputError naming the nearest mode for a typo.
Mode parse_mode(std::string_view text);

// Every mode's name, in enum order.
std::vector<std::string> mode_names();

// One pass of a language model per request (prefill, decode, generate): predicted by predict_llm.
constexpr bool is_llm_pass(Mode m) { return m == Mode::kPrefill || m == Mode::kDecode || m == Mode::kGenerate; }
// Language-model serving, one pass or a request stream: 16-bit weights and batch 1 by default.
constexpr bool is_serving(Mode m) { return is_llm_pass(m) || m == Mode::kServe; }

}  // namespace perfcast
