// Host input pipeline of a training/inference step: read, decode, augment and copy each sample while the GPU
// runs the previous step (prefetching overlaps the two), so the step takes the longer of the GPU step and the
// pipeline's time. A stage over the costed step: it takes the step's time and returns its own cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "device/device_spec.h"
#include "graph/graph.h"

namespace perfcast {

// Host-side input pipeline of a training/inference step (absent for synthetic data).
struct InputPipelineCost {
  std::string host;             // host profile id
  std::string dataset_kind;     // jpeg | volume | tokens
  std::string limited_by;       // cpu | storage
  int cores = 0;
  double decode_ms_per_sample = 0;  // per core
  double host_samples_per_s = 0;    // all cores
  double h2d_ms = 0;                // input copy per step over PCIe
  bool serial_copy = false;         // the step waits for the copy (data=host without prefetch, or the harness's
                                    // copy inside the step): not overlapped
  double step_ms = 0;               // time the pipeline needs per step (with a serial copy: decoding alone)
  bool bound = false;               // the pipeline, not the GPU, sets the step time
  double gpu_decode_us = 0;         // GPU time decoding on the GPU adds to the step (--gpu-decode on images)

  // Milliseconds the host pipeline needs to decode `samples` (one node's batch); 0 where it does not decode.
  double decode_ms(double samples) const { return host_samples_per_s > 0 ? samples / host_samples_per_s * 1e3 : 0.0; }
};

// What the pipeline stage needs from the request.
struct InputPipelineRequest {
  std::string data = "synthetic";     // synthetic | host | real | real-augmented
  bool prefetch = false;              // data=host: copies from pinned buffers overlap the step
  std::string host;                   // host profile id ("" = the default host)
  int host_cores = 0;                 // 0 = the host profile's
  std::string dataset;                // dataset profile id ("" = default_dataset)
  std::string default_dataset;        // the model family's dataset ("" for sequence models)
  bool gpu_decode = false;            // decode/augment on the GPU
  std::optional<bool> pinned_memory;  // override the host profile's pinned/pageable buffers
  std::int64_t batch = 1;             // samples per GPU per step
  int gpus = 1;                       // GPUs per node the host feeds
  int max_threads = 0;                // the harness's pipeline prepares this many samples at once (0 = every core)
  bool copy_in_step = false;          // the harness copies each batch inside the timed step (no staging)
};

// The pipeline's cost for one GPU step of `gpu_step_us` (the costed step before the pipeline), or nullopt for
// synthetic data. `bound` compares the pipeline with that step.
std::optional<InputPipelineCost> input_pipeline_cost(const InputPipelineRequest& r, const DeviceSpec& device,
                                                     const Graph& graph, double gpu_step_us);

}  // namespace perfcast
