// Register-blocked micro-kernels of the GEMM (gemm.h), one per ISA, compiled with function-level
// target attributes so the addon itself stays baseline x86-64 and picks one at run time (cpu.h).
//
// Each kernel keeps an MR x NR tile of C in registers and, for p = 0 .. kc-1, loads NR/W vectors of
// the packed B row p and broadcasts the MR packed A values of column p (Goto & van de Geijn 2008,
// §5: the "GEBP" inner kernel; outer-product form of Van Zee & van de Geijn's BLIS micro-kernel).
//   AVX-512: 8 x 32 = 16 zmm accumulators, 2 B loads + 8 broadcasts per 16 FMAs.
//   AVX2+FMA: 6 x 16 = 12 ymm accumulators (of 16 registers), 2 B loads + 6 broadcasts per 12 FMAs.
//   Portable: 4 x 16 in plain C++ (the compiler vectorises it for the baseline ISA).
// No standard-library code is used inside the targeted functions, so no inline function compiled
// for AVX can leak into baseline code through the linker.

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SYNTHD_X86 1
#endif

namespace synthd {
namespace train {
namespace kernels {

// ---- portable --------------------------------------------------------------------------------

void GenericKernel4x16(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c,
                       const float* bias, bool relu) {
  constexpr int MR = 4;
  constexpr int NR = 16;
  float acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = 0.0f;
  for (int64_t p = 0; p < kc; ++p) {
    const float* bp = b + p * NR;
    const float* ap = a + p * MR;
    for (int i = 0; i < MR; ++i) {
      const float ai = ap[i];
      for (int j = 0; j < NR; ++j) acc[i][j] += ai * bp[j];
    }
  }
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    for (int j = 0; j < NR; ++j) {
      float v = acc[i][j];
      if (load_c) v = ci[j] + v;
      if (bias != nullptr) v += bias[j];
      if (relu && !(v > 0.0f)) v = 0.0f;
      ci[j] = v;
    }
  }
}

#if defined(SYNTHD_X86)

// ---- AVX2 + FMA: 6 x 16 ----------------------------------------------------------------------

__attribute__((target("avx2,fma"))) void Avx2Kernel6x16(int64_t kc, const float* a, const float* b, float* c,
                                                          int64_t ldc, bool load_c, const float* bias, bool relu) {
  __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
  __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
  __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
  __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
  __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
  __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
    __m256 ai;
    ai = _mm256_broadcast_ss(a + 0);
    c00 = _mm256_fmadd_ps(ai, b0, c00);
    c01 = _mm256_fmadd_ps(ai, b1, c01);
    ai = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(ai, b0, c10);
    c11 = _mm256_fmadd_ps(ai, b1, c11);
    ai = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(ai, b0, c20);
    c21 = _mm256_fmadd_ps(ai, b1, c21);
    ai = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(ai, b0, c30);
    c31 = _mm256_fmadd_ps(ai, b1, c31);
    ai = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(ai, b0, c40);
    c41 = _mm256_fmadd_ps(ai, b1, c41);
    ai = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(ai, b0, c50);
    c51 = _mm256_fmadd_ps(ai, b1, c51);
    a += 6;
    b += 16;
  }
  __m256 acc[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  const __m256 zero = _mm256_setzero_ps();
  for (int i = 0; i < 6; ++i) {
    float* ci = c + i * ldc;
    for (int h = 0; h < 2; ++h) {
      __m256 v = acc[2 * i + h];
      if (load_c) v = _mm256_add_ps(_mm256_loadu_ps(ci + 8 * h), v);
      if (bias != nullptr) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + 8 * h));
      if (relu) v = _mm256_and_ps(v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ));  // v > 0 ? v : 0
      _mm256_storeu_ps(ci + 8 * h, v);
    }
  }
}

// ---- AVX-512: 8 x 32 -------------------------------------------------------------------------

