#include "parallel.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace synthd {

unsigned DefaultThreadCount() {
  const unsigned hc = std::thread::hardware_concurrency();  // 0 when unknown
  return std::min(8u, std::max(1u, hc));
}

void ParallelFor(size_t n, unsigned chunks,
                 const std::function<void(unsigned, size_t, size_t)>& body) {
  if (n == 0) return;
  size_t c = std::max<size_t>(1, std::min<size_t>({static_cast<size_t>(chunks), n,
                                                   static_cast<size_t>(kMaxThreads)}));
  const auto begin_of = [n, c](size_t i) { return n / c * i + std::min(i, n % c); };

  std::vector<std::exception_ptr> errors(c);
  const auto run = [&](size_t i) {
    try {
      body(static_cast<unsigned>(i), begin_of(i), begin_of(i + 1));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };

  std::vector<std::thread> threads;
  std::vector<size_t> inline_chunks;  // chunks whose thread could not be started
  threads.reserve(c - 1);
  for (size_t i = 1; i < c; ++i) {
    try {
      threads.emplace_back(run, i);
    } catch (const std::system_error&) {
      inline_chunks.push_back(i);
    }
  }
  run(0);
  for (size_t i : inline_chunks) run(i);
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace synthd
