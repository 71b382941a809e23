// N-API binding of the pool repair's scoring (repair.h). The TypeScript side is
// src/model/rule-repair.ts, whose own passes it matches bit for bit (test/rule-repair.test.ts):
//
//   repairScores(columns: Int32Array[m], radix: Int32Array(m), open: Uint8Array[m],
//                keyClass: Int32Array(prod radix), codeStart: Int32Array[m], codeList: Int32Array[m],
//                targets: number, factorColumns: Int32Array[nf], factorCards: Int32Array(nf),
//                tOff: Int32Array(targets x nf), table: Float64Array, held: Float64Array(targets))
//   -> { broken: Int32Array, judged: number, start: Int32Array, cand: Int32Array, lik: Float64Array }
//
// columns and factorColumns hold M codes each (the pool's rows); open[j] has radix[j] flags;
// codeStart[j] has radix[j] + 1 non-decreasing offsets from 0 to codeList[j].length; keyClass and
// codeList values name targets (keyClass also -2 and -1); tOff[t nf + e] + factorCards[e] must not
// pass table.length. held receives each target's row count (added to). Synchronous on the calling
// thread. Every argument is checked before anything is computed (TypeError for types, RangeError
// for values and lengths), and a factor code outside [0, factorCards[e]) is a RangeError; never a
// crash.

#include "repair_binding.h"

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "napi_checks.h"
#include "repair.h"

