// Decoder language models: the published Hugging Face configs in data/models/hf/<id>.json, built by the
// config importer (src/import/hf_config.cpp), so that `--model llama-3-8b` and `--model <its config.json>` are
// the same graph by construction. GPT-2 (124M) stays in sequence_models.cpp and is marked as a decoder LLM by
// resolve_model.
#include <utility>

#include "core/data_files.h"
#include "import/model_source.h"
#include "import/zoo/zoo.h"

namespace perfcast {

namespace {

void add(std::vector<ZooModel>& out, std::string id, std::string description, std::string citation) {
  ZooModel m;
  m.id = id;
  m.family = "llm";
  m.description = std::move(description);
  m.citation = std::move(citation);
  m.sequence = true;
  m.default_seq = 2048;
  m.max_positions = model_from_hf_config((data_dir() / "models" / "hf" / (id + ".json")).string()).max_positions;
  m.build = [id](const ModelOptions& o) {
    Graph g = model_from_hf_config((data_dir() / "models" / "hf" / (id + ".json")).string()).build(o);
    g.model_id = id;
    return g;
  };
  out.push_back(std::move(m));
}

}  // namespace

void register_llms(std::vector<ZooModel>& out) {
  const std::string llama2 = "Touvron et al. 2023, 'Llama 2', arXiv:2307.09288; config.json of meta-llama/";
  add(out, "llama-2-7b", "Llama 2 7B (6.74 B): 32 layers, d=4096, 32 heads, SwiGLU 11008, vocab 32000",
      llama2 + "Llama-2-7b-hf");
  add(out, "llama-2-13b", "Llama 2 13B (13.0 B): 40 layers, d=5120, 40 heads, SwiGLU 13824, vocab 32000",
      llama2 + "Llama-2-13b-hf");
  add(out, "llama-2-70b", "Llama 2 70B (69.0 B): 80 layers, d=8192, 64 heads (8 kv), SwiGLU 28672, vocab 32000",
      llama2 + "Llama-2-70b-hf");
  const std::string llama3 = "Meta, 'The Llama 3 Herd of Models', arXiv:2407.21783; config.json of meta-llama/";
  add(out, "llama-3-8b", "Llama 3 8B (8.03 B): 32 layers, d=4096, 32 heads (8 kv), SwiGLU 14336, vocab 128256",
      llama3 + "Meta-Llama-3-8B");
  add(out, "llama-3-70b", "Llama 3 70B (70.6 B): 80 layers, d=8192, 64 heads (8 kv), SwiGLU 28672, vocab 128256",
      llama3 + "Meta-Llama-3-70B");
  add(out, "mistral-7b", "Mistral 7B v0.1 (7.24 B): 32 layers, d=4096, 32 heads (8 kv), SwiGLU 14336, vocab 32000",
      "Jiang et al. 2023, 'Mistral 7B', arXiv:2310.06825; config.json of mistralai/Mistral-7B-v0.1");
  add(out, "mixtral-8x7b",
      "Mixtral 8x7B (46.7 B, 12.9 B active): 32 layers, d=4096, 32 heads (8 kv), 8 experts top-2 of 14336",
      "Jiang et al. 2024, 'Mixtral of Experts', arXiv:2401.04088; config.json of mistralai/Mixtral-8x7B-v0.1");
  add(out, "qwen2-7b", "Qwen2 7B (7.62 B): 28 layers, d=3584, 28 heads (4 kv), qkv bias, SwiGLU 18944, vocab 152064",
      "Yang et al. 2024, 'Qwen2 Technical Report', arXiv:2407.10671; config.json of Qwen/Qwen2-7B");
}

}  // namespace perfcast
