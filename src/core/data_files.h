// Where perfcast finds its data files (GPU catalog, architectures, runtime profiles, validation sets).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace perfcast {

// The data directory, first found of:
//   1. $PERFCAST_DATA, when set (an explicit choice: an error if it is not a directory);
//   2. <executable dir>/../share/perfcast, where `cmake --install` and the .deb put data/;
//   3. the source tree's data/ when the executable runs from a build tree: the folder named in the
//      perfcast-source-data file that CMake writes at the top of the build tree (beside the executable, or one
//      folder up for tests/ and bench/).
// Nothing about the build machine is compiled in, so an installed or copied binary never reads a checkout.
std::filesystem::path data_dir();

// The data catalog's date (data/catalog.toml `date`, "YYYY-MM-DD"): the day its files were last reviewed together.
std::string data_catalog_date();

// Extra folders from a colon-separated environment variable (e.g. PERFCAST_GPU_PATH), existing ones only.
std::vector<std::filesystem::path> env_paths(const char* variable);

// Whole file as a string; InputError naming the file when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace perfcast
