// The in-process API: run a command as `perfcast <command> ... --json` would and get what it prints, as a string.
// It runs the command line's own code (cli/run.cpp) with this thread's output captured (report_out()), so the
// result is byte for byte the CLI's --json output and a bad input throws the InputError whose message the CLI
// prints after "perfcast: error: ". Safe to call from several threads at once. Used by `perfcast serve` and the
// Python module (python/perfcast_module.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast::api {

// The commands the API runs.
const std::vector<std::string>& api_commands();

// `args` are the words after the command, as on the command line ({"--gpu", "a100-sxm4-40gb", "--batch", "32"});
// --json is added unless given.
std::string run_json(std::string_view command, const std::vector<std::string>& args);

// The command line of `options`: a JSON object of flag name (with or without the leading "--") to value. A
// string or number becomes --name=value (so that a value never reads as another flag), true a bare --name, false
// and null nothing, an array one --name=value per element. validate's CSV is the key "file" (an array: several, pooled), and so is trace's trace file or folder. InputError for
// anything else (a nested object, a name that is not a flag name).
std::vector<std::string> options_to_args(std::string_view command, const nlohmann::json& options);

// run_json(command, options_to_args(command, options)).
std::string run_json(std::string_view command, const nlohmann::json& options);

// The page `--html FILE` writes (for the commands that take --html), written into a private temporary folder,
// read back and removed; the command's own output is discarded.
std::string run_html(std::string_view command, const nlohmann::json& options);

// One function per command: run_json(<command>, options).
std::string predict(const nlohmann::json& options);
std::string advise(const nlohmann::json& options);
std::string compare(const nlohmann::json& options);
std::string plan(const nlohmann::json& options);
std::string op(const nlohmann::json& options);
std::string validate(const nlohmann::json& options);
std::string trace(const nlohmann::json& options);

}  // namespace perfcast::api
