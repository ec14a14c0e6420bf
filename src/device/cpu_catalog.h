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
// run_cpu / ipexrun --ninstances, one ONNX Runtime session per process, numactl pinning), and how many cores each
// runs on (--cores: OMP_NUM_THREADS / torch.set_num_threads / intra_op_num_threads = that many physical cores).
struct CpuInstanceSplit {
  int instances = 1;             // processes, each pinned to its own cores
  int cores_per_instance = 0;    // physical cores each process runs its intra-op threads on (over all its sockets)
  int instances_per_socket = 1;  // processes sharing one socket's channels and L3
  int sockets_per_instance = 1;  // sockets one process's cores sit on
  bool whole_part = true;        // one process on every core: the part as catalogued
  bool cores_given = false;      // several processes at a stated --cores (not cores / instances)
};
// The split of `instances` processes of `cores` cores each over `cpu` (cores 0: cores / instances whole cores of
// one socket each, the launcher's ncores_per_instance = cores // ninstances; one process: the whole part). On a
// two-socket entry several processes split evenly over the sockets, none spanning two; one process of N cores is
// packed onto one socket while N fits in it. InputError for counts below 1, cores or processes past the part's,
// instances x cores past the part's, and counts that do not split over the sockets.
CpuInstanceSplit cpu_instance_split(const CpuSpec& cpu, int instances, int cores = 0);
// One process's share of the part: its cores (and their L2, per core), its sockets (one unless a single process
// spans both), 1 / instances_per_socket of each socket's L3, DRAM bandwidth and memory, and, for a process on part
// of a socket, only the L3 slices its cores reach (CpuSpec::l3_reach_bytes). The part itself for one process on
// every core.
CpuSpec cpu_instance_share(const CpuSpec& cpu, const CpuInstanceSplit& split);

}  // namespace perfcast
