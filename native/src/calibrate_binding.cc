// N-API binding of the raking core (calibrate.h). The TypeScript side is
// src/model/calibrate-native.ts, which documents the class; calibrate.ts `rakingSweeps` is the
// reference it matches bit for bit.
//
//   new Raking(columns: Int32Array[], marginals: {f, g, kg, probs: Float64Array}[], sweeps, bound,
//              minRatio, blockRows, initial?: Float64Array | null, exactSweeps?: number,
//              parallel?: boolean)
//   (exactSweeps: the last sweeps that spread clipped mass; undefined: all, more than sweeps: all)
//   parallel?: boolean (default true): run the passes on the compute pool, else on this thread
//   run(maxSteps): number      runs up to maxSteps more marginal steps; returns the steps done
//   stepsTotal(): number       sweeps x marginals
//   weights(): Float64Array    the final weights (Error until every step is done)
//   dispose(): void            frees the pool's copy now (later calls throw); idempotent
//
// Calls are synchronous on the calling JavaScript thread (plus the compute pool's threads), one
// run() per slice of steps, so the caller yields to its event loop between slices as it does
// between generation chunks. Every argument is checked before anything is computed: TypeError for
// wrong types, RangeError for bad values, lengths and codes outside a marginal's table (the
// reference would index past its arrays), Error for a disposed object; never a crash.

#include "calibrate_binding.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "calibrate.h"
#include "napi_checks.h"

namespace synthd {
namespace calibrate {

namespace {

using napi_checks::IsIntegerIn;
using napi_checks::IsTypedArrayOf;
using napi_checks::JsString;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

double ReadIntegerArg(Napi::Env env, const Napi::Value& v, const std::string& name, double lo, double hi) {
  if (!v.IsNumber()) ThrowType(env, name + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!IsIntegerIn(d, lo, hi)) {
    ThrowRange(env, name + " must be an integer in [" + JsString(env, lo) + ", " + JsString(env, hi) + "], got " +
                        JsString(env, d));
  }
  return d;
}

class RakingWrap : public Napi::ObjectWrap<RakingWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Raking",
                       {
                           InstanceMethod<&RakingWrap::Run>("run"),
                           InstanceMethod<&RakingWrap::StepsTotal>("stepsTotal"),
                           InstanceMethod<&RakingWrap::Weights>("weights"),
                           InstanceMethod<&RakingWrap::Dispose>("dispose"),
                       });
  }

