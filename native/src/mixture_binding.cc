// N-API binding of seeded generation's deterministic-mixture update. The TypeScript reference is
// `mixtureAccumulateJs` in src/model/conditional.ts; this computes the same doubles bit for bit:
// the same operations in the same order (four partial sums in `Dot`, as its `dot`), -ffp-contract=off
// (binding.gyp), and V8's exp (FdlibmExp, fdlibm_exp.h, checked against Math.exp by the tests).
//
// Exports:
//   mixtureAccumulate(x: Float32Array(n*E), n, E, V: Float64Array(r*E), r, M: Float64Array(C*r),
//                     L: Float64Array(C*r*r), K: Float64Array(C), count: number,
//                     mix: Float64Array(n)): number
//     For each latent u_i (row i of x): mix[i] += count * q(u_i) / N(u_i; 0, I_E), q the proposal
//     whose subspace basis is V (r orthonormal rows of E) and whose mixture in the subspace has C
//     Gaussians with means M, lower Cholesky factors L and log-constants K (log weight - log det / 2).
//     Returns -1, or the first i whose ratio is not finite (mix[i..] then unchanged).
//     TypeError / RangeError for wrong types or lengths (nothing written).
//   proposalShift(x: Float32Array(count*E), count, E, V: Float64Array(r*E), r, M: Float64Array(C*r),
//                 L: Float64Array(C*r*r), which: Int32Array(count), eta: Float64Array(count*r)): undefined
//     conditional.ts `proposalShiftJs`: row i of x (a prior draw) gets its subspace coordinates
//     V u replaced by M_c + L_c eta_i (c = which[i] in [0, C)), in place, rounded to float32 as a
//     Float32Array store rounds. TypeError / RangeError for wrong types, lengths or a component
//     index out of range (nothing written).
//   weightedGram(Y: Float64Array(n*E), n, E, w: Float64Array(n), T: Float64Array(E*E)): undefined
//     conditional.ts `weightedGramJs`: T[j*E + k] += sum_i w[i] Y[i,j] Y[i,k] for k <= j, rows in
//     order, rows with w[i] = 0 skipped (per element the reference's additions in its order).

#include "mixture_binding.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fdlibm_exp.h"
#include "napi_checks.h"

namespace synthd {
namespace mixture {
namespace {

using napi_checks::IsTypedArrayOf;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

// conditional.ts `dot`: four partial sums, then the tail into the first, then s0 + s1 + (s2 + s3).
inline double Dot(const double* a, const float* b, int64_t n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  int64_t j = 0;
  for (; j + 3 < n; j += 4) {
    s0 += a[j] * static_cast<double>(b[j]);
    s1 += a[j + 1] * static_cast<double>(b[j + 1]);
    s2 += a[j + 2] * static_cast<double>(b[j + 2]);
    s3 += a[j + 3] * static_cast<double>(b[j + 3]);
  }
  for (; j < n; ++j) s0 += a[j] * static_cast<double>(b[j]);
  return s0 + s1 + (s2 + s3);
}

int64_t ReadCount(Napi::Env env, const Napi::Value& v, const char* name, int64_t lo) {
  if (!v.IsNumber()) ThrowType(env, std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= static_cast<double>(lo) && d <= 9007199254740991.0 && std::floor(d) == d)) {
    ThrowRange(env, std::string(name) + " must be an integer >= " + std::to_string(lo));
  }
  return static_cast<int64_t>(d);
}

template <typename A>
A ReadArray(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, const char* name, size_t length) {
  if (!IsTypedArrayOf(v, type)) ThrowType(env, std::string(name) + " has the wrong typed array type");
  A a = v.As<A>();
  if (a.ElementLength() != length) {
    ThrowRange(env, std::string(name) + " has " + std::to_string(a.ElementLength()) + " values, expected " + std::to_string(length));
  }
  return a;
}

// The leading arguments every proposal kernel shares: rows n (info[1]), dimension E (info[2]) and
// subspace rank r (info[4], 1 <= r <= E). `rows` names n in errors.
struct Shape {
  int64_t n, E, r;
};

Shape ReadShape(Napi::Env env, const Napi::CallbackInfo& info, const char* rows) {
  Shape s{ReadCount(env, info[1], rows, 0), ReadCount(env, info[2], "E", 1), ReadCount(env, info[4], "r", 1)};
  if (s.r > s.E) ThrowRange(env, "r must be <= E");
  return s;
}

Napi::Value MixtureAccumulate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [n, E, r] = ReadShape(env, info, "n");
  if (!IsTypedArrayOf(info[7], napi_float64_array)) ThrowType(env, "K must be a Float64Array");
  Napi::Float64Array Kv = info[7].As<Napi::Float64Array>();
  const int64_t C = static_cast<int64_t>(Kv.ElementLength());
  if (C < 1) ThrowRange(env, "K must hold at least one component");
  auto x = ReadArray<Napi::Float32Array>(env, info[0], napi_float32_array, "x", static_cast<size_t>(n * E));
  auto V = ReadArray<Napi::Float64Array>(env, info[3], napi_float64_array, "V", static_cast<size_t>(r * E));
  auto M = ReadArray<Napi::Float64Array>(env, info[5], napi_float64_array, "M", static_cast<size_t>(C * r));
  auto L = ReadArray<Napi::Float64Array>(env, info[6], napi_float64_array, "L", static_cast<size_t>(C * r * r));
  if (!info[8].IsNumber()) ThrowType(env, "count must be a number");
  const double count = info[8].As<Napi::Number>().DoubleValue();
  auto mix = ReadArray<Napi::Float64Array>(env, info[9], napi_float64_array, "mix", static_cast<size_t>(n));

