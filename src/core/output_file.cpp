#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/error.h"

namespace perfcast {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const fs::path& shown, const std::string& reason) {
  throw InputError("cannot write '" + shown.string() + "': " + reason);
}

// strerror's sentence in the lower case of the rest of the message ("no space left on device").
std::string errno_text(int err) {
  std::string s = std::strerror(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z') s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// The file to create or replace: `path` itself, or the regular file its symbolic links end at.
struct Target {
  fs::path file;
  bool exists = false;
  struct stat st {};  // of the existing file
};

fs::path folder_of(const fs::path& file) { return file.parent_path().empty() ? fs::path(".") : file.parent_path(); }

Target resolve_target(const fs::path& path) {
  if (path.empty()) refuse(path, "empty path");
  Target t;
  t.file = path;
  if (::lstat(path.c_str(), &t.st) != 0) {
    const int err = errno;
    // ENOTDIR (a folder in the path is a file), EACCES, ELOOP, ENAMETOOLONG: the system's own words.
    if (err != ENOENT) refuse(path, errno_text(err));
    // A new file: its folder must be there.
    const fs::path dir = folder_of(path);
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0) {
      if (errno == ENOENT) refuse(path, "no such directory '" + dir.string() + "'");
      refuse(path, errno_text(errno));
    }
    if (!S_ISDIR(ds.st_mode)) refuse(path, "'" + dir.string() + "' is not a directory");
    return t;
  }
  t.exists = true;
  if (S_ISREG(t.st.st_mode)) return t;
  if (S_ISLNK(t.st.st_mode)) {
    // Followed to a regular file; the file is replaced, the link stays as it was.
    std::error_code ec;
    const fs::path to = fs::read_symlink(path, ec);
    if (::stat(path.c_str(), &t.st) != 0) {
      const int err = errno;
      if (err == ENOENT) refuse(path, "is a symbolic link to '" + to.string() + "', which does not exist");
      refuse(path, "is a symbolic link that cannot be followed: " + errno_text(err));
    }
    if (!S_ISREG(t.st.st_mode))
      refuse(path, "is a symbolic link to " + kind_of(t.st.st_mode) + "; only regular files are replaced");
    t.file = fs::canonical(path, ec);
    if (ec) refuse(path, "is a symbolic link that cannot be followed: " + ec.message());
    return t;
  }
  refuse(path, "is " + kind_of(t.st.st_mode) + "; only regular files are replaced");
}

// The process's file-creation mask. Read by setting and restoring it: outputs are written from the main thread.
mode_t current_umask() {
  const mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

// Removes the temporary file unless released (after the rename).
struct TempFile {
  std::string name;
  int fd = -1;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!name.empty()) ::unlink(name.c_str());
  }
};

}  // namespace

void check_output_path(const fs::path& path) { resolve_target(path); }

struct OutputFileWriter::State {
  fs::path shown;  // the path as the user gave it, for messages
  Target target;
  TempFile tmp;
  std::string buffer;
  bool committed = false;

  void flush() {
    const char* p = buffer.data();
    std::size_t left = buffer.size();
    while (left > 0) {
      const ssize_t n = ::write(tmp.fd, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        refuse(shown, errno_text(errno));
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    buffer.clear();
  }
};

namespace {
// Pieces are gathered up to this many bytes before a write(2): a few system calls per thousand CSV rows.
constexpr std::size_t kWriteBufferBytes = std::size_t{1} << 16;
}  // namespace

OutputFileWriter::OutputFileWriter(const fs::path& path) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.shown = path;
  s.target = resolve_target(path);
  const fs::path dir = folder_of(s.target.file);
  // Hidden, beside the target (so the rename stays on one file system), with mkstemp's random suffix; the target's
  // name is shortened so that the temporary name stays within NAME_MAX.
  std::string hidden = ".";
  hidden += s.target.file.filename().string().substr(0, 100);
  hidden += ".perfcast-XXXXXX";
  s.tmp.name = (dir / hidden).string();
  s.tmp.fd = ::mkostemp(s.tmp.name.data(), O_CLOEXEC);
  if (s.tmp.fd < 0) {
    const int err = errno;
    s.tmp.name.clear();
    refuse(path, errno_text(err));
  }
  // mkstemp makes the file 0600: give it what the replaced file had, or what a new file would get.
  if (s.target.exists) {
    if (::fchown(s.tmp.fd, s.target.st.st_uid, s.target.st.st_gid) != 0) {
      // Only the owner's own files or root can keep another owner; the new file is then the writer's.
    }
    ::fchmod(s.tmp.fd, s.target.st.st_mode & 07777);
  } else {
    ::fchmod(s.tmp.fd, 0666 & ~current_umask());
  }
  s.buffer.reserve(kWriteBufferBytes);
}

OutputFileWriter::~OutputFileWriter() = default;  // TempFile removes an uncommitted temporary file

void OutputFileWriter::write(std::string_view piece) {
  State& s = *state_;
  if (s.committed) throw std::logic_error("OutputFileWriter::write after commit");
  if (s.buffer.size() + piece.size() > kWriteBufferBytes) s.flush();
  if (piece.size() > kWriteBufferBytes) {
    s.buffer.assign(piece);
    s.flush();
  } else {
    s.buffer.append(piece);
  }
}

void OutputFileWriter::commit() {
  State& s = *state_;
  if (s.committed) return;
  s.flush();
  const fs::path& path = s.shown;
  if (::fsync(s.tmp.fd) != 0) refuse(path, errno_text(errno));
  const int fd = s.tmp.fd;
  s.tmp.fd = -1;
  if (::close(fd) != 0) refuse(path, errno_text(errno));
  // Checked again just before the rename, which would replace whatever is there by then.
  struct stat now {};
  if (::lstat(s.target.file.c_str(), &now) == 0 && !S_ISREG(now.st_mode))
    refuse(path, "is " + kind_of(now.st_mode) + "; only regular files are replaced");
  if (::rename(s.tmp.name.c_str(), s.target.file.c_str()) != 0) refuse(path, errno_text(errno));
  s.tmp.name.clear();
  s.committed = true;
  // The rename itself reaches the disk with the folder's entry.
  if (const int dfd = ::open(folder_of(s.target.file).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_output_file(const fs::path& path, std::string_view content) {
  OutputFileWriter out(path);
  out.write(content);
  out.commit();
}

}  // namespace perfcast
