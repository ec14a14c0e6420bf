#include "analysis/cloud.h"
#include "analysis/request_resolution.h"

#include <fmt/format.h>

#include <charconv>
#include <algorithm>
#include <cmath>
#include <set>

#include "core/data_files.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/toml_reader.h"
#include "device/architecture.h"
#include "device/board_power.h"
#include "device/catalog.h"
#include "device/cpu_catalog.h"
#include "device/host_profile.h"
#include "schedule/collectives.h"

namespace perfcast {

std::filesystem::path default_prices_path() { return data_dir() / "cloud" / "prices.toml"; }

namespace {

ProviderTerms load_terms(const toml::table& t, const std::string& where, const ProviderTerms* fallback) {
  TomlFields f(t, where);
  ProviderTerms p;
  if (fallback) p.id = f.text("id");
  const std::string here = fallback ? where + " (provider '" + p.id + "')" : where;
  TomlFields g(t, here);
  // A provider names every billing field: a missing one would silently take the default's figure without its source.
  p.billing_increment_s = g.number("billing_increment_s");
  p.billing_minimum_s = g.number("billing_minimum_s");
  if (!(p.billing_increment_s > 0)) g.fail("billing_increment_s", "must be a positive number of seconds");
  if (!(p.billing_minimum_s >= 0)) g.fail("billing_minimum_s", "must be zero or a positive number of seconds");
  const std::string rounding = g.text_or("billing_rounding", "up");
  if (rounding != "up" && rounding != "down") g.fail("billing_rounding", "is \"up\" or \"down\"");
  p.billing_rounds_down = rounding == "down";
  p.billing_source = g.text("billing_source");
  g.has("id");
  if (!fallback) g.has("providers");  // [default]'s list, read by load_cloud_terms
  // A provider without a published PUE of its own leaves both fields out and takes the default's, with its source.
  if (fallback && !g.has("pue") && !g.has("pue_source")) {
    p.pue = fallback->pue;
    p.pue_source = fallback->pue_source;
    g.refuse_unknown_keys();
    return p;
  }
  p.pue = g.number("pue");
  if (!(p.pue >= 1)) g.fail("pue", "must be at least 1 (facility energy / IT energy)");
  p.pue_source = g.text("pue_source");
  g.refuse_unknown_keys();
  return p;
}

CloudTerms load_cloud_terms() {
  CloudTerms c;
  const auto providers = data_dir() / "cloud" / "providers.toml";
  const toml::table root = parse_toml_file(providers);
  const std::string file = "'" + providers.string() + "'";
  const auto* def = root["default"].as_table();
  if (!def) throw InputError("provider file " + file + " has no [default] table");
  c.fallback = load_terms(*def, "provider file " + file + " [default]", nullptr);
  const auto listed = [&c](const std::string& id) {
    const auto ids = c.provider_ids();
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  // The providers billed on the default terms are named, so that a provider id no file lists is an error.
  if (const auto* arr = (*def)["providers"].as_array()) {
    for (const auto& node : *arr) {
      const auto id = node.value<std::string>();
      if (!id || id->empty())
        throw InputError("provider file " + file + " [default] providers: each entry is a provider id (a string)");
      if (listed(*id)) throw InputError("provider file " + file + ": provider '" + *id + "' is listed twice");
      c.on_default_terms.push_back(*id);
    }
  } else if ((*def)["providers"]) {
    throw InputError("provider file " + file + " [default] providers: a list of provider ids, e.g. [\"lambda\"]");
  }
  if (const auto* arr = root["provider"].as_array())
    for (const auto& node : *arr) {
      const auto* t = node.as_table();
      if (!t) throw InputError("provider file " + file + ": a [[provider]] entry is not a table");
      ProviderTerms p = load_terms(*t, "provider file " + file + " [[provider]]", &c.fallback);
      if (listed(p.id)) throw InputError("provider file " + file + ": provider '" + p.id + "' is listed twice");
      c.providers.push_back(std::move(p));
    }
  const auto servers = data_dir() / "cloud" / "servers.toml";
  const toml::table sroot = parse_toml_file(servers);
  const auto* arr = sroot["server"].as_array();
  if (!arr || arr->empty()) throw InputError("server file '" + servers.string() + "' has no [[server]] entries");
  for (const auto& node : *arr) {
    const auto* t = node.as_table();
    const std::string where = "server file '" + servers.string() + "' [[server]]";
    if (!t) throw InputError(where + " is not a table");
    TomlFields f(*t, where);
    ServerPower sv;
    sv.id = f.text("id");
    TomlFields g(*t, where + " (server '" + sv.id + "')");
    sv.gpus = static_cast<int>(g.count("gpus", 1024));
    sv.max_system_w = g.number("max_system_w");
    sv.gpu_tdp_w = g.number("gpu_tdp_w");
    sv.source = g.text("source");
    if (sv.gpus < 1) g.fail("gpus", "must be at least 1");
    if (!(sv.gpu_tdp_w > 0)) g.fail("gpu_tdp_w", "must be positive");
    if (!(sv.host_w() > 0)) g.fail("max_system_w", "must exceed the GPUs' TDP (gpus x gpu_tdp_w)");
    g.has("id");
    g.refuse_unknown_keys();
    c.servers.push_back(std::move(sv));
  }
  return c;
}

}  // namespace

const ProviderTerms& CloudTerms::provider(const std::string& id) const {
  for (const auto& p : providers)
    if (p.id == id) return p;
  if (id.empty() || std::find(on_default_terms.begin(), on_default_terms.end(), id) != on_default_terms.end())
    return fallback;
  try {
    throw_unknown("provider", id, provider_ids());
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (data/cloud/providers.toml lists each provider: a [[provider]] entry "
                                             "with its terms, or [default] providers for the default terms; provider = \"other\" in a --prices file takes "
                                             "the default terms)");
  }
}

std::vector<std::string> CloudTerms::provider_ids() const {
  std::vector<std::string> ids;
  for (const auto& p : providers) ids.push_back(p.id);
  ids.insert(ids.end(), on_default_terms.begin(), on_default_terms.end());
  return ids;
}

const ServerPower* CloudTerms::server(const std::string& id) const {
  for (const auto& s : servers)
    if (s.id == id) return &s;
  return nullptr;
}

double CloudTerms::host_w_per_gpu_tdp_w() const {
  std::vector<double> r;
  for (const auto& s : servers) r.push_back(s.host_w() / (s.gpus * s.gpu_tdp_w));
  std::sort(r.begin(), r.end());
  PERFCAST_ASSERT(!r.empty(), "load_cloud_terms refuses a server file with no [[server]] entries");
  const std::size_t n = r.size();
  return n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
}

const CloudTerms& cloud_terms() {
  static const CloudTerms c = load_cloud_terms();
  return c;
}

double billed_hours(const ProviderTerms& terms, double hours) {
  if (!std::isfinite(hours)) return hours;
  const double seconds = hours * 3600.0;
  // A run a hair over a whole increment (a rounding error of the division) is not billed one more increment.
  const double increments = seconds / terms.billing_increment_s;
  const double whole = terms.billing_rounds_down ? std::floor(increments + 1e-9) : std::ceil(increments - 1e-9);
  return std::max(terms.billing_minimum_s, whole * terms.billing_increment_s) / 3600.0;
}

namespace {

// The server class whose host a GPU of `device` shares: the instance's, else -- with no instance -- that of an
// instance in the shipped catalog with this GPU; nullptr for the generic rule.
const ServerPower* host_server(const DeviceSpec& device, const InstanceType* inst) {
  const CloudTerms& terms = cloud_terms();
  if (inst) return inst->server.empty() ? nullptr : terms.server(inst->server);
  for (const auto& i : default_price_catalog().instances)
    if (i.gpu == device.id && !i.server.empty()) return terms.server(i.server);
  return nullptr;
}

}  // namespace

double host_power_w(const DeviceSpec& device, int gpus, const InstanceType* inst) {
  if (device.kind != DeviceKind::kGpu) return 0;
  if (const ServerPower* server = host_server(device, inst)) return server->host_w() / server->gpus * gpus;
  const double tdp = device.rated_tdp_w > 0 ? device.rated_tdp_w : device.tdp_w;
  return cloud_terms().host_w_per_gpu_tdp_w() * tdp * gpus;
}

const char* host_rule_name(HostRule rule) {
  return rule == HostRule::kWholeInstances ? "whole_instances" : "gpu_share";
}

PoweredHardware powered_hardware(const DeviceSpec& device, int gpus_used, const InstanceType* inst, int instances) {
  PoweredHardware h;
  h.rule = inst ? HostRule::kWholeInstances : HostRule::kGpuShare;
  h.gpus_used = gpus_used;
  h.gpus_powered = inst ? inst->gpus * instances : gpus_used;
  if (device.kind != DeviceKind::kGpu) return h;
  if (const ServerPower* server = host_server(device, inst)) h.server = server->id;
  h.host_w = inst ? host_power_w(device, inst->gpus, inst) * instances : host_power_w(device, gpus_used);
  // The GPUs of a rented instance that the run leaves idle draw the board's power at rest (no process on them).
  const int idle = std::max(0, h.gpus_powered - gpus_used);
  if (idle > 0) h.idle_gpu_w = idle * BoardPower(device, architecture_of(device)).idle_w();
  return h;
}

double pue_for(const std::string& provider, std::optional<double> override) {
  if (override) return *override;
  return cloud_terms().provider(provider).pue;
}

namespace {

InstanceType load_instance(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  InstanceType i;
  i.id = f.text("id");
  const std::string here = where + " (instance '" + i.id + "')";
  TomlFields g(t, here);
  i.provider = g.text("provider");
  // An empty id is what predict (which rents nothing) asks the terms for: in a price file it would bill on the
  // default terms without a word.
  if (i.provider.empty()) g.fail("provider", "must name a provider of data/cloud/providers.toml");
  try {
    cloud_terms().provider(i.provider);
  } catch (const InputError& e) {
    throw InputError(here + ": " + e.what());
  }
  i.gpu = g.text("gpu");
  i.server = g.text_or("server", "");
  const double gpus = g.number("gpus");
  if (gpus < 1 || gpus != std::floor(gpus)) g.fail("gpus", "must be a positive whole number, got " + fmt::format("{}", gpus));
  // Bounded before the cast to int (a hostile 1e10 would wrap and pass the price check below).
  if (gpus > static_cast<double>(input_limits().max_gpus_per_node))
    g.fail("gpus", fmt::format("is {:g}, over the {} GPUs per node of data/limits.toml [counts] max_gpus_per_node", gpus,
                               input_limits().max_gpus_per_node));
  i.gpus = static_cast<int>(gpus);
  i.interconnect = g.text("interconnect");
  i.network = g.text_or("network", "");
  const double ports = g.number_or("network_ports", 1);
  if (ports < 1) g.fail("network_ports", "must be at least 1");
  i.network_ports = static_cast<int>(ports);
  // A price per GPU-hour above data/limits.toml [run] max_usd_per_gpu_hour is a typo or hostile, not a list price.
  const double most_per_gpu = input_limits().max_usd_per_gpu_hour;
  const auto check_price = [&](const char* key, double usd_per_hour) {
    if (usd_per_hour <= 0) g.fail(key, "must be a positive price");
    if (!(usd_per_hour / i.gpus <= most_per_gpu))
      g.fail(key, fmt::format("is {:.4g} USD per GPU-hour, over the {:g} of data/limits.toml [run] max_usd_per_gpu_hour",
                              usd_per_hour / i.gpus, most_per_gpu));
  };
  i.on_demand_usd_per_hour = g.number("on_demand_usd_per_hour");
  check_price("on_demand_usd_per_hour", i.on_demand_usd_per_hour);
  // A date is the month or day the price was read, YYYY-MM or YYYY-MM-DD: `perfcast --version` names the newest of
  // them, compared as text, so "yesterday" or "2099-13" would outrank every real one.
  const auto check_date = [&](const char* key, const std::string& date) {
    const auto digits = [&](std::size_t at, std::size_t n) {
      return date.size() >= at + n &&
             std::all_of(date.begin() + static_cast<std::ptrdiff_t>(at),
                         date.begin() + static_cast<std::ptrdiff_t>(at + n), [](char c) { return c >= '0' && c <= '9'; });
    };
    const bool shape = (date.size() == 7 || date.size() == 10) && digits(0, 4) && date[4] == '-' && digits(5, 2) &&
                       (date.size() == 7 || (date[7] == '-' && digits(8, 2)));
    const int month = shape ? std::stoi(date.substr(5, 2)) : 0;
    const int day = shape && date.size() == 10 ? std::stoi(date.substr(8, 2)) : 1;
    if (!shape || month < 1 || month > 12 || day < 1 || day > 31)
      g.fail(key, "must be a date YYYY-MM or YYYY-MM-DD, got '" + date.substr(0, 40) + "'");
  };
  i.on_demand_date = g.text("on_demand_date");
  check_date("on_demand_date", i.on_demand_date);
  i.on_demand_source = g.text("on_demand_source");
  // The spot price comes with its date and source, or none of them does.
  if (g.has("spot_usd_per_hour") || g.has("spot_date") || g.has("spot_source")) {
    i.spot_usd_per_hour = g.number("spot_usd_per_hour");
    check_price("spot_usd_per_hour", *i.spot_usd_per_hour);
    i.spot_date = g.text("spot_date");
    check_date("spot_date", i.spot_date);
    i.spot_source = g.text("spot_source");
  }
  i.region = g.text_or("region", "");
  i.note = g.text_or("note", "");
  g.has("id");
  g.refuse_unknown_keys();
  // The GPU must exist and have the links the instance claims.
  DeviceSpec device;
  try {
    device = find_gpu(i.gpu);
  } catch (const InputError& e) {
    throw InputError(here + ": " + e.what());
  }
  if (!i.server.empty() && !cloud_terms().server(i.server)) {
    std::vector<std::string> ids;
    for (const auto& sv : cloud_terms().servers) ids.push_back(sv.id);
    try {
      throw_unknown("server", i.server, ids);
    } catch (const InputError& e) {
      throw InputError(here + ": " + e.what() + " (data/cloud/servers.toml)");
    }
  }
  try {
    check_interconnect(device, i.interconnect);
    if (!i.network.empty()) find_link(i.network, "network");
  } catch (const InputError& e) {
    throw InputError(here + ": " + e.what());
  }
  // An instance is one server: no more GPUs than one server with its interconnect holds, the bound --gpus has.
  if (const auto max = max_gpus_per_node(i.interconnect); max && i.gpus > *max)
    g.fail("gpus", fmt::format("is {}, more than a server with {} holds ({} GPUs, data/scale_limits.toml)", i.gpus,
                               i.interconnect, *max));
  return i;
}

}  // namespace

PriceCatalog load_price_catalog(const std::filesystem::path& path) {
  const toml::table root = parse_toml_file(path);
  PriceCatalog c;
  c.file = path.string();
  const auto* arr = root["instance"].as_array();
  if (!arr || arr->empty()) throw InputError("price file '" + c.file + "' has no [[instance]] entries");
  std::set<std::string> ids;
  int index = 0;
  for (const auto& node : *arr) {
    ++index;
    const auto* t = node.as_table();
    const std::string where = "price file '" + c.file + "' [[instance]] #" + std::to_string(index);
    if (!t) throw InputError(where + " is not a table");
    InstanceType i = load_instance(*t, where);
    if (!ids.insert(i.id).second) throw InputError(where + ": duplicate instance id '" + i.id + "'");
    c.instances.push_back(std::move(i));
  }
  return c;
}

const PriceCatalog& default_price_catalog() {
  static const PriceCatalog c = load_price_catalog(default_prices_path());
  return c;
}

namespace {

// A duration's number and its unit's length in seconds (0 for a bare number); InputError naming `examples` when the
// text is not a positive finite number with a known unit or none.
std::pair<double, double> duration_parts(const std::string& text, const std::string& name, const std::string& examples) {
  std::string s;
  for (char ch : text)
    if (ch != ' ') s += ch;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::string unit(ptr, static_cast<const char*>(s.data() + s.size()));
  double scale = -1;
  if (unit.empty()) scale = 0;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "s" || unit == "sec" || unit == "seconds") scale = 1;
  else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minutes") scale = 60;
  else if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hours" || unit == "hour") scale = 3600;
  else if (unit == "d" || unit == "day" || unit == "days") scale = 86400;
  else if (unit == "w" || unit == "week" || unit == "weeks") scale = 604800;
  if (ec != std::errc() || ptr == s.data() || scale < 0 || !(v > 0) || !std::isfinite(v))
    throw InputError(name + " takes a positive duration such as " + examples + ", got '" + text + "'");
  return {v, scale};
}

// A bare number names no unit, and monitor's --interval reads one as seconds: where a flag has no rule for one, "90"
// is refused with the units rather than guessed.
[[noreturn]] void refuse_bare_number(const std::string& text, const std::string& name) {
  std::string s;
  for (char ch : text)
    if (ch != ' ') s += ch;
  throw InputError(name + " '" + text + "' has no unit: write it as " + s + "h, " + s + "d, " + s + "m or " + s + "s");
}

}  // namespace

double parse_duration(const std::string& text, const std::string& name, double unit_s, double bare_unit_s,
                      const std::string& examples) {
  const auto [v, scale] = duration_parts(text, name, examples);
  if (scale == 0 && bare_unit_s <= 0) refuse_bare_number(text, name);
  // The ratio of units first (60.0 / 3600 rounds to 1.0 / 60, 1.0 / 1e-3 to 1000), so that "90m" is 1.5 h and "0.5s"
  // 500 ms exactly.
  const double out = v * ((scale > 0 ? scale : bare_unit_s) / unit_s);
  if (!std::isfinite(out)) throw InputError(name + " takes a positive duration such as " + examples + ", got '" + text + "'");
  return out;
}

double parse_duration_hours(const std::string& text, const std::string& name) {
  return parse_duration(text, name, 3600, 0, "24h, 90m, 2d or 3600s");
}

std::string format_hours(double hours) {
  if (!std::isfinite(hours)) return "never";
  // Each unit is chosen after rounding to the unit below it, so that no time prints as zero of a unit or as the next
  // unit's threshold: 30 s is "30 s" (not "0 min", 0.5 rounding to even), 59.6 s "1 min", 59.8 min "1.0 h".
  if (hours < 1.0) {
    const long long seconds = std::llround(hours * 3600);
    if (seconds < 1) return "under 1 s";
    if (seconds < 60) return fmt::format("{} s", seconds);
    const long long minutes = std::llround(static_cast<double>(seconds) / 60);
    if (minutes < 60) return fmt::format("{} min", minutes);
  }
  const double tenths = std::round(hours * 10) / 10;
  if (tenths < 48.0) return fmt::format("{:.1f} h", tenths);
  return fmt::format("{:.1f} d", hours / 24);
}

std::string format_usd(double usd) {
  if (!std::isfinite(usd)) return "-";
  // Past a billion dollars (no training run has cost that) the digits are noise: three significant ones, as
  // "--budget 1e308" would otherwise echo 309 of them.
  if (usd >= 1e9) return fmt::format("${:.3g}", usd);
  if (usd >= 1000) return fmt::format("${:.0f}", usd);
  if (usd >= 0.01 || usd <= 0) return fmt::format("${:.2f}", usd);
  if (usd < 1e-6) return fmt::format("${:.1e}", usd);
  const int decimals = std::min(8, 1 - static_cast<int>(std::floor(std::log10(usd))));
  // Two significant digits may round up to a cent ($0.0099999 -> 0.010): then it prints as cents.
  const double scale = std::pow(10.0, decimals);
  if (std::round(usd * scale) / scale >= 0.01) return "$0.01";
  return fmt::format("${:.{}f}", usd, decimals);
}

std::string format_rate(double samples_per_s) {
  return fmt::format("{:.{}f}", samples_per_s, samples_per_s < 10 ? 1 : 0);
}

std::optional<double> default_dataset_samples(const Prediction& p) {
  std::string id = p.request.dataset;
  if (id.empty()) {
    if (p.model_family == "cnn3d" || p.model_family == "segmentation3d") id = "ct-crops";
    // No dataset to assume: --dataset-size. A recommendation model's click log (Criteo's, tens of millions to
    // billions of samples) is none of the image sets in data/datasets.
    else if (p.sequence || p.model_family == "trace" || p.model_family == "recsys") return std::nullopt;
    else id = "imagenet";
  }
  return find_dataset(id).samples;
}

double cpu_package_power_w(const Prediction& p) {
  if (p.device.kind != DeviceKind::kCpu) return 0;
  // The catalog entry, not p.device.cpu: with --instances the prediction's spec may be one process's share of the part,
  // while the sockets draw their package power whichever way the processes split them.
  const CpuSpec* cpu = cpu_by_id(p.device.id);
  return cpu ? cpu->tdp_w * cpu->sockets : p.device.tdp_w;
}

std::string cpu_package_power_source(const Prediction& p) {
  if (p.device.kind != DeviceKind::kCpu) return "";
  const CpuSpec* cpu = cpu_by_id(p.device.id);
  return cpu ? cpu->source_of("tdp_w") : std::string();
}

RunCost run_cost(const Prediction& p, double samples, const InstanceType* inst, int instances, std::optional<double> pue) {
  const int gpus = p.scale ? p.scale->gpus_total : 1;
  return cost_of_run(p.device, gpus, samples, p.samples_per_s,
                     p.power ? p.power->avg_power_w * gpus : cpu_package_power_w(p), inst, instances, pue,
                     RunBasis::kWholeInstancesRented);
}

RunCost cost_of_run(const DeviceSpec& device, int gpus, double samples, double samples_per_s, double power_w,
                    const InstanceType* inst, int instances, std::optional<double> pue, RunBasis basis) {
  RunCost r;
  r.samples = samples;
  r.hours = samples_per_s > 0 ? samples / samples_per_s / 3600.0 : INFINITY;
  r.power_w = power_w;
  r.energy_kwh = r.power_w * r.hours / 1000.0;
  const bool whole = basis == RunBasis::kWholeInstancesRented;
  r.powered = powered_hardware(device, gpus, whole ? inst : nullptr, instances);
  r.server_energy_kwh = r.powered.server_w(r.power_w) * r.hours / 1000.0;
  r.pue = pue_for(inst ? inst->provider : "", pue);
  r.facility_energy_kwh = r.server_energy_kwh * r.pue;
  if (inst) {
    // Every instance of the run is billed the same hours, with its provider's minimum and increment.
    r.billed_hours = billed_hours(cloud_terms().provider(inst->provider), r.hours);
    const auto bill = [&](double usd_per_instance_hour) {
      return whole ? usd_per_instance_hour * instances * r.billed_hours
                   : r.billed_hours * gpus * (usd_per_instance_hour / inst->gpus);
    };
    r.usd = bill(inst->on_demand_usd_per_hour);
    if (inst->spot_usd_per_hour) r.spot_usd = bill(*inst->spot_usd_per_hour);
  }
  return r;
}

const InstanceType* cheapest_instance_for(const PriceCatalog& catalog, const std::string& gpu, int min_gpus) {
  const InstanceType* best = nullptr;
  for (const auto& i : catalog.instances)
    if (i.gpu == gpu && i.gpus >= min_gpus &&
        (!best || i.on_demand_usd_per_hour / i.gpus < best->on_demand_usd_per_hour / best->gpus))
      best = &i;
  return best;
}

std::optional<Rental> rent(const PriceCatalog& catalog, const std::string& gpu, int gpus_per_node, int nodes) {
  const InstanceType* best = nullptr;
  for (const auto& i : catalog.instances)
    if (i.gpu == gpu && i.gpus >= gpus_per_node &&
        (!best || i.on_demand_usd_per_hour < best->on_demand_usd_per_hour ||
         (i.on_demand_usd_per_hour == best->on_demand_usd_per_hour && i.gpus < best->gpus)))
      best = &i;
  if (!best) return std::nullopt;
  Rental r;
  r.instance = best;
  r.instances = std::max(1, nodes);
  r.usd_per_hour = best->on_demand_usd_per_hour * r.instances;
  if (best->spot_usd_per_hour) r.spot_usd_per_hour = *best->spot_usd_per_hour * r.instances;
  r.gpus_paid = best->gpus * r.instances;
  return r;
}

}  // namespace perfcast
