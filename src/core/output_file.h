// Output files (--out, --html, --markdown, --write-gpu, --onnx): written whole or not at all, and never over
// anything but a regular file.
//
// A target that does not exist is created; a regular file is replaced; a symbolic link is followed and the
// regular file it names is replaced (the link stays); a directory, a device, a FIFO, a socket or a link to none
// of those (or to nothing) is refused. Every refusal is an InputError "cannot write '<path>': <reason>".
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace perfcast {

// Throws the InputError a write to `path` would meet before any byte is written (missing folder, directory,
// device, dangling link...), so that a command can check its outputs before doing its work. Permissions and
// a full disk are only found by writing.
void check_output_path(const std::filesystem::path& path);

// Writes `content` to `path`: a temporary file with an unpredictable name (mkstemp) in the final file's folder,
// flushed to disk (fsync), given the replaced file's permissions (or the umask's for a new file), then renamed
// over it. On any failure the temporary file is removed and the target is untouched.
void write_output_file(const std::filesystem::path& path, std::string_view content);

// An output file written piece by piece (a CSV of many rows, a monitoring session), with write_output_file's
// guarantees and memory that does not grow with the file: pieces go to the temporary file as they come, commit()
// flushes it and renames it over the target. Destroyed without commit() (an error, an interrupted run), the
// temporary file is removed and the target is untouched.
class OutputFileWriter {
 public:
  // InputError as check_output_path, or when the temporary file cannot be made.
  explicit OutputFileWriter(const std::filesystem::path& path);
  ~OutputFileWriter();
  OutputFileWriter(const OutputFileWriter&) = delete;
  OutputFileWriter& operator=(const OutputFileWriter&) = delete;
  // Appends `piece` (buffered); InputError "cannot write '<path>': <reason>" when the disk refuses it.
  void write(std::string_view piece);
  // Makes the file the target; nothing may be written after.
  void commit();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace perfcast
