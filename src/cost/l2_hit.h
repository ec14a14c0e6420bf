// How much of a re-read still finds its lines in L2 after other traffic: the architecture's ramp
// (data/architectures.toml l2_reuse_full_fraction, l2_reuse_zero_fraction; docs/kernel-model.md, "Reuse in L2
// between kernels"). One definition for a row kernel re-reading its row (cost/row_kernels.cpp) and a kernel reading
// what the kernel before it wrote (schedule/l2_reuse.cpp).
#pragma once

#include "cost/kernel_cost.h"

namespace perfcast {

// The ramp on one device, in bytes of other traffic between a line's write (or first read) and its re-read.
struct L2HitRamp {
  double full_bytes = 0;  // every line still hits at or below this
  double zero_bytes = 0;  // none hits at or beyond this
};

// km's device L2 times its architecture's fractions; zero where the architecture has no measured fractions.
L2HitRamp l2_hit_ramp(const KernelCostModel& km);

// Share of lines that hit after `distance` bytes of other traffic: 1 up to full_bytes, 0 from zero_bytes (or from
// full_bytes where zero_bytes is not above it), linearly between.
double l2_hit_share(double distance, double full_bytes, double zero_bytes);

// Share of a tensor written by one kernel (moving `producer_bytes` in all) that the next kernel (moving
// `consumer_bytes`) finds in L2, both walking it in the same order: the line written at fraction f of the producer
// is read after (1 - f) x producer_bytes + f x consumer_bytes of other traffic, and hits as l2_hit_share says. The
// share is the mean over f.
double l2_reuse_share(double producer_bytes, double consumer_bytes, double full_bytes, double zero_bytes);

}  // namespace perfcast
