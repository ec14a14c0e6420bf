#include "import/model_source.h"

#include <filesystem>

#include "core/data_files.h"
#include "core/error.h"
#include "core/limits.h"
#include "import/kineto_trace.h"

namespace perfcast {

namespace {

// --model names a model id or a file; a folder is neither (a zoo id that is also a folder's name stays the id).
[[noreturn]] void refuse_folder(const std::string& path) {
  throw InputError("model '" + path + "' is a directory, not a file: --model takes a model id (`perfcast models`), a "
                   "config.json, an .onnx file or a profiler trace (.json or .json.gz)");
}

ModelSource resolve_source(const std::string& id_or_path, const ImportOptions& options) {
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(id_or_path, ec);
  if (folder && (id_or_path.ends_with(".json") || id_or_path.ends_with(".json.gz") || id_or_path.ends_with(".onnx")))
    refuse_folder(id_or_path);
  if (id_or_path.ends_with(".json.gz") || id_or_path.ends_with(".pt.trace.json") ||
      (id_or_path.ends_with(".json") && looks_like_trace(id_or_path)))
    return model_from_trace(id_or_path);
  if (id_or_path.ends_with(".json")) return model_from_hf_config(id_or_path);
  if (id_or_path.ends_with(".onnx")) return model_from_onnx(id_or_path, options);
  const ZooModel& z = [&]() -> const ZooModel& {
    try {
      return find_zoo_model(id_or_path);
    } catch (const InputError&) {
      if (folder) refuse_folder(id_or_path);
      throw;
    }
  }();
  ModelSource m;
  m.id = z.id;
  m.family = z.family;
  m.description = z.description;
  m.sequence = z.sequence;
  m.decoder_llm = z.family == "llm" || z.id == "gpt2";  // GPT-2 is a causal LM too
  m.default_seq = z.default_seq;
  m.max_positions = z.max_positions;
  m.learned_positions = z.learned_positions;
  m.build = z.build;
  // Zoo language models are their published configs (data/models/hf): their context limit comes from there.
  if (m.decoder_llm) {
    const auto config = data_dir() / "models" / "hf" / (z.id + ".json");
    if (std::filesystem::exists(config)) {
      const ModelSource hf = model_from_hf_config(config.string());
      m.max_positions = hf.max_positions;
      m.learned_positions = hf.learned_positions;
    }
  }
  m.trained_positions = m.max_positions;
  return m;
}

// --max-positions: a decoder LLM without a learned position table run past the context its config states.
void run_past_trained_context(ModelSource& m, std::int64_t positions) {
  const std::string flag = "--max-positions " + std::to_string(positions);
  if (!m.decoder_llm)
    throw InputError(flag + ": it sets the context of a decoder language model; " + m.id + " is not one");
  if (m.learned_positions)
    throw InputError(flag + ": " + m.id + " has a learned position table of " + std::to_string(m.max_positions) +
                     " rows and cannot run past it (the option is for rotary or ALiBi positions)");
  if (positions < m.max_positions)
    throw InputError(flag + " is below the context of " + std::to_string(m.max_positions) + " that " + m.id +
                     "'s config states; it names a longer context to run past the trained one");
  check_limit("--max-positions", positions, input_limits().max_seq, "max_seq");
  m.max_positions = positions;
}

}  // namespace

void check_context(const ModelSource& m, std::int64_t positions, const std::string& what) {
  if (m.max_positions <= 0 || positions <= m.max_positions) return;
  const std::string context = std::to_string(m.max_positions);
  const std::string head = m.id + ": " + what + ": beyond its context of " + context + " positions";
  if (m.learned_positions)
    throw InputError(head + " (a learned position table, which --max-positions cannot extend)");
  if (m.max_positions > m.trained_positions && m.trained_positions > 0)
    throw InputError(head + " (--max-positions " + context + "); a larger --max-positions runs it further");
  throw InputError(head + " (max_position_embeddings of its config); --max-positions " + std::to_string(positions) +
                   " runs it past that (RoPE scaling or a long-context fine-tune)");
}

ModelSource resolve_model(const std::string& id_or_path, const ImportOptions& options) {
  ModelSource m = resolve_source(id_or_path, options);
  if (m.trained_positions == 0) m.trained_positions = m.max_positions;
  if (options.max_positions > 0) run_past_trained_context(m, options.max_positions);
  return m;
}

}  // namespace perfcast
