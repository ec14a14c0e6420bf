// A small fork-join pool for independent predictions (predict --configs, validate, compare, plan): the work is
// split by index so results land in input order, identical to running on one thread.
#pragma once

#include <cstddef>
#include <functional>

namespace perfcast {

// Worker threads parallel_for uses: set_worker_threads(n) if called with n > 0, else $PERFCAST_THREADS, else
// the hardware's concurrency (at least 1).
unsigned worker_threads();
// Sets the worker thread count for later calls (0 = back to the default above). Not for use while a
// parallel_for runs.
void set_worker_threads(unsigned n);

// Runs fn(i) for every i in [0, n) on up to worker_threads() threads and returns when all are done. fn must be
// safe to call concurrently for different i (each writes only its own slot). If calls throw, the exception of
// the lowest index is rethrown after every call has finished, as a loop on one thread would have thrown it first.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

}  // namespace perfcast
