// perfcast installed like other software: `cmake --install` puts bin/perfcast and share/perfcast/ (data/) under a
// prefix, the installed binary finds that data from wherever the prefix is moved to and whatever the working
// folder, `cpack -G DEB` packages the same, and `perfcast --version` names the version, the git revision and the
// data catalog's date.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;

using perfcast::test::CliResult;
using perfcast::test::lines_of;
using perfcast::test::run_program;
using perfcast::test::slurp;

// No PERFCAST_DATA or PERFCAST_GPU_PATH from the caller: the binary has to find its data by itself.
const std::string kCleanEnv = "env -u PERFCAST_DATA -u PERFCAST_GPU_PATH";

class InstallTest : public perfcast::test::ScratchDirTest {
 protected:
  InstallTest() : ScratchDirTest("perfcast-install") {}

  // `cmake --install` of this build tree into `prefix`; skips the test when cmake is not there.
  void install_to(const fs::path& prefix) {
    if (!fs::exists(PERFCAST_CMAKE)) GTEST_SKIP() << "cmake not found at " << PERFCAST_CMAKE;
    const std::string cmd = fmt::format("'{}' --install '{}' --prefix '{}' >'{}' 2>&1", PERFCAST_CMAKE,
                                        PERFCAST_BUILD_DIR, prefix.string(), (dir_ / "install.log").string());
    ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "install.log");
  }

  // Where `perfcast --version` says its data is (the text after "data catalog ...: ").
  static std::string data_folder_of(const CliResult& r) {
    const auto lines = lines_of(r.out);
    if (lines.size() < 2) return "";
    const auto colon = lines[1].find(": ");
    return colon == std::string::npos ? "" : lines[1].substr(colon + 2);
  }
};

TEST_F(InstallTest, InstalledBinaryRunsFromAMovedPrefixAndAnotherFolder) {
  install_to(dir_ / "prefix");
  if (IsSkipped() || HasFatalFailure()) return;
  ASSERT_TRUE(fs::is_regular_file(dir_ / "prefix" / "bin" / "perfcast"));
  // share/perfcast holds data/ itself: the GPU catalog and the catalog date.
  EXPECT_TRUE(fs::is_regular_file(dir_ / "prefix" / "share" / "perfcast" / "catalog.toml"));
  EXPECT_TRUE(fs::is_directory(dir_ / "prefix" / "share" / "perfcast" / "gpus"));

  // Moved as a whole (as a copied install or an unpacked archive is), run from an unrelated folder.
  fs::rename(dir_ / "prefix", dir_ / "moved");
  fs::create_directory(dir_ / "elsewhere");
  const fs::path bin = dir_ / "moved" / "bin" / "perfcast";
  const CliResult gpus = run_program(bin, dir_ / "elsewhere", "gpus", kCleanEnv);
  EXPECT_EQ(gpus.code, 0) << gpus.err;
  EXPECT_NE(gpus.out.find("gtx-1080-ti"), std::string::npos);
  const CliResult pred = run_program(bin, dir_ / "elsewhere",
                                     "predict --gpu gtx-1080-ti --model resnet50 --mode infer --batch 8", kCleanEnv);
  EXPECT_EQ(pred.code, 0) << pred.err;

  // It reads the moved share/perfcast, not the source tree it was built from.
  const CliResult v = run_program(bin, dir_ / "elsewhere", "--version", kCleanEnv);
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_EQ(fs::weakly_canonical(data_folder_of(v)), fs::weakly_canonical(dir_ / "moved" / "share" / "perfcast"))
      << v.out;
}

TEST_F(InstallTest, InstalledBinaryCarriesNoPathOfTheBuildMachine) {
  install_to(dir_ / "prefix");
  if (IsSkipped() || HasFatalFailure()) return;
  const std::string bytes = slurp(dir_ / "prefix" / "bin" / "perfcast");
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find(std::string(PERFCAST_SOURCE_DIR) + "/data"), std::string::npos)
      << "the source tree's data folder is compiled into the binary";
}

