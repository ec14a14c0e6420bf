// Output files (--out, --markdown, --html, --write-gpu, --onnx) as docs say: a new path is created, a regular file
// is replaced whole, a symbolic link is followed to the regular file it names (the link stays), and anything else
// (a directory, a device, a FIFO, a link to one of those or to nothing) is refused with exit 2 and one line
// "cannot write '<path>': <reason>", leaving everything as it was. And error messages that echo input escape its
// control bytes, on the terminal and in the CSV.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "core/error.h"

namespace {

namespace fs = std::filesystem;

using perfcast::escape_control_bytes;
using perfcast::test::CliResult;
using perfcast::test::lines_of;
using perfcast::test::slurp;
using perfcast::test::write_text;

const std::string kOneRow = "gpu,model,mode,batch\ngtx-1080-ti,resnet50,infer,8\n";

class OutputFileTest : public perfcast::test::ScratchDirTest {
 protected:
  OutputFileTest() : ScratchDirTest("perfcast-out") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    write_text(dir_ / "ok.csv", kOneRow);
  }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  // Exit 2, empty stdout, one stderr line "perfcast: error: cannot write '<shown>': <reason...>".
  void expect_refused(const CliResult& r, const std::string& shown, const std::string& reason) const {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    const std::string head = "perfcast: error: cannot write '" + shown + "': ";
    EXPECT_EQ(r.err.rfind(head, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(reason, head.size()), std::string::npos) << "missing '" << reason << "' in " << r.err;
  }
};

TEST_F(OutputFileTest, NewFileGetsTheUmasksPermissionsAndNoTemporaryFileStays) {
  const CliResult r = perfcast::test::run_perfcast(dir_, "predict --configs ok.csv --out new.csv",
                                                   "umask 027 && env -u PERFCAST_GPU_PATH");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "new.csv").rfind("gpu,model,", 0), 0u);
  EXPECT_EQ(fs::status(dir_ / "new.csv").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(entries(), (std::vector<std::string>{"new.csv", "ok.csv"}));
}

