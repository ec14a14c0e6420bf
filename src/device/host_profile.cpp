#include "device/host_profile.h"

#include <filesystem>

#include "core/data_files.h"
#include "core/error.h"
#include "core/find_by_id.h"
#include "core/toml_folder.h"
#include "core/toml_reader.h"

namespace perfcast {

namespace {

HostProfile load_host(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  TomlFields f(t, "host file '" + path.string() + "'");
  HostProfile h;
  h.id = f.text("id");
  h.name = f.text("name");
  h.cores = f.count("cores");
  h.threads = f.count("threads");
  h.clock_ghz = f.number("clock_ghz");
  h.single_thread_score = f.number("single_thread_score");
  h.smt_yield = f.number("smt_yield");
  h.reserved_cores = f.number("reserved_cores");
  h.storage_mb_per_s = f.number("storage_mb_per_s");
  h.pinned_memory = f.boolean("pinned_memory");
  if (h.cores <= 0 || h.clock_ghz <= 0) f.fail("cores", "and clock_ghz must be positive");
  if (!(h.single_thread_score > 0) || h.single_thread_score > 1e6) f.fail("single_thread_score", "must be positive");
  f.has("sources");  // free text, read by no prediction
  f.refuse_unknown_keys();
  return h;
}

DatasetProfile load_dataset(const std::filesystem::path& path) {
  const toml::table t = parse_toml_file(path);
  TomlFields f(t, "dataset file '" + path.string() + "'");
  DatasetProfile d;
  d.id = f.text("id");
  d.name = f.text("name");
  d.kind = f.text("kind");
  d.mean_source_pixels = f.number_or("mean_source_pixels", 0);
  d.mean_file_bytes = f.number_or("mean_file_bytes", 0);
  d.voxels = f.number_or("voxels", 0);
  d.bytes_per_voxel = f.number_or("bytes_per_voxel", 4);
  d.samples = f.number("samples");
  if (d.kind != "jpeg" && d.kind != "volume" && d.kind != "tokens") f.fail("kind", "must be jpeg, volume or tokens");
  f.has("sources");  // free text, read by no prediction
  f.refuse_unknown_keys();
  return d;
}

PipelineConstants load_constants() {
  const auto path = data_dir() / "input_pipeline.toml";
  const toml::table root = parse_toml_file(path);
  TomlFields top(root, path.string());
  TomlFields j(top.table("jpeg"), path.string() + " [jpeg]");
  TomlFields v(top.table("volume"), path.string() + " [volume]");
  TomlFields x(top.table("transfer"), path.string() + " [transfer]");
  TomlFields ref(top.table("reference"), path.string() + " [reference]");
  PipelineConstants c;
  c.reference_clock_ghz = ref.number("clock_ghz");
  c.decode_mpixels_per_s_per_core = j.number("decode_mpixels_per_s_per_core");
  c.decoded_area_fraction_real = j.number("decoded_area_fraction_real");
  c.decoded_area_fraction_augmented = j.number("decoded_area_fraction_augmented");
  c.resize_ns_per_output_value = j.number("resize_ns_per_output_value");
  c.augment_ns_per_output_value = j.number("augment_ns_per_output_value");
  c.per_sample_overhead_us = j.number("per_sample_overhead_us");
  c.resample_ns_per_voxel = v.number("resample_ns_per_voxel");
  c.copy_ns_per_voxel = v.number("copy_ns_per_voxel");
  c.pinned_efficiency = x.number("pinned_efficiency");
  c.pageable_efficiency = x.number("pageable_efficiency");
  for (const TomlFields* section : {&j, &v, &x, &ref}) {
    section->has("sources");
    section->refuse_unknown_keys();
  }
  return c;
}

}  // namespace

const std::vector<HostProfile>& host_catalog() {
  static const auto all = load_toml_folder<HostProfile>(data_dir() / "hosts", load_host);
  return all;
}

const HostProfile& find_host(std::string_view id) { return find_by_id(host_catalog(), id, "host"); }

const HostProfile& default_host() {
  static const HostProfile& host = [] () -> const HostProfile& {
    const auto path = data_dir() / "defaults.toml";
    const toml::table t = parse_toml_file(path);
    TomlFields f(t, path.string());
    const std::string id = f.text("host");
    try {
      return find_host(id);
    } catch (const InputError& e) {
      f.fail("host", std::string("names no data/hosts profile: ") + e.what());
    }
  }();
  return host;
}

const HostProfile& host_or_default(std::string_view id) { return id.empty() ? default_host() : find_host(id); }

const std::vector<DatasetProfile>& dataset_catalog() {
  static const auto all = load_toml_folder<DatasetProfile>(data_dir() / "datasets", load_dataset);
  return all;
}

const DatasetProfile& find_dataset(std::string_view id) { return find_by_id(dataset_catalog(), id, "dataset"); }

const PipelineConstants& pipeline_constants() {
  static const PipelineConstants c = load_constants();
  return c;
}

}  // namespace perfcast
