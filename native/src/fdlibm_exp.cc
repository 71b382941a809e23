// Eight-lane AVX-512 and two-lane SSE2 forms of FdlibmExp (fdlibm_exp.h), bit-identical to it.
//
// The scalar routine branches on the range of |x|; with logits those branches are unpredictable,
// which costs more than the arithmetic. Here each lane evaluates the same IEEE-754 operations in
// the same order as the scalar branch it would take, and the results are selected with masks, so
// every lane's value is exactly FdlibmExp's (no operation is reassociated, fused or approximated).
// Lanes outside the handled range (|x| > 700, NaN, x == 1) send the pair to the scalar routine.
// Without SSE2 (non-x86 builds) FdlibmExpArray is the scalar loop. The AVX-512 form (function
// target attribute, chosen at run time by train/cpu.h's ActiveIsa, so SYNTHD_ISA lowers it) does
// the same operations on eight lanes and keeps k in doubles (exact integers) until the 2^k scaling.
//
// Ranges (hx = high word of |x|), as in fdlibm:
//   tiny:  |x| < 2^-28                     exp = 1 + x
//   small: 2^-28 <= |x| <= 0.5 ln2         k = 0, exp = 1 - ((x*c)/(c - 2) - x)
//   mid:   0.5 ln2 < |x| < 1.5 ln2         k = +-1, hi = x -+ ln2HI, lo = +-ln2LO
//   big:   1.5 ln2 <= |x| <= 700           k = (int)(x/ln2 +- 0.5), hi = x - k*ln2HI, lo = k*ln2LO
//   then r = hi - lo, c = r - r^2*P(r^2), exp = 2^k * (1 - ((lo - (r*c)/(2 - c)) - hi)).
// |x| <= 700 keeps -1010 <= k <= 1010, so 2^k is a normal double and needs no second scaling.

#include "fdlibm_exp.h"

#if defined(__SSE2__)
#include <emmintrin.h>  // SSE2: part of the x86-64 baseline
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include "train/cpu.h"
#define SYNTHD_EXP_AVX512 1
#endif

