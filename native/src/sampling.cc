#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fdlibm_exp.h"
#include "parallel.h"

#if defined(__SSE2__)
#include <emmintrin.h>  // part of the x86-64 baseline
#endif

namespace synthd {

namespace {

// Minimum logits per thread before another thread is worth starting.
constexpr size_t kMinLogitsPerThread = size_t{1} << 16;

// Per-thread scratch: one row's e values (D), and the nucleus order of the widest feature.
struct Scratch {
  Scratch(size_t D, size_t max_k) : e(D), order(max_k), keep(max_k) {}
  std::vector<double> e;
  std::vector<int32_t> order;
  std::vector<uint8_t> keep;
};

// Nucleus ordering: e descending, ties by smaller index (a strict total order, so any correct
// sort gives the same permutation as the reference's Int32Array.prototype.sort).
struct NucleusOrder {
  const double* e;
  bool operator()(int32_t a, int32_t b) const {
    return e[a] > e[b] || (e[a] == e[b] && a < b);
  }
};

// Sorts order[0, K) (initialised to 0..K-1) by NucleusOrder.
// K <= kRankSortMax: rank sort — the rank of code a is the number of codes ordered before it
// (b < a with e_b >= e_a, or b > a with e_b > e_a), counted two at a time with SSE2 compares
// (scalar elsewhere), without branches: O(K^2) work. Faster than a comparison sort for the small K that dominate
// (quantile bins, capped categories), whose data-dependent branches mispredict. std::sort beyond.
constexpr size_t kRankSortMax = 64;

void SortNucleus(int32_t* order, size_t K, const double* e) {
  if (K > kRankSortMax) {
    std::sort(order, order + K, NucleusOrder{e});
    return;
  }
#if defined(__SSE2__)
  for (size_t a = 0; a < K; ++a) {
    const double ea = e[a];
    const __m128d va = _mm_set1_pd(ea);
    __m128i count = _mm_setzero_si128();  // two int64 lanes, each mask lane adds -1
    size_t b = 0;
    for (; b + 2 <= a; b += 2) {  // pairs entirely before a: e_b >= e_a
      count = _mm_sub_epi64(count, _mm_castpd_si128(_mm_cmpge_pd(_mm_loadu_pd(e + b), va)));
    }
    int64_t rank = 0;
    if (b < a) {  // b == a - 1 (a single code before a)
      rank += e[b] >= ea;
      b = a;
    }
    ++b;  // skip a itself
    for (; b + 2 <= K; b += 2) {  // pairs entirely after a: e_b > e_a
      count = _mm_sub_epi64(count, _mm_castpd_si128(_mm_cmpgt_pd(_mm_loadu_pd(e + b), va)));
    }
    if (b < K) rank += e[b] > ea;
    int64_t lanes[2];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), count);
    rank += lanes[0] + lanes[1];
    order[rank] = static_cast<int32_t>(a);
  }
#else
  for (size_t a = 0; a < K; ++a) {
    const double ea = e[a];
    size_t rank = 0;
    for (size_t b = 0; b < a; ++b) rank += e[b] >= ea;
    for (size_t b = a + 1; b < K; ++b) rank += e[b] > ea;
    order[rank] = static_cast<int32_t>(a);
  }
#endif
}

