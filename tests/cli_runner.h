// Runs the perfcast binary (PERFCAST_BINARY) the way a user does, for the tests of the command line: one call
// captures the exit code, stdout and stderr, and a fixture gives each test its own scratch directory.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include "test_paths.h"

namespace perfcast::test {

// What one run of the binary left behind.
struct CliResult {
  int code = -1;    // exit status; -1 when the process did not exit normally
  std::string out;  // stdout
  std::string err;  // stderr
};

// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `text` to `p` as bytes, replacing what was there.
inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

// The first word of each line of `text`: the ids a listing command (gpus, models, runtimes) prints.
inline std::vector<std::string> first_words(const std::string& text) {
  std::vector<std::string> ids;
  for (const auto& line : lines_of(text)) {
    std::stringstream ss(line);
    std::string id;
    ss >> id;
    ids.push_back(id);
  }
  return ids;
}

// Runs `<env> <binary> <args>` inside `dir` with an empty stdin; args pass through the shell (/bin/sh) verbatim.
// The capture files (dir/.stdout, dir/.stderr) are removed again.
inline CliResult run_program(const std::filesystem::path& binary, const std::filesystem::path& dir,
                             const std::string& args, const std::string& env) {
  const std::filesystem::path out = dir / ".stdout", err = dir / ".stderr";
  const std::string cmd = "cd '" + dir.string() + "' && " + env + " '" + binary.string() + "' " + args + " >'" +
                          out.string() + "' 2>'" + err.string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::error_code ec;
  std::filesystem::remove(out, ec);
  std::filesystem::remove(err, ec);
  return r;
}

// Runs the perfcast binary of this build tree (run_program). The default `env` unsets PERFCAST_GPU_PATH so that
// the caller's environment does not change the GPU catalog.
inline CliResult run_perfcast(const std::filesystem::path& dir, const std::string& args,
                              const std::string& env = "env -u PERFCAST_GPU_PATH") {
  return run_program(PERFCAST_BINARY, dir, args, env);
}

// A fixture with a fresh scratch directory (dir_) per test, removed afterwards; run() runs perfcast in it.
class ScratchDirTest : public ::testing::Test {
 protected:
  // `prefix` names the directory under the system temp folder (prefix-XXXXXX).
  explicit ScratchDirTest(std::string prefix = "perfcast-test") : prefix_(std::move(prefix)) {}

  void SetUp() override { make_scratch_dir(); }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // Creates dir_; for fixtures whose own SetUp may skip the test first.
  void make_scratch_dir() {
    std::string templ = (std::filesystem::temp_directory_path() / (prefix_ + "-XXXXXX")).string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }

  // Runs `perfcast <args>` inside the scratch directory (see run_perfcast).
  CliResult run(const std::string& args) const { return run_perfcast(dir_, args); }

  // The brief's rule for bad input: exit 2, nothing on stdout, one "perfcast: error:" line holding every piece.
  void expect_refused(const std::string& args, std::initializer_list<std::string> pieces) const {
    SCOPED_TRACE("perfcast " + args);
    const CliResult r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("perfcast: error:", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& p : pieces)
      EXPECT_NE(r.err.find(p), std::string::npos) << "missing '" << p << "' in: " << r.err;
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace perfcast::test
