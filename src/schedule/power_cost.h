// A step's board power and energy: what apply_power (analysis/power.cpp) predicts for a data-parallel or single-GPU
// step and what a training layout (analysis/llm_parallel_prediction.cpp) predicts for its step. One struct owns
// these fields; Prediction and ParallelTrainingCost each hold one.
#pragma once

namespace perfcast {

struct PowerCost {
  double avg_power_w = 0;           // per GPU, averaged over the step
  double energy_per_step_j = 0;     // per GPU
  double clock_factor = 1;          // sustained clock / boost: the kernels' clocks averaged over their busy time
  double limit_w = 0;               // board power limit in force (TDP or --power-limit)
  double wait_power_w = 0;          // board power while waiting (communication, host, input): clocks up, no kernel
  double peak_power_w = 0;          // the most any kernel of the step draws (after the cap)
  double energy_per_sample_j = 0;   // all GPUs
  double samples_per_joule = 0;     // performance per watt: samples/s per W of all GPUs
  double busy_share = 0;            // share of the step the GPU runs kernels
};

}  // namespace perfcast
