#include "schedule/input_pipeline.h"

#include <algorithm>

#include "cost/cost_constants.h"
#include "device/host_profile.h"

namespace perfcast {

namespace {

// Host microseconds of one core to prepare one sample.
double per_sample_us(const DatasetProfile& d, const HostProfile& h, const PipelineConstants& c, bool augmented,
                     double out_values) {
  const double clock_scale = h.clock_ghz / c.reference_clock_ghz;  // the rates are quoted at this clock
  if (d.kind == "jpeg") {
    const double area = augmented ? c.decoded_area_fraction_augmented : c.decoded_area_fraction_real;
    const double decode_us = d.mean_source_pixels * area / (c.decode_mpixels_per_s_per_core * clock_scale);
    const double resize_us = out_values * c.resize_ns_per_output_value / 1e3 / clock_scale;
    const double augment_us = augmented ? out_values * c.augment_ns_per_output_value / 1e3 / clock_scale : 0.0;
    return decode_us + resize_us + augment_us + c.per_sample_overhead_us;
  }
  if (d.kind == "volume") {
    const double per_voxel_ns = c.copy_ns_per_voxel + (augmented ? c.resample_ns_per_voxel : 0.0);
    return d.voxels * per_voxel_ns / 1e3 / clock_scale + c.per_sample_overhead_us;
  }
  return c.per_sample_overhead_us;  // token ids: batching only
}

double file_bytes(const DatasetProfile& d) {
  if (d.kind == "jpeg") return d.mean_file_bytes;
  if (d.kind == "volume") return d.voxels * d.bytes_per_voxel;
  return 0;
}

}  // namespace

std::optional<InputPipelineCost> input_pipeline_cost(const InputPipelineRequest& r, const DeviceSpec& device,
                                                     const Graph& graph, double gpu_step_us) {
  if (r.data == "synthetic") return std::nullopt;
  // data=host: batches already sit in host memory as tensors (no decoding), copied to the GPU every step.
  const bool host_tensors = r.data == "host";
  const std::string dataset_id = host_tensors ? "" : r.dataset.empty() ? r.default_dataset : r.dataset;
  const HostProfile& host = host_or_default(r.host);
  const PipelineConstants& c = pipeline_constants();
  InputPipelineCost in;
  in.host = host.id;
  in.cores = r.host_cores > 0 ? r.host_cores : host.cores;
  const double batch = static_cast<double>(r.batch);
  if (!dataset_id.empty()) {
    const DatasetProfile& d = find_dataset(dataset_id);
    const bool augmented = r.data == "real-augmented";
    const double out_values = static_cast<double>(graph.input_elems_per_sample);
    in.decode_ms_per_sample = per_sample_us(d, host, c, augmented, out_values) / 1e3;
    if (r.gpu_decode && d.kind == "jpeg") {
      // Decode and augmentation move to the GPU: the host keeps reading and batching, the GPU step grows.
      in.decode_ms_per_sample = c.per_sample_overhead_us / 1e3;
      in.gpu_decode_us = batch * d.mean_source_pixels / 1e6 * cost_constants().gpu_decode_us_per_mpixel;
    }
    // Usable cores: the requested ones minus the framework's own, plus what hyper-threads add.
    const double threads_per_core = std::min(2.0, static_cast<double>(host.threads) / host.cores);
    double usable = std::max(0.5, in.cores - host.reserved_cores) * (1.0 + host.smt_yield * (threads_per_core - 1.0));
    // A pipeline that runs a fixed number of samples at once (tf.data map with num_parallel_calls = N) keeps at
    // most N cores decoding, however many the host has.
    if (r.max_threads > 0) usable = std::min(usable, static_cast<double>(r.max_threads));
    in.dataset_kind = d.kind;
    double rate = usable / (in.decode_ms_per_sample * 1e-3);
    in.limited_by = "cpu";
    if (file_bytes(d) > 0 && host.storage_mb_per_s * 1e6 / file_bytes(d) < rate) {
      rate = host.storage_mb_per_s * 1e6 / file_bytes(d);
      in.limited_by = "storage";
    }
    in.host_samples_per_s = rate;
  } else {
    in.host_samples_per_s = 1e12;
  }
  // Host-to-device copy of the prepared batch (float32 values) over the GPU's PCIe link.
  const double lane_gbps = device.pcie_gen >= 5 ? 3.94 : device.pcie_gen == 4 ? 1.97 : device.pcie_gen == 3 ? 0.985 : 0.5;
  // A plain host tensor is pageable memory; prefetching loaders copy from pinned staging buffers.
  const bool pinned = r.pinned_memory.value_or(host_tensors ? r.prefetch : host.pinned_memory);
  const double link = lane_gbps * device.pcie_lanes * 1e9 * (pinned ? c.pinned_efficiency : c.pageable_efficiency);
  in.h2d_ms = batch * static_cast<double>(graph.input_elems_per_sample) * 4.0 / link * 1e3;
  if (host_tensors && !r.prefetch) {
    // `x.cuda()`, feed_dict, NDArrayIter: a blocking copy from pageable memory before the step's first kernel
    // (cudaMemcpy from pageable memory returns only when the copy is done: CUDA programming guide, 'Host-device
    // transfers'), so it adds to every step instead of overlapping it.
    in.serial_copy = true;
    in.limited_by = "copy";
    in.step_ms = in.h2d_ms;  // added to the GPU step, not overlapped with it
    in.bound = false;
    return in;
  }
  const double node_batch = batch * static_cast<double>(std::max(1, r.gpus));
  if (r.copy_in_step) {
    // Decoding still runs ahead of the step (prefetching), but the batch's copy to the GPU is part of the step:
    // the first kernel waits for it (TF1 Estimator evaluation feeds the iterator's host tensor to the GPU graph
    // without a staging area). The step is the copy plus the GPU's work, or the decoding if that is slower.
    in.serial_copy = true;
    in.step_ms = node_batch / in.host_samples_per_s * 1e3;
    in.bound = in.step_ms * 1e3 > gpu_step_us + in.h2d_ms * 1e3;
    return in;
  }
  // Prefetching overlaps decode and copy with the GPU step: the slower stage sets the pace. The host feeds
  // every GPU of its node.
  in.step_ms = std::max(node_batch / in.host_samples_per_s * 1e3, in.h2d_ms);
  in.bound = in.step_ms * 1e3 > gpu_step_us;
  return in;
}

}  // namespace perfcast
