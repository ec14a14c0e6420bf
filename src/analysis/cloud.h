// Cloud instances and what a whole training run costs: a price catalog (data/cloud/prices.toml or the
// user's own file), the dataset size and epochs that turn a step into a run, and the run's time, dollars and
// kilowatt-hours.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"
#include "schedule/run_cost.h"

namespace perfcast {

struct InstanceType {
  std::string id;                 // unique in the catalog, e.g. "aws-p3.16xlarge"
  std::string provider;           // aws, gcp, azure, lambda, paperspace, vast ...
  std::string gpu;                // perfcast GPU id
  std::string server;             // the server class it is a share of (data/cloud/servers.toml; "" = generic rule)
  int gpus = 1;                   // GPUs per instance
  std::string interconnect;       // between its GPUs (perfcast --interconnect id)
  std::string network;            // between instances ("" = cannot be combined)
  int network_ports = 1;          // network ports per instance
  double on_demand_usd_per_hour = 0;
  std::string on_demand_date;
  std::string on_demand_source;
  std::optional<double> spot_usd_per_hour;
  std::string spot_date;
  std::string spot_source;
  std::string region;
  std::string note;
};

struct PriceCatalog {
  std::string file;
  std::vector<InstanceType> instances;
};

// How a provider bills a run and how much its data centres draw beyond the IT load (data/cloud/providers.toml).
struct ProviderTerms {
  std::string id;                  // "" for the [default] terms
  double billing_increment_s = 60; // a run's time is billed in whole increments
  double billing_minimum_s = 60;   // the least any run is billed
  bool billing_rounds_down = false;// only whole increments are billed (Azure); otherwise a started one is billed whole
  std::string billing_source;
  double pue = 1;                  // facility energy / IT energy
  std::string pue_source;
};

// A GPU server's published maximum system power (data/cloud/servers.toml).
struct ServerPower {
  std::string id;
  int gpus = 8;
  double max_system_w = 0;
  double gpu_tdp_w = 0;
  std::string source;
  // Everything but the GPUs at the system's maximum: max_system_w - gpus x gpu_tdp_w.
  double host_w() const { return max_system_w - gpus * gpu_tdp_w; }
};

struct CloudTerms {
  ProviderTerms fallback;               // [default]
  std::vector<std::string> on_default_terms;  // [default] providers: providers known to bill on the [default] terms
  std::vector<ProviderTerms> providers;
  std::vector<ServerPower> servers;
  // The provider's terms; the [default] ones for "" (no provider: predict) and for a provider listed under [default]
  // providers. InputError naming the id, with the nearest known one, for any other: a typo in a price file would
  // otherwise be billed silently on the default terms.
  const ProviderTerms& provider(const std::string& id) const;
  // Every provider id the file knows: the [[provider]] entries and [default] providers.
  std::vector<std::string> provider_ids() const;
  // nullptr when no server has this id.
  const ServerPower* server(const std::string& id) const;
  // The generic host rule: the median over the servers of host_w / (gpus x gpu_tdp_w).
  double host_w_per_gpu_tdp_w() const;
};
// data/cloud/providers.toml and data/cloud/servers.toml, loaded once; InputError naming the file and field.
const CloudTerms& cloud_terms();

// Hours billed for a run of `hours` on one instance: at least the minimum, in whole increments (rounded up, or down
// where the provider bills only whole increments). A 20 s job on AWS is billed 60 s.
double billed_hours(const ProviderTerms& terms, double hours);

// The host's power beside `gpus` GPUs of `device` (CPUs, DRAM, NICs, fans ...): the instance's server share when it
// names one, else -- with no instance -- the server of an instance in the shipped catalog with this GPU, else the
// generic rule (CloudTerms::host_w_per_gpu_tdp_w x the GPUs' TDP). 0 for a CPU device (its package is its power).
double host_power_w(const DeviceSpec& device, int gpus, const InstanceType* inst = nullptr);

// HostRule (which hardware a run powers) and PoweredHardware: schedule/run_cost.h.
// "whole_instances" / "gpu_share", as the JSON reports name the rule.
const char* host_rule_name(HostRule rule);

// The hardware a run powers under HostRule; 0 hosts and GPUs for a CPU device (its package is its power).
PoweredHardware powered_hardware(const DeviceSpec& device, int gpus_used, const InstanceType* inst = nullptr,
                                 int instances = 1);

// The PUE a run uses: `override` (--pue) when given, else the provider's ("" = [default]).
double pue_for(const std::string& provider, std::optional<double> override);

std::filesystem::path default_prices_path();
// InputError naming the file, the instance and the field on a missing or bad field, an unknown GPU id or an
// interconnect the GPU does not have.
PriceCatalog load_price_catalog(const std::filesystem::path& path);
// data/cloud/prices.toml, loaded once.
const PriceCatalog& default_price_catalog();

// The one duration parser of every duration flag: a positive finite number and a unit, spaces ignored -- ms; s, sec,
// seconds; m, min, mins, minutes; h, hr, hrs, hour, hours; d, day, days; w, week, weeks -- returned in units of
// `unit_s` seconds. A bare number is `bare_unit_s` seconds each (--slo-ttft: 1e-3, milliseconds as its --help says),
// or refused naming the units when 0 (--deadline: "90" could be minutes or hours). InputError opening with `name`,
// giving `examples`, otherwise.
double parse_duration(const std::string& text, const std::string& name, double unit_s, double bare_unit_s,
                      const std::string& examples);
// "24h", "90m", "2d", "1.5h", "3600s", "1w" in hours (parse_duration, a bare number refused). `name` opens the
// message: "deadline", which reads right from the command line (--deadline) and from the Python and JSON API
// (deadline=...).
double parse_duration_hours(const std::string& text, const std::string& name = "deadline");
// "36 h", "2.1 d", "45 min", "20 s".
std::string format_hours(double hours);
// "$1234", "$12.34", and below a cent two significant digits ("$0.00031"): a cost never prints as "$0.00" unless it
// is zero.
std::string format_usd(double usd);

// Samples (or tokens) per second with no decimal, one below 10/s (a language model's decode runs a few sequences a
// second), so that no rate prints as 0.
std::string format_rate(double samples_per_s);

// Samples in one epoch when the user gives none: the request's dataset, or by model family (ImageNet for 2D
// vision models, CT crops for 3D ones); nullopt for models with no default dataset (sequence models).
std::optional<double> default_dataset_samples(const Prediction& p);

// RunCost (a run's time, money and energy): schedule/run_cost.h.

// A CPU's package power under the load, taken as its TDP (data/cpus, per socket, x the entry's sockets): the
// package only, not DRAM, fans, disks or the rest of the server. 0 for a GPU (its board power is p.power).
double cpu_package_power_w(const Prediction& p);
// Where that TDP comes from (the CPU file's tdp_w source, else its default source); "" for a GPU.
std::string cpu_package_power_source(const Prediction& p);

// Time, money and energy of `samples` on prediction p (all its GPUs), renting `instances` of `inst` (none:
// no price).
// `pue`: --pue, else the instance's provider's (or the default's without one).
RunCost run_cost(const Prediction& p, double samples, const InstanceType* inst = nullptr, int instances = 1,
                 std::optional<double> pue = std::nullopt);
// What of its instances a run pays for. kWholeInstancesRented (compare, plan's options): the whole instances it
// rents, powered whole (HostRule::kWholeInstances) and each billed hour at the instance's price.
// kGpusUsed (the training layouts): only the GPUs it uses, with their share of their server's host
// (HostRule::kGpuShare, as predict counts it) and each billed hour at the instance's price per GPU (a layout of 24
// GPUs priced on 8-GPU instances pays for 24).
enum class RunBasis { kWholeInstancesRented, kGpusUsed };

// The one rule behind run_cost, plan's options and the training layouts: `samples` at `samples_per_s` on `gpus` GPUs
// of `device` that draw `power_w` together, renting `instances` of `inst` (none: no price, and the GPUs' share of
// their server's host whatever the basis) on `basis`. With kGpusUsed the host is powered_hardware's with no
// instance (the server of the catalog's instance with this GPU), as predict counts it.
RunCost cost_of_run(const DeviceSpec& device, int gpus, double samples, double samples_per_s, double power_w,
                    const InstanceType* inst, int instances, std::optional<double> pue, RunBasis basis);

// The instance with this GPU, and at least `min_gpus` of them, whose on-demand price per GPU-hour is lowest;
// nullptr when the catalog has none.
const InstanceType* cheapest_instance_for(const PriceCatalog& catalog, const std::string& gpu, int min_gpus = 1);

// What renting `gpus_per_node` GPUs of one type on each of `nodes` servers costs: the instance type that holds that many
// of them at the lowest price per instance-hour (the smallest that does, as a rule), whole instances only; nobody
// rents one GPU of an 8-GPU-only instance.
struct Rental {
  const InstanceType* instance = nullptr;
  int instances = 1;                      // nodes
  double usd_per_hour = 0;                // on demand, all instances
  std::optional<double> spot_usd_per_hour;
  int gpus_paid = 0;                      // GPUs in the instances rented (>= the GPUs used)
};
// nullopt when no instance type in the catalog holds that many of this GPU.
std::optional<Rental> rent(const PriceCatalog& catalog, const std::string& gpu, int gpus_per_node, int nodes = 1);

}  // namespace perfcast
