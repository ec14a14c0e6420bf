#include "device/power_curve.h"

#include <cmath>

namespace perfcast {

double PowerCurve::at_clock(double f) const { return std::pow(f, clock_exponent); }

double PowerCurve::clock_at_power(double limit_w, double load_w) const {
  if (limit_w <= 0 || load_w <= limit_w) return 1.0;
  return std::pow(limit_w / load_w, 1.0 / clock_exponent);
}

double PowerCurve::charged_activity(Pipe pipe, double activity) const {
  return is_tensor_pipe(pipe) ? activity * tensor_power_fraction : activity;
}

}  // namespace perfcast
