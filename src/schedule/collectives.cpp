#include "schedule/collectives.h"

#include <algorithm>
#include <cmath>

#include "core/data_files.h"
#include "core/error.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

std::map<std::string, std::string> read_sources(const toml::table& t) {
  std::map<std::string, std::string> out;
  if (const auto* s = t["sources"].as_table())
    for (const auto& [k, v] : *s)
      if (auto text = v.value<std::string>()) out[std::string(k.str())] = *text;
  return out;
}

LinkSpec load_link(const std::string& id, const toml::table& t, const std::string& where, const std::string& scope) {
  TomlFields f(t, where);
  LinkSpec l;
  l.id = id;
  l.scope = scope;
  l.name = f.text("name");
  l.bw_gbps = f.number_or("bw_gbps", 0);
  l.nvlink_efficiency = f.number_or("nvlink_efficiency", 0);
  l.latency_us = f.number("latency_us");
  l.pcie_gen = static_cast<int>(f.number_or("pcie_gen", 0));
  l.max_group = static_cast<int>(f.number_or("max_group", 0));
  l.direct_peers = static_cast<int>(f.number_or("direct_peers", 0));
  if (l.direct_peers < 0) f.fail("direct_peers", "must not be negative");
  l.requires_form = f.text_or("requires_form", "");
  if (l.bw_gbps <= 0 && l.nvlink_efficiency <= 0) f.fail("bw_gbps", "must be positive (or give nvlink_efficiency)");
  if (l.latency_us < 0) f.fail("latency_us", "must not be negative");
  f.has("sources");
  l.sources = read_sources(t);
  f.refuse_unknown_keys();
  return l;
}

StrategySpec load_strategy(const std::string& id, const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  StrategySpec s;
  s.id = id;
  s.name = f.text("name");
  s.reduce = f.text_or("reduce", "allreduce");
  if (s.reduce != "allreduce" && s.reduce != "copy-to-device" && s.reduce != "parameter-server")
    f.fail("reduce", "must be allreduce, copy-to-device or parameter-server");
  s.bucket_mb = f.number_or("bucket_mb", 25);
  s.first_bucket_mb = f.number_or("first_bucket_mb", 0);
  s.cycle_ms = f.number_or("cycle_ms", 0);
  s.per_collective_us = f.number_or("per_collective_us", 0);
  s.overlap = f.boolean_or("overlap", true);
  s.hierarchical = f.boolean_or("hierarchical", false);
  s.grad_dtype = f.text_or("grad_dtype", "param");
  if (s.grad_dtype != "param" && s.grad_dtype != "compute") f.fail("grad_dtype", "must be param or compute");
  s.sync_cv = f.number_or("sync_cv", 0.015);
  s.overlap_slowdown = f.number_or("overlap_slowdown", 0.1);
  s.replica_slowdown = f.number_or("replica_slowdown", 0);
  s.bucket_copies = f.number_or("bucket_copies", 0);
  s.bucket_copies_on_comm_stream = f.boolean_or("bucket_copies_on_comm_stream", false);
  if (s.bucket_copies < 0) f.fail("bucket_copies", "must be 0 or more");
  f.has("sources");
  s.sources = read_sources(t);
  f.refuse_unknown_keys();
  return s;
}

