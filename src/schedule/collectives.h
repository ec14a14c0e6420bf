// Links between GPUs and nodes (data/interconnects.toml) and the alpha-beta cost of the collectives data
// parallelism uses: ring and tree all-reduce, hierarchical (intra-node reduce-scatter, inter-node all-reduce,
// intra-node all-gather), per-tensor copy-to-device reduction and a parameter server.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "device/device_spec.h"

namespace perfcast {

// One link type as measured: achievable bandwidth per direction and the latency of one collective step.
struct LinkSpec {
  std::string id;            // pcie3, nvlink-bridge, ib-hdr ...
  std::string name;
  std::string scope;         // "node" (between GPUs of one server) or "network" (between servers)
  double bw_gbps = 0;        // GB/s per direction; for NVLink kinds: 0 = derive from the GPU's nvlink_gbps
  double nvlink_efficiency = 0;  // NVLink kinds: achievable share of the GPU's per-direction NVLink bandwidth
  double latency_us = 0;     // per ring/tree step (alpha)
  int pcie_gen = 0;          // PCIe kinds: generation
  int max_group = 0;         // GPUs one such link joins (2 for an NVLink bridge); 0 = any
  int direct_peers = 0;      // NVLink meshes: peers one GPU reaches in one hop (the rest through another GPU); 0 = all
  std::string requires_form; // "sxm": SXM modules only, "pcie-card": add-in cards only, "" = any
  std::map<std::string, std::string> sources;
};

// How GPUs in a PCIe server share switches and host bridges (8-GPU PCIe servers are dual-socket with one or
// two PCIe switches per socket).
// Every value comes from [pcie_topology] in data/interconnects.toml.
struct PcieTopology {
  int gpus_per_switch = 0;           // GPUs behind one PCIe switch: P2P at full link speed
  int gpus_per_socket = 0;           // past this the ring crosses the CPU-to-CPU link
  double host_bridge_factor = 0;     // P2P between switches through one CPU's root complex
  double cross_socket_factor = 0;    // P2P across sockets (QPI/UPI), often staged through host memory
  double no_p2p_factor = 0;          // cards without PCIe peer-to-peer: NCCL stages through host memory
  std::vector<std::string> no_p2p_gpus;  // GPU ids without PCIe P2P
  double host_memory_gbps = 0;       // host DRAM bandwidth a parameter server on the CPU can use per socket
  std::map<std::string, std::string> sources;
};

// How a framework reduces gradients (data/interconnects.toml [strategy.*]).
struct StrategySpec {
  std::string id;             // ddp, horovod, replicated, nccl, ps ...
  std::string name;
  std::string reduce = "allreduce";  // allreduce | copy-to-device | parameter-server
  double bucket_mb = 25;      // gradient bucket / fusion buffer; 0 = one collective per tensor
  double first_bucket_mb = 0; // a smaller first bucket (DDP) so communication starts early
  double cycle_ms = 0;        // background thread cycle (Horovod): a bucket waits up to this long
  double per_collective_us = 0;  // launch/negotiation overhead per collective
  bool overlap = true;        // communication overlaps the rest of backward
  bool hierarchical = false;  // hierarchical all-reduce across nodes by default
  std::string grad_dtype = "param";  // param: fp32 masters under AMP; compute: the compute precision
  double sync_cv = 0.015;     // coefficient of variation of per-GPU step time (stragglers at the barrier)
  double overlap_slowdown = 0.1;  // compute slowdown while a collective runs beside it (shared SMs, DRAM)
  double replica_slowdown = 0;    // empirical per-doubling slowdown of mixed-precision steps (see data file)
  // Copies of the gradients between their tensors and the contiguous buffers the collectives run on (DDP buckets,
  // Horovod's fusion buffer), per update: each reads and writes the gradient bytes once.
  double bucket_copies = 0;
  bool bucket_copies_on_comm_stream = false;  // true: they run in the collective's pipeline (Horovod), else on the compute stream
  std::map<std::string, std::string> sources;
};

struct InterconnectCatalog {
  std::map<std::string, LinkSpec> links;  // node and network links
  PcieTopology pcie;
  std::map<std::string, StrategySpec> strategies;
  std::map<std::string, std::string> runtime_strategy;  // runtime id -> strategy id
  std::string default_strategy;  // [runtime_strategy] default
  double tree_bw_factor = 0;     // [collectives]: tree all-reduce bandwidth relative to the ring's on one link
};

// data/interconnects.toml, loaded once.
const InterconnectCatalog& interconnect_catalog();
const LinkSpec& find_link(const std::string& id, const std::string& scope);
const StrategySpec& find_strategy(const std::string& id);
// The runtime's default gradient strategy.
const StrategySpec& strategy_for_runtime(const std::string& runtime);

// Bytes per gradient element of a training precision: in the parameter precision (fp32 masters under mixed
// precision, 2 bytes for pure fp16/bf16) and in the compute precision.
struct GradientBytes {
  double param = 4;
  double compute = 4;
  bool mixed = false;
};
GradientBytes gradient_bytes(const std::string& precision);

// Memory the strategy's own gradient buffers take for `params` parameters trained in `precision`: a copy of every
// gradient in the precision it reduces (DDP's buckets), capped at bucket_mb when the framework reuses one fixed
// buffer (Horovod's fusion buffer); 0 for strategies that reduce the gradients in place.
double reduction_buffer_bytes(const StrategySpec& s, const std::string& precision, double params);

// True for SXM modules (GPU id or name says SXM).
bool is_sxm(const DeviceSpec& device);
// The link inside a node a GPU uses by default: nvswitch/nvlink for SXM modules, else PCIe of its generation.
std::string default_interconnect(const DeviceSpec& device);
// InputError when the GPU cannot use this link (NVLink on a card without it, PCIe 5 on a PCIe 3 card ...).
void check_interconnect(const DeviceSpec& device, const std::string& interconnect);

// The links one data-parallel job runs over.
struct Fabric {
  int gpus_per_node = 1;
  int nodes = 1;
  std::string intra_id, inter_id;
  double intra_bw_gbps = 0;     // bottleneck per-direction bandwidth of a ring over the node's GPUs
  double intra_latency_us = 0;
  double all_to_all_bw_gbps = 0;  // per-direction bandwidth one GPU reaches in an all-to-all inside the node
  double inter_bw_gbps = 0;     // per node, all its network links together
  double inter_latency_us = 0;
  double host_link_gbps = 0;    // one GPU's PCIe link to the host (parameter server on the CPU)
  double host_memory_gbps = 0;  // what a CPU parameter server can move per node
  bool staged_through_host = false;  // some GPU-to-GPU hops go through host memory (no PCIe peer-to-peer)
  int gpus() const { return gpus_per_node * nodes; }
};

// Resolves link ids ("" = defaults) and the PCIe topology; InputError on ids the GPU cannot use.
// `nics`: network links per node (cloud instances often have several).
Fabric resolve_fabric(const DeviceSpec& device, int gpus_per_node, int nodes, const std::string& interconnect,
                      const std::string& network, int nics = 1);

struct CollectiveCost {
  double us = 0;
  std::string algorithm;  // ring, tree, hierarchical-ring, copy-to-device, parameter-server
  double bus_bw_gbps = 0; // bandwidth of the bottleneck link used
};

// Alpha-beta all-reduce of one buffer over n participants on one link: 2(n-1) steps of alpha and
// 2(n-1)/n of the buffer through each link.
double ring_allreduce_us(int n, double bytes, double bw_gbps, double alpha_us);
// Double binary tree (NCCL 2.4+): 2 log2(n) steps of alpha, the same bandwidth term at tree_bw_factor.
double tree_allreduce_us(int n, double bytes, double bw_gbps, double alpha_us);

// The fastest all-reduce for this fabric: flat ring or tree when one node, else hierarchical (ring inside,
// ring or tree between nodes) or a flat ring over every GPU, whichever is faster.
CollectiveCost allreduce(const Fabric& f, double bytes, bool force_hierarchical = false);
// tf_cnn_benchmarks-style replicated variables: each tensor is summed on one GPU (round robin) and copied back,
// so its owner moves 2(n-1) copies of it.
CollectiveCost copy_to_device(const Fabric& f, double bytes);
// Parameter server on the hosts' CPUs (one shard per node): every GPU pushes its gradients and pulls the
// updated weights.
CollectiveCost parameter_server(const Fabric& f, double bytes);

}  // namespace perfcast

namespace perfcast {

// Ring reduce-scatter or all-gather of a `bytes` buffer (the whole, not one shard) over n participants: n-1 steps
// of alpha and (n-1)/n of the buffer through each link (nccl-tests: busbw = algbw x (n-1)/n).
double ring_reduce_scatter_us(int n, double bytes, double bw_gbps, double alpha_us);
double ring_all_gather_us(int n, double bytes, double bw_gbps, double alpha_us);
// All-to-all of `bytes` per participant: each sends (n-1)/n of its buffer, one step of alpha per peer.
double all_to_all_us(int n, double bytes, double bw_gbps, double alpha_us);
// One point-to-point transfer of `bytes`.
double send_recv_us(double bytes, double bw_gbps, double alpha_us);

}  // namespace perfcast
