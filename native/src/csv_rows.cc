// CSV records of decoded columns: see csv_rows.h. Byte for byte the records of the JavaScript
// writer (src/sdk/io/csv-writer.ts, `writeRows`), which is the reference: the same ready-made
// fields, integers as JavaScript's String(x) writes a safe integer (plain decimal digits, a '-'
// for negatives, "0" for -0).

#include "csv_rows.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>

namespace synthd {
namespace csv {

namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;
constexpr size_t kIntegerBytes = 17;  // "-9007199254740991"

inline bool IsSafeInteger(double x) { return std::fabs(x) <= kMaxSafeInteger && std::trunc(x) == x; }

}  // namespace

RowsResult WriteRows(const std::vector<Column>& columns, size_t n, size_t from, uint8_t* out, size_t capacity) {
  RowsResult res;
  res.next_row = from;
  const size_t m = columns.size();
  // Rows are written a block at a time: each column's cells of the block are first read into
  // `block` (one sequential read per column), then the block's records are written from there.
  // Reading every column row by row instead (one stream per column) stalls on memory loads: about
  // 40% of the loop's time on Adult's 15 columns.
  constexpr size_t kBlock = 256;
  constexpr int64_t kBlank = INT64_MIN;  // an empty integer cell
  std::vector<int64_t> block(m * kBlock);  // per column: the entry index, or the integer
  size_t p = 0;
  for (size_t r0 = from; r0 < n; r0 += kBlock) {
    size_t count = n - r0 < kBlock ? n - r0 : kBlock;
    int bad = -1;
    for (size_t f = 0; f < m; ++f) {
      const Column& c = columns[f];
      int64_t* b = block.data() + f * kBlock;
      if (c.entries && c.index != nullptr) {
        for (size_t j = 0; j < count; ++j) b[j] = c.index[r0 + j];
      } else if (c.entries) {
        for (size_t j = 0; j < count; ++j) b[j] = static_cast<int64_t>(r0 + j);
      } else {
        for (size_t j = 0; j < count; ++j) {
          const double x = c.values[r0 + j];
          if (c.blank != nullptr && c.blank[r0 + j] != 0) {
            b[j] = kBlank;
          } else if (IsSafeInteger(x)) {
            b[j] = static_cast<int64_t>(x);
          } else {
            bad = static_cast<int>(f);  // write the rows before this one, then say so
            count = j;
            break;
          }
        }
      }
    }
    for (size_t j = 0; j < count; ++j) {
      for (size_t f = 0; f < m; ++f) {
        const Column& c = columns[f];
        const int64_t v = block[f * kBlock + j];
        size_t need = 1;  // the separator
        if (c.entries) {
          const bool named = v >= 0 && static_cast<size_t>(v) < c.entry_count && c.start[v] >= 0 &&
                             c.start[v + 1] >= c.start[v] && static_cast<size_t>(c.start[v + 1]) <= c.bytes_length;
          if (!named) {
            res.bad_entry_column = static_cast<int>(f);
            return res;
          }
          const size_t len = static_cast<size_t>(c.start[v + 1] - c.start[v]);
          need += len;
          if (p + need > capacity) return res;  // the record does not fit: it is not written
          const size_t a = static_cast<size_t>(c.start[v]);
          if (len <= 16 && a + 16 <= c.bytes_length && p + 16 <= capacity) {
            std::memcpy(out + p, c.bytes + a, 16);  // a fixed size: two moves, no call (what lies past len is overwritten)
          } else {
            std::memcpy(out + p, c.bytes + a, len);
          }
          p += len;
        } else if (v != kBlank) {
          if (p + kIntegerBytes + 1 > capacity) return res;
          char* begin = reinterpret_cast<char*>(out + p);
          p += static_cast<size_t>(std::to_chars(begin, begin + kIntegerBytes, v).ptr - begin);
        } else if (p + need > capacity) {
          return res;
        }
        out[p++] = f + 1 == m ? '\n' : ',';
      }
      res.next_row = r0 + j + 1;
      res.bytes = p;
    }
    if (bad >= 0) {
      res.bad_column = bad;
      return res;
    }
  }
  return res;
}

}  // namespace csv
}  // namespace synthd