namespace synthd {

#if defined(__SSE2__)

namespace {

inline __m128d Select(__m128d mask, __m128d a, __m128d b) {  // mask ? a : b
  return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
}

inline __m128i SelectI(__m128i mask, __m128i a, __m128i b) {
  return _mm_or_si128(_mm_and_si128(mask, a), _mm_andnot_si128(mask, b));
}

// Returns false (and leaves out untouched) when a lane needs the scalar routine.
inline bool Exp2Lanes(__m128d x, __m128d* out) {
  const __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
  const __m128d ax = _mm_and_pd(x, abs_mask);
  // !(|x| <= 700) is true for NaN too; x == 1 is V8's special case.
  const __m128d scalar = _mm_or_pd(_mm_cmpnle_pd(ax, _mm_set1_pd(700.0)), _mm_cmpeq_pd(x, _mm_set1_pd(1.0)));
  if (_mm_movemask_pd(scalar) != 0) return false;

  // Range masks from the high word of |x|, exactly fdlibm's integer comparisons. |x| is
  // non-negative, so its bits compare as signed 64-bit integers; compare the whole double against
  // the bound's double instead (equivalent for the high-word bounds with a zero low word, since
  // hx > B  <=>  |x| >= double(B+1, 0) and hx < B  <=>  |x| < double(B, 0)).
  const __m128d lim_small = _mm_castsi128_pd(_mm_set1_epi64x(0x3FD62E4300000000LL));  // hx > 0x3FD62E42
  const __m128d lim_big = _mm_castsi128_pd(_mm_set1_epi64x(0x3FF0A2B200000000LL));    // hx >= 0x3FF0A2B2
  const __m128d lim_tiny = _mm_castsi128_pd(_mm_set1_epi64x(0x3E30000000000000LL));   // hx < 0x3E300000
  const __m128d reduced = _mm_cmpge_pd(ax, lim_small);  // mid or big
  const __m128d big = _mm_cmpge_pd(ax, lim_big);
  const __m128d mid = _mm_andnot_pd(big, reduced);
  const __m128d tiny = _mm_cmplt_pd(ax, lim_tiny);
  // xsb: sign bit set. Same as x < 0 here: x is not NaN, and -0 is a tiny lane (k unused).
  const __m128d neg = _mm_cmplt_pd(x, _mm_setzero_pd());

  const __m128d one = _mm_set1_pd(1.0);
  const __m128d two = _mm_set1_pd(2.0);
  const __m128d ln2HI = _mm_set1_pd(6.93147180369123816490e-01);
  const __m128d ln2LO = _mm_set1_pd(1.90821492927058770002e-10);
  const __m128d invln2 = _mm_set1_pd(1.44269504088896338700e+00);
  const __m128d half = _mm_set1_pd(0.5);
  const __m128d neg_half = _mm_set1_pd(-0.5);

  // big: k = (int)(invln2 * x + halF[xsb]) (truncation, as the C cast), t = k.
  const __m128i k_big = _mm_cvttpd_epi32(_mm_add_pd(_mm_mul_pd(invln2, x), Select(neg, neg_half, half)));
  const __m128d t_big = _mm_cvtepi32_pd(k_big);
  // The 64-bit lane masks, repacked as int32 lanes in cvttpd's layout: [lane0, lane1, ...].
  const auto to_i32_lanes = [](__m128d m) {
    return _mm_shuffle_epi32(_mm_castpd_si128(m), _MM_SHUFFLE(3, 1, 2, 0));
  };
  // mid: k = 1 - 2*xsb.
  const __m128i k_mid = SelectI(to_i32_lanes(neg), _mm_set1_epi32(-1), _mm_set1_epi32(1));

  const __m128d hi_big = _mm_sub_pd(x, _mm_mul_pd(t_big, ln2HI));
  const __m128d lo_big = _mm_mul_pd(t_big, ln2LO);
  const __m128d hi_mid = _mm_sub_pd(x, Select(neg, _mm_set1_pd(-6.93147180369123816490e-01), ln2HI));
  const __m128d lo_mid = Select(neg, _mm_set1_pd(-1.90821492927058770002e-10), ln2LO);
  const __m128d hi = Select(big, hi_big, hi_mid);
  const __m128d lo = Select(big, lo_big, lo_mid);
  // k in the low two int32 lanes: big ? k_big : mid ? +-1 : 0.
  const __m128i k = SelectI(to_i32_lanes(big), k_big, _mm_and_si128(to_i32_lanes(mid), k_mid));

  // Primary range: r = hi - lo for reduced lanes, else x itself.
  const __m128d r = Select(reduced, _mm_sub_pd(hi, lo), x);
  const __m128d t = _mm_mul_pd(r, r);
  __m128d poly = _mm_mul_pd(t, _mm_set1_pd(4.13813679705723846039e-08));   // t*P5
  poly = _mm_mul_pd(t, _mm_add_pd(_mm_set1_pd(-1.65339022054652515390e-06), poly));  // t*(P4+..)
  poly = _mm_mul_pd(t, _mm_add_pd(_mm_set1_pd(6.61375632143793436117e-05), poly));   // t*(P3+..)
  poly = _mm_mul_pd(t, _mm_add_pd(_mm_set1_pd(-2.77777777770155933842e-03), poly));  // t*(P2+..)
  poly = _mm_mul_pd(t, _mm_add_pd(_mm_set1_pd(1.66666666666666019037e-01), poly));   // t*(P1+..)
  const __m128d c = _mm_sub_pd(r, poly);
  // One division serves both forms: (r*c)/(c - 2) for k == 0, (r*c)/(2 - c) otherwise.
  const __m128d q = _mm_div_pd(_mm_mul_pd(r, c), Select(reduced, _mm_sub_pd(two, c), _mm_sub_pd(c, two)));
  const __m128d res_small = _mm_sub_pd(one, _mm_sub_pd(q, r));
  const __m128d y = _mm_sub_pd(one, _mm_sub_pd(_mm_sub_pd(lo, q), hi));
  // 2^k: biased exponent (k + 1023) << 52, k in [-1010, 1010].
  const __m128i k64 = _mm_unpacklo_epi32(_mm_add_epi32(k, _mm_set1_epi32(1023)), _mm_setzero_si128());
  const __m128d twopk = _mm_castsi128_pd(_mm_slli_epi64(k64, 52));
  const __m128d res_reduced = _mm_mul_pd(y, twopk);

  *out = Select(tiny, _mm_add_pd(one, x), Select(reduced, res_reduced, res_small));
  return true;
}

#if defined(SYNTHD_EXP_AVX512)
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own _mm512_undefined_* placeholders.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Exp2Lanes on eight lanes; false (out untouched) when a lane needs the scalar routine.
__attribute__((target("avx512f"))) inline bool Exp8Lanes(__m512d x, __m512d* out) {
  const __m512d ax = _mm512_abs_pd(x);
  // !(|x| <= 700) (unordered: true for NaN); x == 1 is V8's special case.
  const __mmask8 scalar = _mm512_cmp_pd_mask(ax, _mm512_set1_pd(700.0), _CMP_NLE_UQ) |
                          _mm512_cmp_pd_mask(x, _mm512_set1_pd(1.0), _CMP_EQ_OQ);
  if (scalar != 0) return false;
  const __mmask8 reduced = _mm512_cmp_pd_mask(ax, _mm512_castsi512_pd(_mm512_set1_epi64(0x3FD62E4300000000LL)), _CMP_GE_OQ);
  const __mmask8 big = _mm512_cmp_pd_mask(ax, _mm512_castsi512_pd(_mm512_set1_epi64(0x3FF0A2B200000000LL)), _CMP_GE_OQ);
  const __mmask8 mid = static_cast<__mmask8>(reduced & ~big);
  const __mmask8 tiny = _mm512_cmp_pd_mask(ax, _mm512_castsi512_pd(_mm512_set1_epi64(0x3E30000000000000LL)), _CMP_LT_OQ);
  const __mmask8 neg = _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ);
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d two = _mm512_set1_pd(2.0);
  const __m512d ln2HI = _mm512_set1_pd(6.93147180369123816490e-01);
  const __m512d ln2LO = _mm512_set1_pd(1.90821492927058770002e-10);
  const __m512d neg_ln2HI = _mm512_set1_pd(-6.93147180369123816490e-01);
  const __m512d neg_ln2LO = _mm512_set1_pd(-1.90821492927058770002e-10);
  // big: k = (int)(invln2 * x + halF[xsb]) (truncation, as the C cast), t = k.
  const __m512d halfs = _mm512_mask_blend_pd(neg, _mm512_set1_pd(0.5), _mm512_set1_pd(-0.5));
  const __m256i k_big = _mm512_cvttpd_epi32(_mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(1.44269504088896338700e+00), x), halfs));
  const __m512d t_big = _mm512_cvtepi32_pd(k_big);
  // mid: k = 1 - 2*xsb. k as a double: t_big, +-1 or 0.
  const __m512d k_mid = _mm512_maskz_mov_pd(mid, _mm512_mask_blend_pd(neg, one, _mm512_set1_pd(-1.0)));
  const __m512d kd = _mm512_mask_blend_pd(big, k_mid, t_big);
  const __m512d hi_big = _mm512_sub_pd(x, _mm512_mul_pd(t_big, ln2HI));
  const __m512d lo_big = _mm512_mul_pd(t_big, ln2LO);
  const __m512d hi_mid = _mm512_sub_pd(x, _mm512_mask_blend_pd(neg, ln2HI, neg_ln2HI));
  const __m512d lo_mid = _mm512_mask_blend_pd(neg, ln2LO, neg_ln2LO);
  const __m512d hi = _mm512_mask_blend_pd(big, hi_mid, hi_big);
  const __m512d lo = _mm512_mask_blend_pd(big, lo_mid, lo_big);
  // Primary range: r = hi - lo for reduced lanes, else x itself.
  const __m512d r = _mm512_mask_blend_pd(reduced, x, _mm512_sub_pd(hi, lo));
  const __m512d t = _mm512_mul_pd(r, r);
  __m512d poly = _mm512_mul_pd(t, _mm512_set1_pd(4.13813679705723846039e-08));
  poly = _mm512_mul_pd(t, _mm512_add_pd(_mm512_set1_pd(-1.65339022054652515390e-06), poly));
  poly = _mm512_mul_pd(t, _mm512_add_pd(_mm512_set1_pd(6.61375632143793436117e-05), poly));
  poly = _mm512_mul_pd(t, _mm512_add_pd(_mm512_set1_pd(-2.77777777770155933842e-03), poly));
  poly = _mm512_mul_pd(t, _mm512_add_pd(_mm512_set1_pd(1.66666666666666019037e-01), poly));
  const __m512d c = _mm512_sub_pd(r, poly);
  const __m512d q = _mm512_div_pd(_mm512_mul_pd(r, c), _mm512_mask_blend_pd(reduced, _mm512_sub_pd(c, two), _mm512_sub_pd(two, c)));
  const __m512d res_small = _mm512_sub_pd(one, _mm512_sub_pd(q, r));
  const __m512d yv = _mm512_sub_pd(one, _mm512_sub_pd(_mm512_sub_pd(lo, q), hi));
  // 2^k: biased exponent (k + 1023) << 52, k in [-1010, 1010] (exact integer conversions).
  const __m256i kb = _mm512_cvttpd_epi32(_mm512_add_pd(kd, _mm512_set1_pd(1023.0)));
  const __m512d twopk = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(kb), 52));
  const __m512d res_reduced = _mm512_mul_pd(yv, twopk);
  *out = _mm512_mask_blend_pd(tiny, _mm512_mask_blend_pd(reduced, res_small, res_reduced), _mm512_add_pd(one, x));
  return true;
}

