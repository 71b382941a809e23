// Run-time CPU dispatch for the compute core's kernels.
//
// The addon is compiled for the x86-64 baseline (SSE2); the matrix-product micro-kernels and the
// element-wise loops also exist in AVX2+FMA and AVX-512 forms (function-level target attributes),
// chosen once per process from CPUID. `SYNTHD_ISA=generic|avx2|avx512` lowers the choice (tests run
// every path on one machine); asking for more than the CPU has falls back to the best it has.

#ifndef SYNTHD_NATIVE_TRAIN_CPU_H_
#define SYNTHD_NATIVE_TRAIN_CPU_H_

namespace synthd {
namespace train {

enum class Isa { kGeneric = 0, kAvx2 = 1, kAvx512 = 2 };

// The best ISA this CPU supports (ignores SYNTHD_ISA).
Isa DetectIsa();

// The ISA the kernels use: DetectIsa(), lowered by SYNTHD_ISA when set. Fixed at first call.
Isa ActiveIsa();

const char* IsaName(Isa isa);

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_CPU_H_
