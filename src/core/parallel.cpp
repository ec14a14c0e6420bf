#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace perfcast {

namespace {

std::atomic<unsigned> g_threads{0};

unsigned default_threads() {
  if (const char* env = std::getenv("PERFCAST_THREADS")) {
    try {
      const long n = std::stol(env);
      if (n > 0) return static_cast<unsigned>(std::min<long>(n, 1024));
    } catch (const std::exception&) {
      // not a number: fall through to the hardware's count
    }
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

unsigned worker_threads() {
  const unsigned n = g_threads.load();
  return n > 0 ? n : default_threads();
}

void set_worker_threads(unsigned n) { g_threads.store(n); }

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  const std::size_t threads = std::min<std::size_t>(worker_threads(), n);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(n);
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace perfcast