  explicit RakingWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RakingWrap>(info) {
    Napi::Env env = info.Env();
    // columns
    if (!info[0].IsArray()) ThrowType(env, "columns must be an array of Int32Array");
    Napi::Array cols = info[0].As<Napi::Array>();
    const uint32_t F = cols.Length();
    std::vector<Napi::Int32Array> arrays;
    std::vector<const int32_t*> columns;
    size_t M = 0;
    for (uint32_t f = 0; f < F; ++f) {
      Napi::Value v = cols.Get(f);
      if (!IsTypedArrayOf(v, napi_int32_array)) ThrowType(env, "columns[" + std::to_string(f) + "] must be an Int32Array");
      arrays.push_back(v.As<Napi::Int32Array>());
      if (f == 0) M = arrays.back().ElementLength();
      if (arrays.back().ElementLength() != M) ThrowRange(env, "every feature needs one code per row");
      columns.push_back(arrays.back().Data());
    }
    if (M == 0) ThrowRange(env, "raking needs at least one row");
    if (M > (size_t{1} << 31)) ThrowRange(env, "raking takes at most 2^31 rows");

    // marginals
    if (!info[1].IsArray()) ThrowType(env, "marginals must be an array of {f, g, kg, probs}");
    Napi::Array ms = info[1].As<Napi::Array>();
    std::vector<Marginal> marginals;
    marginals.reserve(ms.Length());
    // Smallest and largest code per feature, taken when a marginal first names the feature.
    std::vector<std::pair<int32_t, int32_t>> range(F, {0, -1});
    const auto code_range = [&](int32_t f) -> std::pair<int32_t, int32_t> {
      auto& r = range[static_cast<size_t>(f)];
      if (r.second < r.first) {
        const int32_t* c = columns[static_cast<size_t>(f)];
        int32_t lo = c[0], hi = c[0];
        for (size_t i = 1; i < M; ++i) {
          lo = std::min(lo, c[i]);
          hi = std::max(hi, c[i]);
        }
        r = {lo, hi};
      }
      return r;
    };
    for (uint32_t i = 0; i < ms.Length(); ++i) {
      const std::string at = "marginals[" + std::to_string(i) + "]";
      Napi::Value mv = ms.Get(i);
      if (!mv.IsObject()) ThrowType(env, at + " must be an object {f, g, kg, probs}");
      Napi::Object o = mv.As<Napi::Object>();
      Marginal m;
      m.f = static_cast<int32_t>(ReadIntegerArg(env, o.Get("f"), at + ".f", 0, static_cast<double>(F) - 1));
      m.g = static_cast<int32_t>(ReadIntegerArg(env, o.Get("g"), at + ".g", -1, static_cast<double>(F) - 1));
      m.kg = static_cast<int64_t>(ReadIntegerArg(env, o.Get("kg"), at + ".kg", 1, 2147483647.0));
      if (m.g < 0 && m.kg != 1) ThrowRange(env, at + ": a 1-way marginal (g = -1) needs kg = 1");
      Napi::Value pv = o.Get("probs");
      if (!IsTypedArrayOf(pv, napi_float64_array)) ThrowType(env, at + ".probs must be a Float64Array");
      Napi::Float64Array p = pv.As<Napi::Float64Array>();
      const size_t C = p.ElementLength();
      if (C == 0 || C % static_cast<size_t>(m.kg) != 0) {
        ThrowRange(env, at + ".probs has " + std::to_string(C) + " cells, expected a positive multiple of kg = " +
                            std::to_string(m.kg));
      }
      const int64_t kf = static_cast<int64_t>(C) / m.kg;
      const auto check = [&](int32_t f, int64_t k) {
        const auto [lo, hi] = code_range(f);
        if (lo < 0 || hi >= k) {
          ThrowRange(env, at + ": columns[" + std::to_string(f) + "] holds code " + std::to_string(lo < 0 ? lo : hi) +
                              ", outside the table's [0, " + std::to_string(k) + ")");
        }
      };
      check(m.f, kf);
      if (m.g >= 0) check(m.g, m.kg);
      m.probs.assign(p.Data(), p.Data() + C);
      marginals.push_back(std::move(m));
    }

    Settings s;
    s.sweeps = static_cast<int64_t>(ReadIntegerArg(env, info[2], "sweeps", 0, 2147483647.0));
    if (!info[3].IsNumber()) ThrowType(env, "bound must be a number");
    s.bound = info[3].As<Napi::Number>().DoubleValue();
    if (!(s.bound > 1)) ThrowRange(env, "bound must be > 1");
    if (!info[4].IsNumber()) ThrowType(env, "minRatio must be a number");
    s.min_ratio = info[4].As<Napi::Number>().DoubleValue();
    if (!(s.min_ratio > 0 && s.min_ratio <= 1)) ThrowRange(env, "minRatio must be in (0, 1]");
    s.block_rows = static_cast<int64_t>(ReadIntegerArg(env, info[5], "blockRows", 1, 2147483648.0));

    const double* initial = nullptr;
    if (info.Length() > 6 && !info[6].IsUndefined() && !info[6].IsNull()) {
      if (!IsTypedArrayOf(info[6], napi_float64_array)) ThrowType(env, "initial must be a Float64Array");
      Napi::Float64Array a = info[6].As<Napi::Float64Array>();
      if (a.ElementLength() != M) ThrowRange(env, "initial must hold one weight per row");
      initial = a.Data();
      // The sum in the core's block order (calibrate.h).
      const double sum = BlockOrderSum(initial, M, static_cast<size_t>(s.block_rows));
      if (!(sum > 0)) ThrowRange(env, "initial weights must have a positive sum");
    }
    s.exact_sweeps = s.sweeps;
    if (info.Length() > 7 && !info[7].IsUndefined()) {
      s.exact_sweeps = std::min(s.sweeps, static_cast<int64_t>(ReadIntegerArg(env, info[7], "exactSweeps", 0, 2147483647.0)));
    }
    if (info.Length() > 8 && !info[8].IsUndefined()) {
      if (!info[8].IsBoolean()) ThrowType(env, "parallel must be a boolean");
      s.parallel = info[8].As<Napi::Boolean>().Value();
    }
    try {
      core_.reset(new Raking(columns, static_cast<int64_t>(M), std::move(marginals), s, initial));
    } catch (const std::bad_alloc&) {
      throw Napi::Error::New(env, "Raking: out of memory");
    }
  }

 private:
  std::unique_ptr<Raking> core_;

  Raking& Core(Napi::Env env) {
    if (!core_) throw Napi::Error::New(env, "Raking is disposed");
    return *core_;
  }

  // run(maxSteps): steps done in all
  Napi::Value Run(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Raking& r = Core(env);
    const double n = ReadIntegerArg(env, info[0], "maxSteps", 0, napi_checks::kMaxSafeInteger);
    try {
      return Napi::Number::New(env, static_cast<double>(r.Run(static_cast<int64_t>(std::min(n, 9.0e18)))));
    } catch (const std::bad_alloc&) {
      throw Napi::Error::New(env, "Raking.run: out of memory");
    } catch (const std::exception& e) {
      throw Napi::Error::New(env, std::string("Raking.run: ") + e.what());
    }
  }

  Napi::Value StepsTotal(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(Core(info.Env()).steps_total()));
  }

  // weights(): Float64Array(M)
  Napi::Value Weights(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Raking& r = Core(env);
    if (r.steps_done() < r.steps_total()) {
      throw Napi::Error::New(env, "Raking.weights: " + std::to_string(r.steps_total() - r.steps_done()) +
                                      " steps are left (call run until it returns stepsTotal())");
    }
    Napi::Float64Array out = Napi::Float64Array::New(env, static_cast<size_t>(r.rows()));
    r.Finish(out.Data());
    return out;
  }

  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    core_.reset();
    return info.Env().Undefined();
  }
};

}  // namespace

void RegisterRakingBindings(Napi::Env env, Napi::Object exports) { exports.Set("Raking", RakingWrap::Define(env)); }

}  // namespace calibrate
}  // namespace synthd
