#include "cli/command.h"
#include "core/error.h"

namespace perfcast::cli {

Command compare_command() {
  return {"compare", "compare GPUs side by side for one model", [](CLI::App&) {
            return std::function<int()>([]() -> int { throw UnsupportedError("perfcast compare is not built yet"); });
          }};
}

}  // namespace perfcast::cli
