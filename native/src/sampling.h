// Sampling kernel (DESIGN.md §2, Generation): per (row r, feature f), logits / temperature ->
// softmax -> nucleus (top-p) truncation -> one inverse-CDF draw with a caller-supplied uniform.
//
// Nucleus sampling: A. Holtzman, J. Buys, L. Du, M. Forbes, Y. Choi, "The Curious Case of Neural
// Text Degeneration", ICLR 2020 — keep the smallest set of most probable codes whose probability
// mass reaches top_p, renormalise, draw from it.
//
// This is a transcription of the JavaScript reference `sampleCodesJs` in src/model/sampling.ts:
// the same float64 operations in the same order, and exp computed as V8's Math.exp computes it
// (fdlibm_exp.h), so both give identical codes for identical inputs. Exact procedure, K = K_f:
//  1. z_k = logit_k * (1 / T), m = max_k z_k, e_k = exp(z_k - m), s = sum_k e_k (k ascending).
//  2. No truncation (top_p absent or >= 1): keep every k, total = s. Truncation: order k by e_k
//     descending, ties by smaller k first; keep the shortest prefix whose running sum of e_k
//     reaches top_p * s (at least one code); total = that running sum. top_p = 0 keeps the first
//     code of the order alone: the most probable, ties by smaller k.
//  3. target = u * total; walk the kept codes in ascending k accumulating e_k; the first k whose
//     running sum exceeds target is drawn; if rounding leaves none, the last kept k is drawn.

#ifndef SYNTHD_NATIVE_SAMPLING_H_
#define SYNTHD_NATIVE_SAMPLING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace synthd {

// Validated inputs; the arrays are borrowed, not owned.
struct SampleInput {
  const float* logits = nullptr;    // n x D, row-major; feature f owns [offset_f, offset_f + K_f)
  size_t n = 0;                     // rows
  std::vector<int32_t> cardinalities;  // K_f >= 1 per feature (F = size)
  size_t D = 0;                     // sum of K_f
  size_t max_k = 0;                 // max of K_f
  const double* uniforms = nullptr;  // n x F, row-major, each in [0, 1)
  double temperature = 1.0;         // > 0, with 1 / temperature finite
  bool truncate = false;            // top_p given and < 1
  double top_p = 1.0;               // in [0, 1]; 0 keeps the top code alone
  // Further rows from the same rows' distributions (several rows per forward pass): step 3 again
  // with each of `extra_draws` more sets of uniforms, set j (0-based) at
  // extra_uniforms + j * extra_stride, n x F row-major like `uniforms`. Softmax and nucleus are
  // computed once per (row, feature), so draw j's codes are those the kernel would give for the
  // same logits and set j alone.
  size_t extra_draws = 0;
  const double* extra_uniforms = nullptr;
  size_t extra_stride = 0;
};

// The first logit (in row-major order) that the kernel refused.
struct SampleError {
  enum class Kind { kNone, kNonFinite, kOverflow };
  Kind kind = Kind::kNone;
  size_t index = 0;    // flat index into logits
  double value = 0.0;  // the logit
  bool failed() const { return kind != Kind::kNone; }
};

// Threads the kernel uses when the caller passes threads = 0: none extra below 64k logits per
// thread, else DefaultThreadCount(), and never more than n.
unsigned AutoThreadCount(size_t n, size_t D);

// Samples every row into out (F * n int32, column-major: code of (r, f) at f * n + r; with
// extra_draws, extra draw j's codes follow at out + (j + 1) * F * n in the same layout), using
// `threads` threads (0 = AutoThreadCount). The result does not depend on the thread count.
// A non-finite logit, or a finite one whose logit / temperature overflows, stops the kernel and is
// returned (the first in row-major order; out is then incomplete). Throws std::bad_alloc.
SampleError SampleCodes(const SampleInput& in, int32_t* out, unsigned threads);

}  // namespace synthd

#endif  // SYNTHD_NATIVE_SAMPLING_H_
