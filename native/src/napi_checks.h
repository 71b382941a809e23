// Argument checking shared by the N-API bindings (addon.cc, train/core_binding.cc): every problem
// becomes a JavaScript TypeError (wrong type) or RangeError (bad value or length), never a crash.

#ifndef SYNTHD_NATIVE_NAPI_CHECKS_H_
#define SYNTHD_NATIVE_NAPI_CHECKS_H_

#include <napi.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace synthd {
namespace napi_checks {

constexpr double kMaxSafeInteger = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER
constexpr double kMaxCardinality = 2147483647.0;        // int32 codes

// Formats a number exactly as JavaScript's String(x) does, so messages match the JS code.
inline std::string JsString(Napi::Env env, double x) { return Napi::Number::New(env, x).ToString().Utf8Value(); }

[[noreturn]] inline void ThrowType(Napi::Env env, const std::string& msg) { throw Napi::TypeError::New(env, msg); }

[[noreturn]] inline void ThrowRange(Napi::Env env, const std::string& msg) { throw Napi::RangeError::New(env, msg); }

// A RangeError with code LOGITS_NOT_FINITE: a logit (or logit / temperature) that is not finite
// stopped the sampling kernel. The same code as `logitsError` in src/model/sampling.ts, so the
// worker can tell a client's oversized latents from a fault without reading messages.
[[noreturn]] inline void ThrowLogits(Napi::Env env, const std::string& msg) {
  Napi::Error e = Napi::RangeError::New(env, msg);
  e.Set("code", Napi::String::New(env, "LOGITS_NOT_FINITE"));
  throw e;
}

inline bool IsTypedArrayOf(const Napi::Value& v, napi_typedarray_type type) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == type;
}

// `v` as the typed array A (of N-API type `type`); a TypeError "<name> must be <what>" otherwise,
// `what` naming the type with its article ("an Int32Array", "a Float64Array").
template <typename A>
A ReadTypedArray(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, const std::string& name, const std::string& what) {
  if (!IsTypedArrayOf(v, type)) ThrowType(env, name + " must be " + what);
  return v.As<A>();
}

// An integral double in [lo, hi].
inline bool IsIntegerIn(double v, double lo, double hi) {
  return std::isfinite(v) && std::floor(v) == v && v >= lo && v <= hi;
}

// Reads and checks cardinalities: Int32Array or Array of integers in [1, 2^31 - 1].
inline std::vector<int32_t> ReadCardinalities(Napi::Env env, const Napi::Value& v) {
  std::vector<int32_t> cards;
  const auto check = [&](size_t i, double k) {
    if (!IsIntegerIn(k, 1.0, kMaxCardinality)) {
      ThrowRange(env, "cardinalities[" + std::to_string(i) + "] must be an integer in [1, 2147483647], got " +
                          JsString(env, k));
    }
    cards.push_back(static_cast<int32_t>(k));
  };
  if (IsTypedArrayOf(v, napi_int32_array)) {
    Napi::Int32Array a = v.As<Napi::Int32Array>();
    cards.reserve(a.ElementLength());
    for (size_t i = 0; i < a.ElementLength(); ++i) check(i, static_cast<double>(a[i]));
    return cards;
  }
  if (v.IsArray()) {
    Napi::Array a = v.As<Napi::Array>();
    const uint32_t len = a.Length();
    cards.reserve(len);
    for (uint32_t i = 0; i < len; ++i) {
      Napi::Value k = a.Get(i);
      if (!k.IsNumber()) ThrowType(env, "cardinalities[" + std::to_string(i) + "] must be a number");
      check(i, k.As<Napi::Number>().DoubleValue());
    }
    return cards;
  }
  ThrowType(env, "cardinalities must be an Int32Array or an array of integers");
}

/**
 * The sampling temperature argument: a finite number > 0 whose reciprocal is finite.
 * @throws TypeError when not a number; RangeError otherwise.
 */
inline double ReadTemperature(Napi::Env env, const Napi::Value& v) {
  if (!v.IsNumber()) ThrowType(env, "temperature must be a number");
  const double temperature = v.As<Napi::Number>().DoubleValue();
  if (!(std::isfinite(temperature) && temperature > 0.0)) {
    ThrowRange(env, "temperature must be finite and > 0, got " + JsString(env, temperature));
  }
  if (!std::isfinite(1.0 / temperature)) {
    ThrowRange(env, "temperature " + JsString(env, temperature) + " is too small (1 / temperature is not finite)");
  }
  return temperature;
}

/** The nucleus threshold argument: undefined/null (no truncation) or a number in [0, 1] (0: the top code alone). */
struct TopP {
  bool given = false;
  double value = 1.0;
};

/** Reads a {@link TopP}. @throws TypeError when not a number or null; RangeError outside [0, 1]. */
inline TopP ReadTopP(Napi::Env env, const Napi::Value& v) {
  TopP p;
  if (v.IsUndefined() || v.IsNull()) return p;
  if (!v.IsNumber()) ThrowType(env, "topP must be a number or null");
  p.value = v.As<Napi::Number>().DoubleValue();
  if (!(p.value >= 0.0 && p.value <= 1.0)) ThrowRange(env, "topP must be in [0, 1] or null, got " + JsString(env, p.value));
  p.given = true;
  return p;
}

}  // namespace napi_checks
}  // namespace synthd

#endif  // SYNTHD_NATIVE_NAPI_CHECKS_H_
