// One process-wide pool of compute threads, shared by every caller in the process.
//
// Node loads the addon once per process, so all piscina worker threads (and the main thread) that
// train or generate share this pool. Sizing: C = the CPUs this process may run on
// (sched_getaffinity, or hardware_concurrency; SYNTHD_THREADS overrides), with C - 1 pool threads.
// A caller runs tasks of its own job too, and pool threads only join a job while
// (callers computing + pool threads computing) < C. So one job uses every core, and k concurrent
// jobs share them: at most max(C, k) threads compute at once, never C + k - 1.
//
// Tasks of a job are claimed dynamically (an atomic counter), so a core taken by another process
// does not stall the job. Callers must make their results independent of which thread ran which
// task (the compute core partitions outputs, never a reduction, across tasks).

#ifndef SYNTHD_NATIVE_TRAIN_THREAD_POOL_H_
#define SYNTHD_NATIVE_TRAIN_THREAD_POOL_H_

#include <cstddef>
#include <functional>

namespace synthd {
namespace train {

// Called as fn(task, slot): task in [0, n_tasks); slot in [0, Concurrency()) distinct among the
// threads running the same job at the same time (for per-thread scratch).
using TaskFn = std::function<void(size_t task, unsigned slot)>;

class ThreadPool {
 public:
  // The process-wide pool (created on first use; its threads live until the process exits).
  static ThreadPool& Instance();

  // C: the most threads one job uses (the caller included).
  unsigned Concurrency() const;

  // Starts the pool threads now if they are not running yet (Run starts them on first use). They
  // inherit the scheduling priority of the thread that starts them: background.cc calls this from
  // a JavaScript thread before its own, lower-priority threads can be the first to Run.
  void EnsureStarted();

  // Runs fn for every task and returns when all have finished. The caller takes part. The first
  // exception thrown by a task (by task index order of completion) is rethrown here after every
  // task of the job has finished. Safe to call from several threads at once; not re-entrant from
  // inside a task (a task must not call Run).
  void Run(size_t n_tasks, const TaskFn& fn);

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

 private:
  ThreadPool();
  struct Impl;
  Impl* impl_;
};

// Convenience: ThreadPool::Instance().Run(n_tasks, fn), run inline when n_tasks <= 1.
void ParallelTasks(size_t n_tasks, const TaskFn& fn);

// Splits [0, n) into `parts` contiguous ranges; the begin of part i.
inline size_t SplitBegin(size_t n, size_t parts, size_t i) {
  return n / parts * i + (i < n % parts ? i : n % parts);
}

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_THREAD_POOL_H_
