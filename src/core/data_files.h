// Where perfcast finds its data files (GPU catalog, architectures, runtime profiles, validation sets).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace perfcast {

// The data directory: $PERFCAST_DATA if set, else the source tree's data/ (compiled in), else
// <executable dir>/../share/perfcast/data.
std::filesystem::path data_dir();

// Extra folders from a colon-separated environment variable (e.g. PERFCAST_GPU_PATH), existing ones only.
std::vector<std::filesystem::path> env_paths(const char* variable);

// Whole file as a string; InputError naming the file when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace perfcast
