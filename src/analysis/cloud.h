// Cloud instances and what a whole training run costs: a price catalog (data/cloud/prices.toml or the
// user's own file), the dataset size and epochs that turn a step into a run, and the run's time, dollars and
// kilowatt-hours.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"

namespace perfcast {

struct InstanceType {
  std::string id;                 // unique in the catalog, e.g. "aws-p3.16xlarge"
  std::string provider;           // aws, gcp, azure, lambda, paperspace, vast ...
  std::string gpu;                // perfcast GPU id
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

struct RunCost {
  double samples = 0;             // processed in the whole run (all epochs)
  double hours = 0;
  double usd = 0;                 // on demand
  std::optional<double> spot_usd;
  double energy_kwh = 0;          // GPU boards, or a CPU's package (cpu_package_power_w)
  double avg_power_w = 0;         // all GPUs together, or the CPU's sockets
};

// A CPU's package power under the load, taken as its TDP (data/cpus, per socket, x the entry's sockets): the
// package only, not DRAM, fans, disks or the rest of the server. 0 for a GPU (its board power is p.power).
double cpu_package_power_w(const Prediction& p);
// Where that TDP comes from (the CPU file's tdp_w source, else its default source); "" for a GPU.
std::string cpu_package_power_source(const Prediction& p);

// Time, money and energy of `samples` on prediction p (all its GPUs), renting `instances` of `inst` (none:
// no price).
RunCost run_cost(const Prediction& p, double samples, const InstanceType* inst = nullptr, int instances = 1);

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