TEST_F(OutputFileTest, ExistingFileIsReplacedAndKeepsItsPermissions) {
  write_text(dir_ / "old.csv", "previous content\n");
  fs::permissions(dir_ / "old.csv", fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  const CliResult r = run("predict --configs ok.csv --out old.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "old.csv").find("previous"), std::string::npos);
  EXPECT_EQ(fs::status(dir_ / "old.csv").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  EXPECT_EQ(entries(), (std::vector<std::string>{"ok.csv", "old.csv"}));
}

TEST_F(OutputFileTest, SymlinkIsFollowedToTheRegularFileItNames) {
  fs::create_directory(dir_ / "real");
  write_text(dir_ / "real" / "target.csv", "previous content\n");
  fs::create_symlink("real/target.csv", dir_ / "link.csv");
  const CliResult r = run("predict --configs ok.csv --out link.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.csv")) << "the link itself must stay a link";
  EXPECT_EQ(fs::read_symlink(dir_ / "link.csv"), fs::path("real/target.csv"));
  EXPECT_EQ(slurp(dir_ / "real" / "target.csv").rfind("gpu,model,", 0), 0u);
  // The temporary file went beside the target, and is gone.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "real"), fs::directory_iterator()), 1);
}

TEST_F(OutputFileTest, DanglingSymlinkIsRefused) {
  fs::create_symlink("nowhere.csv", dir_ / "dangling.csv");
  const auto before = entries();
  expect_refused(run("predict --configs ok.csv --out dangling.csv"), "dangling.csv", "does not exist");
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.csv"));
  EXPECT_EQ(entries(), before);
}

TEST_F(OutputFileTest, SymlinkToADirectoryIsRefused) {
  fs::create_directory(dir_ / "folder");
  fs::create_directory_symlink("folder", dir_ / "to-folder");
  expect_refused(run("predict --configs ok.csv --out to-folder"), "to-folder", "symbolic link to a directory");
  EXPECT_TRUE(fs::is_symlink(dir_ / "to-folder"));
  EXPECT_TRUE(fs::is_empty(dir_ / "folder"));
}

TEST_F(OutputFileTest, DirectoryIsRefusedWithTheReason) {
  // Every writing flag, the same message (was "cannot write '/tmp': Success" for --html).
  fs::create_directory(dir_ / "taken");
  const auto before = entries();
  expect_refused(run("predict --configs ok.csv --out taken"), "taken", "is a directory");
  expect_refused(run("validate ok.csv --markdown taken"), "taken", "is a directory");
  expect_refused(run("advise --html taken"), "taken", "is a directory");
  expect_refused(run("advise --html /tmp"), "/tmp", "is a directory");
  EXPECT_EQ(entries(), before);
  EXPECT_TRUE(fs::is_empty(dir_ / "taken"));
}

TEST_F(OutputFileTest, DeviceIsNeverReplaced) {
  // Run as root, the old writer renamed a regular file over /dev/full.
  struct stat before {};
  ASSERT_EQ(::stat("/dev/full", &before), 0);
  ASSERT_TRUE(S_ISCHR(before.st_mode));
  expect_refused(run("predict --configs ok.csv --out /dev/full"), "/dev/full", "is a character device");
  struct stat after {};
  ASSERT_EQ(::stat("/dev/full", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_F(OutputFileTest, FifoIsRefusedWithoutOpeningIt) {
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  expect_refused(run("predict --configs ok.csv --out pipe"), "pipe", "FIFO");
  struct stat st {};
  ASSERT_EQ(::lstat((dir_ / "pipe").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(OutputFileTest, MissingFolderAndAFileUsedAsAFolderAreNamed) {
  expect_refused(run("predict --configs ok.csv --out no-such-dir/p.csv"), "no-such-dir/p.csv",
                 "no such directory 'no-such-dir'");
  expect_refused(run("predict --configs ok.csv --out ok.csv/p.csv"), "ok.csv/p.csv", "not a directory");
}

TEST_F(OutputFileTest, ThePreviousPredictableTemporaryNameIsNotFollowed) {
  // The old writer wrote "<target>.tmp-perfcast" without O_EXCL: a link planted there redirected the output.
  write_text(dir_ / "victim.txt", "keep me\n");
  fs::create_symlink("victim.txt", dir_ / "out.csv.tmp-perfcast");
  const CliResult r = run("predict --configs ok.csv --out out.csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "victim.txt"), "keep me\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "out.csv.tmp-perfcast"));
  EXPECT_EQ(slurp(dir_ / "out.csv").rfind("gpu,model,", 0), 0u);
}

TEST_F(OutputFileTest, RefusedBeforeTheWorkIsDone) {
  // A bad output path fails first: a broken --configs file behind it is not even read.
  fs::create_directory(dir_ / "taken");
  write_text(dir_ / "broken.csv", "gpu,model,mode,batch\ngtx-1080-ti,\"resnet50,infer,8\n");
  expect_refused(run("predict --configs broken.csv --out taken"), "taken", "is a directory");
}

// ---------------------------------------------------------------- input echoed in messages

TEST(EscapeControlBytes, ControlBytesBecomeVisibleEscapes) {
  EXPECT_EQ(escape_control_bytes("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(escape_control_bytes("\x1b[2J\x07\x7f"), "\\x1b[2J\\x07\\x7f");
  EXPECT_EQ(escape_control_bytes(std::string("nul\0byte", 8)), "nul\\x00byte");
}

TEST(EscapeControlBytes, Utf8TextIsKeptButC1ControlsAndBrokenBytesAreEscaped) {
  EXPECT_EQ(escape_control_bytes("显卡 café"), "显卡 café");
  EXPECT_EQ(escape_control_bytes(std::string("\xc2\x9b") + "31m"), "\\u009b31m");  // U+009B is CSI to a UTF-8 terminal
  EXPECT_EQ(escape_control_bytes("\xff"), "\\xff");
  EXPECT_EQ(escape_control_bytes("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(escape_control_bytes("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(escape_control_bytes("\xe6\x98"), "\\xe6\\x98");           // cut short
}

TEST(EscapeControlBytes, IsIdempotent) {
  const std::string once = escape_control_bytes("x\x1b]0;title\x07\n\xc2\x85\xfe");
  EXPECT_EQ(escape_control_bytes(once), once);
}

TEST(EscapeControlBytes, InputErrorEscapesItsMessageAndFacts) {
  const perfcast::InputError e("unknown gpu 'a\x1b[31mb'", perfcast::ReasonCode{"x", {{"id", "a\nb"}}});
  EXPECT_STREQ(e.what(), "unknown gpu 'a\\x1b[31mb'");
  EXPECT_EQ(e.reason().args.at("id"), "a\\nb");
}

TEST_F(OutputFileTest, TerminalEscapesInAFlagAreEscapedOnStderr) {
  // /bin/sh's printf makes the bytes: ESC [ 2 J, a newline, and UTF-8 C1 CSI.
  const CliResult r = run("predict --gpu \"$(printf 'x\\033[2Jy\\nz\\302\\233')\"");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
  EXPECT_NE(r.err.find("x\\x1b[2Jy\\nz\\u009b"), std::string::npos) << r.err;
}

TEST_F(OutputFileTest, TerminalEscapesInACsvRowAreEscapedInTheOutput) {
  write_text(dir_ / "evil.csv", "gpu,model,mode,batch\ngtx-1080-ti\x1b[2J,resnet50,infer,8\n");
  // The row fails (no such GPU) and gets a status; the echoed cell and the status are escaped.
  const CliResult r = run("predict --configs evil.csv");
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "an escape byte reached the terminal";
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "an escape byte reached the terminal";
  EXPECT_NE(r.out.find("gtx-1080-ti\\x1b[2J"), std::string::npos) << r.out;
}

}  // namespace