  const float* xp = x.Data();
  const double* Vp = V.Data();
  const double* Mp = M.Data();
  const double* Lp = L.Data();
  const double* Kp = Kv.Data();
  double* out = mix.Data();
  std::vector<double> u(static_cast<size_t>(r)), y(static_cast<size_t>(r)), t(static_cast<size_t>(C));
  const int64_t rr = r * r;
  for (int64_t i = 0; i < n; ++i) {
    const float* xi = xp + i * E;
    double uu = 0.0;
    for (int64_t a = 0; a < r; ++a) {
      const double s = Dot(Vp + a * E, xi, E);
      u[a] = s;
      uu += s * s;
    }
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < C; ++c) {
      const int64_t mo = c * r;
      const int64_t lo = c * rr;
      double yy = 0.0;
      for (int64_t a = 0; a < r; ++a) {
        double w = u[a] - Mp[mo + a];
        for (int64_t b = 0; b < a; ++b) w -= Lp[lo + a * r + b] * y[b];
        w /= Lp[lo + a * r + a];
        y[a] = w;
        yy += w * w;
      }
      const double tc = Kp[c] - 0.5 * yy;
      t[c] = tc;
      if (tc > mx) mx = tc;
    }
    double s = 0.0;
    for (int64_t c = 0; c < C; ++c) s += FdlibmExp(t[c] - mx);
    const double ratio = s * FdlibmExp(mx + 0.5 * uu);
    if (!std::isfinite(ratio)) return Napi::Number::New(env, static_cast<double>(i));
    out[i] += count * ratio;
  }
  return Napi::Number::New(env, -1);
}

Napi::Value ProposalShift(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto [n, E, r] = ReadShape(env, info, "count");
  if (!IsTypedArrayOf(info[5], napi_float64_array)) ThrowType(env, "M must be a Float64Array");
  const int64_t C = static_cast<int64_t>(info[5].As<Napi::Float64Array>().ElementLength()) / r;
  if (C < 1) ThrowRange(env, "M must hold at least one component");
  auto x = ReadArray<Napi::Float32Array>(env, info[0], napi_float32_array, "x", static_cast<size_t>(n * E));
  auto V = ReadArray<Napi::Float64Array>(env, info[3], napi_float64_array, "V", static_cast<size_t>(r * E));
  auto M = ReadArray<Napi::Float64Array>(env, info[5], napi_float64_array, "M", static_cast<size_t>(C * r));
  auto L = ReadArray<Napi::Float64Array>(env, info[6], napi_float64_array, "L", static_cast<size_t>(C * r * r));
  auto which = ReadArray<Napi::Int32Array>(env, info[7], napi_int32_array, "which", static_cast<size_t>(n));
  auto eta = ReadArray<Napi::Float64Array>(env, info[8], napi_float64_array, "eta", static_cast<size_t>(n * r));
  const int32_t* wp = which.Data();
  for (int64_t i = 0; i < n; ++i) {
    if (wp[i] < 0 || wp[i] >= C) ThrowRange(env, "which[" + std::to_string(i) + "] is not a component index");
  }
  float* xp = x.Data();
  const double* Vp = V.Data();
  const double* Mp = M.Data();
  const double* Lp = L.Data();
  const double* ep = eta.Data();
  std::vector<double> t(static_cast<size_t>(r));
  const int64_t rr = r * r;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t mo = static_cast<int64_t>(wp[i]) * r;
    const int64_t lo = static_cast<int64_t>(wp[i]) * rr;
    float* xi = xp + i * E;
    for (int64_t a = 0; a < r; ++a) {
      const double p = Dot(Vp + a * E, xi, E);
      double s = Mp[mo + a];
      for (int64_t b = 0; b <= a; ++b) s += Lp[lo + a * r + b] * ep[i * r + b];
      t[a] = s - p;
    }
    for (int64_t j = 0; j < E; ++j) {
      double s = static_cast<double>(xi[j]);
      for (int64_t a = 0; a < r; ++a) s += t[a] * Vp[a * E + j];
      xi[j] = static_cast<float>(s);
    }
  }
  return env.Undefined();
}

Napi::Value WeightedGram(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t n = ReadCount(env, info[1], "n", 0);
  const int64_t E = ReadCount(env, info[2], "E", 1);
  auto Y = ReadArray<Napi::Float64Array>(env, info[0], napi_float64_array, "Y", static_cast<size_t>(n * E));
  auto w = ReadArray<Napi::Float64Array>(env, info[3], napi_float64_array, "w", static_cast<size_t>(n));
  auto T = ReadArray<Napi::Float64Array>(env, info[4], napi_float64_array, "T", static_cast<size_t>(E * E));
  const double* Yp = Y.Data();
  const double* wp = w.Data();
  double* Tp = T.Data();
  for (int64_t i = 0; i < n; ++i) {
    const double wi = wp[i];
    if (wi == 0.0) continue;
    const double* yi = Yp + i * E;
    for (int64_t j = 0; j < E; ++j) {
      const double a = wi * yi[j];
      double* row = Tp + j * E;
      for (int64_t k = 0; k <= j; ++k) row[k] += a * yi[k];
    }
  }
  return env.Undefined();
}

}  // namespace

void RegisterMixtureBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("mixtureAccumulate", Napi::Function::New(env, MixtureAccumulate, "mixtureAccumulate"));
  exports.Set("proposalShift", Napi::Function::New(env, ProposalShift, "proposalShift"));
  exports.Set("weightedGram", Napi::Function::New(env, WeightedGram, "weightedGram"));
}

}  // namespace mixture
}  // namespace synthd
