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

// How `instances` processes of one model share a part (Intel's multi-instance throughput mode: torch.backends.xeon.
// run_cpu / ipexrun --ninstances, one ONNX Runtime session per process, numactl pinning).
struct CpuInstanceSplit {
  int instances = 1;            // processes, each pinned to its own cores
  int cores_per_instance = 0;   // physical cores each process runs its intra-op threads on
  int instances_per_socket = 1; // processes sharing one socket's channels and L3
};
// The split of `instances` processes over `cpu`: every process gets cores / instances whole cores of one socket
// (the launcher's ncores_per_instance = cores // ninstances; on a two-socket entry the processes split evenly over
// the sockets, none spanning two). InputError for 0, more processes than cores, or a count that does not split
// over the sockets.
CpuInstanceSplit cpu_instance_split(const CpuSpec& cpu, int instances);
// One process's share of the part when `split.instances` run at once: its cores (and their L2, per core), one
// socket (no NUMA or socket-link traffic when instances > 1), and 1 / instances_per_socket of that socket's L3,
// DRAM bandwidth and memory. The part itself when instances is 1.
CpuSpec cpu_instance_share(const CpuSpec& cpu, const CpuInstanceSplit& split);

}  // namespace perfcast
