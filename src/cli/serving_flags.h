// The flags of perfcast predict --mode serve (request stream, engine, latency targets).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/llm_serving.h"

namespace perfcast::cli {

struct ServingFlags {
  std::string engine;         // vllm | tensorrt-llm | sglang ("" = --runtime, vllm when that is the default)
  std::string request_rate;   // requests/s or inf
  std::string input_len, output_len, length_dist = "fixed", seed = "1", num_requests, prefix_cache_hit, max_batch;
  std::string slo_ttft, slo_tpot;
  // The serving request around `base` (predict's resolved flags); InputError naming the flag on a bad value.
  ServeRequest to_request(const PredictRequest& base, bool runtime_given) const;
  // The first serving flag given on the command line ("" when none): outside --mode serve it would be ignored.
  std::string first_given() const;
  // Each serving flag's name and CLI11 option, set by add_serving_flags (first_given reads their counts, so that a
  // flag given with its default value, --seed 1, counts as given).
  std::vector<std::pair<const char*, const CLI::Option*>> options;
};

void add_serving_flags(CLI::App& app, ServingFlags& f);

}  // namespace perfcast::cli
