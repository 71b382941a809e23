// Static row partitioning over short-lived std::threads.
//
// The sampler's work per row is independent (each (row, feature) has its own uniform), so rows are
// split into contiguous chunks, one per thread, and the result does not depend on the thread
// count. Threads are created per call: at the sizes where threading is used (>= 64k logits per
// thread) the ~tens of microseconds of thread start-up are noise.

#ifndef SYNTHD_NATIVE_PARALLEL_H_
#define SYNTHD_NATIVE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace synthd {

// Upper bound on threads for one call, whatever the caller or the hardware asks for.
constexpr unsigned kMaxThreads = 64;

// Threads used when the caller does not choose: std::thread::hardware_concurrency(), at least 1,
// at most 8 (the engine already runs one sampler per worker thread; more only oversubscribes).
unsigned DefaultThreadCount();

// Calls body(chunk, begin, end) for `chunks` contiguous, non-empty ranges covering [0, n), chunk
// 0 on the calling thread and the others on new threads; returns after all have finished.
// chunks is clamped to [1, min(n, kMaxThreads)]. If a thread cannot be started, its chunk runs on
// the calling thread. An exception thrown by a body is rethrown here (the first by chunk index)
// after every thread has joined.
void ParallelFor(size_t n, unsigned chunks,
                 const std::function<void(unsigned chunk, size_t begin, size_t end)>& body);

}  // namespace synthd

#endif  // SYNTHD_NATIVE_PARALLEL_H_
