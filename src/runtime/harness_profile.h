// How a measurement was timed (the harness column / --harness): the benchmark loop around the runtime, when it
// differs from the loop the runtime profile assumes. A harness sets what the loop adds to every step, its own
// host work and whether it waits for the GPU before the next step, and how it feeds real data (how many samples
// its input pipeline decodes at once, whether the step waits for its own input copy); the runtime's kernels,
// fusion and dispatch are unchanged. Loaded from data/harnesses/<id>.toml.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>
#include "runtime/per_tensor_optimizer.h"

namespace perfcast {

struct RuntimeProfile;

struct HarnessProfile {
  std::string id;
  std::string name;
  double host_step_us = 0;    // host work per step outside the runtime's launches (the loop, API calls, output copy)
  double syncs_per_step = 0;  // the loop waits for the GPU this often per step (a blocking output copy)
  int input_threads = 0;      // samples the loop's input pipeline prepares at once (tf.data num_parallel_calls); 0 = no cap
  bool input_copy_in_step = false;  // the input batch's host-to-device copy runs inside the timed step, not beside it
  PerTensorOptimizer per_tensor;  // its unfused optimizer's own per-tensor clip and update (0: none)
  std::map<std::string, std::string> sources;
};

const std::vector<HarnessProfile>& harness_catalog();

// InputError naming the nearest id when unknown.
const HarnessProfile& find_harness(std::string_view id);

// The runtime as the harness runs it: the harness's per-step host work and synchronisation replace the
// runtime's own (its loop is the one timed).
void apply_harness(RuntimeProfile& runtime, const HarnessProfile& harness);

}  // namespace perfcast
