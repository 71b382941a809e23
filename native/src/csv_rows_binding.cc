// N-API binding of the CSV record writer (csv_rows.h). The TypeScript side is
// src/sdk/io/csv-writer.ts, whose own row loop (`writeRows`) it matches byte for byte
// (test/sdk-batch.test.ts):
//
//   csvRows(entries: Uint8Array(m), index: (Int32Array | null)[m], bytes: (Uint8Array | null)[m],
//           start: (Int32Array | null)[m], values: (Float64Array | null)[m],
//           blank: (Uint8Array | null)[m], n: number, from: number, out: Uint8Array)
//   -> [nextRow, bytesWritten, badColumn]
//
// Column f is written from ready-made fields when entries[f] is 1 (cell r is entry index[r], or r
// when index[f] is null, of bytes[f] split at start[f]) and as integer digits otherwise (values[f],
// blank[f] may be null). Rows from `from` on are written at out[0..] while a whole record fits;
// badColumn >= 0 says row nextRow's cell of that column is not a safe integer (nothing of that row
// is written). Synchronous on the calling thread. Every argument is checked before anything is
// written (TypeError for types, RangeError for values and lengths), and a cell naming no entry is
// a RangeError; never a crash.

#include "csv_rows_binding.h"

#include <cstdint>
#include <string>
#include <vector>

#include "csv_rows.h"
#include "napi_checks.h"

namespace synthd {
namespace csv {

namespace {

using napi_checks::IsIntegerIn;
using napi_checks::IsTypedArrayOf;
using napi_checks::ReadTypedArray;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

Napi::Array ReadList(Napi::Env env, const Napi::Value& v, const char* name, size_t m) {
  if (!v.IsArray()) ThrowType(env, std::string(name) + " must be an array");
  Napi::Array a = v.As<Napi::Array>();
  if (a.Length() != m) ThrowRange(env, std::string(name) + " must hold one entry per column");
  return a;
}

bool IsAbsent(const Napi::Value& v) { return v.IsNull() || v.IsUndefined(); }

Napi::Value CsvRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array entries = ReadTypedArray<Napi::Uint8Array>(env, info[0], napi_uint8_array, "entries", "a Uint8Array");
  const size_t m = entries.ElementLength();
  Napi::Array index = ReadList(env, info[1], "index", m);
  Napi::Array bytes = ReadList(env, info[2], "bytes", m);
  Napi::Array start = ReadList(env, info[3], "start", m);
  Napi::Array values = ReadList(env, info[4], "values", m);
  Napi::Array blank = ReadList(env, info[5], "blank", m);
  if (!info[6].IsNumber() || !IsIntegerIn(info[6].As<Napi::Number>().DoubleValue(), 0, 2147483647.0)) {
    ThrowRange(env, "n must be an integer in [0, 2^31 - 1]");
  }
  const size_t n = static_cast<size_t>(info[6].As<Napi::Number>().DoubleValue());
  if (!info[7].IsNumber() || !IsIntegerIn(info[7].As<Napi::Number>().DoubleValue(), 0, static_cast<double>(n))) {
    ThrowRange(env, "from must be an integer in [0, n]");
  }
  const size_t from = static_cast<size_t>(info[7].As<Napi::Number>().DoubleValue());
  Napi::Uint8Array out = ReadTypedArray<Napi::Uint8Array>(env, info[8], napi_uint8_array, "out", "a Uint8Array");

  std::vector<Column> columns(m);
  for (uint32_t f = 0; f < m; ++f) {
    const std::string at = "[" + std::to_string(f) + "]";
    Column& c = columns[f];
    c.entries = entries[f] != 0;
    if (c.entries) {
      Napi::Value b = bytes.Get(f);
      Napi::Value s = start.Get(f);
      Napi::Value i = index.Get(f);
      if (!IsTypedArrayOf(b, napi_uint8_array)) ThrowType(env, "bytes" + at + " must be a Uint8Array");
      if (!IsTypedArrayOf(s, napi_int32_array)) ThrowType(env, "start" + at + " must be an Int32Array");
      Napi::Uint8Array ba = b.As<Napi::Uint8Array>();
      Napi::Int32Array sa = s.As<Napi::Int32Array>();
      if (sa.ElementLength() < 1) ThrowRange(env, "start" + at + " must hold at least one offset");
      c.bytes = ba.Data();
      c.bytes_length = ba.ElementLength();
      c.start = sa.Data();
      c.entry_count = sa.ElementLength() - 1;
      if (!IsAbsent(i)) {
        if (!IsTypedArrayOf(i, napi_int32_array)) ThrowType(env, "index" + at + " must be an Int32Array or null");
        Napi::Int32Array ia = i.As<Napi::Int32Array>();
        if (ia.ElementLength() < n) ThrowRange(env, "index" + at + " must hold n entries");
        c.index = ia.Data();
      } else if (c.entry_count < n) {
        ThrowRange(env, "start" + at + " must hold n + 1 offsets when index" + at + " is null");
      }
    } else {
      Napi::Value v = values.Get(f);
      Napi::Value k = blank.Get(f);
      if (!IsTypedArrayOf(v, napi_float64_array)) ThrowType(env, "values" + at + " must be a Float64Array");
      Napi::Float64Array va = v.As<Napi::Float64Array>();
      if (va.ElementLength() < n) ThrowRange(env, "values" + at + " must hold n entries");
      c.values = va.Data();
      if (!IsAbsent(k)) {
        if (!IsTypedArrayOf(k, napi_uint8_array)) ThrowType(env, "blank" + at + " must be a Uint8Array or null");
        Napi::Uint8Array ka = k.As<Napi::Uint8Array>();
        if (ka.ElementLength() < n) ThrowRange(env, "blank" + at + " must hold n entries");
        c.blank = ka.Data();
      }
    }
  }
  const RowsResult res = WriteRows(columns, n, from, out.Data(), out.ElementLength());
  if (res.bad_entry_column >= 0) {
    ThrowRange(env, "row " + std::to_string(res.next_row) + " of column " + std::to_string(res.bad_entry_column) +
                        " names no entry of its bytes");
  }
  Napi::Array result = Napi::Array::New(env, 3);
  result.Set(uint32_t{0}, Napi::Number::New(env, static_cast<double>(res.next_row)));
  result.Set(uint32_t{1}, Napi::Number::New(env, static_cast<double>(res.bytes)));
  result.Set(uint32_t{2}, Napi::Number::New(env, res.bad_column));
  return result;
}

}  // namespace

void RegisterCsvBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("csvRows", Napi::Function::New(env, CsvRows, "csvRows"));
}

}  // namespace csv
}  // namespace synthd
