#include "schedule/continuous_batching.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>

namespace perfcast {

std::int64_t BatchShape::tokens() const {
  std::int64_t t = decode_seqs;
  for (const auto& c : prefills) t += c.tokens;
  return t;
}

std::int64_t BatchShape::logits_rows() const { return decode_seqs + last_chunks; }

namespace {

struct Live {
  std::int64_t target = 0;     // prompt positions to hold before decoding (input, plus output already made when recomputed)
  std::int64_t cache = 0;      // positions in the KV cache
  std::int64_t shared = 0;     // of those, prefix-cache positions on blocks this request does not own
  std::int64_t generated = 0;  // output tokens so far
  std::int64_t blocks = 0;     // pool blocks it owns
  bool first_token = false;
};

// Blocks a request owns at `positions`: all it has filled, or the window's cap (its last `cap` blocks) where the
// engine frees the blocks that leave it. The prefix-cache blocks it shares are not its own; they are its first
// blocks, so only those still inside the window come off the count.
std::int64_t blocks_for(std::int64_t positions, std::int64_t shared, std::int64_t block, std::int64_t cap) {
  const std::int64_t held = (positions + block - 1) / block;
  const std::int64_t kept = cap > 0 ? std::min(held, cap) : held;
  const std::int64_t shared_kept = std::max<std::int64_t>(0, shared / block - (held - kept));
  return std::max<std::int64_t>(0, kept - shared_kept);
}

}  // namespace

BatchingResult simulate_continuous_batching(const std::vector<ServedRequest>& requests, const BatchingLimits& limits,
                                            const std::function<double(const BatchShape&)>& step_s) {
  BatchingResult out;
  const std::size_t n = requests.size();
  out.requests.resize(n);
  if (n == 0) return out;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return requests[a].arrival_s < requests[b].arrival_s; });
  out.first_arrival_s = requests[order.front()].arrival_s;

  const std::int64_t block = std::max<std::int64_t>(1, limits.block_tokens);
  std::int64_t free_blocks = limits.kv_blocks;
  std::vector<Live> live(n);
  std::deque<std::size_t> waiting;
  std::size_t next_arrival = 0, finished = 0;
  struct Lane {
    double free_at = 0;
    std::vector<std::size_t> running;
  };
  std::vector<Lane> lanes(static_cast<std::size_t>(std::max(1, limits.lanes)));
  for (auto& l : lanes) l.free_at = out.first_arrival_s;
  double running_sum = 0;
  std::int64_t running_now = 0;
  const double inf = std::numeric_limits<double>::infinity();

  auto release = [&](std::size_t r) {
    free_blocks += live[r].blocks;
    live[r].blocks = 0;
  };
  auto preempt = [&](Lane& lane) {
    const std::size_t r = lane.running.back();
    lane.running.pop_back();
    --running_now;
    release(r);
    Live& x = live[r];
    x.target = requests[r].input_tokens + x.generated;  // recomputed from its prompt and what it has output
    x.shared = std::min(requests[r].cached_tokens, std::max<std::int64_t>(0, x.target - 1));
    x.cache = x.shared;
    waiting.push_front(r);
    ++out.preemptions;
  };

  while (finished < n) {
    if (out.steps >= limits.max_steps) {
      out.truncated = true;
      break;
    }
    auto lane_it = std::min_element(lanes.begin(), lanes.end(), [](const Lane& a, const Lane& b) { return a.free_at < b.free_at; });
    Lane& lane = *lane_it;
    const double now = lane.free_at;
    while (next_arrival < n && requests[order[next_arrival]].arrival_s <= now) {
      const std::size_t r = order[next_arrival++];
      Live& x = live[r];
      x.target = requests[r].input_tokens;
      x.shared = std::min(requests[r].cached_tokens, std::max<std::int64_t>(0, x.target - 1));
      x.cache = x.shared;
      waiting.push_back(r);
    }

    BatchShape shape;
    std::int64_t budget = limits.max_batched_tokens;
    std::vector<std::pair<std::size_t, std::int64_t>> chunks;  // (request, tokens)
    std::vector<std::size_t> decodes;
    // Decodes: one token each, a new block when the last one is full (preempting the newest when none is free).
    auto schedule_decodes = [&] {
      for (std::size_t i = 0; i < lane.running.size() && budget > 0; ++i) {
        const std::size_t r = lane.running[i];
        Live& x = live[r];
        if (x.cache < x.target) continue;  // still prefilling
        const std::int64_t need = blocks_for(x.cache + 1, x.shared, block, limits.max_blocks_per_request) - x.blocks;
        bool preempted_self = false;
        while (need > free_blocks) {
          preempted_self = lane.running.back() == r;
          preempt(lane);
          if (preempted_self) break;
        }
        if (preempted_self) break;
        free_blocks -= need;
        x.blocks += need;
        decodes.push_back(r);
        const std::int64_t keys = x.cache + 1;
        shape.decode_kv_tokens += static_cast<double>(limits.decode_window > 0 ? std::min(keys, limits.decode_window) : keys);
        --budget;
      }
      shape.decode_seqs = static_cast<std::int64_t>(decodes.size());
    };
    // Prompts: those already running continue their chunks, then new requests join while blocks, room and the
    // token budget allow.
    auto schedule_prefill = [&](std::size_t r) {
      Live& x = live[r];
      const std::int64_t remaining = x.target - x.cache;
      // A prompt longer than a whole step's budget runs in chunks even where the engine does not chunk by
      // default: engines refuse such a prompt otherwise (vLLM: "exceeds limit of max_num_batched_tokens"), so a
      // run that served it had chunking on.
      const bool chunked = limits.chunked_prefill || remaining > limits.max_batched_tokens;
      if (!chunked && remaining > budget) return false;
      const std::int64_t chunk = chunked ? std::min(remaining, budget) : remaining;
      if (chunk <= 0) return false;
      const std::int64_t need = blocks_for(x.cache + chunk, x.shared, block, limits.max_blocks_per_request) - x.blocks;
      if (need > free_blocks) return false;
      free_blocks -= need;
      x.blocks += need;
      chunks.push_back({r, chunk});
      budget -= chunk;
      return true;
    };
    auto schedule_prefills = [&] {
      for (const std::size_t r : lane.running)
        if (budget > 0 && live[r].cache < live[r].target) schedule_prefill(r);
      while (!waiting.empty() && budget > 0 && static_cast<std::int64_t>(lane.running.size()) < limits.max_running) {
        const std::size_t r = waiting.front();
        if (!schedule_prefill(r)) break;
        waiting.pop_front();
        lane.running.push_back(r);
        ++running_now;
      }
    };
    if (limits.mixed_batches) {
      schedule_decodes();
      schedule_prefills();
    } else {
      // Engines that run prompts and decodes as separate steps (vLLM V0, SGLang without mixed chunks) take
      // waiting prompts first and decode when none can start.
      schedule_prefills();
      if (chunks.empty()) schedule_decodes();
    }
    for (const auto& [r, t] : chunks) {
      const bool last = live[r].cache + t >= live[r].target;
      shape.prefills.push_back({t, live[r].cache + t});
      if (last) ++shape.last_chunks;
    }

    if (decodes.empty() && chunks.empty()) {
      // Nothing this lane can run now: wait for the next arrival or for another lane to free blocks.
      double wake = next_arrival < n ? requests[order[next_arrival]].arrival_s : inf;
      for (const auto& other : lanes)
        if (&other != &lane && !other.running.empty()) wake = std::min(wake, other.free_at);
      if (wake == inf || wake <= now) {
        if (wake <= now) {  // another lane steps at this same instant: let it go first
          lane.free_at = std::nextafter(now, inf);
          continue;
        }
        out.truncated = true;  // nothing can ever run (a request larger than the pool): the caller prevents this
        break;
      }
      lane.free_at = wake;
      continue;
    }

    const double end = now + step_s(shape);
    ++out.steps;
    running_sum += static_cast<double>(running_now);
    out.peak_running = std::max(out.peak_running, running_now);
    out.peak_kv_blocks = std::max(out.peak_kv_blocks, limits.kv_blocks - free_blocks);
    auto emit = [&](std::size_t r) {
      Live& x = live[r];
      ++x.generated;
      RequestTimes& t = out.requests[r];
      if (!x.first_token) {
        x.first_token = true;
        t.ttft_s = end - requests[r].arrival_s;
      }
      if (x.generated >= requests[r].output_tokens) {
        t.done = true;
        t.e2e_s = end - requests[r].arrival_s;
        t.tpot_s = requests[r].output_tokens > 1 ? (t.e2e_s - t.ttft_s) / static_cast<double>(requests[r].output_tokens - 1) : 0;
        release(r);
        lane.running.erase(std::find(lane.running.begin(), lane.running.end(), r));
        --running_now;
        ++finished;
      }
    };
    for (const std::size_t r : decodes) {
      ++live[r].cache;
      emit(r);
    }
    for (const auto& [r, t] : chunks) {
      live[r].cache += t;
      if (live[r].cache >= live[r].target) emit(r);  // the prompt's last position gives the next token
    }
    lane.free_at = end;
    out.end_s = std::max(out.end_s, end);
  }
  out.mean_running = out.steps > 0 ? running_sum / static_cast<double>(out.steps) : 0;
  return out;
}

}  // namespace perfcast
