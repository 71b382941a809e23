// The random draws of a generate request in C++, bit-identical to the JavaScript reference
// (src/model/sampling/xoshiro.ts: xoshiro128**, `uniform`, `fillNormalZiggurat`; src/model/sampling/draws.ts: the order).
//
// Why native: with the forward pass in the core, drawing n x E latents (E = 64) and n x F uniforms
// in JavaScript took a third of an in-process generation (298k rows/s without the draws, 199k with
// them, issue 13). Here a ziggurat normal costs a few nanoseconds: one 32-bit output, an integer
// mask and shift, one compare against a table and one multiply.
//
// Bit-identity, and why it holds on every ISA path (SYNTHD_ISA only picks the GEMM / exp kernels;
// nothing here is vectorised by hand):
// - xoshiro128** and the ziggurat's layer / value split are 32-bit integer operations;
// - every double operation is the reference's, in its order (IEEE-754 binary64, round to nearest;
//   -ffp-contract=off in binding.gyp so no multiply-add is fused);
// - Math.exp and Math.log are V8's fdlibm ports (fdlibm_exp.h, fdlibm_log.h), Math.sqrt is the
//   correctly rounded std::sqrt;
// - a Float32Array store is a round-to-nearest conversion, as static_cast<float> is.
// The tables are computed here by the reference's recipe with those functions, so they are the
// reference's tables bit for bit (test/native-draws.test.ts compares them, and the draws).

#ifndef SYNTHD_NATIVE_DRAWS_H_
#define SYNTHD_NATIVE_DRAWS_H_

#include <cstddef>
#include <cstdint>

namespace synthd {
namespace draws {

// A xoshiro128** 1.1 stream (xoshiro.ts `Rng`): the four state words, unsigned. Jump() is the
// reference's jump (2^64 outputs ahead), xoshiro.ts `jump`.
struct Xoshiro128 {
  uint32_t s[4];

  static uint32_t Rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

  // xoshiro.ts `nextUint32`.
  uint32_t Next() {
    const uint32_t result = Rotl(s[1] * 5u, 7) * 9u;
    const uint32_t t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = Rotl(s[3], 11);
    return result;
  }

  void Jump() {
    static const uint32_t kJump[4] = {0x8764000b, 0xf542d2d3, 0x6fa035c3, 0x77f2db5b};
    uint32_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    for (uint32_t word : kJump) {
      for (int b = 0; b < 32; ++b) {
        if (word & (uint32_t{1} << b)) {
          t0 ^= s[0];
          t1 ^= s[1];
          t2 ^= s[2];
          t3 ^= s[3];
        }
        Next();
      }
    }
    s[0] = t0;
    s[1] = t1;
    s[2] = t2;
    s[3] = t3;
  }

  // xoshiro.ts `uniform`: (a * 2^26 + b) / 2^53 with a = 27 bits, b = 26 bits; exact in doubles.
  double Uniform() {
    const uint32_t a = Next() >> 5;
    const uint32_t b = Next() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
  }
};

// The ziggurat tables of xoshiro.ts (128 layers): kn (acceptance bounds on |j|), wn (value scale per
// layer), fn (density at the layer edges), r (the base layer's edge).
struct ZigguratTables {
  double kn[128];
  // ceil(kn[i]): for an integer |j|, |j| < kn[i] <=> |j| < kni[i], so the hot path compares
  // integers (no int-to-double conversion) with the same outcome as the reference's double compare.
  int32_t kni[128];
  double wn[128];
  double fn[128];
  double r;
};

// The tables, computed once (thread-safe) by xoshiro.ts's recipe.
const ZigguratTables& Tables();

// n ziggurat normals into out (doubles rounded to float32), xoshiro.ts `fillNormalZiggurat` on a
// Float32Array.
void FillNormalsF32(Xoshiro128& rng, float* out, size_t n);

// latents[i] = float32(latents[i] + z_i * sigma) for i < n, z_i the next ziggurat normal: the
// privacy noise of src/model/sampling/draws.ts (product and sum in doubles, one rounding to float32).
void AddNoise(Xoshiro128& rng, float* latents, size_t n, double sigma);

// n uniforms in [0, 1) into out, xoshiro.ts `fillUniform` on a Float64Array.
void FillUniforms(Xoshiro128& rng, double* out, size_t n);

// The draws of a request (src/model/sampling/draws.ts `drawReference`): rows cut into blocks of
// block_rows; block b draws from `base` jumped b times: its latents (m x E ziggurat normals, when
// draw_latents), its noise (m x E normals times sigma, added, when sigma > 0), its uniforms
// (m x F). Blocks run as tasks on the compute pool (train/thread_pool.h); each block's values
// depend only on its stream, so the result is the same for any thread count.
// latents: rows x E floats; uniforms: rows x F doubles (E or F may be 0). rows, block_rows >= 1.
void FillRequestDraws(const Xoshiro128& base, size_t rows, size_t block_rows, float* latents, size_t E,
                      bool draw_latents, double sigma, double* uniforms, size_t F);

}  // namespace draws
}  // namespace synthd

#endif  // SYNTHD_NATIVE_DRAWS_H_
