// perfcast command line: runs the command (cli/run.cpp) and turns errors into one line and an exit code.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/echoed_values.h"
#include "core/error.h"

int main(int argc, char** argv) {
  try {
    return perfcast::cli::run_command_line(std::vector<std::string>(argv, argv + argc));
  } catch (const perfcast::InputError& e) {
    std::cerr << "perfcast: error: " << perfcast::clip_echoed_values(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "perfcast: internal error: " << perfcast::escape_control_bytes(e.what()) << "\n";
    return 3;
  }
}