InterconnectCatalog load_catalog() {
  const auto path = data_dir() / "interconnects.toml";
  const toml::table root = parse_toml_file(path);
  const std::string file = path.string();
  InterconnectCatalog c;
  TomlFields top(root, file);
  for (const char* scope : {"node", "network"}) {
    const toml::table& links = top.table(scope);
    for (const auto& [k, v] : links) {
      const auto* t = v.as_table();
      if (!t) continue;
      const std::string id(k.str());
      c.links[id] = load_link(id, *t, file + " [" + scope + "." + id + "]", scope);
    }
  }
  {
    TomlFields p(top.table("pcie_topology"), file + " [pcie_topology]");
    c.pcie.gpus_per_switch = p.count("gpus_per_switch");
    c.pcie.gpus_per_socket = p.count("gpus_per_socket");
    c.pcie.host_bridge_factor = p.number("host_bridge_factor");
    c.pcie.cross_socket_factor = p.number("cross_socket_factor");
    c.pcie.no_p2p_factor = p.number("no_p2p_factor");
    c.pcie.host_memory_gbps = p.number("host_memory_gbps");
    if (const auto* arr = p.node("no_p2p_gpus").as_array())
      for (const auto& e : *arr)
        if (auto s = e.value<std::string>()) c.pcie.no_p2p_gpus.push_back(*s);
    if (c.pcie.gpus_per_switch <= 0 || c.pcie.gpus_per_socket <= 0)
      p.fail("gpus_per_switch", "and gpus_per_socket must be positive");
    p.has("sources");
    c.pcie.sources = read_sources(p.raw());
    p.refuse_unknown_keys();
  }
  {
    TomlFields coll(top.table("collectives"), file + " [collectives]");
    c.tree_bw_factor = coll.number("tree_bw_factor");
    if (c.tree_bw_factor <= 0) coll.fail("tree_bw_factor", "must be positive");
    coll.has("sources");
    coll.refuse_unknown_keys();
  }
  for (const auto& [k, v] : top.table("strategy")) {
    const auto* t = v.as_table();
    if (!t) continue;
    const std::string id(k.str());
    c.strategies[id] = load_strategy(id, *t, file + " [strategy." + id + "]");
  }
  for (const auto& [k, v] : top.table("runtime_strategy")) {
    auto s = v.value<std::string>();
    if (!s) continue;
    if (!c.strategies.count(*s)) top.fail("runtime_strategy", "names unknown strategy '" + *s + "'");
    if (std::string(k.str()) == "default") c.default_strategy = *s;
    else c.runtime_strategy[std::string(k.str())] = *s;
  }
  if (!c.strategies.count(c.default_strategy)) top.fail("runtime_strategy", "needs a valid 'default'");
  top.refuse_unknown_keys();
  return c;
}

