// Where a model comes from: a zoo id, a Hugging Face config.json, an ONNX file or a PyTorch profiler trace. All give a graph builder.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "import/zoo/zoo.h"

namespace perfcast {

struct ModelSource {
  std::string id;           // zoo id, or the file path
  std::string family;       // "cnn", "transformer", "llm", "onnx", ...
  std::string description;
  bool sequence = false;    // takes --seq, reports tokens/s
  bool decoder_llm = false; // supports --mode prefill/decode
  std::int64_t default_seq = 0;
  // The context it runs at: its config's max_position_embeddings, or --max-positions past it; 0 = unknown.
  std::int64_t max_positions = 0;
  std::int64_t trained_positions = 0;  // the context its config states, before any --max-positions
  bool learned_positions = false;      // a learned position table (GPT-2, BERT, OPT): no context past its rows
  std::int64_t natural_batch = 0;  // the batch the source was recorded at (a trace), 0 when it has none
  std::function<Graph(const ModelOptions&)> build;
  std::vector<std::string> uncosted;  // importer notes: ops that could not be costed, with counts
  // Why the model's code runs only its own (eager) attention, as Hugging Face's T5-style models do ("" when
  // --attention sdpa and flash apply).
  std::string eager_attention_only;
};

// Extra inputs some importers need (ONNX dynamic dimensions given as --dim name=value).
struct ImportOptions {
  std::map<std::string, std::int64_t> dims;
  // --seq (0: not given): the value of an ONNX token-id input's symbolic sequence dimension when no --dim names it,
  // as Hugging Face exports name it (input_ids [batch_size, sequence_length]).
  std::int64_t seq = 0;
  // --max-positions (0: not given): the context a decoder LLM with rotary or ALiBi positions is run at, past the
  // max_position_embeddings of its config (RoPE scaling in its config.json, or a long-context fine-tune).
  std::int64_t max_positions = 0;
};

// A zoo id, a path ending in .json (a Hugging Face config, or a PyTorch profiler trace: a Chrome trace with
// traceEvents), .json.gz (a trace) or .onnx. InputError on unknown ids, unreadable or
// malformed files (naming the problem), and on a --max-positions the model cannot take.
ModelSource resolve_model(const std::string& id_or_path, const ImportOptions& options = {});

// The one context check of every path (predict in each mode, compare, advise, plan, predict --configs, serving, the
// training layouts, and every import: zoo, config.json, ONNX): one sequence of `positions` tokens, `what` naming the
// flags that make them ("--seq 8192", "--context 4000 + --seq 200"), against the model's context. InputError past
// it, naming the context and --max-positions: a learned position table has no rows past its own (transformers
// fails the lookup); a rotary or ALiBi decoder runs past the context its config states only with --max-positions.
// A model that states no context (0: relative or sinusoidal positions, a fixed-size graph) is not checked.
void check_context(const ModelSource& m, std::int64_t positions, const std::string& what);

// Importers (src/import/hf_config.cpp, src/import/onnx_import.cpp).
ModelSource model_from_hf_config(const std::string& path);
ModelSource model_from_onnx(const std::string& path, const ImportOptions& options);
// src/import/trace_model.cpp: the forward operators of a trace recorded with record_shapes=True.
ModelSource model_from_trace(const std::string& path);

}  // namespace perfcast
