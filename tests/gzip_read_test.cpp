// read_maybe_gzip (import/gzip_file.h), the reader of profiler traces and measured-kernel tables: the text of a
// plain or gzip file whatever its size up to the limit, an InputError past it (or its first `limit` bytes with
// `truncate`), and, as data/limits.toml says of max_decompressed_bytes, a limit that bounds the memory spent: a
// gzip bomb is refused within about the limit's worth of memory, not twice it.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <string>

#include "cli_runner.h"
#include "core/error.h"
#include "import/gzip_file.h"

#if defined(__SANITIZE_ADDRESS__)
#define PERFCAST_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PERFCAST_TEST_ASAN 1
#endif
#endif

namespace perfcast {
namespace {

namespace fs = std::filesystem;

class GzipReadTest : public test::ScratchDirTest {
 protected:
  GzipReadTest() : ScratchDirTest("perfcast-gzip") {}

  // Writes `bytes` bytes of `pattern` repeated, gzip-compressed at level 1.
  fs::path write_gzip(const std::string& name, const std::string& pattern, std::size_t bytes) const {
    const fs::path p = dir_ / name;
    gzFile f = gzopen(p.c_str(), "wb1");
    EXPECT_NE(f, nullptr);
    std::string block;
    while (block.size() < (std::size_t{1} << 20)) block += pattern;
    for (std::size_t left = bytes; left > 0;) {
      const std::size_t n = std::min(left, block.size());
      EXPECT_EQ(gzwrite(f, block.data(), static_cast<unsigned>(n)), static_cast<int>(n));
      left -= n;
    }
    gzclose(f);
    return p;
  }
};

std::string repeated(const std::string& pattern, std::size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += pattern;
  s.resize(bytes);
  return s;
}

TEST_F(GzipReadTest, PlainAndGzipFilesReadWholeAcrossManyBlocks) {
  // 3.5 MiB plus a few bytes: more than one of any internal read size, not a multiple of one.
  const std::size_t bytes = (std::size_t{7} << 19) + 13;
  const std::string pattern = "{\"ph\": \"X\", \"ts\": 12345},\n";
  const fs::path gz = write_gzip("t.json.gz", pattern, bytes);
  const std::string text = repeated(pattern, bytes);
  EXPECT_EQ(read_maybe_gzip(gz.string(), bytes, "trace"), text);
  test::write_text(dir_ / "t.json", text);
  EXPECT_EQ(read_maybe_gzip((dir_ / "t.json").string(), bytes, "trace"), text);
  test::write_text(dir_ / "empty.json", "");
  EXPECT_EQ(read_maybe_gzip((dir_ / "empty.json").string(), bytes, "trace"), "");
}

TEST_F(GzipReadTest, PastTheLimitIsAnErrorOrTheFirstLimitBytes) {
  const std::string pattern = "0123456789";
  const fs::path gz = write_gzip("big.json.gz", pattern, 3u << 20);
  try {
    read_maybe_gzip(gz.string(), 2u << 20, "trace");
    ADD_FAILURE() << "no error past the limit";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 2 MiB"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_maybe_gzip(gz.string(), (2u << 20) + 5, "trace", true), repeated(pattern, (2u << 20) + 5));
  EXPECT_EQ(read_maybe_gzip(gz.string(), 3u << 20, "trace"), repeated(pattern, 3u << 20));
}

TEST_F(GzipReadTest, CutShortStreamIsAnError) {
  const fs::path gz = write_gzip("whole.json.gz", "abcdefgh", 1u << 20);
  std::string bytes = test::slurp(gz);
  bytes.resize(bytes.size() / 2);
  test::write_text(dir_ / "cut.json.gz", bytes);
  try {
    read_maybe_gzip((dir_ / "cut.json.gz").string(), 4u << 20, "trace");
    ADD_FAILURE() << "no error on a cut-short stream";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cut short"), std::string::npos) << e.what();
  }
}

#ifndef PERFCAST_TEST_ASAN
// Address-space size of this process now, in bytes (/proc/self/statm: pages).
std::size_t address_space_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages = 0;
  in >> pages;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Runs `body` in a child process allowed `extra_bytes` more address space than this one has and returns the
// child's wait status: body's return value as the exit code, 3 when the cap cannot be set, 5 when body runs out of
// memory, 6 on any other exception; -1 when the child could not be started or waited for.
int status_in_capped_child(std::size_t extra_bytes, const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const rlim_t cap = address_space_bytes() + extra_bytes;
    const rlimit lim{cap, cap};
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    try {
      _exit(body());
    } catch (const std::bad_alloc&) {
      _exit(5);
    } catch (...) {
      _exit(6);
    }
  }
  int status = 0;
  return waitpid(pid, &status, 0) == pid ? status : -1;
}

TEST_F(GzipReadTest, ABombPastTheLimitIsReadWithinAboutTheLimitOfMemory) {
  // With truncate the reader returns the file's first `limit` bytes (the trace sniffer, looks_like_trace, reads a
  // head of 1 MiB this way). 300 MiB of spaces (a few hundred KB compressed) against a limit of 256 MiB + 1, in a
  // child process allowed 400 MiB more address space than it has: the head must come back there, held once. A
  // string grown by doubling reaches 256 MiB of capacity exactly and needs a 512 MiB buffer beside it for the one
  // byte more, and blocks copied into one string at the end hold the head twice; both run out instead.
  const fs::path gz = write_gzip("bomb.json.gz", " ", 300u << 20);
  const std::size_t limit = std::size_t{256} << 20;
  const int status = status_in_capped_child(std::size_t{400} << 20, [&] {
    const std::string head = read_maybe_gzip(gz.string(), limit + 1, "trace", true);
    return head.size() == limit + 1 ? 0 : 4;
  });
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "3: setrlimit failed, 4: wrong length, 5: out of memory before the limit, 6: another error";
}

TEST_F(GzipReadTest, AFileUnderTheLimitIsReadHoldingItsTextOnce) {
  // data/limits.toml: the limit bounds the memory a file can cost, so a file the reader accepts costs about its own
  // size, not twice it. 240 MiB of spaces under a 256 MiB limit, in a child allowed 400 MiB more address space than
  // it has: the whole text must come back there (holding it twice, 480 MiB, runs out).
  const fs::path gz = write_gzip("big.json.gz", " ", 240u << 20);
  const int status = status_in_capped_child(std::size_t{400} << 20, [&] {
    const std::string text = read_maybe_gzip(gz.string(), std::size_t{256} << 20, "trace");
    return text.size() == (std::size_t{240} << 20) && text.find_first_not_of(' ') == std::string::npos ? 0 : 4;
  });
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "3: setrlimit failed, 4: wrong text, 5: out of memory under the limit, 6: another error";
}

TEST_F(GzipReadTest, ABombPastTheLimitIsRefusedHoldingAboutTheLimit) {
  // As the trace reader now asks: refused at the first byte past the limit with the caller's message, in a child
  // allowed 400 MiB more address space than it has (no more than the text up to the limit, 256 MiB + 1).
  const fs::path gz = write_gzip("bomb.json.gz", " ", 300u << 20);
  const std::size_t limit = (std::size_t{256} << 20) + 1;
  const int status = status_in_capped_child(std::size_t{400} << 20, [&] {
    try {
      read_maybe_gzip(gz.string(), limit, "trace", false, "trace too large");
      return 4;
    } catch (const InputError& e) {
      return std::string(e.what()) == "trace too large" ? 0 : 6;
    }
  });
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "3: setrlimit failed, 4: no error, 5: out of memory before the refusal, 6: another message";
}
#endif

}  // namespace
}  // namespace perfcast
