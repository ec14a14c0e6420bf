// Error types. Bad user input (ids, flags, files) is an InputError: the CLI prints its message on one line
// and exits with code 2. Failures to model a valid input are values (see cost/op_cost.h), not exceptions.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

// A valid request the model cannot serve on this device (precision without hardware support, INT8 training,
// an impossible memory fit). Reported as "unsupported: <reason>" in batch outputs, exit code 2 in the CLI.
class UnsupportedError : public InputError {
 public:
  using InputError::InputError;
};

// The candidate closest to `wanted` by edit distance, or "" when none is reasonably close.
std::string nearest(std::string_view wanted, const std::vector<std::string>& candidates);

// "unknown <what> 'x'; did you mean 'y'?" (or the list of valid values when there are few).
[[noreturn]] void throw_unknown(std::string_view what, std::string_view wanted,
                                const std::vector<std::string>& candidates);

// Internal invariant; `why` says why it holds. Violations are bugs, not user errors.
#define PERFCAST_ASSERT(cond, why)                                                      \
  do {                                                                                  \
    if (!(cond)) throw std::logic_error(std::string("internal error: ") + (why));      \
  } while (0)

}  // namespace perfcast
