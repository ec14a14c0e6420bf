// Parses a command line and runs its command: what `perfcast` does, less main()'s error printing, so that the
// binary, the in-process API (cli/api.h), `perfcast serve` and the Python module share one path.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "core/error.h"

namespace perfcast::cli {

namespace {
thread_local std::ostream* report_stream = nullptr;

// The subcommand the command line names (argv[1]), null when it names none.
CLI::App* named_subcommand(const std::vector<std::pair<CLI::App*, std::function<int()>>>& runners, int argc,
                           char** argv) {
  for (const auto& [candidate, unused] : runners)
    if (argc > 1 && candidate->get_name() == argv[1]) return candidate;
  return nullptr;
}

// A value flag of `sub` given twice, or given no value (last on the line, or followed by another flag), which CLI11
// reports in its own words ("--batch: At Most 1 required but received 2", "The following argument was not expected:
// 2" for `--batch --gpus 2`): one line naming the flag. Returns when the command line shows neither.
void explain_flag_misuse(const CLI::App* sub, int argc, char** argv) {
  if (!sub) return;
  for (const CLI::Option* o : sub->get_options()) {
    if (o->get_lnames().empty() || o->get_expected_min() < 1) continue;
    const std::string flag = "--" + o->get_lnames().front();
    int given = 0;
    bool bare = false;
    for (int i = 2; i < argc; ++i) {
      const std::string_view word = argv[i];
      if (word == flag || word.starts_with(flag + "=")) {
        ++given;
        bare = bare || (word == flag && (i + 1 == argc || std::string_view(argv[i + 1]).starts_with("--")));
      }
    }
    if (bare) throw InputError(flag + " takes a value, got none");
    if (given > 1 && o->get_expected_max() == 1)
      throw InputError(fmt::format("{} is given {} times; give it once", flag, given));
  }
}

}  // namespace

std::ostream& report_out() { return report_stream ? *report_stream : std::cout; }

std::ostream* set_report_out(std::ostream* out) {
  std::ostream* previous = report_stream;
  report_stream = out;
  return previous;
}

std::vector<Command> commands() {
  return {list_gpus_command(), list_cpus_command(), list_models_command(), list_runtimes_command(), predict_command(),
          advise_command(),    compare_command(),     plan_command(),          validate_command(),
          trace_command(),     op_command(),          fit_kernels_command(), predict_kernels_command(), fit_tensor_gemm_command(), fit_intervals_command(), export_command(),
          monitor_command(), serve_command()};
}

int run_command_line(const std::vector<std::string>& words) {
  std::vector<char*> argv_store;
  for (const auto& w : words) argv_store.push_back(const_cast<char*>(w.c_str()));  // CLI11 only reads them
  int argc = static_cast<int>(argv_store.size());
  char** argv = argv_store.data();
  CLI::App app{"perfcast: predict, explain and improve deep-learning performance on NVIDIA GPUs.\n"
               "With no command it runs the built-in default scenario (perfcast advise)."};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", version_text, "print the version, the git revision and the data catalog's date");
  const auto all = commands();
  std::vector<std::string> names;
  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (const auto& c : all) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    runners.emplace_back(sub, c.setup(*sub));
    names.push_back(c.name);
  }
  // An unknown first word is a mistyped command, not an argument.
  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end())
    throw_unknown("command", argv[1], names);
  // No command: the flags are advise's (`perfcast --lang zh` is `perfcast advise --lang zh`). Only the top-level
  // help and version flags stay the program's own.
  std::vector<char*> args(argv, argv + argc);
  static char advise_word[] = "advise";
  const bool own_flag = argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h" ||
                                     std::string_view(argv[1]) == "--help-all" || std::string_view(argv[1]) == "--version");
  if (!own_flag && (argc == 1 || argv[1][0] == '-')) args.insert(args.begin() + 1, advise_word);
  argc = static_cast<int>(args.size());
  argv = args.data();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, report_out(), std::cerr);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, report_out(), std::cerr);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, report_out(), std::cerr);
  } catch (const CLI::ExtrasError& e) {
    // An unknown flag is usually a typo: name it and suggest the nearest flag of the command.
    CLI::App* sub = named_subcommand(runners, argc, argv);
    for (int i = 1; i < argc; ++i) {
      const std::string word = argv[i];
      if (word.rfind("--", 0) != 0 || !sub) continue;
      std::vector<std::string> flags;
      bool known = false;
      for (const CLI::Option* o : sub->get_options()) {
        for (const auto& name : o->get_lnames()) {
          flags.push_back("--" + name);
          if (word == "--" + name || word.rfind("--" + name + "=", 0) == 0) known = true;
        }
      }
      const std::string flag = word.substr(0, word.find('='));
      // An anchor is not a typo on compare or plan: say which commands take it (README, "Anchor on your own
      // measurement") rather than suggest the nearest flag.
      if (!known && (flag == "--measured" || flag == "--measured-step") &&
          (sub->get_name() == "compare" || sub->get_name() == "plan"))
        throw InputError(flag + " anchors one configuration on predict and advise; perfcast " + sub->get_name() +
                         " ranks predictions of several, so take your measured one's what-ifs (more GPUs, another "
                         "GPU) from `perfcast advise ... " + flag + " ...`");
      if (!known) throw_unknown("flag of 'perfcast " + sub->get_name() + "':", flag, flags);
    }
    // A value typed with a space ("--deadline 2 days") reaches the parser as two words, and the second is left over:
    // say so, and show the value quoted as one word.
    const std::string extras = e.what();
    for (int i = 3; sub && i < argc; ++i) {
      const std::string word = argv[i], value = argv[i - 1], flag = argv[i - 2];
      if (word.empty() || word[0] == '-' || value.empty() || value[0] == '-' || flag.rfind("--", 0) != 0 ||
          extras.find(word) == std::string::npos)
        continue;
      const CLI::Option* o = sub->get_option_no_throw(flag);
      if (!o || o->get_expected_min() < 1) continue;
      throw InputError("'" + word + "' follows " + flag + " " + value + " but is no argument of perfcast " +
                       sub->get_name() + ": if it is part of the value, quote the value as one word (" + flag + " '" +
                       value + " " + word + "'); else it lacks its flag");
    }
    explain_flag_misuse(sub, argc, argv);
    throw InputError(e.what());
  } catch (const CLI::ArgumentMismatch& e) {
    // CLI11 words these "--batch: At Most 1 required but received 2" and "--batch: 1 required TEXT missing": say
    // what was wrong with the command line instead.
    explain_flag_misuse(named_subcommand(runners, argc, argv), argc, argv);
    throw InputError(e.what());
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
  for (auto& [sub, run_it] : runners) {
    if (!sub->parsed()) continue;
    // An empty value ("--batch=", --pue '' from an unset shell variable) is no value: a flag kept as text would
    // read it as not given and run its default, so it is refused naming the flag.
    for (const CLI::Option* o : sub->get_options())
      if (o->count() > 0 && o->get_expected_min() > 0)
        for (const std::string& value : o->results())
          if (value.empty()) throw InputError(o->get_name() + " takes a value, got ''");
    return run_it();
  }
  return 0;
}

}  // namespace perfcast::cli
