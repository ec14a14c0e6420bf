// The whole prediction for one (model, GPU, runtime, mode, precision, batch): step time, throughput,
// memory, and what bounds the step.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "cost/op_cost.h"
#include "device/device_spec.h"
#include "schedule/memory.h"
#include "schedule/step.h"

namespace perfcast {

struct PredictRequest {
  std::string gpu = "gtx-1080-ti";
  std::string model = "resnet50";
  std::string runtime = "pytorch";
  std::string mode = "train";       // train | infer
  std::string precision = "fp32";
  std::int64_t batch = 64;          // 0 = the largest batch that fits
  std::int64_t seq = 0;             // 0 = the model's default
  bool optimizer_step = true;
  std::optional<std::string> optimizer;  // sgd | adam | adamw | lamb; default by model family
};

struct Prediction {
  PredictRequest request;  // with batch and seq resolved
  DeviceSpec device;
  std::string model_description;
  bool sequence = false;
  std::int64_t params = 0;
  double flops_per_sample = 0;  // forward (+ backward in training) FLOPs per sample as executed
  std::string precision_note;
  StepCost step;
  MemoryBreakdown memory;
  double samples_per_s = 0;
  std::optional<double> tokens_per_s;
  std::array<double, static_cast<int>(Bound::kCount)> bound_us{};  // step time by what bounds it
  Bound primary = Bound::kMemory;
};

// Throws InputError for bad ids and values, UnsupportedError for valid requests this GPU cannot run.
Prediction predict(const PredictRequest& request);

// Validates the string arguments of a request without predicting (ids, mode, precision name).
void check_request(const PredictRequest& request);

}  // namespace perfcast
