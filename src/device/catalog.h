// The GPU catalog: data/gpus/*.toml plus user folders on PERFCAST_GPU_PATH and explicit .toml paths.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "device/device_spec.h"

namespace perfcast {

// Parses one GPU file; InputError naming the file and the field on any problem.
DeviceSpec load_device_file(const std::filesystem::path& path);

// All catalog GPUs, sorted by id (built-in first, user folders override same ids).
const std::vector<DeviceSpec>& gpu_catalog();

// A catalog id, or a path to a .toml file; InputError with the nearest id when unknown (and a pointer to
// --device when the id is a CPU's).
DeviceSpec find_gpu(std::string_view id_or_path);

// A GPU (id or .toml path) or a CPU id (data/cpus); InputError with the nearest id of either catalog when unknown.
DeviceSpec find_device(std::string_view id_or_path);

// The CPU as a device: id, name, FP32 peak, memory and bandwidth, TDP in DeviceSpec's fields, the rest in `cpu`.
DeviceSpec device_from_cpu(const CpuSpec& cpu);

}  // namespace perfcast
