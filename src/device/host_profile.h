// The host side of a step: the CPU that decodes and augments samples, and the dataset it reads.
// Loaded from data/hosts/*.toml, data/datasets/*.toml and data/input_pipeline.toml.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

struct HostProfile {
  std::string id;
  std::string name;
  int cores = 6;
  int threads = 12;
  double clock_ghz = 3.5;
  double smt_yield = 0.25;       // extra throughput of a second hardware thread per core
  double reserved_cores = 1;     // cores the framework itself keeps busy
  double storage_mb_per_s = 500;
  bool pinned_memory = true;
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

struct PipelineConstants {
  double decode_mpixels_per_s_per_core = 120;  // at 3.5 GHz
  double decoded_area_fraction_real = 0.77;
  double decoded_area_fraction_augmented = 0.55;
  double resize_ns_per_output_value = 1;
  double augment_ns_per_output_value = 8;
  double per_sample_overhead_us = 60;
  double resample_ns_per_voxel = 3;
  double copy_ns_per_voxel = 0.3;
  double pinned_efficiency = 0.8;
  double pageable_efficiency = 0.4;
};

// The default host when none is given: a 6-core desktop, what most single-GP102 boxes have.
inline constexpr std::string_view kDefaultHost = "desktop-6c";

const std::vector<HostProfile>& host_catalog();
const HostProfile& find_host(std::string_view id);
const std::vector<DatasetProfile>& dataset_catalog();
const DatasetProfile& find_dataset(std::string_view id);
const PipelineConstants& pipeline_constants();

}  // namespace perfcast
