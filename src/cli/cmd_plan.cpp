#include "cli/command.h"
#include "core/error.h"

namespace perfcast::cli {

Command plan_command() {
  return {"plan", "find GPU counts and cloud instances that meet a deadline", [](CLI::App&) {
            return std::function<int()>([]() -> int { throw UnsupportedError("perfcast plan is not built yet"); });
          }};
}

}  // namespace perfcast::cli
