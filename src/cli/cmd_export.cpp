#include "cli/command.h"
#include "core/error.h"

namespace perfcast::cli {

Command export_command() {
  return {"export", "write a zoo model as an ONNX file (shapes only)", [](CLI::App&) {
            return std::function<int()>([]() -> int { throw UnsupportedError("perfcast export is not built yet"); });
          }};
}

}  // namespace perfcast::cli
