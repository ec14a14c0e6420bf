// Continuous batching as a discrete-event simulation: requests arrive (a Poisson stream or all at once), wait
// for KV-cache blocks and a place in the running batch, have their prompts prefilled (in chunks beside the running
// decodes when the engine chunks prefill) and then decode one token per engine step until done. A full KV cache
// preempts the newest running request (its blocks are freed and it is recomputed later, as vLLM does). With
// pipeline parallelism the engine runs one batch per pipeline stage in flight ("lanes", vLLM's virtual engines):
// each lane steps on its own while all lanes share the queue and the KV cache.
// The step time comes from the caller (the kernel costs of the batch's shape); the run is bounded by max_steps.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace perfcast {

struct ServedRequest {
  double arrival_s = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 1;
  std::int64_t cached_tokens = 0;  // prompt tokens found in the prefix cache (neither computed nor given new blocks)
};

// What one engine step computes: the decodes (one token each) and the prefill chunks of one lane's batch.
struct BatchShape {
  std::int64_t decode_seqs = 0;
  double decode_kv_tokens = 0;  // sum over the decoding sequences of the cached positions they read
  struct Chunk {
    std::int64_t tokens = 0;   // prompt tokens computed this step
    std::int64_t kv_end = 0;   // the sequence's positions after the step
  };
  std::vector<Chunk> prefills;
  std::int64_t tokens() const;       // decode_seqs + every chunk's tokens
  std::int64_t logits_rows() const;  // sequences that emit a token this step
  std::int64_t last_chunks = 0;      // chunks that finish their prompt (they emit the first token)
};

struct BatchingLimits {
  std::int64_t kv_blocks = 0;           // blocks in the KV pool (all lanes)
  std::int64_t block_tokens = 16;
  std::int64_t max_running = 256;       // requests in one lane's batch
  std::int64_t max_batched_tokens = 8192;
  bool chunked_prefill = true;
  bool mixed_batches = true;            // prompts and decodes share a step (else prompt steps come first, alone)
  int lanes = 1;                        // batches in flight (pipeline stages)
  std::int64_t max_steps = 10000000;    // the simulation stops here (reported as truncated)
  // A sliding-window model on an engine that frees the blocks leaving the window: the most blocks one request
  // holds (0 = no cap).
  std::int64_t max_blocks_per_request = 0;
  std::int64_t decode_window = 0;       // keys a decode step reads per sequence at most (0 = every cached one)
};

struct RequestTimes {
  double ttft_s = 0;   // arrival to first output token
  double tpot_s = 0;   // mean time between its output tokens after the first (0 for one-token outputs)
  double e2e_s = 0;    // arrival to last token
  bool done = false;
};

struct BatchingResult {
  std::vector<RequestTimes> requests;  // in input order
  double first_arrival_s = 0;
  double end_s = 0;                    // the last step's end
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  double mean_running = 0;             // requests in a step, averaged over steps
  std::int64_t peak_running = 0;       // the most requests running at once (all lanes)
  std::int64_t peak_kv_blocks = 0;
  bool truncated = false;              // max_steps reached before every request finished
};

// `step_s(shape)` gives the time of one step of one lane. InputError (via the caller) is never raised here:
// requests larger than the whole KV pool are refused by the caller before simulating.
BatchingResult simulate_continuous_batching(const std::vector<ServedRequest>& requests, const BatchingLimits& limits,
                                            const std::function<double(const BatchShape&)>& step_s);

}  // namespace perfcast
