#include "background.h"

#include <condition_variable>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "thread_pool.h"

namespace synthd {
namespace train {

namespace {

// SYNTHD_TRAIN_NICE (0..19, default kDefaultNice); anything else gives the default.
int NiceFromEnv() {
  const char* env = std::getenv("SYNTHD_TRAIN_NICE");
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v >= 0 && v <= 19) return static_cast<int>(v);
  }
  return kDefaultNice;
}

// Lowers the calling thread's priority by `nice` (Linux: nice values are per thread). Best effort:
// raising a nice value needs no privilege; where it fails the thread keeps its priority.
void LowerThisThread(int nice) {
#if defined(__linux__)
  if (nice > 0) {
    const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    errno = 0;
    const int cur = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
    if (errno == 0 && cur < nice) setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice);
  }
#else
  (void)nice;
#endif
}

}  // namespace

struct Background::Impl {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;  // guarded by mu
  unsigned threads = 0;                     // started (guarded by mu)
  unsigned idle = 0;                        // waiting on cv (guarded by mu)
  unsigned cap = 1;
  int nice = kDefaultNice;

  void Loop() {
    LowerThisThread(nice);
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu);
        ++idle;
        cv.wait(lock, [&] { return !queue.empty(); });
        --idle;
        job = std::move(queue.front());
        queue.pop_front();
      }
      job();
    }
  }
};

Background::Background() : impl_(new Impl) {
  // The compute pool's threads must not inherit this class's lower priority (see background.h):
  // start them here, on the (JavaScript) thread that makes the first background job.
  ThreadPool::Instance().EnsureStarted();
  const unsigned c = ThreadPool::Instance().Concurrency();
  impl_->cap = c == 0 ? 1 : c;
  impl_->nice = NiceFromEnv();
}

Background& Background::Instance() {
  // Leaked on purpose, as the compute pool: its threads may be waiting on it at exit.
  static Background* b = new Background();
  return *b;
}

void Background::Post(std::function<void()> job) {
  Impl& p = *impl_;
  std::lock_guard<std::mutex> lock(p.mu);
  p.queue.push_back(std::move(job));
  // Idle threads not yet claimed by earlier posts take it; else start one while under the cap.
  if (p.queue.size() <= p.idle) {
    p.cv.notify_one();
    return;
  }
  if (p.threads < p.cap) {
    try {
      std::thread([&p] { p.Loop(); }).detach();
      ++p.threads;
    } catch (const std::system_error&) {
      if (p.threads == 0) {
        p.queue.pop_back();
        throw;
      }
      // Fewer threads: the job waits for a running one.
    }
  }
  p.cv.notify_one();
}

}  // namespace train
}  // namespace synthd
