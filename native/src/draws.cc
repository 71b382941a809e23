// The ziggurat of draws.h, line for line the reference's (src/model/sampling/xoshiro.ts `fillNormalZiggurat`);
// keep the two in step. Comments name the reference's expression where the C++ spells it
// differently.

#include "draws.h"

#include <cmath>
#include <cstdlib>
#include <vector>

#include "fdlibm_exp.h"
#include "fdlibm_log.h"
#include "train/thread_pool.h"

namespace synthd {
namespace draws {

namespace {

ZigguratTables MakeTables() {
  ZigguratTables z{};
  const double m = 16777216.0;  // 2^24
  double dn = 3.442619855899;
  double tn = dn;
  const double vn = 9.91256303526217e-3;
  const double q = vn / FdlibmExp(-0.5 * dn * dn);
  z.kn[0] = (dn / q) * m;
  z.kn[1] = 0;
  z.wn[0] = q / m;
  z.wn[127] = dn / m;
  z.fn[0] = 1;
  z.fn[127] = FdlibmExp(-0.5 * dn * dn);
  for (int i = 126; i >= 1; --i) {
    dn = std::sqrt(-2 * FdlibmLog(vn / dn + FdlibmExp(-0.5 * dn * dn)));
    z.kn[i + 1] = (dn / tn) * m;
    tn = dn;
    z.fn[i] = FdlibmExp(-0.5 * dn * dn);
    z.wn[i] = dn / m;
  }
  z.r = 3.442619855899;
  for (int i = 0; i < 128; ++i) z.kni[i] = static_cast<int32_t>(std::ceil(z.kn[i]));  // kn <= 2^24
  return z;
}

// The rest of one ziggurat normal after its first output u failed the fast test (about 1.2% of
// values): the wedge / tail steps and the retries of the reference's loop. Out of line, so the hot
// loop stays small.
__attribute__((noinline)) double ZigguratSlow(Xoshiro128& rng, const ZigguratTables& z, uint32_t u) {
  int iz = static_cast<int>(u & 127u);
  int32_t j = static_cast<int32_t>(u) >> 7;
  for (;;) {
    const double x = static_cast<double>(j) * z.wn[iz];
    if (iz == 0) {  // the tail beyond r (Marsaglia's exponential method)
      double t;
      double y;
      do {
        t = -FdlibmLog(1 - rng.Uniform()) / z.r;
        y = -FdlibmLog(1 - rng.Uniform());
      } while (y + y < t * t);
      return j > 0 ? z.r + t : -z.r - t;
    }
    // The wedge: `fn[iz] + rng.uniform() * (fn[iz - 1] - fn[iz]) < Math.exp(-0.5 * x * x)`; the
    // uniform is the only draw, so evaluating exp after it changes nothing.
    const double v = rng.Uniform();
    if (z.fn[iz] + v * (z.fn[iz - 1] - z.fn[iz]) < FdlibmExp(-0.5 * x * x)) return x;
    u = rng.Next();
    iz = static_cast<int>(u & 127u);
    j = static_cast<int32_t>(u) >> 7;
    if (std::abs(j) < z.kni[iz]) return static_cast<double>(j) * z.wn[iz];
  }
}

// One ziggurat normal (the body of the reference's loop for one index).
inline double ZigguratNormal(Xoshiro128& rng, const ZigguratTables& z) {
  const uint32_t u = rng.Next();
  const int iz = static_cast<int>(u & 127u);
  // `(u | 0) >> 7`: the output as a signed 32-bit integer, shifted arithmetically (25 bits left).
  const int32_t j = static_cast<int32_t>(u) >> 7;
  // `Math.abs(j) < kn[iz]`, as integers (kni above); |j| <= 2^24, so the product is exact-input.
  if (__builtin_expect(std::abs(j) < z.kni[iz], 1)) return static_cast<double>(j) * z.wn[iz];
  // The slow path gets a copy: were `rng` itself passed by reference to an out-of-line call, its
  // address would escape and the compiler would keep the state in memory for the whole loop
  // (measured: 2.7x slower).
  Xoshiro128 spill = rng;
  const double x = ZigguratSlow(spill, z, u);
  rng = spill;
  return x;
}

}  // namespace

const ZigguratTables& Tables() {
  static const ZigguratTables tables = MakeTables();
  return tables;
}

void FillNormalsF32(Xoshiro128& rng, float* out, size_t n) {
  const ZigguratTables& z = Tables();
  Xoshiro128 local = rng;  // in registers for the loop
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(ZigguratNormal(local, z));
  rng = local;
}

void AddNoise(Xoshiro128& rng, float* latents, size_t n, double sigma) {
  const ZigguratTables& z = Tables();
  Xoshiro128 local = rng;
  for (size_t i = 0; i < n; ++i) {
    const double e = ZigguratNormal(local, z) * sigma;
    latents[i] = static_cast<float>(static_cast<double>(latents[i]) + e);
  }
  rng = local;
}

void FillUniforms(Xoshiro128& rng, double* out, size_t n) {
  Xoshiro128 local = rng;
  for (size_t i = 0; i < n; ++i) out[i] = local.Uniform();
  rng = local;
}

void FillRequestDraws(const Xoshiro128& base, size_t rows, size_t block_rows, float* latents, size_t E,
                      bool draw_latents, double sigma, double* uniforms, size_t F) {
  const size_t blocks = (rows + block_rows - 1) / block_rows;
  // The blocks' starting states, one jump apart (128 steps each: microseconds for 50 blocks).
  std::vector<Xoshiro128> starts(blocks);
  starts[0] = base;
  for (size_t b = 1; b < blocks; ++b) {
    starts[b] = starts[b - 1];
    starts[b].Jump();
  }
  train::ParallelTasks(blocks, [&](size_t b, unsigned) {
    const size_t r0 = b * block_rows;
    const size_t m = rows - r0 < block_rows ? rows - r0 : block_rows;
    Xoshiro128 rng = starts[b];
    if (draw_latents) FillNormalsF32(rng, latents + r0 * E, m * E);
    if (sigma > 0) AddNoise(rng, latents + r0 * E, m * E, sigma);
    FillUniforms(rng, uniforms + r0 * F, m * F);
  });
}

}  // namespace draws
}  // namespace synthd