std::vector<std::string> ids_of_scope(const InterconnectCatalog& c, const std::string& scope) {
  std::vector<std::string> out;
  for (const auto& [id, l] : c.links)
    if (l.scope == scope) out.push_back(id);
  return out;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

const InterconnectCatalog& interconnect_catalog() {
  static const InterconnectCatalog c = load_catalog();
  return c;
}

const LinkSpec& find_link(const std::string& id, const std::string& scope) {
  const auto& c = interconnect_catalog();
  const auto it = c.links.find(id);
  if (it == c.links.end() || it->second.scope != scope)
    throw_unknown(scope == "node" ? "interconnect" : "network", id, ids_of_scope(c, scope));
  return it->second;
}

const StrategySpec& find_strategy(const std::string& id) {
  const auto& c = interconnect_catalog();
  const auto it = c.strategies.find(id);
  if (it == c.strategies.end()) {
    std::vector<std::string> ids;
    for (const auto& [k, v] : c.strategies) ids.push_back(k);
    throw_unknown("gradient strategy", id, ids);
  }
  return it->second;
}

GradientBytes gradient_bytes(const std::string& precision) {
  GradientBytes b;
  b.mixed = precision == "amp" || precision == "amp-bf16";
  const bool half = precision == "fp16" || precision == "bf16";
  b.param = half ? 2 : 4;
  b.compute = (half || b.mixed) ? 2 : 4;
  return b;
}

double reduction_buffer_bytes(const StrategySpec& s, const std::string& precision, double params) {
  if (s.bucket_copies <= 0) return 0;
  const GradientBytes b = gradient_bytes(precision);
  double bytes = params * (s.grad_dtype == "compute" ? b.compute : b.param);
  if (s.bucket_copies_on_comm_stream && s.bucket_mb > 0) bytes = std::min(bytes, s.bucket_mb * 1048576.0);
  return bytes;
}

const StrategySpec& strategy_for_runtime(const std::string& runtime) {
  const auto& c = interconnect_catalog();
  const auto it = c.runtime_strategy.find(runtime);
  return find_strategy(it == c.runtime_strategy.end() ? c.default_strategy : it->second);
}

bool is_sxm(const DeviceSpec& device) {
  return lower(device.id).find("sxm") != std::string::npos || lower(device.name).find("sxm") != std::string::npos;
}

std::string default_interconnect(const DeviceSpec& device) {
  if (is_sxm(device) && device.nvlink_gbps > 0) {
    // NVSwitch arrived with the V100 SXM3 (DGX-2); SXM2 boards (DGX-1) wire NVLink as a hybrid cube mesh.
    if (device.architecture == "pascal" || lower(device.id).find("sxm2") != std::string::npos) return "nvlink";
    return "nvswitch";
  }
  return "pcie" + std::to_string(std::clamp(device.pcie_gen, 3, 5));
}

void check_interconnect(const DeviceSpec& device, const std::string& interconnect) {
  const LinkSpec& l = find_link(interconnect, "node");
  const bool sxm = is_sxm(device);
  // The facts every message below is composed from (report/messages.cpp words them per language).
  const auto why = [&](const char* code, const std::string& suggested) {
    return ReasonCode{code, {{"gpu", device.id}, {"interconnect", interconnect}, {"suggested", suggested}}};
  };
  if (l.pcie_gen > 0) {
    if (device.pcie_gen < l.pcie_gen) {
      ReasonCode r = why("interconnect.pcie_gen", "pcie" + std::to_string(std::clamp(device.pcie_gen, 3, 5)));
      r.args["gen"] = std::to_string(device.pcie_gen);
      throw InputError(device.id + " has a PCIe " + std::to_string(device.pcie_gen) + ".0 host interface; --interconnect " +
                           interconnect + " would run at PCIe " + std::to_string(device.pcie_gen) +
                           ".0 speed (use --interconnect pcie" + std::to_string(std::clamp(device.pcie_gen, 3, 5)) + ")",
                       std::move(r));
    }
    return;
  }
  if (device.nvlink_gbps <= 0)
    throw InputError(device.id + " has no NVLink; --interconnect " + interconnect +
                         " is not possible (use --interconnect " + default_interconnect(device) + ")",
                     why("interconnect.no_nvlink", default_interconnect(device)));
  if (l.requires_form == "sxm" && !sxm)
    throw InputError(device.id + " is an add-in card; --interconnect " + interconnect +
                         " needs SXM modules on an NVLink baseboard (use nvlink-bridge or " + default_interconnect(device) + ")",
                     why("interconnect.needs_sxm", default_interconnect(device)));
  if (l.requires_form == "pcie-card" && sxm)
    throw InputError(device.id + " is an SXM module; NVLink bridges are for add-in cards (use --interconnect " +
                         default_interconnect(device) + ")",
                     why("interconnect.bridge_on_sxm", default_interconnect(device)));
  if (interconnect == "nvswitch" && (device.architecture == "pascal" || lower(device.id).find("sxm2") != std::string::npos))
    throw InputError(device.id + " predates NVSwitch (SXM2 boards wire NVLink as a cube mesh); use --interconnect nvlink",
                     why("interconnect.no_nvswitch", "nvlink"));
}

namespace {

// Achievable per-direction bandwidth of a ring over g GPUs of one node on link l.
double pcie_ring_bw(const DeviceSpec& device, const LinkSpec& pcie, int g, const PcieTopology& t) {
  double factor = 1;
  if (g > t.gpus_per_switch) factor *= t.host_bridge_factor;
  if (g > t.gpus_per_socket) factor *= t.cross_socket_factor;
  // Without peer-to-peer every hop is staged through host memory already, whichever switch or socket it
  // crosses: the slower of the two paths sets the pace.
  if (std::find(t.no_p2p_gpus.begin(), t.no_p2p_gpus.end(), device.id) != t.no_p2p_gpus.end())
    factor = std::min(factor, t.no_p2p_factor);
  return pcie.bw_gbps * factor;
}

}  // namespace

Fabric resolve_fabric(const DeviceSpec& device, int gpus_per_node, int nodes, const std::string& interconnect,
                      const std::string& network, int nics) {
  if (gpus_per_node <= 0 || nodes <= 0)
    throw InputError("GPU and node counts must be positive, got " + std::to_string(gpus_per_node) + " GPUs per node and " +
                     std::to_string(nodes) + " nodes");
  if (nics <= 0) throw InputError("network links per node must be positive, got " + std::to_string(nics));
  const auto& c = interconnect_catalog();
  Fabric f;
  f.gpus_per_node = gpus_per_node;
  f.nodes = nodes;
  f.intra_id = interconnect.empty() ? default_interconnect(device) : interconnect;
  check_interconnect(device, f.intra_id);
  const LinkSpec& intra = find_link(f.intra_id, "node");
  // The GPU's own PCIe link (host copies, parameter server, and the path between NVLink-bridged pairs).
  const std::string pcie_id = "pcie" + std::to_string(std::clamp(device.pcie_gen, 3, 5));
  const LinkSpec& pcie = find_link(pcie_id, "node");
  const double host_scale = device.pcie_gen < 3 ? std::pow(2.0, device.pcie_gen - 3) * device.pcie_lanes / 16.0
                                                : device.pcie_lanes / 16.0;
  f.host_link_gbps = pcie.bw_gbps * host_scale;
  f.host_memory_gbps = c.pcie.host_memory_gbps * (gpus_per_node > c.pcie.gpus_per_socket ? 2 : 1);
  const int g = gpus_per_node;
  const bool no_p2p = std::find(c.pcie.no_p2p_gpus.begin(), c.pcie.no_p2p_gpus.end(), device.id) != c.pcie.no_p2p_gpus.end();
  f.staged_through_host = no_p2p && g > std::max(c.pcie.gpus_per_switch, intra.pcie_gen > 0 ? 1 : intra.max_group);
  if (intra.pcie_gen > 0) {
    f.intra_bw_gbps = pcie_ring_bw(device, intra, g, c.pcie) * host_scale;
    f.intra_latency_us = intra.latency_us;
  } else {
    const double nv = device.nvlink_gbps / 2.0 * intra.nvlink_efficiency;  // per direction
    if (intra.max_group > 0 && g > intra.max_group) {
      // Bridged pairs: NCCL reduces inside each pair over NVLink and runs one ring per pair member over PCIe,
      // each carrying half the buffer, so the PCIe hops see half the data (an effective 2x on PCIe).
      const double pcie_bw = pcie_ring_bw(device, pcie, g, c.pcie) * host_scale * intra.max_group;
      f.intra_bw_gbps = std::min(nv, pcie_bw);
      f.intra_latency_us = pcie.latency_us;
    } else {
      f.intra_bw_gbps = nv;
      f.intra_latency_us = intra.latency_us;
    }
  }
  f.all_to_all_bw_gbps = f.intra_bw_gbps;
  if (intra.direct_peers > 0 && g - 1 > intra.direct_peers) {
    // A mesh reaches some peers only through another GPU (NCCL's PATH_NVB): those transfers cross two links, so
    // sending to g-1 peers loads direct + 2 x indirect link-transfers.
    const double peers = g - 1.0, direct = intra.direct_peers;
    f.all_to_all_bw_gbps = f.intra_bw_gbps * peers / (direct + 2.0 * (peers - direct));
  }
  if (nodes > 1) {
    f.inter_id = network.empty() ? "100gbe" : network;
    const LinkSpec& net = find_link(f.inter_id, "network");
    // A node cannot push more through its NICs than its GPUs' PCIe links carry (GPUDirect RDMA path).
    f.inter_bw_gbps = std::min(net.bw_gbps * nics, f.host_link_gbps * g);
    f.inter_latency_us = net.latency_us;
  } else if (!network.empty()) {
    find_link(network, "network");  // a bad id is still an error on one node
    f.inter_id = network;
  }
  return f;
}

double ring_allreduce_us(int n, double bytes, double bw_gbps, double alpha_us) {
  if (n <= 1 || bytes <= 0) return 0;
  const double steps = 2.0 * (n - 1);
  return steps * alpha_us + steps / n * bytes / (bw_gbps * 1e3);
}

double tree_allreduce_us(int n, double bytes, double bw_gbps, double alpha_us) {
  if (n <= 1 || bytes <= 0) return 0;
  // Pipelined double binary tree: latency grows with the depth; each rank sends and receives the whole buffer
  // once up and once down, split over the two trees (NCCL 2.4 blog, "Massively Scale Your Deep Learning
  // Training with NCCL 2.4"). Measured tree bandwidth sits slightly under the ring's on one link.
  const double tree_bw_factor = interconnect_catalog().tree_bw_factor;
  const double depth = std::ceil(std::log2(static_cast<double>(n)));
  return 2.0 * depth * alpha_us + 2.0 * (n - 1) / n * bytes / (bw_gbps * tree_bw_factor * 1e3);
}

CollectiveCost allreduce(const Fabric& f, double bytes, bool force_hierarchical) {
  CollectiveCost c;
  const int g = f.gpus_per_node, m = f.nodes, n = f.gpus();
  if (n <= 1 || bytes <= 0) return c;
  if (m == 1) {
    const double ring = ring_allreduce_us(g, bytes, f.intra_bw_gbps, f.intra_latency_us);
    const double tree = tree_allreduce_us(g, bytes, f.intra_bw_gbps, f.intra_latency_us);
    c.us = std::min(ring, tree);
    c.algorithm = ring <= tree ? "ring" : "tree";
    c.bus_bw_gbps = f.intra_bw_gbps;
    return c;
  }
  // Hierarchical: reduce-scatter inside the node, all-reduce of each GPU's 1/g shard between nodes (all g
  // shards share the node's network links), all-gather inside the node.
  const double intra = g > 1 ? 2.0 * ((g - 1) * f.intra_latency_us + (g - 1.0) / g * bytes / (f.intra_bw_gbps * 1e3)) : 0;
  const double inter_ring = ring_allreduce_us(m, bytes, f.inter_bw_gbps, f.inter_latency_us);
  const double inter_tree = tree_allreduce_us(m, bytes, f.inter_bw_gbps, f.inter_latency_us);
  const double hier = intra + std::min(inter_ring, inter_tree);
  // Flat ring over all n GPUs: each node's network link carries 2(n-1)/n of the buffer and every hop is a step.
  const double slowest = std::min(f.intra_bw_gbps > 0 ? f.intra_bw_gbps : f.inter_bw_gbps, f.inter_bw_gbps);
  const double flat = 2.0 * (n - 1) * std::max(f.intra_latency_us, f.inter_latency_us) +
                      2.0 * (n - 1) / n * bytes / (slowest * 1e3);
  if (force_hierarchical || hier <= flat) {
    c.us = hier;
    c.algorithm = inter_ring <= inter_tree ? "hierarchical (ring inside, ring across nodes)"
                                           : "hierarchical (ring inside, tree across nodes)";
  } else {
    c.us = flat;
    c.algorithm = "ring over all GPUs";
  }
  c.bus_bw_gbps = f.inter_bw_gbps;
  return c;
}

CollectiveCost copy_to_device(const Fabric& f, double bytes) {
  CollectiveCost c;
  const int n = f.gpus();
  if (n <= 1 || bytes <= 0) return c;
  // Gather n-1 copies onto the owner and send n-1 back; the owners of different tensors work in parallel, so
  // averaged over tensors each GPU link moves 2(n-1)/n of the buffer. A bound for the largest tensor on its
  // owner's link ((n-1) x its bytes) was tried and made the scaling validation worse (docs/scale-out-validation.md).
  const double bw = f.nodes > 1 ? std::min(f.intra_bw_gbps, f.inter_bw_gbps / f.gpus_per_node) : f.intra_bw_gbps;
  const double lat = f.nodes > 1 ? f.inter_latency_us : f.intra_latency_us;
  c.us = 2.0 * lat + 2.0 * (n - 1) / n * bytes / (bw * 1e3);
  c.algorithm = "copy to owner GPU and back";
  c.bus_bw_gbps = bw;
  return c;
}

CollectiveCost parameter_server(const Fabric& f, double bytes) {
  CollectiveCost c;
  const int n = f.gpus(), g = f.gpus_per_node, m = f.nodes;
  if (n <= 1 || bytes <= 0) return c;
  // Push the gradients, pull the weights: each GPU moves the buffer twice over its PCIe link; the CPUs of a node
  // serve every GPU that talks to their shard; between nodes a node's links carry its GPUs' traffic to the
  // other shards and the other nodes' traffic to its own shard.
  const double per_gpu = 2.0 * bytes / (f.host_link_gbps * 1e3);
  const double host = 2.0 * bytes * (static_cast<double>(n) / m) / (f.host_memory_gbps * 1e3);
  double net = 0;
  if (m > 1) net = 2.0 * std::max(g * bytes * (m - 1.0) / m, (n - g) * bytes / m) / (f.inter_bw_gbps * 1e3);
  c.us = std::max({per_gpu, host, net}) + 2.0 * (m > 1 ? f.inter_latency_us : f.intra_latency_us);
  c.algorithm = "parameter server on the CPUs";
  c.bus_bw_gbps = m > 1 ? f.inter_bw_gbps : f.host_link_gbps;
  return c;
}

}  // namespace perfcast

namespace perfcast {

double ring_reduce_scatter_us(int n, double bytes, double bw_gbps, double alpha_us) {
  if (n <= 1 || bytes <= 0) return 0;
  const double steps = n - 1.0;
  return steps * alpha_us + steps / n * bytes / (bw_gbps * 1e3);
}

double ring_all_gather_us(int n, double bytes, double bw_gbps, double alpha_us) {
  return ring_reduce_scatter_us(n, bytes, bw_gbps, alpha_us);
}

double all_to_all_us(int n, double bytes, double bw_gbps, double alpha_us) {
  if (n <= 1 || bytes <= 0) return 0;
  return (n - 1.0) * alpha_us + (n - 1.0) / n * bytes / (bw_gbps * 1e3);
}

double send_recv_us(double bytes, double bw_gbps, double alpha_us) {
  if (bytes <= 0) return 0;
  return alpha_us + bytes / (bw_gbps * 1e3);
}

}  // namespace perfcast
