#include "thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SYNTHD_PAUSE() _mm_pause()
#else
#define SYNTHD_PAUSE() std::this_thread::yield()
#endif

namespace synthd {
namespace train {

namespace {

unsigned MachineThreads() {
  const char* env = std::getenv("SYNTHD_THREADS");
  if (env != nullptr && *env != '\0') {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 1 && v <= 256) return static_cast<unsigned>(v);
  }
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int c = CPU_COUNT(&set);
    if (c >= 1) return static_cast<unsigned>(c > 256 ? 256 : c);
  }
#endif
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : (hc > 256 ? 256 : hc);
}

// Spin iterations (each a pause, ~tens of ns) before blocking: covers the gap between the
// parallel regions of one training step without keeping idle threads busy for long.
constexpr int kWorkerSpin = 4000;

// Spin iterations of a caller waiting for the last tasks of its job before it blocks. Blocking
// frees its CPU, so the kernel can move a pool thread that holds a task but was preempted (another
// process on its CPU) there, instead of the caller spinning for the other process's time slice.
constexpr int kCallerSpin = 2000;

struct Job {
  const TaskFn* fn = nullptr;
  size_t n = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<unsigned> slots{1};  // slot 0 is the caller's
  std::atomic<int> users{0};       // pool threads holding a pointer to this job
  std::mutex err_mu;
  std::exception_ptr err;
  // Completion hand-off: a pool thread lets go of the job (users--) under mu and wakes a blocked
  // caller; the caller takes mu once before returning, so the job (on its stack) outlives it.
  std::mutex mu;
  std::condition_variable cv;
  bool waiting = false;  // guarded by mu
};

void RunTasks(Job* job, unsigned slot) {
  for (;;) {
    const size_t i = job->next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job->n) return;
    try {
      (*job->fn)(i, slot);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job->err_mu);
      if (!job->err) job->err = std::current_exception();
    }
    job->done.fetch_add(1, std::memory_order_acq_rel);
  }
}

}  // namespace

struct ThreadPool::Impl {
  unsigned concurrency = 1;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job*> jobs;            // jobs with tasks possibly left to claim
  int sleepers = 0;                 // pool threads blocked on cv
  std::atomic<unsigned> posted{0};  // bumped on every new job (spinning threads watch it)
  std::atomic<int> computing{0};    // callers + pool threads inside a job right now
  std::once_flag started;
  std::vector<std::thread> threads;

  // A job a pool thread may join now, or null. Requires mu.
  Job* PickLocked() {
    if (computing.load(std::memory_order_relaxed) >= static_cast<int>(concurrency)) return nullptr;
    for (Job* j : jobs) {
      if (j->next.load(std::memory_order_relaxed) < j->n) return j;
    }
    return nullptr;
  }

  void WorkerLoop() {
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu);
        job = PickLocked();
        if (job == nullptr) {
          // Spin (without the lock) for a while watching for new jobs, then block.
          const unsigned seen = posted.load(std::memory_order_acquire);
          lock.unlock();
          bool woke = false;
          for (int i = 0; i < kWorkerSpin; ++i) {
            SYNTHD_PAUSE();
            if (posted.load(std::memory_order_acquire) != seen) {
              woke = true;
              break;
            }
          }
          lock.lock();
          job = PickLocked();
          if (job == nullptr && !woke) {
            ++sleepers;
            cv.wait(lock, [&] { return (job = PickLocked()) != nullptr; });
            --sleepers;
          }
          if (job == nullptr) continue;
        }
        job->users.fetch_add(1, std::memory_order_relaxed);
        computing.fetch_add(1, std::memory_order_relaxed);
      }
      const unsigned slot = job->slots.fetch_add(1, std::memory_order_relaxed);
      RunTasks(job, slot);
      computing.fetch_sub(1, std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(job->mu);
        job->users.fetch_sub(1, std::memory_order_release);
        if (job->waiting) job->cv.notify_one();
      }
    }
  }

  void Start() {
    for (unsigned i = 1; i < concurrency; ++i) {
      try {
        threads.emplace_back([this] { WorkerLoop(); });
        threads.back().detach();
      } catch (const std::system_error&) {
        break;  // fewer helpers; callers still compute everything themselves
      }
    }
    threads.clear();
  }
};

ThreadPool::ThreadPool() : impl_(new Impl) { impl_->concurrency = MachineThreads(); }

ThreadPool& ThreadPool::Instance() {
  // Leaked on purpose: pool threads may still be blocked on its condition variable at exit.
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

unsigned ThreadPool::Concurrency() const { return impl_->concurrency; }

void ThreadPool::EnsureStarted() {
  Impl& p = *impl_;
  if (p.concurrency > 1) std::call_once(p.started, [&p] { p.Start(); });
}

void ThreadPool::Run(size_t n_tasks, const TaskFn& fn) {
  if (n_tasks == 0) return;
  Impl& p = *impl_;
  if (n_tasks == 1 || p.concurrency <= 1) {
    for (size_t i = 0; i < n_tasks; ++i) fn(i, 0);
    return;
  }
  EnsureStarted();

  Job job;
  job.fn = &fn;
  job.n = n_tasks;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.jobs.push_back(&job);
    p.computing.fetch_add(1, std::memory_order_relaxed);
    p.posted.fetch_add(1, std::memory_order_release);
    if (p.sleepers > 0) p.cv.notify_all();
  }
  RunTasks(&job, 0);
  {
    // No task left to claim: unlist the job so no pool thread joins it from now on.
    std::lock_guard<std::mutex> lock(p.mu);
    for (auto it = p.jobs.begin(); it != p.jobs.end(); ++it) {
      if (*it == &job) {
        p.jobs.erase(it);
        break;
      }
    }
    p.computing.fetch_sub(1, std::memory_order_relaxed);
    // A pool thread may now be free to join another caller's job.
    if (p.sleepers > 0 && !p.jobs.empty()) p.cv.notify_all();
  }
  // Wait for tasks still running on pool threads, and for them to let go of the job: spin a
  // little (the common case: they finish within microseconds), then block.
  const auto finished = [&] {
    return job.done.load(std::memory_order_acquire) >= n_tasks && job.users.load(std::memory_order_acquire) == 0;
  };
  for (int spins = 0; spins < kCallerSpin && !finished(); ++spins) SYNTHD_PAUSE();
  {
    std::unique_lock<std::mutex> lock(job.mu);
    if (!finished()) {
      job.waiting = true;
      job.cv.wait(lock, finished);
    }
  }
  if (job.err) std::rethrow_exception(job.err);
}

void ParallelTasks(size_t n_tasks, const TaskFn& fn) {
  if (n_tasks == 0) return;
  if (n_tasks == 1) {
    fn(0, 0);
    return;
  }
  ThreadPool::Instance().Run(n_tasks, fn);
}

}  // namespace train
}  // namespace synthd
