// One CLI subcommand: it declares its flags on a CLI11 subcommand and runs after parsing. Commands only parse
// and print; every figure comes from the library.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
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

// What `perfcast --version` prints: "perfcast <version> (git <revision>)" and the data catalog's date and folder.
std::string version_text();

// Commands, one file each.
Command list_gpus_command();
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

// The flags shared by predict, advise, compare and plan, filled by CLI11 and turned into a request.
struct RequestFlags {
  PredictRequest request;
  std::string batch;  // "" = 64 for train/infer, 1 sequence for prefill/decode
  std::string precision;  // "" = fp32 for train/infer; serving: fp16 (f16 on llama.cpp, which runs GGUF types)
  std::string seq;
  std::string context;
  std::string lora_rank;
  std::string host_cores;
  std::string gpus = "1";
  std::string nodes = "1";
  std::string power_limit;
  std::string optimizer;
  std::vector<std::string> dims;  // name=value
  bool no_optimizer_step = false;
  bool fused_optimizer = false;    // --fused-optimizer
  bool unfused_optimizer = false;  // --unfused-optimizer
  std::string grad_accum;

  // Validated request; InputError naming the flag on a bad value.
  PredictRequest to_request() const;
};

// Declares the shared flags on `app` (gpu_required: compare takes a list instead).
void add_request_flags(CLI::App& app, RequestFlags& flags, bool with_gpu = true);

}  // namespace perfcast::cli
