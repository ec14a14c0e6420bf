// Output files (--out, --html, --markdown, --write-gpu, --onnx): written whole or not at all, and never over
// anything but a regular file.
//
// A target that does not exist is created; a regular file is replaced; a symbolic link is followed and the
// regular file it names is replaced (the link stays); a directory, a device, a FIFO, a socket or a link to none
// of those (or to nothing) is refused. Every refusal is an InputError "cannot write '<path>': <reason>".
#pragma once

#include <filesystem>
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

}  // namespace perfcast
