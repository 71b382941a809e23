#include "gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "thread_pool.h"

namespace synthd {
namespace train {

namespace kernels {
void GenericKernel4x16(int64_t, const float*, const float*, float*, int64_t, bool, const float*, bool);
#if defined(__x86_64__) || defined(__i386__)
void Avx2Kernel6x16(int64_t, const float*, const float*, float*, int64_t, bool, const float*, bool);
void Avx512Kernel8x32(int64_t, const float*, const float*, float*, int64_t, bool, const float*, bool);
void Avx512Edge8x32(int64_t, const float*, const float*, float*, int64_t, bool, const float*, bool, int, int);
#endif
}  // namespace kernels

namespace {

const KernelInfo kGeneric{Isa::kGeneric, 4, 16, kernels::GenericKernel4x16, nullptr};
#if defined(__x86_64__) || defined(__i386__)
const KernelInfo kAvx2{Isa::kAvx2, 6, 16, kernels::Avx2Kernel6x16, nullptr};
const KernelInfo kAvx512{Isa::kAvx512, 8, 32, kernels::Avx512Kernel8x32, kernels::Avx512Edge8x32};
#endif

constexpr int kMaxMR = 8;
constexpr int kMaxNR = 32;

// Rows of A per packed block (the A block, MC x KC, stays in L2).
#ifndef SYNTHD_GEMM_MC
#define SYNTHD_GEMM_MC 128
#endif
constexpr int64_t kMC = SYNTHD_GEMM_MC;

// Tasks per pool thread of a parallel product: enough for dynamic claiming to even out a core
// that runs slower (another process, host contention) without splitting rows below 2 MR.
#ifndef SYNTHD_GEMM_TASKS_PER_THREAD
#define SYNTHD_GEMM_TASKS_PER_THREAD 4
#endif
// Fewest MR-row panels per row task.
#ifndef SYNTHD_GEMM_MIN_PANELS
#define SYNTHD_GEMM_MIN_PANELS 4
#endif

// Below this many multiply-adds a product runs on the calling thread (a parallel region costs a
// few microseconds of hand-over).
constexpr double kSerialMacs = 1 << 18;

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t KBlocks(int64_t K) { return K == 0 ? 1 : CeilDiv(K, kKC); }

// Packs rows [r0, r1) x columns [k0, k0 + kc) of A into MR-row micro-panels (kc x MR each,
// column p of the panel contiguous), zero rows past r1.
void PackA(int mr, MatView A, int64_t r0, int64_t r1, int64_t k0, int64_t kc, float* dst) {
  const int64_t rows = r1 - r0;
  const int64_t panels = CeilDiv(rows, mr);
  for (int64_t ip = 0; ip < panels; ++ip) {
    float* d = dst + ip * kc * mr;
    const int64_t i0 = r0 + ip * mr;
    const int64_t h = std::min<int64_t>(mr, r1 - i0);
    if (A.rs == 1) {
      // Transposed operand (X^T): column p of the panel is a contiguous run of the source.
      for (int64_t p = 0; p < kc; ++p) {
        const float* s = A.data + (k0 + p) * A.cs + i0;
        float* dp = d + p * mr;
        for (int64_t i = 0; i < h; ++i) dp[i] = s[i];
        for (int64_t i = h; i < mr; ++i) dp[i] = 0.0f;
      }
    } else {
      int64_t i = 0;
#if defined(__SSE2__)
      if (A.cs == 1) {
        // 4 x 4 transposes: rows i..i+3 of the source become 4 consecutive lanes of each p.
        for (; i + 4 <= h; i += 4) {
          const float* s0 = A.data + (i0 + i) * A.rs + k0;
          const float* s1 = s0 + A.rs;
          const float* s2 = s1 + A.rs;
          const float* s3 = s2 + A.rs;
          int64_t p = 0;
          for (; p + 4 <= kc; p += 4) {
            __m128 v0 = _mm_loadu_ps(s0 + p), v1 = _mm_loadu_ps(s1 + p);
            __m128 v2 = _mm_loadu_ps(s2 + p), v3 = _mm_loadu_ps(s3 + p);
            _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
            _mm_storeu_ps(d + (p + 0) * mr + i, v0);
            _mm_storeu_ps(d + (p + 1) * mr + i, v1);
            _mm_storeu_ps(d + (p + 2) * mr + i, v2);
            _mm_storeu_ps(d + (p + 3) * mr + i, v3);
          }
          for (; p < kc; ++p) {
            d[p * mr + i] = s0[p];
            d[p * mr + i + 1] = s1[p];
            d[p * mr + i + 2] = s2[p];
            d[p * mr + i + 3] = s3[p];
          }
        }
      }
#endif
      for (; i < h; ++i) {
        const float* s = A.data + (i0 + i) * A.rs + k0 * A.cs;
        if (A.cs == 1) {
          for (int64_t p = 0; p < kc; ++p) d[p * mr + i] = s[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) d[p * mr + i] = s[p * A.cs];
        }
      }
      for (int64_t pad = h; pad < mr; ++pad)
        for (int64_t p = 0; p < kc; ++p) d[p * mr + pad] = 0.0f;
    }
  }
}

struct ThreadScratch {
  FloatBuffer apack;
  PackedB bpack;
  alignas(64) float tile[kMaxMR * kMaxNR];
  alignas(64) float bias[kMaxNR];
};

ThreadScratch& Scratch() {
  thread_local ThreadScratch s;
  return s;
}

}  // namespace

const KernelInfo& KernelFor(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == Isa::kAvx512) return kAvx512;
  if (isa == Isa::kAvx2) return kAvx2;
#else
  (void)isa;
#endif
  return kGeneric;
}

const KernelInfo& ActiveKernel() {
  static const KernelInfo& k = KernelFor(ActiveIsa());
  return k;
}

static void SizePackedB(const KernelInfo& kern, int64_t K, int64_t N, PackedB* out) {
  out->K = K;
  out->N = N;
  out->nr = kern.nr;
  out->n_panels = CeilDiv(N, kern.nr);
  out->data.Resize(static_cast<size_t>(std::max<int64_t>(K, 1) * out->n_panels * kern.nr));
}

void PackBPanels(const KernelInfo& kern, MatView B, PackedB* out, int64_t jp0, int64_t jp1) {
  const int nr = kern.nr;
  const int64_t K = out->K;
  const int64_t N = out->N;
  for (int64_t k0 = 0; k0 < K; k0 += kKC) {
    const int64_t kc = std::min<int64_t>(kKC, K - k0);
    for (int64_t jp = jp0; jp < jp1; ++jp) {
      float* d = const_cast<float*>(out->Panel(k0, kc, jp));
      const int64_t j0 = jp * nr;
      const int64_t w = std::min<int64_t>(nr, N - j0);
      if (B.cs == 1) {
        for (int64_t p = 0; p < kc; ++p) {
          const float* s = B.data + (k0 + p) * B.rs + j0;
          float* dp = d + p * nr;
          std::memcpy(dp, s, static_cast<size_t>(w) * sizeof(float));
          for (int64_t j = w; j < nr; ++j) dp[j] = 0.0f;
        }
      } else {
        // Transposed operand (W^T): walk each source row contiguously.
        int64_t j = 0;
#if defined(__SSE2__)
        if (B.rs == 1) {
          for (; j + 4 <= w; j += 4) {  // 4 x 4 transposes
            const float* s0 = B.data + (j0 + j) * B.cs + k0;
            const float* s1 = s0 + B.cs;
            const float* s2 = s1 + B.cs;
            const float* s3 = s2 + B.cs;
            int64_t p = 0;
            for (; p + 4 <= kc; p += 4) {
              __m128 v0 = _mm_loadu_ps(s0 + p), v1 = _mm_loadu_ps(s1 + p);
              __m128 v2 = _mm_loadu_ps(s2 + p), v3 = _mm_loadu_ps(s3 + p);
              _MM_TRANSPOSE4_PS(v0, v1, v2, v3);
              _mm_storeu_ps(d + (p + 0) * nr + j, v0);
              _mm_storeu_ps(d + (p + 1) * nr + j, v1);
              _mm_storeu_ps(d + (p + 2) * nr + j, v2);
              _mm_storeu_ps(d + (p + 3) * nr + j, v3);
            }
            for (; p < kc; ++p) {
              d[p * nr + j] = s0[p];
              d[p * nr + j + 1] = s1[p];
              d[p * nr + j + 2] = s2[p];
              d[p * nr + j + 3] = s3[p];
            }
          }
        }
#endif
        for (; j < w; ++j) {
          const float* s = B.data + (j0 + j) * B.cs + k0 * B.rs;
          if (B.rs == 1) {
            for (int64_t p = 0; p < kc; ++p) d[p * nr + j] = s[p];
          } else {
            for (int64_t p = 0; p < kc; ++p) d[p * nr + j] = s[p * B.rs];
          }
        }
        if (w < nr)
          for (int64_t p = 0; p < kc; ++p)
            for (int64_t pad = w; pad < nr; ++pad) d[p * nr + pad] = 0.0f;
      }
    }
  }
}

void PackB(const KernelInfo& kern, int64_t K, int64_t N, MatView B, PackedB* out, bool parallel) {
  SizePackedB(kern, K, N, out);
  const int64_t np = out->n_panels;
  if (!parallel || K * N < (1 << 15)) {
    PackBPanels(kern, B, out, 0, np);
    return;
  }
  const size_t tasks = static_cast<size_t>(std::min<int64_t>(np, 4 * ThreadPool::Instance().Concurrency()));
  ParallelTasks(tasks, [&](size_t t, unsigned) {
    PackBPanels(kern, B, out, static_cast<int64_t>(SplitBegin(np, tasks, t)),
                static_cast<int64_t>(SplitBegin(np, tasks, t + 1)));
  });
}

void GemmPackedRange(const KernelInfo& kern, int64_t K, MatView A, const PackedB& B, float* C, int64_t ldc,
                     const Epilogue& ep, int64_t r0, int64_t r1, int64_t jp0, int64_t jp1) {
  if (r1 <= r0 || jp1 <= jp0) return;
  const int mr = kern.mr;
  const int nr = kern.nr;
  const int64_t N = B.N;
  ThreadScratch& s = Scratch();
  const int64_t mc = std::max<int64_t>(mr, (kMC / mr) * mr);
  s.apack.Resize(static_cast<size_t>(CeilDiv(std::min<int64_t>(mc, r1 - r0), mr) * mr *
                                     std::min<int64_t>(std::max<int64_t>(K, 1), kKC)));
  const int64_t kblocks = KBlocks(K);
  for (int64_t kb = 0; kb < kblocks; ++kb) {
    const int64_t k0 = kb * kKC;
    const int64_t kc = std::min<int64_t>(kKC, K - k0);
    const bool last = kb + 1 == kblocks;
    const bool load_c = ep.accumulate || kb > 0;
    const bool relu = last && ep.relu;
    // Row blocks of MC rows: the packed A block stays in L2 while the column panels of B go by.
    for (int64_t rb = r0; rb < r1; rb += mc) {
      const int64_t re = std::min<int64_t>(r1, rb + mc);
      const int64_t m_panels = CeilDiv(re - rb, mr);
      if (kc > 0) PackA(mr, A, rb, re, k0, kc, s.apack.data());
      for (int64_t jp = jp0; jp < jp1; ++jp) {
        const float* bp = kc > 0 ? B.Panel(k0, kc, jp) : nullptr;
        const int64_t j0 = jp * nr;
        const int64_t w = std::min<int64_t>(nr, N - j0);
        const float* bias = (last && ep.bias != nullptr) ? ep.bias + j0 : nullptr;
        const float* edge_bias = bias;  // the edge kernel reads only w entries
        if (bias != nullptr && w < nr) {
          for (int64_t j = 0; j < nr; ++j) s.bias[j] = j < w ? bias[j] : 0.0f;
          bias = s.bias;
        }
        for (int64_t ip = 0; ip < m_panels; ++ip) {
          const int64_t i0 = rb + ip * mr;
          const int64_t h = std::min<int64_t>(mr, re - i0);
          const float* ap = s.apack.data() + ip * kc * mr;
          float* c = C + i0 * ldc + j0;
          if (h == mr && w == nr) {
            kern.fn(kc, ap, bp, c, ldc, load_c, bias, relu);
          } else if (kern.edge != nullptr) {
            kern.edge(kc, ap, bp, c, ldc, load_c, edge_bias, relu, static_cast<int>(h), static_cast<int>(w));
          } else {
            if (load_c) {
              for (int64_t i = 0; i < h; ++i)
                for (int64_t j = 0; j < w; ++j) s.tile[i * nr + j] = c[i * ldc + j];
            }
            kern.fn(kc, ap, bp, s.tile, nr, load_c, bias, relu);
            for (int64_t i = 0; i < h; ++i)
              for (int64_t j = 0; j < w; ++j) c[i * ldc + j] = s.tile[i * nr + j];
          }
        }
      }
    }
  }
}

void GemmSerial(const KernelInfo& kern, int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C,
                int64_t ldc, const Epilogue& ep) {
  if (M <= 0 || N <= 0) return;
  ThreadScratch& s = Scratch();
  SizePackedB(kern, K, N, &s.bpack);
  PackBPanels(kern, B, &s.bpack, 0, s.bpack.n_panels);
  // (GemmPackedRange uses s.apack, not s.bpack, so passing s.bpack is safe.)
  GemmPackedRange(kern, K, A, s.bpack, C, ldc, ep, 0, M, 0, s.bpack.n_panels);
}

void GemmPacked(const KernelInfo& kern, int64_t M, MatView A, const PackedB& B, float* C, int64_t ldc,
                const Epilogue& ep, const RowPost* post) {
  const int64_t N = B.N;
  const int64_t K = B.K;
  if (M <= 0) return;
  const int mr = kern.mr;
  const int64_t np = B.n_panels;
  const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(std::max<int64_t>(K, 1));
  const unsigned T = ThreadPool::Instance().Concurrency();
  if (T <= 1 || macs < kSerialMacs) {
    GemmPackedRange(kern, K, A, B, C, ldc, ep, 0, M, 0, np);
    if (post != nullptr) (*post)(0, M);
    return;
  }
  // Row chunks (multiples of MR, at least 4 MR rows) first: A is then packed once; columns are
  // split as well only when that leaves fewer than 2-4 tasks per thread.
  const int64_t m_panels = CeilDiv(M, mr);
  const int64_t want = SYNTHD_GEMM_TASKS_PER_THREAD * static_cast<int64_t>(T);
  int64_t tm = std::max<int64_t>(1, std::min<int64_t>(want, CeilDiv(m_panels, SYNTHD_GEMM_MIN_PANELS)));
  int64_t tn = 1;
  if (tm < want) tn = std::min<int64_t>(np, CeilDiv(want, tm));
  const auto rows_of = [&](int64_t a, int64_t* r0, int64_t* r1) {
    *r0 = static_cast<int64_t>(SplitBegin(m_panels, tm, a)) * mr;
    *r1 = std::min<int64_t>(M, static_cast<int64_t>(SplitBegin(m_panels, tm, a + 1)) * mr);
  };
  const bool fused = post != nullptr && tn == 1;
  ParallelTasks(static_cast<size_t>(tm * tn), [&](size_t t, unsigned) {
    const int64_t a = static_cast<int64_t>(t) / tn;
    const int64_t b = static_cast<int64_t>(t) % tn;
    int64_t r0, r1;
    rows_of(a, &r0, &r1);
    const int64_t j0 = static_cast<int64_t>(SplitBegin(np, tn, b));
    const int64_t j1 = static_cast<int64_t>(SplitBegin(np, tn, b + 1));
    GemmPackedRange(kern, K, A, B, C, ldc, ep, r0, r1, j0, j1);
    if (fused) (*post)(r0, r1);
  });
  if (post != nullptr && !fused) {
    ParallelTasks(static_cast<size_t>(tm), [&](size_t a, unsigned) {
      int64_t r0, r1;
      rows_of(static_cast<int64_t>(a), &r0, &r1);
      (*post)(r0, r1);
    });
  }
}

void Gemm(const KernelInfo& kern, int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc,
          const Epilogue& ep, PackedB* scratch, const RowPost* post) {
  if (M <= 0) return;
  const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(std::max<int64_t>(K, 1));
  if (ThreadPool::Instance().Concurrency() <= 1 || macs < kSerialMacs) {
    GemmSerial(kern, M, N, K, A, B, C, ldc, ep);
    if (post != nullptr) (*post)(0, M);
    return;
  }
  PackB(kern, K, N, B, scratch, true);
  GemmPacked(kern, M, A, *scratch, C, ldc, ep, post);
}

}  // namespace train
}  // namespace synthd
