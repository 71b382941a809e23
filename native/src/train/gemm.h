// Single-precision matrix products for the compute core, in the style of Goto & van de Geijn,
// "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008 (and the BLIS
// refinement, Van Zee & van de Geijn, ACM TOMS 41(3), 2015):
//
//   C (M x N, row-major, leading dimension ldc)  =  [C +] op(A) (M x K)  op(B) (K x N)  [+ bias] [relu]
//
// - B is packed into K-blocks of kKC rows, each split into column micro-panels of NR columns
//   (kc x NR contiguous, zero-padded past N): a micro-panel stays in L1 while the micro-kernel
//   sweeps the rows of A.
// - A is packed per task into row micro-panels of MR rows (kc x MR contiguous, zero-padded).
// - An MR x NR register-blocked micro-kernel (AVX-512: 8 x 32, AVX2+FMA: 6 x 16, portable: 4 x 16)
//   accumulates the tile in registers over one K-block; bias and ReLU are applied in registers
//   after the last K-block (fused epilogue).
// Transposes are strides: a matrix operand is a view with element (i, j) at data[i*rs + j*cs], so
// X^T, W^T and column slices of the probability matrix cost nothing but a different packing walk.
//
// Determinism: every C element is computed by one task, accumulating K in ascending kKC blocks
// with the same kernel, so results do not depend on the thread count or on how rows are split
// (they do depend on the ISA: FMA vs separate multiply-add).

#ifndef SYNTHD_NATIVE_TRAIN_GEMM_H_
#define SYNTHD_NATIVE_TRAIN_GEMM_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "aligned.h"
#include "cpu.h"

namespace synthd {
namespace train {

// Rows of B per packed K-block.
#ifndef SYNTHD_GEMM_KC
#define SYNTHD_GEMM_KC 256
#endif
constexpr int64_t kKC = SYNTHD_GEMM_KC;

// A read-only strided matrix view: element (i, j) at data[i * rs + j * cs].
struct MatView {
  const float* data;
  int64_t rs;
  int64_t cs;
};

// The micro-kernel: c[i*ldc + j] (i < MR, j < NR) = (load_c ? c : 0) + sum_p a[p*MR + i] * b[p*NR + j],
// then + bias[j] when bias is non-null, then max(0, .) when relu.
using MicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c,
                             const float* bias, bool relu);

// As MicroKernel, for an edge tile: only rows i < h and columns j < w of C (and of bias) are
// read or written.
using EdgeKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, bool load_c,
                            const float* bias, bool relu, int h, int w);

struct KernelInfo {
  Isa isa;
  int mr;
  int nr;
  MicroKernel fn;
  EdgeKernel edge;  // null: edge tiles go through a full-size scratch tile
};

// The kernel of ActiveIsa() (or of `isa`, for tests and benchmarks).
const KernelInfo& ActiveKernel();
const KernelInfo& KernelFor(Isa isa);

// B packed for a kernel: K-blocks of kKC rows, NR-column micro-panels, zero padding.
class PackedB {
 public:
  int64_t K = 0;
  int64_t N = 0;
  int nr = 0;
  int64_t n_panels = 0;  // ceil(N / nr)
  FloatBuffer data;

  // Micro-panel (k-block starting at row k0 with kc rows, column panel jp).
  const float* Panel(int64_t k0, int64_t kc, int64_t jp) const {
    return data.data() + k0 * n_panels * nr + jp * kc * nr;
  }
};

// Packs B (K x N view) for kernel `kern`; parallel over the pool when `parallel`.
void PackB(const KernelInfo& kern, int64_t K, int64_t N, MatView B, PackedB* out, bool parallel);

// Packs the column panels [jp0, jp1) of B into an already sized `out` (see PackB).
void PackBPanels(const KernelInfo& kern, MatView B, PackedB* out, int64_t jp0, int64_t jp1);

// Epilogue of a product.
struct Epilogue {
  bool accumulate = false;        // C += ... instead of C = ...
  const float* bias = nullptr;    // length N (indexed by the product's column), or null
  bool relu = false;
};

// Computes rows [r0, r1) and column panels [jp0, jp1) of C = op(A) B on the calling thread, with B
// already packed. A is the full M x K view (rows r0.. are read). Uses thread-local scratch.
void GemmPackedRange(const KernelInfo& kern, int64_t K, MatView A, const PackedB& B, float* C, int64_t ldc,
                     const Epilogue& ep, int64_t r0, int64_t r1, int64_t jp0, int64_t jp1);

// The whole product on the calling thread (packs B into thread-local scratch). For small products
// inside parallel tasks.
void GemmSerial(const KernelInfo& kern, int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C,
                int64_t ldc, const Epilogue& ep);

// Row-wise work on finished rows [r0, r1) of C (e.g. a LayerNorm of the output), run by the task
// that computed those rows, while they are in cache. Must touch only rows r0..r1 of its buffers.
using RowPost = std::function<void(int64_t r0, int64_t r1)>;

// The whole product on the pool: packs B into `scratch` (parallel), then computes row x column
// tiles in parallel tasks; then `post` (if any) on every row range, fused into the row tasks when
// they span all columns.
void Gemm(const KernelInfo& kern, int64_t M, int64_t N, int64_t K, MatView A, MatView B, float* C, int64_t ldc,
          const Epilogue& ep, PackedB* scratch, const RowPost* post = nullptr);

// As Gemm, with B packed beforehand (e.g. weights reused across generation chunks).
void GemmPacked(const KernelInfo& kern, int64_t M, MatView A, const PackedB& B, float* C, int64_t ldc,
                const Epilogue& ep, const RowPost* post = nullptr);

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_GEMM_H_
