#include "device/power_curve.h"

#include <cmath>
#include <map>
#include <string>

#include "core/data_files.h"
#include "core/toml_reader.h"

namespace perfcast {

double PowerCurve::at_clock(double f) const { return std::pow(f, clock_exponent); }

double PowerCurve::clock_at_power(double limit_w, double load_w) const {
  if (limit_w <= 0 || load_w <= limit_w) return 1.0;
  return std::pow(limit_w / load_w, 1.0 / clock_exponent);
}

double PowerCurve::charged_activity(Pipe pipe, double activity) const {
  return is_tensor_pipe(pipe) ? activity * tensor_power_fraction : activity;
}

namespace {

std::map<int, PowerCurve> load_curves() {
  const auto path = data_dir() / "architectures.toml";
  const toml::table root = parse_toml_file(path);
  std::map<int, PowerCurve> out;
  for (const auto& [key, node] : root) {
    const auto* t = node.as_table();
    const std::string k(key.str());
    if (!t || k.rfind("sm_", 0) != 0) continue;
    const TomlFields f(*t, path.string() + " [" + k + "]");
    PowerCurve c;
    c.clock_exponent = f.number_or("power_clock_exponent", c.clock_exponent);
    c.tensor_power_fraction = f.number_or("tensor_power_fraction", c.tensor_power_fraction);
    out[std::stoi(k.substr(3))] = c;
  }
  return out;
}

}  // namespace

const PowerCurve& power_curve(int sm_version) {
  static const std::map<int, PowerCurve> curves = load_curves();
  static const PowerCurve fallback;
  const auto it = curves.find(sm_version);
  return it == curves.end() ? fallback : it->second;
}

}  // namespace perfcast
