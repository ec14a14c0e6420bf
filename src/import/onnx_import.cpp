#include "core/error.h"
#include "import/model_source.h"

namespace perfcast {

ModelSource model_from_onnx(const std::string& path, const ImportOptions&) {
  throw UnsupportedError("ONNX import is not built yet ('" + path + "')");
}

}  // namespace perfcast
