// log(x) bit-for-bit as JavaScript's Math.log computes it in Node (V8).
//
// Why not std::log: as with exp (fdlibm_exp.h), glibc's log and V8's Math.log are both faithful
// but may differ in the last bit, and the ziggurat's tail (draws.cc) must give the same normals as
// the JavaScript reference (src/model/sampling/xoshiro.ts `fillNormalZiggurat`, which calls Math.log). V8's
// Math.log is base::ieee754::log, FreeBSD msun's e_log.c, i.e. Sun's fdlibm 5.3 __ieee754_log;
// this is that routine with the same operations in the same order. Verified against Math.log by
// test/native-draws.test.ts (random bit patterns, (0, 1], subnormals, +-0, +-Inf, NaN, 1 +- ulps).
// Compile with -ffp-contract=off (binding.gyp) so no multiply-add is fused.
//
// Original notice (fdlibm e_log.c), preserved as its licence requires:
//   ====================================================
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//
//   Developed at SunSoft, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this
//   software is freely granted, provided that this notice
//   is preserved.
//   ====================================================
//
// Method (from fdlibm):
//   1. Argument reduction: x = 2^k * (1 + f), sqrt(2)/2 < 1 + f < sqrt(2).
//   2. log(1 + f) = f - f^2/2 + s*(f^2/2 + R(s^2)), s = f / (2 + f), R a degree-14 minimax
//      polynomial in s (as Lg1..Lg7 in s^2, split into odd and even parts t1, t2).
//   3. log(x) = k*ln2_hi + (f - (hfsq - (s*(hfsq + R) + k*ln2_lo))).

#ifndef SYNTHD_NATIVE_FDLIBM_LOG_H_
#define SYNTHD_NATIVE_FDLIBM_LOG_H_

#include <cstdint>
#include <limits>

#include "fdlibm_exp.h"  // fdlibm_detail::HighWord, LowWord, FromWords

namespace synthd {

// Math.log(x) as V8 computes it (see the header comment).
inline double FdlibmLog(double x) {
  using fdlibm_detail::FromWords;
  using fdlibm_detail::HighWord;
  using fdlibm_detail::LowWord;
  static const double ln2_hi = 6.93147180369123816490e-01;  // 3fe62e42 fee00000
  static const double ln2_lo = 1.90821492927058770002e-10;  // 3dea39ef 35793c76
  static const double two54 = 1.80143985094819840000e+16;   // 43500000 00000000
  static const double Lg1 = 6.666666666666735130e-01;       // 3FE55555 55555593
  static const double Lg2 = 3.999999999940941908e-01;       // 3FD99999 9997FA04
  static const double Lg3 = 2.857142874366239149e-01;       // 3FD24924 94229359
  static const double Lg4 = 2.222219843214978396e-01;       // 3FCC71C5 1D8E78AF
  static const double Lg5 = 1.818357216161805012e-01;       // 3FC74664 96CB03DE
  static const double Lg6 = 1.531383769920937332e-01;       // 3FC39A09 D078C69F
  static const double Lg7 = 1.479819860511658591e-01;       // 3FC2F112 DF3E5244

  int32_t hx = static_cast<int32_t>(HighWord(x));
  const uint32_t lx = LowWord(x);
  int32_t k = 0;
  if (hx < 0x00100000) {  // x < 2^-1022: zero, negative or subnormal
    if (((hx & 0x7fffffff) | static_cast<int32_t>(lx)) == 0) return -std::numeric_limits<double>::infinity();
    if (hx < 0) return std::numeric_limits<double>::quiet_NaN();  // log(-#) = NaN
    k -= 54;
    x *= two54;  // subnormal: scale up
    hx = static_cast<int32_t>(HighWord(x));
  }
  if (hx >= 0x7ff00000) return x + x;  // +Inf, NaN
  k += (hx >> 20) - 1023;
  hx &= 0x000fffff;
  int32_t i = (hx + 0x95f64) & 0x100000;
  x = FromWords(static_cast<uint32_t>(hx | (i ^ 0x3ff00000)), LowWord(x));  // normalise x or x/2
  k += (i >> 20);
  const double f = x - 1.0;
  if ((0x000fffff & (2 + hx)) < 3) {  // -2^-20 <= f < 2^-20
    if (f == 0.0) {
      if (k == 0) return 0.0;
      const double dk = static_cast<double>(k);
      return dk * ln2_hi + dk * ln2_lo;
    }
    const double R = f * f * (0.5 - 0.33333333333333333 * f);
    if (k == 0) return f - R;
    const double dk = static_cast<double>(k);
    return dk * ln2_hi - ((R - dk * ln2_lo) - f);
  }
  const double s = f / (2.0 + f);
  const double dk = static_cast<double>(k);
  const double z = s * s;
  i = hx - 0x6147a;
  const double w = z * z;
  const int32_t j = 0x6b851 - hx;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  i |= j;
  const double R = t2 + t1;
  if (i > 0) {
    const double hfsq = 0.5 * f * f;
    if (k == 0) return f - (hfsq - s * (hfsq + R));
    return dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - f);
  }
  if (k == 0) return f - s * (f - R);
  return dk * ln2_hi - ((s * (f - R) - dk * ln2_lo) - f);
}

}  // namespace synthd

#endif  // SYNTHD_NATIVE_FDLIBM_LOG_H_
