// N-API bindings of synthd's C++ compute core (DESIGN.md §4: "native/: C++ N-API compute core
// for the hot generation path"). Loaded by src/model/native.ts; every entry point validates its
// arguments and reports problems as JavaScript TypeError / RangeError / Error, never by crashing.
//
// Exports:
//   version(): string
//   defaultThreads(): number        threads sampleCodes may use for large inputs
//   exp(x: Float64Array): Float64Array   element-wise exp, bit-identical to Math.exp (for tests)
//   sampleCodes(logits, n, cardinalities, uniforms, temperature, topP, threads?): Int32Array
//   GeneratorCore, learningRate, computeInfo: the training / generation core (train/core_binding.cc)
//   Raking: bounded raking of a pool of rows, calibrated generation (calibrate_binding.cc)
//   fillDraws, zigguratTables, log: a generate request's latents and uniforms (draws_binding.cc)
//   mixtureAccumulate: seeded generation's deterministic-mixture update (mixture_binding.cc)
//   repairScores: the calibration pool's rule repair, its scoring half (repair_binding.cc)
//   csvRows: the SDK's CSV records of decoded columns (csv_rows_binding.cc)
//   latticeValues, int64Halves: the SDK decoder's per-row loops (decode_loops_binding.cc)
//
// The validation rules and their messages match `checkSampleArgs` in src/model/sampling.ts, which
// the JavaScript fallback runs, so both compute paths reject the same inputs with the same errors.

#include <napi.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "calibrate_binding.h"
#include "csv_rows_binding.h"
#include "decode_loops_binding.h"
#include "draws_binding.h"
#include "mixture_binding.h"
#include "repair_binding.h"
#include "fdlibm_exp.h"
#include "napi_checks.h"
#include "parallel.h"
#include "sampling.h"
#include "train/core_binding.h"

namespace {

constexpr const char* kVersion = "0.1.0";

using synthd::napi_checks::IsIntegerIn;
using synthd::napi_checks::IsTypedArrayOf;
using synthd::napi_checks::JsString;
using synthd::napi_checks::kMaxSafeInteger;
using synthd::napi_checks::ReadCardinalities;
using synthd::napi_checks::ReadTemperature;
using synthd::napi_checks::ReadTopP;
using synthd::napi_checks::TopP;
using synthd::napi_checks::ThrowLogits;
using synthd::napi_checks::ThrowRange;
using synthd::napi_checks::ThrowType;

// Feature index of column `col` within a row (col < D).
size_t FeatureOfColumn(const std::vector<int32_t>& cards, size_t col) {
  size_t f = 0;
  while (col >= static_cast<size_t>(cards[f])) {
    col -= static_cast<size_t>(cards[f]);
    ++f;
  }
  return f;
}

Napi::Value Version(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), kVersion);
}

Napi::Value DefaultThreads(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), synthd::DefaultThreadCount());
}

// exp(x: Float64Array): Float64Array — the sampler's exp element-wise (FdlibmExpArray), so tests
// can check it against Math.exp bit for bit.
Napi::Value Exp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !IsTypedArrayOf(info[0], napi_float64_array)) {
    ThrowType(env, "x must be a Float64Array");
  }
  Napi::Float64Array x = info[0].As<Napi::Float64Array>();
  const size_t len = x.ElementLength();
  Napi::Float64Array y = Napi::Float64Array::New(env, len);
  synthd::FdlibmExpArray(x.Data(), y.Data(), len);  // the sampler's (vectorised) exp
  return y;
}

