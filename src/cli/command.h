// One CLI subcommand: it declares its flags on a CLI11 subcommand and runs after parsing. Commands only parse
// and print; every figure comes from the library.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.h"

namespace perfcast::cli {

struct Command {
  std::string name;
  std::string help;
  // Declares the flags on `app`; returns what to run once parsing succeeded (exit code).
  std::function<std::function<int()>(CLI::App& app)> setup;
};

// Every command, in the order `perfcast --help` lists them.
std::vector<Command> commands();

// Parses `argv` (argv[0] is the program's name) and runs its command as `perfcast` does, returning the exit code;
// bad input is an InputError for the caller to print (cli/main.cpp) or hand on (cli/api.h). src/cli/run.cpp.
int run_command_line(const std::vector<std::string>& argv);

// Where commands print their report (and CLI11 its help): std::cout, unless this thread has set another stream, so
// that concurrent in-process runs (the API, perfcast serve) each capture their own output.
std::ostream& report_out();
// Sets this thread's report stream (nullptr: std::cout again) and returns the previous one.
std::ostream* set_report_out(std::ostream* out);

// What `perfcast --version` prints: "perfcast <version> (git <revision>)" and the data catalog's date and folder.
std::string version_text();

// Commands, one file each.
Command list_gpus_command();
Command list_cpus_command();
Command list_models_command();
Command list_runtimes_command();
Command predict_command();
Command validate_command();
Command advise_command();
Command export_command();
Command compare_command();
Command plan_command();
Command trace_command();
Command op_command();
Command fit_kernels_command();
Command predict_kernels_command();
Command fit_tensor_gemm_command();
Command fit_intervals_command();
Command monitor_command();
Command serve_command();

// One command's defaults for the shared request flags: the help text prints them and the request takes them, so
// that what `--help` says is what runs. A flag the user gives replaces its own default and nothing else.
struct RequestDefaults {
  std::string gpu;
  std::string model;
  std::string mode;
  std::string runtime;
  std::string data;
  std::string host;          // "" = the default host profile
  std::string train_batch;   // --mode train/infer without --batch ("max" = the largest that fits)
  std::string batch_help;    // how the help text words the batch default
  // advise's scenario: train_batch, data and host belong to its default model; with another --model they are
  // predict's (so that `advise --model resnet50` and `predict --model resnet50` agree), while --gpu, --runtime or
  // --precision keep the scenario.
  bool scenario = false;
};

// predict (and the commands that take its flags): ResNet-50 training on a GTX 1080 Ti, synthetic data, batch 64.
const RequestDefaults& predict_defaults();
// advise, and perfcast without a command: the lung-nodule scenario (nodule3d on a GTX 1080 Ti, PyTorch, CT crops
// read and augmented on an 8-vCPU cloud host, batch 4).
const RequestDefaults& advise_defaults();
// compare and plan: as predict, but each GPU trains at the largest batch that fits it.
const RequestDefaults& fleet_defaults();

// The flags shared by predict, advise, compare and plan, filled by CLI11 and turned into a request.
struct RequestFlags {
  PredictRequest request;
  RequestDefaults defaults = predict_defaults();
  const CLI::Option* data_option = nullptr;  // to tell a --data the user gave from the default
  const CLI::Option* host_option = nullptr;
  const CLI::Option* gpu_option = nullptr;  // --gpu, to refuse it beside --device
  std::vector<const CLI::Option*> not_for_serving;  // flags --mode serve does not read, tagged where declared
  std::string device;  // --device: a GPU or a CPU id (replaces --gpu)
  std::string mode = "train";  // --mode, parsed by to_request (add_request_flags sets the command's default)
  std::string batch;  // "" = defaults.train_batch for train/infer, 1 sequence for prefill/decode
  std::string precision;  // "" = fp32 for train/infer; serving: fp16 (f16 on llama.cpp, which runs GGUF types)
  std::string seq;
  std::string context;
  std::string max_positions;
  std::string lora_rank;
  std::string host_cores;
  std::string instances;  // --instances: processes of the model on one CPU ("" = 1)
  std::string cores;      // --cores: physical cores one CPU process runs on ("" = all, or cores / instances)
  std::string numa_pages;  // --numa-pages: first-touch | balanced ("" = first-touch)
  std::string gpus = "1";
  std::string nodes = "1";
  std::string power_limit;
  std::string optimizer;
  std::vector<std::string> dims;  // name=value
  bool no_optimizer_step = false;
  bool fused_optimizer = false;    // --fused-optimizer
  bool unfused_optimizer = false;  // --unfused-optimizer
  std::string grad_accum;
  std::string seq_mean;
  // Parallel LLM training layout (--tp --pp --dp --ep --cp --vpp --zero --micro-batch --global-batch --train-tokens).
  std::string tp, pp, dp, ep, cp, vpp, zero, micro_batch, global_batch, train_tokens;
  bool sequence_parallel = false, no_sequence_parallel = false, overlap_grad_reduce = false;

  // Validated request; InputError naming the flag on a bad value.
  PredictRequest to_request() const;
};

// Declares the shared flags on `app` with the command's defaults (with_gpu false: compare takes a list instead).
void add_request_flags(CLI::App& app, RequestFlags& flags, const RequestDefaults& defaults, bool with_gpu = true);

// --json, --lang and --html, on every command that reports.
struct ReportFlags {
  bool json = false;
  std::string lang = "en";
  std::string html;  // also write the report as one self-contained HTML page here
};
void add_report_flags(CLI::App& app, ReportFlags& flags);

// --measured / --measured-step: the user's own measurement of the configuration (analysis/anchor.h).
// `not_for_serving`, when given, receives both flags (they anchor one step, not a request stream).
void add_measured_flags(CLI::App& app, std::string& measured, std::string& measured_step,
                        std::vector<const CLI::Option*>* not_for_serving = nullptr);

// --configs predicts each row from its own columns (`columns` says which): any other flag given beside it, except
// --out and --lang, would change no row, so it is an InputError naming the flag rather than silently ignored.
void refuse_flags_beside_configs(const CLI::App& app, const std::string& columns);

}  // namespace perfcast::cli
