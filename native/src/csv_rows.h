// CSV records of decoded columns (the SDK's CSV writer, src/sdk/io/csv-writer.ts): bytes only,
// no JavaScript types. The binding is csv_rows_binding.cc.

#ifndef SYNTHD_NATIVE_CSV_ROWS_H_
#define SYNTHD_NATIVE_CSV_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace synthd {
namespace csv {

// One column as its cells are written.
struct Column {
  // true: cell r is entry `index ? index[r] : r` of (bytes, start), its CSV field ready-made
  // (quoted where needed); false: cell r is the decimal digits of values[r], a safe integer, or
  // empty where blank[r] is 1 (blank may be null).
  bool entries = false;
  const int32_t* index = nullptr;
  const uint8_t* bytes = nullptr;
  size_t bytes_length = 0;
  const int32_t* start = nullptr;  // entry e is bytes[start[e] .. start[e + 1])
  size_t entry_count = 0;          // start holds entry_count + 1 offsets
  const double* values = nullptr;
  const uint8_t* blank = nullptr;
};

// What WriteRows did.
struct RowsResult {
  size_t next_row = 0;     // the first row not written
  size_t bytes = 0;        // bytes written at out[0..]
  int bad_column = -1;     // >= 0: row next_row's cell of this integer column is not a safe integer
  int bad_entry_column = -1;  // >= 0: row next_row's cell of this column names no entry (or a bad span)
};

// Writes rows from, from + 1, ... < n of `columns` as CSV records (fields joined by ',', each
// record ending in '\n') at out[0..capacity) while a whole record fits; a record is written whole
// or not at all. Stops early, before the row, at a cell that is not a safe integer or names no
// entry (RowsResult says which). Returns with next_row == from and bytes == 0 when the first record
// does not fit.
RowsResult WriteRows(const std::vector<Column>& columns, size_t n, size_t from, uint8_t* out, size_t capacity);

}  // namespace csv
}  // namespace synthd

#endif  // SYNTHD_NATIVE_CSV_ROWS_H_