__attribute__((target("avx512f"))) void FdlibmExpArrayAvx512(const double* x, double* y, size_t n) {
  size_t i = 0;
  __m512d v;
  for (; i + 8 <= n; i += 8) {
    if (Exp8Lanes(_mm512_loadu_pd(x + i), &v)) {
      _mm512_storeu_pd(y + i, v);
    } else {
      for (size_t j = i; j < i + 8; ++j) y[j] = FdlibmExp(x[j]);
    }
  }
  if (i < n) {  // the tail: zeros in the unused lanes (exp(0) is a tiny lane), a masked store
    const __mmask8 m = static_cast<__mmask8>((1u << (n - i)) - 1u);
    if (Exp8Lanes(_mm512_maskz_loadu_pd(m, x + i), &v)) {
      _mm512_mask_storeu_pd(y + i, m, v);
    } else {
      for (; i < n; ++i) y[i] = FdlibmExp(x[i]);
    }
  }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void FdlibmExpArray(const double* x, double* y, size_t n) {
#if defined(SYNTHD_EXP_AVX512)
  static const bool avx512 = train::ActiveIsa() == train::Isa::kAvx512;
  if (avx512) {
    FdlibmExpArrayAvx512(x, y, n);
    return;
  }
#endif
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    __m128d v;
    if (Exp2Lanes(_mm_loadu_pd(x + i), &v)) {
      _mm_storeu_pd(y + i, v);
    } else {
      const double a = FdlibmExp(x[i]);
      const double b = FdlibmExp(x[i + 1]);
      y[i] = a;
      y[i + 1] = b;
    }
  }
  for (; i < n; ++i) y[i] = FdlibmExp(x[i]);
}

#else  // no SSE2 (not x86-64): the scalar routine

void FdlibmExpArray(const double* x, double* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = FdlibmExp(x[i]);
}

#endif

}  // namespace synthd
