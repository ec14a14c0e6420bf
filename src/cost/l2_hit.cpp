#include "cost/l2_hit.h"

#include <algorithm>

namespace perfcast {

namespace {

// The integral of l2_hit_share from 0 to x, for a ramp from a to b >= a.
double hit_integral(double x, double a, double b) {
  if (x <= a) return x;
  if (x >= b) return a + (b - a) / 2;
  const double over = x - a;
  return a + over - over * over / (2 * (b - a));
}

}  // namespace

L2HitRamp l2_hit_ramp(const KernelCostModel& km) {
  const double l2 = km.device().l2_bytes;
  return {l2 * km.arch().l2_reuse_full_fraction, l2 * km.arch().l2_reuse_zero_fraction};
}

double l2_hit_share(double distance, double full_bytes, double zero_bytes) {
  const double a = full_bytes, b = std::max(full_bytes, zero_bytes);
  if (distance <= a) return 1;
  if (distance >= b) return 0;
  return (b - distance) / (b - a);
}

double l2_reuse_share(double producer_bytes, double consumer_bytes, double full_bytes, double zero_bytes) {
  const double a = full_bytes, b = std::max(full_bytes, zero_bytes);
  const double lo = std::min(producer_bytes, consumer_bytes), hi = std::max(producer_bytes, consumer_bytes);
  if (hi - lo <= 1e-6 * hi) return l2_hit_share(hi, a, b);  // every line waits the same
  return std::clamp((hit_integral(hi, a, b) - hit_integral(lo, a, b)) / (hi - lo), 0.0, 1.0);
}

}  // namespace perfcast
