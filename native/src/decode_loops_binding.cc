// N-API binding of the SDK decoder's per-row loops (decode_loops.h). The TypeScript side is
// src/sdk/columns/bins.ts (`latticeValues`) and src/sdk/io/typed.ts (`int64Halves`), whose own
// loops they match bit for bit (test/sdk-native-decode.test.ts):
//
//   latticeValues(codes: Int32Array, missingCode: number | undefined, nb: number, edges: Float64Array,
//                 first: Float64Array, last: Float64Array, unit: number, state: Int32Array(4),
//                 values: Float64Array, blank: Uint8Array) -> number
//     state holds the sfc32 stream's words (Rng.saveState) and receives them after the draws;
//     values and blank hold at least codes.length entries, edges nb + 1, first and last nb.
//   int64Halves(values: Float64Array, blank: Uint8Array | null | undefined, halves: Int32Array) -> boolean
//     halves holds 2 values.length entries (blank, when given, values.length).
//
// Synchronous on the calling thread. Every argument is checked before anything is written
// (TypeError for types, RangeError for values and lengths); never a crash.

#include "decode_loops_binding.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "decode_loops.h"
#include "napi_checks.h"

namespace synthd {
namespace decode {

namespace {

using napi_checks::IsIntegerIn;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

using napi_checks::ReadTypedArray;

double NumberArg(Napi::Env env, const Napi::Value& v, const char* name) {
  if (!v.IsNumber()) ThrowType(env, std::string(name) + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

Napi::Value LatticeValuesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto codes = ReadTypedArray<Napi::Int32Array>(env, info[0], napi_int32_array, "codes", "an Int32Array");
  bool has_missing = false;
  int32_t missing = 0;
  if (!info[1].IsUndefined()) {
    const double m = NumberArg(env, info[1], "missingCode");
    if (!IsIntegerIn(m, -2147483648.0, 2147483647.0)) ThrowRange(env, "missingCode must be an int32 or undefined");
    has_missing = true;
    missing = static_cast<int32_t>(m);
  }
  const double nbd = NumberArg(env, info[2], "nb");
  if (!IsIntegerIn(nbd, 0, 2147483646.0)) ThrowRange(env, "nb must be an integer in [0, 2^31 - 2]");
  const int32_t nb = static_cast<int32_t>(nbd);
  auto edges = ReadTypedArray<Napi::Float64Array>(env, info[3], napi_float64_array, "edges", "a Float64Array");
  auto first = ReadTypedArray<Napi::Float64Array>(env, info[4], napi_float64_array, "first", "a Float64Array");
  auto last = ReadTypedArray<Napi::Float64Array>(env, info[5], napi_float64_array, "last", "a Float64Array");
  const double unit = NumberArg(env, info[6], "unit");
  auto state = ReadTypedArray<Napi::Int32Array>(env, info[7], napi_int32_array, "state", "an Int32Array");
  auto values = ReadTypedArray<Napi::Float64Array>(env, info[8], napi_float64_array, "values", "a Float64Array");
  auto blank = ReadTypedArray<Napi::Uint8Array>(env, info[9], napi_uint8_array, "blank", "a Uint8Array");
  const size_t n = codes.ElementLength();
  const size_t k = static_cast<size_t>(nb);
  if (edges.ElementLength() < k + 1) ThrowRange(env, "edges must hold nb + 1 entries");
  if (first.ElementLength() < k || last.ElementLength() < k) ThrowRange(env, "first and last must hold nb entries");
  if (state.ElementLength() != 4) ThrowRange(env, "state must hold 4 words");
  if (values.ElementLength() < n || blank.ElementLength() < n) ThrowRange(env, "values and blank must hold one entry per code");
  Sfc32 rng{static_cast<uint32_t>(state[0]), static_cast<uint32_t>(state[1]), static_cast<uint32_t>(state[2]),
            static_cast<uint32_t>(state[3])};
  const int64_t status = LatticeValues(codes.Data(), n, has_missing, missing, nb, edges.Data(), first.Data(),
                                       last.Data(), unit, rng, values.Data(), blank.Data());
  state[0] = static_cast<int32_t>(rng.a);
  state[1] = static_cast<int32_t>(rng.b);
  state[2] = static_cast<int32_t>(rng.c);
  state[3] = static_cast<int32_t>(rng.d);
  return Napi::Number::New(env, static_cast<double>(status));
}

Napi::Value Int64HalvesJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto values = ReadTypedArray<Napi::Float64Array>(env, info[0], napi_float64_array, "values", "a Float64Array");
  const size_t n = values.ElementLength();
  const uint8_t* blank = nullptr;
  if (!info[1].IsUndefined() && !info[1].IsNull()) {
    auto b = ReadTypedArray<Napi::Uint8Array>(env, info[1], napi_uint8_array, "blank", "a Uint8Array, null or undefined");
    if (b.ElementLength() < n) ThrowRange(env, "blank must hold one entry per value");
    blank = b.Data();
  }
  auto halves = ReadTypedArray<Napi::Int32Array>(env, info[2], napi_int32_array, "halves", "an Int32Array");
  if (halves.ElementLength() < 2 * n) ThrowRange(env, "halves must hold two entries per value");
  return Napi::Boolean::New(env, Int64Halves(values.Data(), blank, n, halves.Data()));
}

}  // namespace

void RegisterDecodeBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("latticeValues", Napi::Function::New(env, LatticeValuesJs, "latticeValues"));
  exports.Set("int64Halves", Napi::Function::New(env, Int64HalvesJs, "int64Halves"));
}

}  // namespace decode
}  // namespace synthd