// Samples rows [r0, r1). Returns the first refused logit in that range (then stops).
SampleError SampleRows(const SampleInput& in, size_t r0, size_t r1, int32_t* out,
                       Scratch& scratch) {
  const size_t F = in.cardinalities.size();
  const size_t n = in.n;
  const double inv_t = 1.0 / in.temperature;
  const double top_p = in.top_p;
  const bool truncate = in.truncate;
  int32_t* order = scratch.order.data();
  uint8_t* keep = scratch.keep.data();

  for (size_t r = r0; r < r1; ++r) {
    const float* row = in.logits + r * in.D;
    double* const erow = scratch.e.data();
    // 1. z_k = logit_k * (1/T); m = max z_k; e_k = z_k - m, for every feature of the row; then
    //    e_k = exp(e_k) over the whole row at once (vectorised, bit-identical to Math.exp).
    size_t off = 0;
    for (size_t f = 0; f < F; ++f) {
      const size_t K = static_cast<size_t>(in.cardinalities[f]);
      const float* lg = row + off;
      double* e = erow + off;
      double m = -std::numeric_limits<double>::infinity();
      for (size_t k = 0; k < K; ++k) {
        const double z = static_cast<double>(lg[k]) * inv_t;
        if (!std::isfinite(z)) {
          SampleError err;
          err.kind = std::isfinite(lg[k]) ? SampleError::Kind::kOverflow
                                          : SampleError::Kind::kNonFinite;
          err.index = r * in.D + off + k;
          err.value = static_cast<double>(lg[k]);
          return err;
        }
        e[k] = z;
        if (z > m) m = z;
      }
      for (size_t k = 0; k < K; ++k) e[k] -= m;
      off += K;
    }
    FdlibmExpArray(erow, erow, in.D);

    off = 0;
    for (size_t f = 0; f < F; ++f) {
      const size_t K = static_cast<size_t>(in.cardinalities[f]);
      const double* e = erow + off;
      //    s = sum e_k in ascending k.
      double s = 0.0;
      for (size_t k = 0; k < K; ++k) s += e[k];

      // 2. Nucleus: shortest prefix of the e-descending order whose mass reaches top_p * s.
      double total = s;
      if (truncate) {
        for (size_t k = 0; k < K; ++k) {
          order[k] = static_cast<int32_t>(k);
          keep[k] = 0;
        }
        SortNucleus(order, K, e);
        const double need = top_p * s;
        total = 0.0;
        for (size_t i = 0; i < K; ++i) {
          keep[order[i]] = 1;
          total += e[order[i]];
          if (total >= need) break;
        }
      }

      // 3. Inverse CDF over the kept codes in ascending k, once per set of uniforms.
      for (size_t j = 0; j <= in.extra_draws; ++j) {
        const double u = j == 0 ? in.uniforms[r * F + f] : in.extra_uniforms[(j - 1) * in.extra_stride + r * F + f];
        const double target = u * total;
        double acc = 0.0;
        int32_t code = -1;
        int32_t last = 0;
        for (size_t k = 0; k < K; ++k) {
          if (truncate && keep[k] == 0) continue;
          last = static_cast<int32_t>(k);
          acc += e[k];
          if (acc > target) {
            code = static_cast<int32_t>(k);
            break;
          }
        }
        out[(j * F + f) * n + r] = code < 0 ? last : code;
      }
      off += K;
    }
  }
  return SampleError{};
}

}  // namespace

unsigned AutoThreadCount(size_t n, size_t D) {
  const size_t work = n * D;
  const size_t by_work = std::max<size_t>(1, work / kMinLogitsPerThread);
  return static_cast<unsigned>(
      std::min<size_t>({by_work, static_cast<size_t>(DefaultThreadCount()), std::max<size_t>(1, n)}));
}

SampleError SampleCodes(const SampleInput& in, int32_t* out, unsigned threads) {
  if (in.n == 0 || in.cardinalities.empty()) return SampleError{};
  const unsigned chunks = threads == 0 ? AutoThreadCount(in.n, in.D) : threads;
  std::vector<SampleError> errors(std::min<size_t>({static_cast<size_t>(chunks), in.n,
                                                    static_cast<size_t>(kMaxThreads)}) + 1);
  ParallelFor(in.n, chunks, [&](unsigned chunk, size_t begin, size_t end) {
    Scratch scratch(in.D, in.max_k);
    errors[chunk] = SampleRows(in, begin, end, out, scratch);
  });
  // Chunks are contiguous and ascending, so the first failing chunk holds the first bad logit.
  for (const SampleError& err : errors) {
    if (err.failed()) return err;
  }
  return SampleError{};
}

}  // namespace synthd
