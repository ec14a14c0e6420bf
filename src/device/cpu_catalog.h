// The CPU catalog: data/cpus/*.toml, one socket per file, and a two-socket entry `<id>-2s` for each part that
// runs in two-socket servers (max_sockets = 2).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "device/cpu_spec.h"

namespace perfcast {

// Parses one CPU file; InputError naming the file and the field on any problem.
CpuSpec load_cpu_file(const std::filesystem::path& path);

// All catalog CPUs (and their two-socket entries), sorted by id.
const std::vector<CpuSpec>& cpu_catalog();

// The catalog CPU with this id, or nullptr.
const CpuSpec* cpu_by_id(std::string_view id);

}  // namespace perfcast
