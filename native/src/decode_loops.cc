// The SDK decoder's per-row loops: see decode_loops.h. Built with -ffp-contract=off (binding.gyp),
// so each double operation is rounded as JavaScript rounds it.

#include "decode_loops.h"

#include <cmath>

namespace synthd {
namespace decode {

int64_t LatticeValues(const int32_t* codes, size_t n, bool has_missing, int32_t missing_code, int32_t nb,
                      const double* edges, const double* first, const double* last, double unit, Sfc32& rng,
                      double* values, uint8_t* blank) {
  int64_t blanks = 0;
  for (size_t r = 0; r < n; ++r) {
    const int32_t c = codes[r];
    if (has_missing && c == missing_code) {
      blank[r] = 1;
      ++blanks;
      continue;
    }
    if (!(c >= 0 && c < nb)) return -static_cast<int64_t>(r + 1);
    const double lo = edges[c];
    if (lo == edges[c + 1]) {
      values[r] = lo;
    } else {
      const double a = first[c];
      const double b = last[c];
      values[r] = (std::isnan(b) ? a : a + std::floor(rng.Next() * (b - a + 1.0))) * unit;
    }
  }
  return blanks;
}

bool Int64Halves(const double* values, const uint8_t* blank, size_t n, int32_t* halves) {
  constexpr double kMaxSafeInteger = 9007199254740991.0;
  for (size_t r = 0; r < n; ++r) {
    if (blank != nullptr && blank[r] == 1) {
      halves[2 * r] = 0;
      halves[2 * r + 1] = 0;
      continue;
    }
    const double x = values[r];
    if (!(std::fabs(x) <= kMaxSafeInteger && std::trunc(x) == x)) return false;
    const uint64_t v = static_cast<uint64_t>(static_cast<int64_t>(x));
    halves[2 * r] = static_cast<int32_t>(static_cast<uint32_t>(v));
    halves[2 * r + 1] = static_cast<int32_t>(static_cast<uint32_t>(v >> 32));
  }
  return true;
}

}  // namespace decode
}  // namespace synthd
