#include "cli/api.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "core/error.h"
#include "core/private_temp_dir.h"

namespace perfcast::api {

namespace {

// Restores the thread's report stream however the run ends.
class CaptureReport {
 public:
  explicit CaptureReport(std::ostream* out) : previous_(cli::set_report_out(out)) {}
  ~CaptureReport() { cli::set_report_out(previous_); }
  CaptureReport(const CaptureReport&) = delete;
  CaptureReport& operator=(const CaptureReport&) = delete;

 private:
  std::ostream* previous_;
};

void check_command(std::string_view command) {
  const auto& names = api_commands();
  if (std::find(names.begin(), names.end(), command) == names.end())
    throw_unknown("command", command, names);
}

bool has_flag(const std::vector<std::string>& args, std::string_view flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return a == flag || (a.size() > flag.size() && a.starts_with(flag) && a[flag.size()] == '=');
  });
}

// Runs `perfcast <command> <args>` with its report captured; the exit code must be 0 (the API's commands return
// another only for --configs, whose CSV is not --json output).
std::string run_captured(std::string_view command, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"perfcast", std::string(command)};
  argv.insert(argv.end(), args.begin(), args.end());
  std::ostringstream out;
  const CaptureReport capture(&out);
  const int code = cli::run_command_line(argv);
  if (code != 0) throw InputError(fmt::format("perfcast {} exited with code {}", command, code));
  return out.str();
}

std::string scalar_text(const nlohmann::json& v, const std::string& flag) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned() || v.is_number_float()) return v.dump();
  throw InputError(fmt::format("{} takes a string or a number, got {}", flag, std::string(v.type_name())));
}

// Whether `perfcast <command>` declares the long flag `--<name>`.
bool has_flag(std::string_view command, const std::string& name) {
  for (const cli::Command& c : cli::commands()) {
    if (c.name != command) continue;
    CLI::App app;
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.setup(*sub);
    for (const CLI::Option* o : sub->get_options())
      for (const auto& n : o->get_lnames())
        if (n == name) return true;
  }
  return false;
}

}  // namespace

const std::vector<std::string>& api_commands() {
  static const std::vector<std::string> names{"predict", "advise", "compare", "plan", "op", "validate", "trace"};
  return names;
}

std::vector<std::string> options_to_args(std::string_view command, const nlohmann::json& options) {
  if (!options.is_object()) throw InputError("the options must be a JSON object of flag name to value");
  std::vector<std::string> args, positional;
  for (const auto& [key, value] : options.items()) {
    const std::string name = key.starts_with("--") ? key.substr(2) : key;
    const bool word = !name.empty() && name.size() <= 64 && name[0] >= 'a' && name[0] <= 'z' &&
                      std::all_of(name.begin(), name.end(), [](char c) {
                        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                      });
    if (!word) {
      // The JSON output's keys are snake_case; a flag written the same way ("request_rate") names its hyphenated
      // form when the command has that flag.
      std::string hyphens = name;
      std::replace(hyphens.begin(), hyphens.end(), '_', '-');
      const bool known = hyphens != name && has_flag(command, hyphens);
      throw InputError(fmt::format("'{}' is not a flag name (lower-case letters, digits and '-'){}", key,
                                   known ? "; did you mean '" + hyphens + "'?" : std::string()));
    }
    const std::string flag = "--" + name;
    if ((command == "validate" || command == "trace") && name == "file") {
      // An array: several files, pooled into one report (validate; trace takes one file or folder).
      if (value.is_array())
        for (const auto& v : value) positional.push_back(scalar_text(v, "file"));
      else
        positional.push_back(scalar_text(value, "file"));
      continue;
    }
    if (value.is_null() || (value.is_boolean() && !value.get<bool>())) continue;
    if (value.is_boolean()) {
      args.push_back(flag);
    } else if (value.is_array()) {
      for (const auto& v : value) args.push_back(flag + "=" + scalar_text(v, flag));
    } else {
      args.push_back(flag + "=" + scalar_text(value, flag));
    }
  }
  // After "--" every word is a positional argument, even one that starts with '-'.
  if (!positional.empty()) {
    args.push_back("--");
    args.insert(args.end(), positional.begin(), positional.end());
  }
  return args;
}

std::string run_json(std::string_view command, const std::vector<std::string>& args) {
  check_command(command);
  std::vector<std::string> with_json = args;
  // First, where flags are always read: appended, it became the value of a last flag left without one
  // (predict(["--model"]) read "unknown model '--json'"), and after a "--" separator it is no flag.
  if (!has_flag(args, "--json")) with_json.insert(with_json.begin(), "--json");
  return run_captured(command, with_json);
}

std::string run_json(std::string_view command, const nlohmann::json& options) {
  check_command(command);
  return run_json(command, options_to_args(command, options));
}

std::string run_html(std::string_view command, const nlohmann::json& options) {
  check_command(command);
  std::vector<std::string> args = options_to_args(command, options);
  if (has_flag(args, "--html")) throw InputError("--html is where the page is written; run_html returns it instead");
  const PrivateTempDir dir("perfcast-page");
  const std::filesystem::path page = dir.path() / "page.html";
  const auto sep = std::find(args.begin(), args.end(), "--");
  args.insert(sep, "--html=" + page.string());
  run_captured(command, args);
  std::ifstream in(page, std::ios::binary);
  if (!in) throw InputError(fmt::format("perfcast {} wrote no page", command));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string predict(const nlohmann::json& options) { return run_json("predict", options); }
std::string advise(const nlohmann::json& options) { return run_json("advise", options); }
std::string compare(const nlohmann::json& options) { return run_json("compare", options); }
std::string plan(const nlohmann::json& options) { return run_json("plan", options); }
std::string op(const nlohmann::json& options) { return run_json("op", options); }
std::string validate(const nlohmann::json& options) { return run_json("validate", options); }
std::string trace(const nlohmann::json& options) { return run_json("trace", options); }

}  // namespace perfcast::api
