// The host side of a step: the CPU that decodes and augments samples, and the dataset it reads.
// Loaded from data/hosts/*.toml, data/datasets/*.toml and data/input_pipeline.toml.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

// Every value comes from data/hosts/<id>.toml (no defaults here).
struct HostProfile {
  std::string id;
  std::string name;
  int cores = 0;
  int threads = 0;
  double clock_ghz = 0;
  double single_thread_score = 0;  // PassMark single-thread mark (or derived, as its file says): framework dispatch speed
  double smt_yield = 0;          // extra throughput of a second hardware thread per core
  double reserved_cores = 0;     // cores the framework itself keeps busy
  double storage_mb_per_s = 0;
  bool pinned_memory = false;
};

struct DatasetProfile {
  std::string id;
  std::string name;
  std::string kind;              // jpeg | volume | tokens
  double mean_source_pixels = 0; // jpeg
  double mean_file_bytes = 0;    // jpeg
  double voxels = 0;             // volume
  double bytes_per_voxel = 4;    // volume
  double samples = 0;            // one epoch
};

// data/input_pipeline.toml; every value is read from the file (no defaults here).
struct PipelineConstants {
  double reference_clock_ghz = 0;              // the host clock the per-sample rates below are quoted at
  double decode_mpixels_per_s_per_core = 0;    // at reference_clock_ghz
  double decoded_area_fraction_real = 0;
  double decoded_area_fraction_augmented = 0;
  double resize_ns_per_output_value = 0;
  double augment_ns_per_output_value = 0;
  double per_sample_overhead_us = 0;
  double resample_ns_per_voxel = 0;
  double copy_ns_per_voxel = 0;
  double pinned_efficiency = 0;
  double pageable_efficiency = 0;
};

const std::vector<HostProfile>& host_catalog();
const HostProfile& find_host(std::string_view id);
// The host of a request that names none (data/defaults.toml `host`, a data/hosts id).
const HostProfile& default_host();
// The host a request names, else the default host.
const HostProfile& host_or_default(std::string_view id);
const std::vector<DatasetProfile>& dataset_catalog();
const DatasetProfile& find_dataset(std::string_view id);
const PipelineConstants& pipeline_constants();

}  // namespace perfcast
