#include "cli/command.h"
#include "core/error.h"

namespace perfcast::cli {

Command advise_command() {
  return {"advise", "print the bottleneck verdict and ranked optimization strategies", [](CLI::App&) {
            return std::function<int()>([]() -> int { throw UnsupportedError("perfcast advise is not built yet"); });
          }};
}

}  // namespace perfcast::cli
