// Rows of a configurations CSV (the columns of shared/validation/published.csv). Measured columns are read
// only on request (validation); prediction never sees them.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfcast {

struct ConfigRow {
  int line = 0;  // 1-based line in the file
  std::string error;  // "" or why the row could not be read (its other fields are then empty)
  std::string gpu, model, runtime, mode, precision, batch, seq, n_gpus, interconnect, data, optimizer_step;
  std::string runtime_version;         // optional column (notes are never read: a version must be stated here)
  std::string layout;                  // optional column: nchw (default) or nhwc (channels-last)
  std::string host, host_cores;        // optional columns: host CPU profile id (data/hosts) and cores feeding it
  // Columns a validation file left empty that its reader filled from data/defaults.toml
  // [unstated_in_measurements] ("host", "runtime_version"), not from the defaults `perfcast predict` gives a flag.
  std::vector<std::string> filled_from_unstated;
  std::string gpu_decode;              // optional column: yes when the input is decoded on the GPU (DALI/nvJPEG)
  std::string prefetch;                // optional column: yes when data=host batches are copied ahead (pinned)
  std::string context;                 // optional column: decode, tokens already in the KV cache
  std::string kv_precision;            // optional column: KV-cache type (fp16, fp8, q8_0, ...)
  std::string strategy;                // optional column: gradient reduction with n_gpus > 1 (ddp, horovod, ...)
  std::string fused_optimizer;         // optional column: yes/no, the optimizer runs as one fused update kernel
  std::string grad_accum;              // optional column: micro-batches per weight update (gradient accumulation)
  std::string attention;               // optional column: eager, sdpa or flash (Hugging Face attn_implementation)
  std::string parallel;                // optional column: LLM training layout, "tp=8 pp=4 zero=1 gb=512 recompute=full"
  std::string optimizer;               // optional column: sgd, adam, adamw or lamb (default: the model family's)
  std::string checkpointing;           // optional column: yes/no, activation checkpointing
  std::string seq_mean;                // optional column: mean real tokens per sequence run without padding (<= seq)
  std::string conv_algo;               // optional column: autotune | heuristic (cuDNN algorithm choice; "" = runtime's)
  std::string amp_o2;                  // optional column: yes when amp / amp-bf16 ran as apex amp O2 (half model, no autocast)
  std::string embedding_precision;     // optional column: precision of the tables, lookups and interaction (recsys)
  std::string llm_code;                // optional column: the eager LLM code (data/llm_code; "" = the runtime's)
  std::string harness;                 // optional column: how the row was timed (data/harnesses; "" = the runtime's loop)
  std::string instances;               // optional column: CPU processes of the model side by side ("" = 1)
  std::string cores;                   // optional column: CPU devices, physical cores one process runs on ("" = all)
  std::string numa_pages;              // optional column: CPU devices, where the pages of a process over several
                                       // sockets live (first-touch | balanced; "" = first-touch)
  std::string memory_measure;          // memory columns, read only with measurements: allocated, reserved or nvidia-smi
  std::optional<double> memory_mib;    //   the measured peak in MiB under that measure
  std::string oom;                     //   yes: the run did not fit in memory; no: it ran
  std::string notes;                   // optional free text describing the setup (never read by a prediction)
  std::string source;                  // optional: where a measurement was read (groups rows by source; never read by a prediction)
  std::string metric;                  // only when read with measurements
  std::optional<double> measured;      // only when read with measurements
};


// The setup a row describes, as a key: every input column but its notes and source, and its metric, the columns
// named in `skip` left out. Rows with equal keys differ only in the skipped columns (what-if pairs use it). How a
// row was timed (`harness`), how cuDNN chose its convolutions (`conv_algo`) and the eager LLM code (`llm_code`) are
// part of the setup; `amp_o2` and `embedding_precision` say how a half-precision run ran, so an FP32 row leaves
// them empty and they are not.
std::string setup_key(const ConfigRow& r, const std::vector<std::string_view>& skip);

// The reader columns no setup key holds: the measurement (metric stays: a row's metric is part of its setup), its
// notes, source and memory outcome, and how a half-precision run ran (an FP32 row leaves those empty).
inline constexpr auto kSetupKeyExclusions = std::to_array<std::string_view>(
    {"value", "notes", "source", "memory_mib", "memory_measure", "oom", "amp_o2", "embedding_precision"});

// One setup at two precisions (analysis/what_if_pairs.h precision_pairs, which `validate` and `validate --pairs` both
// report; with the batch skipped too for pairs at each run's batch): the keys skip the precision and what benchmarks
// choose with it: the layout (AMP channels-last), the gradient accumulation and fused optimizer of NVIDIA's recipes.
inline constexpr auto kPrecisionPairSkip =
    std::to_array<std::string_view>({"precision", "layout", "grad_accum", "fused_optimizer"});

// One setup on 1 and on N GPUs (analysis/what_if_pairs.h what_if_pairs, and the what-if spread's samples): the keys
// skip the GPU count and what a multi-GPU run adds with it (its interconnect and strategy; a 1-GPU row leaves them
// empty) and the gradient accumulation a recipe changes with the count.
inline constexpr auto kGpuCountPairSkip =
    std::to_array<std::string_view>({"n_gpus", "interconnect", "strategy", "grad_accum"});

// Every column the reader takes, in the order read_row assigns them: the configuration columns (config_columns) and
// the measurement ones (metric, value, notes, source, memory_mib, memory_measure, oom). The header check knows a
// column by this list too, so a column the reader takes is never called a typo.
inline constexpr auto kReaderColumns = std::to_array<const char*>({
    "gpu", "model", "runtime", "mode", "precision", "batch", "seq", "n_gpus", "interconnect", "data",
    "optimizer_step", "metric", "value", "runtime_version", "layout", "host", "host_cores", "gpu_decode", "prefetch",
    "context", "kv_precision", "strategy", "fused_optimizer", "grad_accum", "attention", "parallel", "notes",
    "source", "optimizer", "checkpointing", "memory_mib", "memory_measure", "oom", "seq_mean", "conv_algo", "amp_o2",
    "harness", "embedding_precision", "llm_code", "instances", "cores", "numa_pages"});

// The columns every configurations file carries, in output order.
const std::vector<std::string>& config_columns();

// InputError naming the file on a missing file or a missing required column; a row that cannot be split into the
// header's columns comes back with its `error` set, so that the other rows still run.
std::vector<ConfigRow> read_config_csv(const std::filesystem::path& path, bool with_measurements);
// The same rows handed to `fn` one at a time as they are read (a file of any length in constant memory).
void for_each_config_row(const std::filesystem::path& path, bool with_measurements,
                         const std::function<void(ConfigRow&&)>& fn);

}  // namespace perfcast