// sampleCodes(logits: Float32Array, n: number, cardinalities: Int32Array | number[],
//             uniforms: Float64Array, temperature: number, topP: number | null | undefined,
//             threads?: number): Int32Array (F * n, column-major)
// See sampling.h for the procedure and src/model/sampling.ts for the shapes. Checks, in order:
// logits' type, n, cardinalities, uniforms' type, temperature, topP, threads, the two array
// lengths, uniforms' values, then logits' values (inside the kernel; the first in row-major order).
Napi::Value SampleCodes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  try {
    if (!IsTypedArrayOf(info[0], napi_float32_array)) ThrowType(env, "logits must be a Float32Array");

    if (!info[1].IsNumber()) ThrowType(env, "n must be a number");
    const double n_d = info[1].As<Napi::Number>().DoubleValue();
    if (!IsIntegerIn(n_d, 0.0, kMaxSafeInteger)) {
      ThrowRange(env, "n must be a non-negative integer, got " + JsString(env, n_d));
    }

    synthd::SampleInput in;
    in.cardinalities = ReadCardinalities(env, info[2]);

    if (!IsTypedArrayOf(info[3], napi_float64_array)) ThrowType(env, "uniforms must be a Float64Array");

    const double temperature = ReadTemperature(env, info[4]);
    const TopP topP = ReadTopP(env, info[5]);
    const double top_p = topP.value;
    const bool has_top_p = topP.given;

    unsigned threads = 0;
    if (info.Length() > 6 && !info[6].IsUndefined()) {
      if (!info[6].IsNumber()) ThrowType(env, "threads must be a number");
      const double t = info[6].As<Napi::Number>().DoubleValue();
      if (!IsIntegerIn(t, 0.0, 4294967295.0)) {
        ThrowRange(env, "threads must be a non-negative integer, got " + JsString(env, t));
      }
      threads = static_cast<unsigned>(t);
    }

    Napi::Float32Array logits = info[0].As<Napi::Float32Array>();
    Napi::Float64Array uniforms = info[3].As<Napi::Float64Array>();
    const size_t n = static_cast<size_t>(n_d);
    const size_t F = in.cardinalities.size();
    size_t D = 0;
    size_t max_k = 0;
    for (int32_t k : in.cardinalities) {
      D += static_cast<size_t>(k);
      if (static_cast<size_t>(k) > max_k) max_k = static_cast<size_t>(k);
    }

    size_t nD = 0;
    if (__builtin_mul_overflow(n, D, &nD) || logits.ElementLength() != nD) {
      ThrowRange(env, "logits has " + std::to_string(logits.ElementLength()) + " values, expected n*D = " +
                          JsString(env, n_d * static_cast<double>(D)));
    }
    size_t nF = 0;
    if (__builtin_mul_overflow(n, F, &nF) || uniforms.ElementLength() != nF) {
      ThrowRange(env, "uniforms has " + std::to_string(uniforms.ElementLength()) + " values, expected n*F = " +
                          JsString(env, n_d * static_cast<double>(F)));
    }

    Napi::Int32Array out = Napi::Int32Array::New(env, nF);
    if (nF == 0) return out;

    const double* u = uniforms.Data();
    for (size_t i = 0; i < nF; ++i) {
      if (!(u[i] >= 0.0 && u[i] < 1.0)) {
        ThrowRange(env, "uniforms[" + std::to_string(i) + "] = " + JsString(env, u[i]) + " is outside [0, 1)");
      }
    }

    in.logits = logits.Data();
    in.n = n;
    in.D = D;
    in.max_k = max_k;
    in.uniforms = u;
    in.temperature = temperature;
    in.truncate = has_top_p && top_p < 1.0;
    in.top_p = top_p;

    const synthd::SampleError err = synthd::SampleCodes(in, out.Data(), threads);
    if (err.failed()) {
      const size_t row = err.index / D;
      const size_t f = FeatureOfColumn(in.cardinalities, err.index % D);
      const std::string where = "logits[" + std::to_string(err.index) + "]";
      if (err.kind == synthd::SampleError::Kind::kNonFinite) {
        ThrowLogits(env, where + " = " + JsString(env, err.value) + " is not finite (row " + std::to_string(row) +
                             ", feature " + std::to_string(f) + ")");
      }
      ThrowLogits(env, where + " / temperature overflows (logit " + JsString(env, err.value) + ", temperature " +
                           JsString(env, temperature) + ")");
    }
    return out;
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Napi::Error::New(env, "sampleCodes: out of memory");
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, std::string("sampleCodes: ") + e.what());
  }
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("version", Napi::Function::New(env, Version, "version"));
  exports.Set("defaultThreads", Napi::Function::New(env, DefaultThreads, "defaultThreads"));
  exports.Set("exp", Napi::Function::New(env, Exp, "exp"));
  exports.Set("sampleCodes", Napi::Function::New(env, SampleCodes, "sampleCodes"));
  synthd::train::RegisterCoreBindings(env, exports);  // GeneratorCore, learningRate, computeInfo
  synthd::calibrate::RegisterRakingBindings(env, exports);  // Raking
  synthd::draws::RegisterDrawBindings(env, exports);  // fillDraws, zigguratTables, log
  synthd::mixture::RegisterMixtureBindings(env, exports);  // mixtureAccumulate (conditional.ts)
  synthd::repair::RegisterRepairBindings(env, exports);  // repairScores (rule-repair.ts)
  synthd::csv::RegisterCsvBindings(env, exports);  // csvRows (sdk/io/csv-writer.ts)
  synthd::decode::RegisterDecodeBindings(env, exports);  // latticeValues, int64Halves (sdk/columns/bins.ts, sdk/io/typed.ts)
  return exports;
}

}  // namespace

NODE_API_MODULE(synthd_native, Init)
