// Error types. Bad user input (ids, flags, files) is an InputError: the CLI prints its message on one line
// and exits with code 2. Failures to model a valid input are values (see cost/op_cost.h), not exceptions.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

// What a message says, as a stable code and the named facts its sentence is composed from, so that a report can
// word it in another language (report/messages.cpp holds the sentences); the English text travels beside it.
struct ReasonCode {
  std::string id;                            // "precision.inference_only", ...; "" when only the text is known
  std::map<std::string, std::string> args;   // facts by name, formatted exactly as the English text shows them
};

// `text` safe to print on a terminal or in one CSV field: control bytes (newline, tab, ESC...), the C1 controls
// U+0080..U+009F and bytes that are not UTF-8 become visible escapes (\n, \t, \x1b, \u009b); other text, UTF-8
// included, is kept. Idempotent: escaping escaped text changes nothing.
std::string escape_control_bytes(std::string_view text);

// Its message and the facts of its reason are escaped (escape_control_bytes) once, here, since they may echo
// input: a file name, a CSV cell, a flag's value.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(escape_control_bytes(message)) {}
  InputError(const std::string& message, ReasonCode reason)
      : std::runtime_error(escape_control_bytes(message)),
        reason_(std::make_shared<const ReasonCode>(escaped(std::move(reason)))) {}
  // The message's code and facts; an empty code for free text. (Shared so that copying the exception never throws.)
  const ReasonCode& reason() const {
    static const ReasonCode kNone;
    return reason_ ? *reason_ : kNone;
  }

 private:
  static ReasonCode escaped(ReasonCode r) {
    for (auto& [name, value] : r.args) value = escape_control_bytes(value);
    return r;
  }
  std::shared_ptr<const ReasonCode> reason_;
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
