#include "core/error.h"
#include "import/model_source.h"

namespace perfcast {

ModelSource model_from_hf_config(const std::string& path) {
  throw UnsupportedError("Hugging Face config import is not built yet ('" + path + "')");
}

}  // namespace perfcast
