// Rows of a serving measurements file (data/validation/llm_serving.csv): a published serving benchmark's setup
// (engine, GPU, model, precision, tensor/pipeline degrees, lengths, request rate) and what it measured.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace perfcast {

struct ServingRow {
  int line = 0;
  std::string source, url, engine, engine_version, gpu, model, precision, kv_precision;
  std::string tp, pp, input_len, output_len, length_dist, num_requests, request_rate, max_batch;
  std::string metric;  // output_tokens_per_s | requests_per_s | ttft_p50_ms | ttft_p99_ms | tpot_p50_ms | tpot_p99_ms
  double measured = 0;
  std::string notes;
};

// InputError naming the file and line on a missing file, a missing column, a row of the wrong width or a
// measurement that is not a positive number.
std::vector<ServingRow> read_serving_csv(const std::filesystem::path& path);
// True when the file's header has the serving columns (input_len, output_len, engine): perfcast validate
// checks such a file with --mode serve predictions.
bool is_serving_measurements(const std::filesystem::path& path);

}  // namespace perfcast
