#include "vmath.h"

#include <cmath>
#include <cstring>

namespace synthd {
namespace train {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(SYNTHD_NO_CLONES)
#define SYNTHD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SYNTHD_CLONES
#endif

namespace {

constexpr int kLanes = 16;

inline float BitsToFloat(int32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

inline int32_t FloatToBits(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Cephes expf core (see vmath.h); branch-free so loops over it vectorise.
inline float ExpOne(float x) {
  x = x < -87.3f ? -87.3f : x;
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln 2) by the 1.5 * 2^23 trick (exact for |x / ln 2| < 2^22).
  const float t = x * 1.44269504088896341f + 12582912.0f;
  const float n = t - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  return y * BitsToFloat((static_cast<int32_t>(n) + 127) << 23);
}

// Cephes logf core for finite x > 0 (normal numbers).
inline float LogOne(float x) {
  const int32_t bits = FloatToBits(x);
  float e = static_cast<float>((bits >> 23) - 127);
  float m = BitsToFloat((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1.0f : e;
  const float f = m - 1.0f;
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y = y + e * -2.12194440e-4f;
  y = y - 0.5f * z;
  return f + y + e * 0.693359375f;
}

// sum over 16 lanes; the lanes are combined pairwise in a fixed order.
inline double CombineLanes(const float* acc) {
  double s = 0.0;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

}  // namespace

SYNTHD_CLONES void ExpArray(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = ExpOne(x[i]);
}

SYNTHD_CLONES void LogArray(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = LogOne(x[i]);
}

SYNTHD_CLONES double SumFloat(const float* x, int64_t n) {
  float acc[kLanes] = {0};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j];
  double s = CombineLanes(acc);
  for (; i < n; ++i) s += x[i];
  return s;
}

SYNTHD_CLONES void LayerNormRows(const float* x, int64_t rows, int64_t H, const float* gamma, const float* beta,
                                 float eps, float* xhat, float* rstd, float* u) {
  const float invH = 1.0f / static_cast<float>(H);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * H;
    float acc[kLanes] = {0};
    int64_t i = 0;
    for (; i + kLanes <= H; i += kLanes)
      for (int j = 0; j < kLanes; ++j) acc[j] += xr[i + j];
    float s = 0.0f;
    for (int j = 0; j < kLanes; ++j) s += acc[j];
    for (; i < H; ++i) s += xr[i];
    const float mean = s * invH;
    float acc2[kLanes] = {0};
    i = 0;
    for (; i + kLanes <= H; i += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        const float d = xr[i + j] - mean;
        acc2[j] += d * d;
      }
    float s2 = 0.0f;
    for (int j = 0; j < kLanes; ++j) s2 += acc2[j];
    for (; i < H; ++i) {
      const float d = xr[i] - mean;
      s2 += d * d;
    }
    const float var = s2 * invH;
    const float rs = 1.0f / std::sqrt(var + eps);
    if (rstd != nullptr) rstd[r] = rs;
    float* ur = u + r * H;
    if (xhat != nullptr) {
      float* xh = xhat + r * H;
      for (int64_t k = 0; k < H; ++k) {
        const float v = (xr[k] - mean) * rs;
        xh[k] = v;
        ur[k] = gamma[k] * v + beta[k];
      }
    } else {
      for (int64_t k = 0; k < H; ++k) ur[k] = gamma[k] * ((xr[k] - mean) * rs) + beta[k];
    }
  }
}

SYNTHD_CLONES void LayerNormBackwardRows(const float* du, const float* xhat, const float* rstd, int64_t rows,
                                         int64_t H, const float* gamma, float* dx, bool accumulate) {
  const float invH = 1.0f / static_cast<float>(H);
  for (int64_t r = 0; r < rows; ++r) {
    const float* dur = du + r * H;
    const float* xh = xhat + r * H;
    float a1[kLanes] = {0};
    float a2[kLanes] = {0};
    int64_t i = 0;
    for (; i + kLanes <= H; i += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        const float g = dur[i + j] * gamma[i + j];
        a1[j] += g;
        a2[j] += g * xh[i + j];
      }
    float s1 = 0.0f, s2 = 0.0f;
    for (int j = 0; j < kLanes; ++j) {
      s1 += a1[j];
      s2 += a2[j];
    }
    for (; i < H; ++i) {
      const float g = dur[i] * gamma[i];
      s1 += g;
      s2 += g * xh[i];
    }
    const float m1 = s1 * invH;
    const float m2 = s2 * invH;
    const float rs = rstd[r];
    float* dxr = dx + r * H;
    if (accumulate) {
      for (int64_t k = 0; k < H; ++k) dxr[k] += rs * (dur[k] * gamma[k] - m1 - xh[k] * m2);
    } else {
      for (int64_t k = 0; k < H; ++k) dxr[k] = rs * (dur[k] * gamma[k] - m1 - xh[k] * m2);
    }
  }
}

SYNTHD_CLONES void ColumnSums(const float* x, const float* times, int64_t rows, int64_t ld, int64_t c0, int64_t c1,
                              float* out) {
  const int64_t w = c1 - c0;
  for (int64_t j = 0; j < w; ++j) out[j] = 0.0f;
  if (times == nullptr) {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * ld + c0;
      for (int64_t j = 0; j < w; ++j) out[j] += xr[j];
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * ld + c0;
      const float* tr = times + r * ld + c0;
      for (int64_t j = 0; j < w; ++j) out[j] += xr[j] * tr[j];
    }
  }
}

SYNTHD_CLONES void FeatureSoftmaxRows(float* x, int64_t rows, int64_t D, const int64_t* off, int64_t F,
                                      float* scratch) {
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = x + r * D;
    for (int64_t f = 0; f < F; ++f) {
      float m = xr[off[f]];
      for (int64_t k = off[f] + 1; k < off[f + 1]; ++k) m = xr[k] > m ? xr[k] : m;
      for (int64_t k = off[f]; k < off[f + 1]; ++k) scratch[k] = xr[k] - m;
    }
    for (int64_t k = 0; k < D; ++k) xr[k] = ExpOne(scratch[k]);
    for (int64_t f = 0; f < F; ++f) {
      float s = 0.0f;
      for (int64_t k = off[f]; k < off[f + 1]; ++k) s += xr[k];
      for (int64_t k = off[f]; k < off[f + 1]; ++k) xr[k] = xr[k] / s;
    }
  }
}

SYNTHD_CLONES void FeatureSoftmaxBackwardRows(const float* p, float* dp, int64_t rows, int64_t D, const int64_t* off,
                                              int64_t F) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* pr = p + r * D;
    float* dr = dp + r * D;
    for (int64_t f = 0; f < F; ++f) {
      float s = 0.0f;
      for (int64_t k = off[f]; k < off[f + 1]; ++k) s += pr[k] * dr[k];
      for (int64_t k = off[f]; k < off[f + 1]; ++k) dr[k] = pr[k] * (dr[k] - s);
    }
  }
}

SYNTHD_CLONES void ReluMask(const float* a, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = a[i] > 0.0f ? dx[i] : 0.0f;
}

SYNTHD_CLONES void AddInPlace(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

SYNTHD_CLONES void AdamUpdate(float* w, float* m, float* v, const float* g, int64_t n, float b1, float one_minus_b1,
                              float b2, float one_minus_b2, float lr_c1, float c2, float eps) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] * b1 + gi * one_minus_b1;
    const float vi = v[i] * b2 + (gi * gi) * one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i] - (mi * lr_c1) / (std::sqrt(vi / c2) + eps);
  }
}

SYNTHD_CLONES bool AllFinite(const float* x, int64_t n) {
  // x - x is 0 for finite x and NaN for +-Inf / NaN; NaN poisons the sum.
  float acc[kLanes] = {0};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += x[i + j] - x[i + j];
  float s = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  for (; i < n; ++i) s += x[i] - x[i];
  return s == 0.0f;
}

}  // namespace train
}  // namespace synthd
