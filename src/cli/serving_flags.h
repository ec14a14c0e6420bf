// The flags of perfcast predict --mode serve (request stream, engine, latency targets).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "analysis/llm_serving.h"

namespace perfcast::cli {

struct ServingFlags {
  std::string engine;         // vllm | tensorrt-llm | sglang ("" = --runtime, vllm when that is the default)
  std::string request_rate;   // requests/s or inf
  std::string input_len, output_len, length_dist = "fixed", seed = "1", num_requests, prefix_cache_hit, max_batch;
  std::string slo_ttft, slo_tpot;
  // The serving request around `base` (predict's resolved flags); InputError naming the flag on a bad value.
  ServeRequest to_request(const PredictRequest& base, bool runtime_given) const;
  // The first serving flag given with a value of its own ("" when none): outside --mode serve it would be ignored.
  std::string first_given() const;
};

void add_serving_flags(CLI::App& app, ServingFlags& f);

}  // namespace perfcast::cli