// The tile computation; `h` rows and `w` columns of C are read and written (masked), so edge tiles
// need no copy. Inlined into the full-tile kernel with h = 8, w = 32.
__attribute__((target("avx512f,fma"), always_inline)) static inline void Avx512Tile8x32(
    int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c, const float* bias, bool relu,
    int h, int w) {
  __m512 c00 = _mm512_setzero_ps(), c01 = _mm512_setzero_ps();
  __m512 c10 = _mm512_setzero_ps(), c11 = _mm512_setzero_ps();
  __m512 c20 = _mm512_setzero_ps(), c21 = _mm512_setzero_ps();
  __m512 c30 = _mm512_setzero_ps(), c31 = _mm512_setzero_ps();
  __m512 c40 = _mm512_setzero_ps(), c41 = _mm512_setzero_ps();
  __m512 c50 = _mm512_setzero_ps(), c51 = _mm512_setzero_ps();
  __m512 c60 = _mm512_setzero_ps(), c61 = _mm512_setzero_ps();
  __m512 c70 = _mm512_setzero_ps(), c71 = _mm512_setzero_ps();
#define SYNTHD_K512_STEP(P)                                         \
  {                                                                 \
    const __m512 b0 = _mm512_load_ps(b + (P) * 32);                 \
    const __m512 b1 = _mm512_load_ps(b + (P) * 32 + 16);            \
    const float* ap = a + (P) * 8;                                  \
    __m512 ai;                                                      \
    ai = _mm512_set1_ps(ap[0]);                                     \
    c00 = _mm512_fmadd_ps(ai, b0, c00);                             \
    c01 = _mm512_fmadd_ps(ai, b1, c01);                             \
    ai = _mm512_set1_ps(ap[1]);                                     \
    c10 = _mm512_fmadd_ps(ai, b0, c10);                             \
    c11 = _mm512_fmadd_ps(ai, b1, c11);                             \
    ai = _mm512_set1_ps(ap[2]);                                     \
    c20 = _mm512_fmadd_ps(ai, b0, c20);                             \
    c21 = _mm512_fmadd_ps(ai, b1, c21);                             \
    ai = _mm512_set1_ps(ap[3]);                                     \
    c30 = _mm512_fmadd_ps(ai, b0, c30);                             \
    c31 = _mm512_fmadd_ps(ai, b1, c31);                             \
    ai = _mm512_set1_ps(ap[4]);                                     \
    c40 = _mm512_fmadd_ps(ai, b0, c40);                             \
    c41 = _mm512_fmadd_ps(ai, b1, c41);                             \
    ai = _mm512_set1_ps(ap[5]);                                     \
    c50 = _mm512_fmadd_ps(ai, b0, c50);                             \
    c51 = _mm512_fmadd_ps(ai, b1, c51);                             \
    ai = _mm512_set1_ps(ap[6]);                                     \
    c60 = _mm512_fmadd_ps(ai, b0, c60);                             \
    c61 = _mm512_fmadd_ps(ai, b1, c61);                             \
    ai = _mm512_set1_ps(ap[7]);                                     \
    c70 = _mm512_fmadd_ps(ai, b0, c70);                             \
    c71 = _mm512_fmadd_ps(ai, b1, c71);                             \
  }
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    _mm_prefetch(reinterpret_cast<const char*>(b + 32 * 8), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 32 * 8 + 64), _MM_HINT_T0);
    SYNTHD_K512_STEP(0)
    SYNTHD_K512_STEP(1)
    SYNTHD_K512_STEP(2)
    SYNTHD_K512_STEP(3)
    a += 32;
    b += 128;
  }
  for (; p < kc; ++p) {
    SYNTHD_K512_STEP(0)
    a += 8;
    b += 32;
  }
#undef SYNTHD_K512_STEP
  __m512 acc[16] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71};
  const __m512 zero = _mm512_setzero_ps();
  const __mmask16 m0 = w >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << w) - 1u);
  const __mmask16 m1 = w >= 32 ? static_cast<__mmask16>(0xFFFF)
                               : (w > 16 ? static_cast<__mmask16>((1u << (w - 16)) - 1u) : static_cast<__mmask16>(0));
  __m512 bias0 = zero, bias1 = zero;
  if (bias != nullptr) {
    bias0 = _mm512_maskz_loadu_ps(m0, bias);
    bias1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  }
  for (int i = 0; i < h; ++i) {
    float* ci = c + i * ldc;
    __m512 v0 = acc[2 * i];
    __m512 v1 = acc[2 * i + 1];
    if (load_c) {
      v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, ci), v0);
      v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, ci + 16), v1);
    }
    if (bias != nullptr) {
      v0 = _mm512_add_ps(v0, bias0);
      v1 = _mm512_add_ps(v1, bias1);
    }
    if (relu) {  // v > 0 ? v : 0 (also maps NaN to 0, as the portable kernel does)
      v0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v0, zero, _CMP_GT_OQ), v0);
      v1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v1, zero, _CMP_GT_OQ), v1);
    }
    _mm512_mask_storeu_ps(ci, m0, v0);
    _mm512_mask_storeu_ps(ci + 16, m1, v1);
  }
}

__attribute__((target("avx512f,fma"))) void Avx512Kernel8x32(int64_t kc, const float* a, const float* b, float* c,
                                                               int64_t ldc, bool load_c, const float* bias,
                                                               bool relu) {
  Avx512Tile8x32(kc, a, b, c, ldc, load_c, bias, relu, 8, 32);
}

// Edge tiles: only h <= 8 rows and w <= 32 columns of C (and of bias) are touched.
__attribute__((target("avx512f,fma"))) void Avx512Edge8x32(int64_t kc, const float* a, const float* b, float* c,
                                                             int64_t ldc, bool load_c, const float* bias, bool relu,
                                                             int h, int w) {
  Avx512Tile8x32(kc, a, b, c, ldc, load_c, bias, relu, h, w);
}

#endif  // SYNTHD_X86

}  // namespace kernels
}  // namespace train
}  // namespace synthd
