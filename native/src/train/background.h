// Process-wide threads for long compute jobs that JavaScript starts and awaits (an optimizer step,
// a validation pass: tens to hundreds of milliseconds each), so they run off the JavaScript thread
// that started them (core_binding.cc, trainStepAsync / evalLossAsync).
//
// Why not libuv's thread pool (Napi::AsyncWorker): that pool is one per process, 4 threads by
// default, and everything asynchronous in the process queues on it, LMDB's writes included
// (lmdb-js commits through napi_create_async_work): the rate counters, usage charges and
// idempotency records of requests on the HTTP thread, and the checkpoints of every worker. With
// four models training, four steps would hold all of it, and every write would wait behind a
// step: another way for training to stall requests (DESIGN §4). These threads are the jobs' own.
//
// Sizing: threads are started on demand, at most C (ThreadPool::Concurrency(): the most threads
// one job uses) and never stopped; further jobs wait in a first-in, first-out queue. A job's
// thread computes as the caller of its ThreadPool jobs, so k jobs share the cores as k callers do
// (thread_pool.h).
//
// Priority: on Linux these threads lower their own priority to nice kDefaultNice (10; environment
// SYNTHD_TRAIN_NICE=0..19 sets it, 0 keeps the process's priority). Training is background work:
// when a core is contended, the JavaScript threads that answer requests (the HTTP thread, the
// engine workers) get it first (CFS weight 1024 against 110 at nice 10), so a request does not
// queue for CPU time behind training; with idle cores training runs at full speed as before. The
// compute pool's helper threads keep their priority (they also serve generation). Raising a nice
// value needs no privilege (lowering it back would: so these threads are only ever used for
// background jobs).

#ifndef SYNTHD_NATIVE_TRAIN_BACKGROUND_H_
#define SYNTHD_NATIVE_TRAIN_BACKGROUND_H_

#include <functional>

namespace synthd {
namespace train {

// Nice value of the background threads unless SYNTHD_TRAIN_NICE says otherwise.
constexpr int kDefaultNice = 10;

class Background {
 public:
  // The process-wide instance (its threads live until the process exits).
  static Background& Instance();

  // Runs job on one of the threads (now, or when one is free; jobs start in the order posted).
  // The job must not throw. Throws std::system_error when no thread exists and none can be
  // started (the job is then not queued).
  void Post(std::function<void()> job);

  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

 private:
  Background();
  struct Impl;
  Impl* impl_;
};

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_BACKGROUND_H_
