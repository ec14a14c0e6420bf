// Limits on what perfcast reads (data/limits.toml): nesting depth, model and tensor sizes, graph and trace
// sizes, GPU and node counts. Readers check them before allocating, so hostile input is an InputError, never a
// crash, a hang or an exhausted memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace perfcast {

struct InputLimits {
  // [json]
  int max_nesting_depth = 0;          // arrays/objects inside each other in a JSON file
  // [model]: Hugging Face configs and zoo-like builders
  std::int64_t max_layers = 0;
  std::int64_t max_experts = 0;
  std::int64_t max_hidden_size = 0;
  std::int64_t max_intermediate_size = 0;
  std::int64_t max_heads = 0;
  std::int64_t max_vocab_size = 0;
  std::int64_t max_positions = 0;
  // [tensor]: ONNX graphs
  std::int64_t max_rank = 0;
  std::int64_t max_dim = 0;
  std::int64_t max_elements = 0;
  std::int64_t max_graph_nodes = 0;
  std::int64_t max_attribute_values = 0;
  std::int64_t max_window = 0;        // convolution/pool kernel, stride, dilation, padding
  std::int64_t max_file_bytes = 0;
  std::int64_t max_shape_inference_seconds = 0;  // libonnx shape inference, run in a child process
  // [trace]
  std::int64_t max_trace_bytes = 0;   // decompressed
  // [counts]
  std::int64_t max_gpus_per_node = 0;
  std::int64_t max_nodes = 0;
  std::int64_t max_batch = 0;
  std::int64_t max_seq = 0;
  std::int64_t max_config_rows = 0;
  // [serve]
  std::int64_t max_upload_bytes = 0;  // perfcast serve: largest request body
  double min_request_rate = 0;        // --mode serve --request-rate, requests per second
  std::int64_t max_serving_requests = 0;  // requests one --mode serve simulation may generate
  std::int64_t max_serving_steps = 0;     // engine steps one simulation runs before it stops (reported as truncated)
  // [run]: the training run compare and plan price
  std::int64_t max_dataset_samples = 0;   // --dataset-size
  std::int64_t max_epochs = 0;            // --epochs
  std::int64_t max_deadline_hours = 0;    // plan --deadline
  double max_pue = 0;                     // --pue (facility energy / IT energy)
  double max_usd_per_gpu_hour = 0;        // a price file's instance price per GPU
  // [messages]: error messages that echo input, held to a readable length where shown (core/echoed_values.h)
  std::size_t long_message_bytes = 0;  // messages up to this long are shown whole
  std::size_t long_quote_bytes = 0;    // a quoted span over this long is clipped ...
  std::size_t kept_quote_bytes = 0;    // ... to this many bytes and a note of how many were left out
  std::size_t max_message_bytes = 0;   // what is still longer is cut here
  // [anchor]: --measured / --measured-step
  double max_measured_over_peak = 0;      // implied FLOP/s over the fastest pipe's peak (Winograd's most saving)
};

// data/limits.toml, read once (InputError when it is missing or malformed).
const InputLimits& input_limits();

// InputError "<what> <value> exceeds the limit of <limit> (data/limits.toml <key>)" when value > limit.
void check_limit(std::string_view what, std::int64_t value, std::int64_t limit, std::string_view key);

// Overflow-checked arithmetic on sizes: InputError naming `what` when the exact result does not fit in 64 bits.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view what);

// A double read from a file as a 64-bit integer (truncated toward zero); `fallback` when it is not finite or
// outside the int64 range (casting those is undefined behaviour).
std::int64_t to_int64_or(double v, std::int64_t fallback);
// The same for int.
int to_int_or(double v, int fallback);

}  // namespace perfcast
