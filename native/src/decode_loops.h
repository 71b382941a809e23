// The SDK decoder's per-row loops over typed columns (src/sdk/columns/bins.ts `latticeValues`,
// src/sdk/io/typed.ts `int64Halves`), bit for bit: the same draws from the same sfc32 stream and
// the same double arithmetic. The binding is decode_loops_binding.cc.

#ifndef SYNTHD_NATIVE_DECODE_LOOPS_H_
#define SYNTHD_NATIVE_DECODE_LOOPS_H_

#include <cstddef>
#include <cstdint>

namespace synthd {
namespace decode {

// sfc32 (Chris Doty-Humphrey's Small Fast Chaotic PRNG) with the state and outputs of
// src/sdk/generate/sfc32.ts's Rng: a, b, c, d as its four 32-bit words.
struct Sfc32 {
  uint32_t a, b, c, d;

  uint32_t U32() {
    const uint32_t t = a + b + d;
    d = d + 1;
    a = b ^ (b >> 9);
    b = c + (c << 3);
    c = (c << 21) | (c >> 11);
    c = c + t;
    return t;
  }
  // Uniform double in [0, 1) with 53 random bits (two outputs), as Rng.next.
  double Next() {
    const double hi = static_cast<double>(U32() >> 5);
    const double lo = static_cast<double>(U32() >> 6);
    return (hi * 67108864.0 + lo) / 9007199254740992.0;
  }
};

// The lattice decode of an integer column's codes (`latticeValues` in bins.ts): per row, blank
// (blank[r] = 1) for the missing code, the point bin's value, or (first[c] + a uniform draw over
// last[c] - first[c] + 1 points) * unit, first[c] alone where last[c] is NaN. edges has nb + 1
// entries, first and last nb. Returns the number of blank rows, or -(r + 1) for the first row r
// whose code is outside [0, nb).
int64_t LatticeValues(const int32_t* codes, size_t n, bool has_missing, int32_t missing_code, int32_t nb,
                      const double* edges, const double* first, const double* last, double unit, Sfc32& rng,
                      double* values, uint8_t* blank);

// Each value's 64-bit two's complement as two 32-bit halves (low first) at halves[2r], [2r + 1],
// 0 for a blank row (blank may be null); returns false at the first other value that is not a
// safe integer (|x| <= 2^53 - 1, integral), having written the rows before it.
bool Int64Halves(const double* values, const uint8_t* blank, size_t n, int32_t* halves);

}  // namespace decode
}  // namespace synthd

#endif  // SYNTHD_NATIVE_DECODE_LOOPS_H_
