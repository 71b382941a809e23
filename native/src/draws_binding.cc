// N-API bindings of the request draws (draws.h). The TypeScript side is src/model/sampling/draws.ts.
//
// Exports:
//   fillDraws(state: Uint32Array(4), rows: number, latents: Float32Array, drawLatents: boolean,
//             sigma: number, uniforms: Float64Array, blockRows: number): undefined
//     The draws of src/model/sampling/draws.ts `drawReference` (draws.h FillRequestDraws) for `rows` rows
//     from the stream whose state is `state` (read, not modified): E = latents.length / rows,
//     F = uniforms.length / rows. Blocks of blockRows rows run on the compute pool (about 2 ns
//     per normal per thread: 64 latents per row are a few % of a forward pass; docs/compute.md
//     "Request draws").
//     TypeError for wrong types; RangeError for a state of the wrong length or all zero, rows or
//     blockRows not a positive integer, arrays not a multiple of rows long, or sigma not finite or
//     negative. Nothing is written when an argument is refused.
//   zigguratTables(): {kn, wn, fn: Float64Array(128), r: number}   (tests: equal to xoshiro.ts's)
//   log(x: Float64Array): Float64Array   FdlibmLog element-wise (tests: equal to Math.log)

#include "draws_binding.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "draws.h"
#include "fdlibm_log.h"
#include "napi_checks.h"

namespace synthd {
namespace draws {

namespace {

using napi_checks::IsIntegerIn;
using napi_checks::IsTypedArrayOf;
using napi_checks::kMaxSafeInteger;
using napi_checks::JsString;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

Napi::Value FillDraws(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!IsTypedArrayOf(info[0], napi_uint32_array)) ThrowType(env, "state must be a Uint32Array");
  if (!info[1].IsNumber()) ThrowType(env, "rows must be a number");
  if (!IsTypedArrayOf(info[2], napi_float32_array)) ThrowType(env, "latents must be a Float32Array");
  if (!info[3].IsBoolean()) ThrowType(env, "drawLatents must be a boolean");
  if (!info[4].IsNumber()) ThrowType(env, "sigma must be a number");
  if (!IsTypedArrayOf(info[5], napi_float64_array)) ThrowType(env, "uniforms must be a Float64Array");
  if (!info[6].IsNumber()) ThrowType(env, "blockRows must be a number");
  Napi::Uint32Array state = info[0].As<Napi::Uint32Array>();
  if (state.ElementLength() != 4) ThrowRange(env, "state must hold 4 words, got " + std::to_string(state.ElementLength()));
  const uint32_t* w = state.Data();
  if ((w[0] | w[1] | w[2] | w[3]) == 0) ThrowRange(env, "state must not be all zero");
  const double rows_d = info[1].As<Napi::Number>().DoubleValue();
  if (!IsIntegerIn(rows_d, 1.0, kMaxSafeInteger)) ThrowRange(env, "rows must be a positive integer, got " + JsString(env, rows_d));
  const double block_d = info[6].As<Napi::Number>().DoubleValue();
  if (!IsIntegerIn(block_d, 1.0, kMaxSafeInteger)) ThrowRange(env, "blockRows must be a positive integer, got " + JsString(env, block_d));
  const double sigma = info[4].As<Napi::Number>().DoubleValue();
  if (!(std::isfinite(sigma) && sigma >= 0)) ThrowRange(env, "sigma must be finite and >= 0, got " + JsString(env, sigma));
  Napi::Float32Array latents = info[2].As<Napi::Float32Array>();
  Napi::Float64Array uniforms = info[5].As<Napi::Float64Array>();
  const size_t rows = static_cast<size_t>(rows_d);
  if (latents.ElementLength() % rows != 0) {
    ThrowRange(env, "latents has " + std::to_string(latents.ElementLength()) + " values, not a multiple of rows = " + std::to_string(rows));
  }
  if (uniforms.ElementLength() % rows != 0) {
    ThrowRange(env, "uniforms has " + std::to_string(uniforms.ElementLength()) + " values, not a multiple of rows = " + std::to_string(rows));
  }
  Xoshiro128 base;
  std::memcpy(base.s, w, sizeof base.s);
  try {
    FillRequestDraws(base, rows, static_cast<size_t>(block_d), latents.Data(), latents.ElementLength() / rows,
                     info[3].As<Napi::Boolean>().Value(), sigma, uniforms.Data(), uniforms.ElementLength() / rows);
  } catch (const std::bad_alloc&) {
    throw Napi::Error::New(env, "fillDraws: out of memory");
  }
  return env.Undefined();
}

Napi::Value ZigguratTablesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const ZigguratTables& z = Tables();
  Napi::Object out = Napi::Object::New(env);
  const auto copy = [&](const double* src) {
    Napi::Float64Array a = Napi::Float64Array::New(env, 128);
    std::memcpy(a.Data(), src, 128 * sizeof(double));
    return a;
  };
  out.Set("kn", copy(z.kn));
  out.Set("wn", copy(z.wn));
  out.Set("fn", copy(z.fn));
  out.Set("r", Napi::Number::New(env, z.r));
  return out;
}

Napi::Value Log(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!IsTypedArrayOf(info[0], napi_float64_array)) ThrowType(env, "x must be a Float64Array");
  Napi::Float64Array x = info[0].As<Napi::Float64Array>();
  const size_t n = x.ElementLength();
  Napi::Float64Array y = Napi::Float64Array::New(env, n);
  for (size_t i = 0; i < n; ++i) y[i] = FdlibmLog(x[i]);
  return y;
}

}  // namespace

void RegisterDrawBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("fillDraws", Napi::Function::New(env, FillDraws, "fillDraws"));
  exports.Set("zigguratTables", Napi::Function::New(env, ZigguratTablesJs, "zigguratTables"));
  exports.Set("log", Napi::Function::New(env, Log, "log"));
}

}  // namespace draws
}  // namespace synthd