namespace synthd {
namespace repair {

namespace {

using napi_checks::IsIntegerIn;
using napi_checks::IsTypedArrayOf;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

template <typename A>
std::vector<A> ReadArrays(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, const std::string& name,
                          const char* type_name) {
  if (!v.IsArray()) ThrowType(env, name + " must be an array of " + type_name);
  Napi::Array arr = v.As<Napi::Array>();
  std::vector<A> out;
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    Napi::Value x = arr.Get(i);
    if (!IsTypedArrayOf(x, type)) ThrowType(env, name + "[" + std::to_string(i) + "] must be an " + type_name);
    out.push_back(x.As<A>());
  }
  return out;
}

template <typename A>
A ReadArray(Napi::Env env, const Napi::Value& v, napi_typedarray_type type, const std::string& name, const char* type_name) {
  return napi_checks::ReadTypedArray<A>(env, v, type, name, std::string("an ") + type_name);
}

Napi::Value RepairScores(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RuleInput in;
  auto columns = ReadArrays<Napi::Int32Array>(env, info[0], napi_int32_array, "columns", "Int32Array");
  const size_t m = columns.size();
  if (m == 0) ThrowRange(env, "columns must hold at least one rule column");
  in.M = columns[0].ElementLength();
  for (size_t j = 0; j < m; ++j) {
    if (columns[j].ElementLength() != in.M) ThrowRange(env, "every column needs one code per row");
    in.columns.push_back(columns[j].Data());
  }
  auto radix = ReadArray<Napi::Int32Array>(env, info[1], napi_int32_array, "radix", "Int32Array");
  if (radix.ElementLength() != m) ThrowRange(env, "radix must hold one code count per rule column");
  int64_t keys = 1;
  for (size_t j = 0; j < m; ++j) {
    if (radix[j] < 1) ThrowRange(env, "radix[" + std::to_string(j) + "] must be >= 1");
    in.radix.push_back(radix[j]);
    if (__builtin_mul_overflow(keys, static_cast<int64_t>(radix[j]), &keys) || keys > (int64_t{1} << 31)) {
      ThrowRange(env, "the rule's keys (the product of radix) must be at most 2^31");
    }
  }
  auto open = ReadArrays<Napi::Uint8Array>(env, info[2], napi_uint8_array, "open", "Uint8Array");
  if (open.size() != m) ThrowRange(env, "open must hold one array per rule column");
  for (size_t j = 0; j < m; ++j) {
    if (open[j].ElementLength() != static_cast<size_t>(in.radix[j])) {
      ThrowRange(env, "open[" + std::to_string(j) + "] must hold radix[" + std::to_string(j) + "] flags");
    }
    in.open.push_back(open[j].Data());
  }
  if (!info[6].IsNumber()) ThrowType(env, "targets must be a number");
  const double T = info[6].As<Napi::Number>().DoubleValue();
  if (!IsIntegerIn(T, 1, 2147483647.0)) ThrowRange(env, "targets must be an integer in [1, 2147483647]");
  in.targets = static_cast<int32_t>(T);
  auto key_class = ReadArray<Napi::Int32Array>(env, info[3], napi_int32_array, "keyClass", "Int32Array");
  if (key_class.ElementLength() != static_cast<size_t>(keys)) ThrowRange(env, "keyClass must hold one class per key (the product of radix)");
  for (size_t k = 0; k < key_class.ElementLength(); ++k) {
    if (key_class[k] < -2 || key_class[k] >= in.targets) {
      ThrowRange(env, "keyClass[" + std::to_string(k) + "] must be -2, -1 or a target index");
    }
  }
  in.key_class = key_class.Data();
  auto starts = ReadArrays<Napi::Int32Array>(env, info[4], napi_int32_array, "codeStart", "Int32Array");
  auto lists = ReadArrays<Napi::Int32Array>(env, info[5], napi_int32_array, "codeList", "Int32Array");
  if (starts.size() != m || lists.size() != m) ThrowRange(env, "codeStart and codeList must hold one array per rule column");
  for (size_t j = 0; j < m; ++j) {
    const std::string at = std::to_string(j);
    if (starts[j].ElementLength() != static_cast<size_t>(in.radix[j]) + 1) ThrowRange(env, "codeStart[" + at + "] must hold radix[" + at + "] + 1 offsets");
    if (starts[j][0] != 0) ThrowRange(env, "codeStart[" + at + "] must start at 0");
    for (size_t c = 1; c < starts[j].ElementLength(); ++c) {
      if (starts[j][c] < starts[j][c - 1]) ThrowRange(env, "codeStart[" + at + "] must not decrease");
    }
    if (static_cast<size_t>(starts[j][in.radix[j]]) != lists[j].ElementLength()) ThrowRange(env, "codeStart[" + at + "] must end at codeList[" + at + "].length");
    for (size_t y = 0; y < lists[j].ElementLength(); ++y) {
      if (lists[j][y] < 0 || lists[j][y] >= in.targets) ThrowRange(env, "codeList[" + at + "] must hold target indices");
    }
    in.code_start.push_back(starts[j].Data());
    in.code_list.push_back(lists[j].Data());
  }
  auto factors = ReadArrays<Napi::Int32Array>(env, info[7], napi_int32_array, "factorColumns", "Int32Array");
  const size_t nf = factors.size();
  for (size_t e = 0; e < nf; ++e) {
    if (factors[e].ElementLength() != in.M) ThrowRange(env, "every factor column needs one code per row");
    in.factor_columns.push_back(factors[e].Data());
  }
  auto cards = ReadArray<Napi::Int32Array>(env, info[8], napi_int32_array, "factorCards", "Int32Array");
  if (cards.ElementLength() != nf) ThrowRange(env, "factorCards must hold one code count per factor");
  for (size_t e = 0; e < nf; ++e) {
    if (cards[e] < 1) ThrowRange(env, "factorCards[" + std::to_string(e) + "] must be >= 1");
    in.factor_cards.push_back(cards[e]);
  }
  auto t_off = ReadArray<Napi::Int32Array>(env, info[9], napi_int32_array, "tOff", "Int32Array");
  auto table = ReadArray<Napi::Float64Array>(env, info[10], napi_float64_array, "table", "Float64Array");
  if (t_off.ElementLength() != static_cast<size_t>(in.targets) * nf) ThrowRange(env, "tOff must hold targets x factors offsets");
  for (size_t i = 0; i < t_off.ElementLength(); ++i) {
    const int64_t end = static_cast<int64_t>(t_off[i]) + in.factor_cards[i % (nf == 0 ? 1 : nf)];
    if (t_off[i] < 0 || end > static_cast<int64_t>(table.ElementLength())) {
      ThrowRange(env, "tOff[" + std::to_string(i) + "] + factorCards[e] must not pass table.length");
    }
  }
  in.t_off = t_off.Data();
  in.table = table.Data();
  auto held = ReadArray<Napi::Float64Array>(env, info[11], napi_float64_array, "held", "Float64Array");
  if (held.ElementLength() != static_cast<size_t>(in.targets)) ThrowRange(env, "held must hold one count per target");
  if (in.M > (size_t{1} << 31) - 1) ThrowRange(env, "at most 2^31 - 1 rows");

  RuleScores s;
  try {
    s = ScoreRule(in, held.Data());
  } catch (const std::bad_alloc&) {
    throw Napi::Error::New(env, "repairScores: out of memory");
  }
  if (s.bad_row >= 0) {
    ThrowRange(env, "factorColumns[" + std::to_string(s.bad_factor) + "] holds code " + std::to_string(s.bad_code) + " at row " +
                        std::to_string(s.bad_row) + ", outside [0, " + std::to_string(in.factor_cards[static_cast<size_t>(s.bad_factor)]) + ")");
  }
  const auto int32s = [&](const std::vector<int32_t>& v) {
    Napi::Int32Array a = Napi::Int32Array::New(env, v.size());
    std::copy(v.begin(), v.end(), a.Data());
    return a;
  };
  Napi::Object out = Napi::Object::New(env);
  out.Set("broken", int32s(s.broken));
  out.Set("judged", Napi::Number::New(env, static_cast<double>(s.judged)));
  out.Set("start", int32s(s.start.empty() ? std::vector<int32_t>{0} : s.start));
  out.Set("cand", int32s(s.cand));
  Napi::Float64Array lik = Napi::Float64Array::New(env, s.lik.size());
  std::copy(s.lik.begin(), s.lik.end(), lik.Data());
  out.Set("lik", lik);
  return out;
}

}  // namespace

void RegisterRepairBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("repairScores", Napi::Function::New(env, RepairScores, "repairScores"));
}

}  // namespace repair
}  // namespace synthd
