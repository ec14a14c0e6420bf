#include "import/model_source.h"

#include <filesystem>

#include "core/data_files.h"
#include "core/error.h"
#include "import/kineto_trace.h"

namespace perfcast {

ModelSource resolve_model(const std::string& id_or_path, const ImportOptions& options) {
  if (id_or_path.ends_with(".json.gz") || id_or_path.ends_with(".pt.trace.json") ||
      (id_or_path.ends_with(".json") && looks_like_trace(id_or_path)))
    return model_from_trace(id_or_path);
  if (id_or_path.ends_with(".json")) return model_from_hf_config(id_or_path);
  if (id_or_path.ends_with(".onnx")) return model_from_onnx(id_or_path, options);
  const ZooModel& z = find_zoo_model(id_or_path);
  ModelSource m;
  m.id = z.id;
  m.family = z.family;
  m.description = z.description;
  m.sequence = z.sequence;
  m.decoder_llm = z.family == "llm" || z.id == "gpt2";  // GPT-2 is a causal LM too
  m.default_seq = z.default_seq;
  m.max_positions = z.max_positions;
  m.build = z.build;
  // Zoo language models are their published configs (data/models/hf): their context limit comes from there.
  if (m.decoder_llm) {
    const auto config = data_dir() / "models" / "hf" / (z.id + ".json");
    if (std::filesystem::exists(config)) m.max_positions = model_from_hf_config(config.string()).max_positions;
  }
  return m;
}

}  // namespace perfcast
