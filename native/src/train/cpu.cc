#include "cpu.h"

#include <cstdlib>
#include <cstring>

namespace synthd {
namespace train {

Isa DetectIsa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // AVX-512: the kernels use F (arithmetic, masks) and VL/BW are not required; the OS must also
  // save the zmm state, which __builtin_cpu_supports checks through XGETBV in libgcc.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kGeneric;
}

namespace {

Isa ComputeActive() {
  const Isa best = DetectIsa();
  const char* env = std::getenv("SYNTHD_ISA");
  if (env == nullptr || *env == '\0') return best;
  Isa want = best;
  if (std::strcmp(env, "generic") == 0) want = Isa::kGeneric;
  else if (std::strcmp(env, "avx2") == 0) want = Isa::kAvx2;
  else if (std::strcmp(env, "avx512") == 0) want = Isa::kAvx512;
  return static_cast<int>(want) < static_cast<int>(best) ? want : best;
}

}  // namespace

Isa ActiveIsa() {
  static const Isa isa = ComputeActive();  // thread-safe initialisation (C++11)
  return isa;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "generic";
  }
}

}  // namespace train
}  // namespace synthd