TEST_F(InstallTest, BinaryWithoutDataSaysHowToPointAtIt) {
  // The executable alone, copied out of the build tree: nothing beside it, so only PERFCAST_DATA can help.
  fs::create_directories(dir_ / "alone");
  fs::copy_file(PERFCAST_BINARY, dir_ / "alone" / "perfcast");
  fs::permissions(dir_ / "alone" / "perfcast", fs::perms::owner_all);
  const CliResult r = run_program(dir_ / "alone" / "perfcast", dir_, "gpus", kCleanEnv);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("PERFCAST_DATA"), std::string::npos) << r.err;

  const std::string data = std::string(PERFCAST_SOURCE_DIR) + "/data";
  const CliResult with =
      run_program(dir_ / "alone" / "perfcast", dir_, "gpus", kCleanEnv + " PERFCAST_DATA='" + data + "'");
  EXPECT_EQ(with.code, 0) << with.err;
  EXPECT_NE(with.out.find("gtx-1080-ti"), std::string::npos);

  // A PERFCAST_DATA that is not a folder is named, not silently skipped.
  const CliResult bad =
      run_program(dir_ / "alone" / "perfcast", dir_, "gpus", kCleanEnv + " PERFCAST_DATA=/no/such/data");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("/no/such/data"), std::string::npos) << bad.err;
}

TEST_F(InstallTest, VersionNamesVersionRevisionAndDataDate) {
  const CliResult r = run_program(PERFCAST_BINARY, dir_, "--version", kCleanEnv);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  // perfcast <project VERSION> (git <describe output, or "unknown" outside a git checkout>)
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m, std::regex(R"(perfcast (\S+) \(git ([0-9A-Za-z._-]+)\))"))) << lines[0];
  EXPECT_EQ(m[1].str(), PERFCAST_PROJECT_VERSION);
  if (fs::exists(fs::path(PERFCAST_SOURCE_DIR) / ".git") && std::system("git --version >/dev/null 2>&1") == 0) {
    EXPECT_NE(m[2].str(), "unknown") << "a build of a git checkout knows its revision";
  }
  // data catalog <YYYY-MM-DD> (cloud prices as of <YYYY-MM>): <folder>; from the build tree, the source data/.
  ASSERT_TRUE(std::regex_match(
      lines[1], m, std::regex(R"(data catalog (\d{4}-\d{2}-\d{2}) \(cloud prices as of (\d{4}-\d{2})\): (.+))")))
      << lines[1];
  EXPECT_GE(m[1].str().substr(0, 7), m[2].str()) << "the catalog cannot be older than the prices it holds";
  EXPECT_EQ(fs::weakly_canonical(m[3].str()), fs::weakly_canonical(fs::path(PERFCAST_SOURCE_DIR) / "data"));
}

TEST_F(InstallTest, VersionStillPrintsWhenTheDataIsMissing) {
  const CliResult r = run_program(PERFCAST_BINARY, dir_, "--version", kCleanEnv + " PERFCAST_DATA=/no/such/data");
  EXPECT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind("perfcast ", 0), 0u);
  EXPECT_EQ(lines[1].rfind("data catalog unknown: ", 0), 0u) << lines[1];
}

TEST_F(InstallTest, DebianPackageHoldsTheBinaryAndTheData) {
  const fs::path cpack = fs::path(PERFCAST_CMAKE).parent_path() / "cpack";
  if (!fs::exists(cpack) ||
      std::system("command -v dpkg-deb >/dev/null 2>&1 && command -v dpkg-shlibdeps >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "cpack or dpkg tools not available";
  const std::string cmd = fmt::format("cd '{}' && '{}' -G DEB --config '{}/CPackConfig.cmake' -B '{}' >cpack.log 2>&1",
                                      dir_.string(), cpack.string(), PERFCAST_BUILD_DIR, (dir_ / "pkg").string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir_ / "cpack.log");
  fs::path deb;
  for (const auto& e : fs::directory_iterator(dir_ / "pkg"))
    if (e.path().extension() == ".deb") deb = e.path();
  ASSERT_FALSE(deb.empty()) << slurp(dir_ / "cpack.log");
  const std::string list = fmt::format("dpkg-deb -c '{0}' >'{1}' && dpkg-deb -f '{0}' Package Version Depends >'{2}'",
                                       deb.string(), (dir_ / "contents").string(), (dir_ / "control").string());
  ASSERT_EQ(std::system(list.c_str()), 0);
  const std::string contents = slurp(dir_ / "contents"), control = slurp(dir_ / "control");
  EXPECT_NE(contents.find("./usr/bin/perfcast"), std::string::npos) << contents;
  EXPECT_NE(contents.find("./usr/share/perfcast/catalog.toml"), std::string::npos) << contents;
  EXPECT_NE(contents.find("./usr/share/perfcast/gpus/gtx-1080-ti.toml"), std::string::npos);
  EXPECT_NE(control.find("Package: perfcast"), std::string::npos) << control;
  EXPECT_NE(control.find(std::string("Version: ") + PERFCAST_PROJECT_VERSION), std::string::npos) << control;
  // The shared libraries it links (libc at least) become dependencies.
  EXPECT_NE(control.find("libc6"), std::string::npos) << control;
}

}  // namespace
