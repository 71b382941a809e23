// The CUDA compute core (gpu_api.h): generator_core.cc's forward, backward, marginal KL loss, Adam
// and generation on one GPU. GEMMs through cuBLAS (FP32; TF32 tensor cores only when asked),
// LayerNorm, per-feature softmax, the loss, Adam and the sampling kernel as kernels of our own.
//
// Same computation as the CPU core (generator_core.h has the formulas): same parameter layout,
// same float32 element-wise operation order where it matters (LayerNorm, softmax, loss, Adam;
// built with --fmad=false so no multiply-add is fused, as the CPU's -ffp-contract=off), so the
// loss and gradients agree with the CPU's to float32 rounding of the sums (cuBLAS sums in another
// order). The sampling kernel is sampling.cc's procedure in float64 with fdlibm's exp (V8's
// Math.exp), IEEE-rounded on the GPU as on the CPU: the same logits and uniforms give the same
// codes, bit for bit.
//
// Memory: buffers grow to the largest batch seen and are kept (sg_release frees them). Generation
// runs in chunks of at most kGenChunk rows, so 1,000,000 rows need ~ kGenChunk * (2H + D) floats
// of activations, not n.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math_constants.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_api.h"

namespace {

constexpr float kLnEps = 1e-5f;
constexpr float kLossEps = 1e-10f;
constexpr double kAdamBeta1 = 0.9;
constexpr double kAdamBeta2 = 0.999;
constexpr double kAdamEps = 1e-8;
constexpr int64_t kGenChunk = 1 << 17;
constexpr int64_t kEvalChunk = 1 << 14;

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(e));
}

void CheckBlas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw CudaError(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

#define LAUNCH_CHECK(what) Check(cudaGetLastError(), what)

template <typename T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() { Free(); }
  void Free() {
    if (p != nullptr) cudaFree(p);
    p = nullptr;
    n = 0;
  }
  // Grows to at least m elements (contents lost when it grows).
  T* Ensure(size_t m) {
    if (m <= n && p != nullptr) return p;
    Free();
    Check(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(m, 1) * sizeof(T)), "cudaMalloc");
    n = m;
    return p;
  }
};

// ---------------------------------------------------------------------------------------------
// Kernels. Row-wise kernels use one warp per row (8 rows per 256-thread block).

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// x[r, j] = act(x[r, j] + bias[j]) (+ residual into hn = hl + x when hl != nullptr).
__global__ void BiasActKernel(float* x, const float* bias, int64_t rows, int64_t w, int relu, const float* hl,
                              float* hn) {
  const int64_t total = rows * w;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = x[i] + bias[i % w];
    if (relu) v = v > 0.0f ? v : 0.0f;
    x[i] = v;
    if (hl != nullptr) hn[i] = hl[i] + v;
  }
}

// LayerNorm of each row (vmath.cc LayerNormRows): mean, biased variance, rstd = 1 / sqrt(var + eps),
// xhat = (x - mean) rstd, u = gamma xhat + beta. xhat and rstd may be null (generation).
__global__ void LayerNormKernel(const float* x, int64_t rows, int H, const float* gamma, const float* beta,
                                float* xhat, float* rstd, float* u) {
  const int64_t r = blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* xr = x + r * H;
  float s = 0.0f;
  for (int k = lane; k < H; k += 32) s += xr[k];
  s = WarpSum(s);
  const float mean = s * (1.0f / static_cast<float>(H));
  float s2 = 0.0f;
  for (int k = lane; k < H; k += 32) {
    const float d = xr[k] - mean;
    s2 += d * d;
  }
  s2 = WarpSum(s2);
  const float var = s2 * (1.0f / static_cast<float>(H));
  const float rs = 1.0f / sqrtf(var + kLnEps);
  if (rstd != nullptr && lane == 0) rstd[r] = rs;
  float* ur = u + r * H;
  for (int k = lane; k < H; k += 32) {
    const float v = (xr[k] - mean) * rs;
    if (xhat != nullptr) xhat[r * H + k] = v;
    ur[k] = gamma[k] * v + beta[k];
  }
}

// LayerNorm backward (vmath.cc LayerNormBackwardRows, accumulate): dh2 = dh + rs (du gamma - m1 -
// xhat m2); then g2 = dh2 masked by act > 0; dxh = du * xhat (for the gain's column sums).
__global__ void LayerNormBackKernel(const float* du, const float* xhat, const float* rstd, int64_t rows, int H,
                                    const float* gamma, const float* dh, float* dh2, const float* act, float* g2,
                                    float* dxh) {
  const int64_t r = blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* dur = du + r * H;
  const float* xh = xhat + r * H;
  float s1 = 0.0f, s2 = 0.0f;
  for (int k = lane; k < H; k += 32) {
    const float g = dur[k] * gamma[k];
    s1 += g;
    s2 += g * xh[k];
  }
  s1 = WarpSum(s1);
  s2 = WarpSum(s2);
  const float m1 = s1 * (1.0f / static_cast<float>(H));
  const float m2 = s2 * (1.0f / static_cast<float>(H));
  const float rs = rstd[r];
  for (int k = lane; k < H; k += 32) {
    const int64_t i = r * H + k;
    const float v = dh[i] + rs * (dur[k] * gamma[k] - m1 - xh[k] * m2);
    dh2[i] = v;
    g2[i] = act[i] > 0.0f ? v : 0.0f;
    dxh[i] = dur[k] * xh[k];
  }
}

__global__ void ReluMaskKernel(const float* act, const float* dh, float* g, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    g[i] = act[i] > 0.0f ? dh[i] : 0.0f;
  }
}

// p[r, f-slice] = softmax(x + bias) per feature (vmath.cc FeatureSoftmaxRows, expf). One thread
// per (row, feature).
__global__ void FeatureSoftmaxKernel(float* x, const float* bias, int64_t rows, int64_t D, int F, const int64_t* off) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= rows * F) return;
  const int64_t r = t / F;
  const int f = static_cast<int>(t % F);
  float* xr = x + r * D;
  const int64_t a = off[f], b = off[f + 1];
  float m = xr[a] + bias[a];
  for (int64_t k = a; k < b; ++k) {
    const float v = xr[k] + bias[k];
    xr[k] = v;
    m = v > m ? v : m;
  }
  float s = 0.0f;
  for (int64_t k = a; k < b; ++k) {
    const float e = expf(xr[k] - m);
    xr[k] = e;
    s += e;
  }
  for (int64_t k = a; k < b; ++k) xr[k] = xr[k] / s;
}

// dp = p * (dp - sum_k p_k dp_k) per feature, after the entropy penalty's term c_f (ln(p + 1e-30) + 1)
// when ent_c is not null (generator_core.h).
__global__ void FeatureSoftmaxBackKernel(const float* p, float* dp, int64_t rows, int64_t D, int F, const int64_t* off,
                                         const float* ent_c) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= rows * F) return;
  const int64_t r = t / F;
  const int f = static_cast<int>(t % F);
  const float* pr = p + r * D;
  float* dr = dp + r * D;
  const int64_t a = off[f], b = off[f + 1];
  if (ent_c != nullptr) {
    const float c = ent_c[f];
    for (int64_t k = a; k < b; ++k) dr[k] += c * (logf(pr[k] + 1e-30f) + 1.0f);
  }
  float s = 0.0f;
  for (int64_t k = a; k < b; ++k) s += pr[k] * dr[k];
  for (int64_t k = a; k < b; ++k) dr[k] = pr[k] * (dr[k] - s);
}

// dp[r, :] = g1 (the 1-way term), before the 2-way products accumulate into it.
__global__ void BroadcastRowKernel(float* dp, const float* g1, int64_t rows, int64_t D) {
  const int64_t total = rows * D;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dp[i] = g1[i % D];
  }
}

// The loss and its gradient w.r.t. the sums (generator_core.cc LossFromSums), one block of 1024
// threads: entries [0, D) are the 1-way marginals (sum s1), then the pair entries: their sum is
// gram[gidx[i]] (dense) or msum[i] (blocks). cross = sum q ln(s / n + eps) in float64 over float32
// terms; the gradient q / (s / n + eps) * gscale goes to g1, to S at gidx and its mirror (dense), or
// to gmat (blocks). out = (negEntropy - cross) / count.
__global__ void LossKernel(const float* q1, const float* s1, int64_t D, const float* qp, const float* msum,
                           const float* gram, const int64_t* gidx, const int64_t* gmir, int64_t mt, float inv,
                           float gscale, int want_grad, float* g1, float* gmat, float* S, double neg_entropy,
                           double count, double* out) {
  __shared__ double part[1024];
  double acc = 0.0;
  for (int64_t i = threadIdx.x; i < D + mt; i += blockDim.x) {
    float q, s;
    if (i < D) {
      q = q1[i];
      s = s1[i];
    } else {
      const int64_t j = i - D;
      q = qp[j];
      s = gram != nullptr ? gram[gidx[j]] : msum[j];
    }
    const float arg = s * inv + kLossEps;
    acc += static_cast<double>(q * logf(arg));
    if (want_grad) {
      const float g = (q / arg) * gscale;
      if (i < D) {
        g1[i] = g;
      } else if (S != nullptr) {
        S[gidx[i - D]] = g;
        S[gmir[i - D]] = g;
      } else {
        gmat[i - D] = g;
      }
    }
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = (neg_entropy - part[0]) / count;
}

// flag[0] = 1 when any x is not finite (flag zeroed before).
__global__ void NonFiniteKernel(const float* x, int64_t n, int* flag) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (!isfinite(x[i])) {
      flag[0] = 1;
      return;
    }
  }
}

// Adam (vmath.cc AdamUpdate, tfjs order), skipped entirely when the loss or a gradient was not finite.
__global__ void AdamKernel(float* w, float* m, float* v, const float* g, int64_t n, float b1, float omb1, float b2,
                           float omb2, float lr_c1, float c2, float eps, const int* bad, const double* loss) {
  if (bad[0] != 0 || !isfinite(loss[0])) return;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gi = g[i];
    const float mi = m[i] * b1 + gi * omb1;
    const float vi = v[i] * b2 + (gi * gi) * omb2;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i] - (mi * lr_c1) / (sqrtf(vi / c2) + eps);
  }
}

// First (smallest) index of a non-finite z or (offset by nz) of a uniform outside [0, 1).
__global__ void CheckInputsKernel(const float* z, int64_t nz, const double* u, int64_t nu, int64_t base_z,
                                  int64_t base_u, unsigned long long* first) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < nz + nu;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (i < nz) {
      if (!isfinite(z[i])) atomicMin(first, static_cast<unsigned long long>(base_z + i));
    } else {
      const double x = u[i - nz];
      if (!(x >= 0.0 && x < 1.0)) atomicMin(first, static_cast<unsigned long long>(base_u + (i - nz)));
    }
  }
}

// fdlibm's __ieee754_exp, as fdlibm_exp.h (V8's Math.exp), for IEEE double arithmetic without
// contraction (this file is built with --fmad=false).
__device__ double FdlibmExpDev(double x) {
  const double one = 1.0;
  const double o_threshold = 7.09782712893383973096e+02;
  const double u_threshold = -7.45133219101941108420e+02;
  const double ln2HI0 = 6.93147180369123816490e-01, ln2HI1 = -6.93147180369123816490e-01;
  const double ln2LO0 = 1.90821492927058770002e-10, ln2LO1 = -1.90821492927058770002e-10;
  const double invln2 = 1.44269504088896338700e+00;
  const double P1 = 1.66666666666666019037e-01;
  const double P2 = -2.77777777770155933842e-03;
  const double P3 = 6.61375632143793436117e-05;
  const double P4 = -1.65339022054652515390e-06;
  const double P5 = 4.13813679705723846039e-08;
  const double twom1000 = 9.33263618503218878990e-302;
  const double two1023 = 8.988465674311579539e307;
  double y, hi = 0.0, lo = 0.0, c, t, twopk;
  int k = 0;
  unsigned hx = static_cast<unsigned>(__double2hiint(x));
  const int xsb = static_cast<int>((hx >> 31) & 1);
  hx &= 0x7fffffffu;
  if (hx >= 0x40862E42u) {
    if (hx >= 0x7ff00000u) {
      if (((hx & 0xfffffu) | static_cast<unsigned>(__double2loint(x))) != 0) return x + x;
      return (xsb == 0) ? x : 0.0;
    }
    if (x > o_threshold) return CUDART_INF;
    if (x < u_threshold) return 0.0;
  }
  if (hx > 0x3FD62E42u) {
    if (hx < 0x3FF0A2B2u) {
      if (x == 1.0) return 2.718281828459045;
      hi = x - (xsb ? ln2HI1 : ln2HI0);
      lo = xsb ? ln2LO1 : ln2LO0;
      k = 1 - xsb - xsb;
    } else {
      k = static_cast<int>(invln2 * x + (xsb ? -0.5 : 0.5));
      t = k;
      hi = x - t * ln2HI0;
      lo = t * ln2LO0;
    }
    x = hi - lo;
  } else if (hx < 0x3E300000u) {
    if (1.0e300 + x > one) return one + x;
  } else {
    k = 0;
  }
  t = x * x;
  if (k >= -1021) {
    twopk = __hiloint2double(static_cast<int>(0x3FF00000u + (static_cast<unsigned>(k) << 20)), 0);
  } else {
    twopk = __hiloint2double(static_cast<int>(0x3FF00000u + (static_cast<unsigned>(k + 1000) << 20)), 0);
  }
  c = x - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  if (k == 0) return one - ((x * c) / (c - 2.0) - x);
  y = one - ((lo - (x * c) / (2.0 - c)) - hi);
  if (k >= -1021) {
    if (k == 1024) return y * 2.0 * two1023;
    return y * twopk;
  }
  return y * twopk * twom1000;
}

constexpr int kMaxLocalK = 64;

// The sampling kernel of sampling.cc, one thread per (row, feature) of a chunk of m rows: z = logit
// * (1/T), e = exp(z - max), nucleus by rank (e descending, ties by smaller k), inverse CDF in
// ascending k. Codes to codes[f * m + r]. A refused logit: atomicMin of its flat index (row-major
// over the whole request: base + r * D + k) into first_bad; that row is not sampled.
__global__ void SampleKernel(const float* logits, int64_t m, int64_t D, int F, const int64_t* off, const double* u,
                             double inv_t, int truncate, double top_p, int32_t* codes, int64_t base,
                             unsigned long long* first_bad, double* scratch) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= m * F) return;
  const int f = static_cast<int>(t % F);
  const int64_t r = t / F;
  const int64_t a = off[f];
  const int K = static_cast<int>(off[f + 1] - a);
  const float* lg = logits + r * D + a;
  double local[kMaxLocalK];
  double* e = K <= kMaxLocalK ? local : scratch + r * D + a;
  double mx = -CUDART_INF;
  for (int k = 0; k < K; ++k) {
    const double z = static_cast<double>(lg[k]) * inv_t;
    if (!isfinite(z)) {
      atomicMin(first_bad, static_cast<unsigned long long>(base + r * D + a + k));
      return;
    }
    e[k] = z;
    if (z > mx) mx = z;
  }
  for (int k = 0; k < K; ++k) e[k] = FdlibmExpDev(e[k] - mx);
  double s = 0.0;
  for (int k = 0; k < K; ++k) s += e[k];
  double total = s;
  const double target_u = u[r * F + f];
  int code = -1, last = 0;
  if (!truncate) {
    const double target = target_u * total;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) {
      last = k;
      acc += e[k];
      if (acc > target) {
        code = k;
        break;
      }
    }
  } else {
    // Kept set: the shortest prefix of the nucleus order whose running sum reaches top_p * s. The
    // rank of k (its position in that order) is the count of codes ordered before it; a code is
    // kept when the running sum up to the code before it is < need (or it is first). The running
    // sums are accumulated in rank order, as the reference does.
    const double need = top_p * s;
    // Walk the order: repeatedly pick the next code by rank (O(K^2), K small).
    total = 0.0;
    double cutoff_e = CUDART_INF;
    int cutoff_k = -1;  // last kept code in the order
    for (int rank = 0; rank < K; ++rank) {
      // The code of this rank: the largest e below (cutoff_e, cutoff_k) in the order.
      int best = -1;
      for (int k = 0; k < K; ++k) {
        const bool after = e[k] < cutoff_e || (e[k] == cutoff_e && k > cutoff_k);
        if (!after) continue;
        if (best < 0 || e[k] > e[best]) best = k;  // ties: smaller k first (strict >)
      }
      cutoff_e = e[best];
      cutoff_k = best;
      total += e[best];
      if (total >= need) break;
    }
    // Kept: codes ordered at or before (cutoff_e, cutoff_k).
    const double target = target_u * total;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) {
      const bool kept = e[k] > cutoff_e || (e[k] == cutoff_e && k <= cutoff_k);
      if (!kept) continue;
      last = k;
      acc += e[k];
      if (acc > target) {
        code = k;
        break;
      }
    }
  }
  codes[static_cast<int64_t>(f) * m + r] = code < 0 ? last : code;
}

unsigned Blocks(int64_t work, int threads = 256) {
  const int64_t b = (work + threads - 1) / threads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(b, 65535 * 8)));
}

// ---------------------------------------------------------------------------------------------

struct Core {
  SgSpec spec{};
  std::vector<int32_t> card;
  std::vector<int64_t> off;
  int64_t in_W = 0, in_b = 0, out_W = 0, out_b = 0, total = 0;
  std::vector<int64_t> blk;  // 4 per block
  std::string error;

  cublasHandle_t blas = nullptr;
  cudaStream_t stream = nullptr;

  DevBuf<float> params, m, v, grad;
  DevBuf<int64_t> off_d;
  DevBuf<float> ones;

  // Targets.
  bool has_targets = false;
  bool dense = false;
  int64_t mt = 0;
  double count = 1.0, neg_entropy = 0.0;
  std::vector<int32_t> bf;
  std::vector<int64_t> bc0, bc1, boff;
  DevBuf<float> q1, qp, s1, g1, msum, gmat, gram, S;
  DevBuf<int64_t> gidx, gmir;

  // Activations (training): h (L+1) n H, xhat/u/a L n H, rstd L n, p/dp n D, dh/dh2/g/g2/du/dxh n H.
  int64_t rows = 0;
  DevBuf<float> z, h, xhat, rstd, u, a, p, dp, dh, dh2, g, g2, du, dxh, colsum;
  DevBuf<double> loss_d;
  DevBuf<int> flag_d;
  DevBuf<float> ent_c;

  // Generation.
  DevBuf<float> gz, gh, gu, ga, glog;
  DevBuf<double> gun, gscratch;
  DevBuf<int32_t> gcodes;
  DevBuf<unsigned long long> first_d;

  int64_t E() const { return spec.E; }
  int64_t H() const { return spec.H; }
  int64_t L() const { return spec.L; }
  int64_t D() const { return spec.D; }
  int F() const { return static_cast<int>(spec.F); }

  ~Core() {
    if (blas != nullptr) cublasDestroy(blas);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // C (m x n, row-major, ldc) = alpha op(A) op(B) + beta C, A (m x k after op), B (k x n after op).
  void Gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
            float* C, int64_t ldc, float beta) {
    const float alpha = 1.0f;
    CheckBlas(cublasSgemm(blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(N),
                          static_cast<int>(M), static_cast<int>(K), &alpha, B, static_cast<int>(ldb), A,
                          static_cast<int>(lda), &beta, C, static_cast<int>(ldc)),
              "cublasSgemm");
  }

  // out[j] = sum_r X[r, j], X rows x cols with leading dimension ld.
  void ColSums(const float* X, int64_t rows_, int64_t cols, int64_t ld, float* out) {
    const float one = 1.0f, zero = 0.0f;
    CheckBlas(cublasSgemv(blas, CUBLAS_OP_N, static_cast<int>(cols), static_cast<int>(rows_), &one, X,
                          static_cast<int>(ld), ones.p, 1, &zero, out, 1),
              "cublasSgemv");
  }

  void EnsureOnes(int64_t n) {
    if (static_cast<int64_t>(ones.n) >= n && ones.p != nullptr) return;
    ones.Ensure(static_cast<size_t>(n));
    std::vector<float> h1(static_cast<size_t>(n), 1.0f);
    Check(cudaMemcpy(ones.p, h1.data(), h1.size() * sizeof(float), cudaMemcpyHostToDevice), "ones");
    Check(cudaDeviceSynchronize(), "synchronize");
  }

  void SizeActs(int64_t n) {
    EnsureOnes(n);
    if (n <= rows) return;
    rows = n;
    const size_t nH = static_cast<size_t>(n * H());
    const size_t Lm = static_cast<size_t>(std::max<int64_t>(L(), 1));
    z.Ensure(static_cast<size_t>(n * E()));
    h.Ensure(nH * static_cast<size_t>(L() + 1));
    xhat.Ensure(nH * Lm);
    rstd.Ensure(static_cast<size_t>(n) * Lm);
    u.Ensure(nH * Lm);
    a.Ensure(nH * Lm);
    p.Ensure(static_cast<size_t>(n * D()));
    dp.Ensure(static_cast<size_t>(n * D()));
    dh.Ensure(nH);
    dh2.Ensure(nH);
    g.Ensure(nH);
    g2.Ensure(nH);
    du.Ensure(nH);
    dxh.Ensure(nH);
  }

  // Forward of n rows of z (already on the device) into h, xhat, rstd, u, a, p (probabilities).
  void ForwardTrain(const float* zd, int64_t n) {
    const int64_t Ee = E(), Hh = H(), Ll = L(), Dd = D();
    const int64_t nH = n * Hh;
    const float* P = params.p;
    Gemm(false, false, n, Hh, Ee, zd, Ee, P + in_W, Hh, h.p, Hh, 0.0f);
    BiasActKernel<<<Blocks(nH), 256, 0, stream>>>(h.p, P + in_b, n, Hh, 1, nullptr, nullptr);
    LAUNCH_CHECK("bias");
    for (int64_t l = 0; l < Ll; ++l) {
      const int64_t* b = &blk[static_cast<size_t>(4 * l)];
      float* hl = h.p + l * nH;
      LayerNormKernel<<<static_cast<unsigned>((n + 7) / 8), 256, 0, stream>>>(
          hl, n, static_cast<int>(Hh), P + b[0], P + b[1], xhat.p + l * nH, rstd.p + l * n, u.p + l * nH);
      LAUNCH_CHECK("layernorm");
      float* al = a.p + l * nH;
      Gemm(false, false, n, Hh, Hh, u.p + l * nH, Hh, P + b[2], Hh, al, Hh, 0.0f);
      BiasActKernel<<<Blocks(nH), 256, 0, stream>>>(al, P + b[3], n, Hh, 1, hl, hl + nH);
      LAUNCH_CHECK("bias residual");
    }
    Gemm(false, false, n, Dd, Hh, h.p + Ll * nH, Hh, P + out_W, Dd, p.p, Dd, 0.0f);
    FeatureSoftmaxKernel<<<Blocks(n * F()), 256, 0, stream>>>(p.p, P + out_b, n, Dd, F(), off_d.p);
    LAUNCH_CHECK("softmax");
  }

  // s1 and the 2-way sums of p (n rows), written (beta 0) or accumulated (beta 1).
  void MarginalSums(int64_t n, float beta) {
    const int64_t Dd = D();
    const float one = 1.0f;
    CheckBlas(cublasSgemv(blas, CUBLAS_OP_N, static_cast<int>(Dd), static_cast<int>(n), &one, p.p,
                          static_cast<int>(Dd), ones.p, 1, &beta, s1.p, 1),
              "cublasSgemv");
    if (mt == 0) return;
    if (dense) {
      Gemm(true, false, Dd, Dd, n, p.p, Dd, p.p, Dd, gram.p, Dd, beta);
    } else {
      for (size_t b = 0; b < bf.size(); ++b) {
        const int64_t kf = card[static_cast<size_t>(bf[b])];
        const int64_t w = bc1[b] - bc0[b];
        Gemm(true, false, kf, w, n, p.p + off[static_cast<size_t>(bf[b])], Dd, p.p + bc0[b], Dd, msum.p + boff[b], w,
             beta);
      }
    }
  }

  void Loss(int64_t n, bool want_grad) {
    const float inv = static_cast<float>(1.0 / static_cast<double>(n));
    const float gscale = static_cast<float>(-1.0 / count) * inv;
    LossKernel<<<1, 1024, 0, stream>>>(q1.p, s1.p, D(), qp.p, msum.p, dense ? gram.p : nullptr, gidx.p, gmir.p, mt,
                                       inv, gscale, want_grad ? 1 : 0, g1.p, gmat.p, dense ? S.p : nullptr,
                                       neg_entropy, count, loss_d.p);
    LAUNCH_CHECK("loss");
  }

  void Backward(const float* zd, int64_t n, float* gr, double alpha) {
    const int64_t Ee = E(), Hh = H(), Ll = L(), Dd = D();
    const int64_t nH = n * Hh;
    const float* P = params.p;
    BroadcastRowKernel<<<Blocks(n * Dd), 256, 0, stream>>>(dp.p, g1.p, n, Dd);
    LAUNCH_CHECK("broadcast");
    if (mt > 0) {
      if (dense) {
        Gemm(false, false, n, Dd, Dd, p.p, Dd, S.p, Dd, dp.p, Dd, 1.0f);
      } else {
        for (size_t b = 0; b < bf.size(); ++b) {
          const int64_t of = off[static_cast<size_t>(bf[b])];
          const int64_t kf = card[static_cast<size_t>(bf[b])];
          const int64_t w = bc1[b] - bc0[b];
          const float* G = gmat.p + boff[b];
          Gemm(false, true, n, kf, w, p.p + bc0[b], Dd, G, w, dp.p + of, Dd, 1.0f);  // dP_f += P[:, c0:c1] G^T
          Gemm(false, false, n, w, kf, p.p + of, Dd, G, w, dp.p + bc0[b], Dd, 1.0f);  // dP[:, c0:c1] += P_f G
        }
      }
    }
    const float* entc = nullptr;
    if (alpha > 0) {
      std::vector<float> c(static_cast<size_t>(F()));
      for (int f = 0; f < F(); ++f) {
        const double lnk = std::log(std::max(2.0, static_cast<double>(card[static_cast<size_t>(f)])));
        c[static_cast<size_t>(f)] = static_cast<float>(-alpha / (static_cast<double>(n) * static_cast<double>(F()) * lnk));
      }
      ent_c.Ensure(c.size());
      Check(cudaMemcpyAsync(ent_c.p, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice, stream), "ent_c");
      entc = ent_c.p;
    }
    FeatureSoftmaxBackKernel<<<Blocks(n * F()), 256, 0, stream>>>(p.p, dp.p, n, Dd, F(), off_d.p, entc);
    LAUNCH_CHECK("softmax backward");

    float* dhc = dh.p;
    float* dhn = dh2.p;
    float* gc = g.p;
    float* gn = g2.p;
    const float* hL = h.p + Ll * nH;
    Gemm(true, false, Hh, Dd, n, hL, Hh, dp.p, Dd, gr + out_W, Dd, 0.0f);  // dW_out = h_L^T dP
    ColSums(dp.p, n, Dd, Dd, gr + out_b);
    Gemm(false, true, n, Hh, Dd, dp.p, Dd, P + out_W, Dd, dhc, Hh, 0.0f);  // dh_L = dP W_out^T
    const float* actL = Ll > 0 ? a.p + (Ll - 1) * nH : h.p;
    ReluMaskKernel<<<Blocks(nH), 256, 0, stream>>>(actL, dhc, gc, nH);
    LAUNCH_CHECK("mask");
    for (int64_t l = Ll - 1; l >= 0; --l) {
      const int64_t* b = &blk[static_cast<size_t>(4 * l)];
      Gemm(true, false, Hh, Hh, n, u.p + l * nH, Hh, gc, Hh, gr + b[2], Hh, 0.0f);  // dW = u^T g
      ColSums(gc, n, Hh, Hh, gr + b[3]);
      Gemm(false, true, n, Hh, Hh, gc, Hh, P + b[2], Hh, du.p, Hh, 0.0f);  // du = g W^T
      const float* act = l > 0 ? a.p + (l - 1) * nH : h.p;
      LayerNormBackKernel<<<static_cast<unsigned>((n + 7) / 8), 256, 0, stream>>>(
          du.p, xhat.p + l * nH, rstd.p + l * n, n, static_cast<int>(Hh), P + b[0], dhc, dhn, act, gn, dxh.p);
      LAUNCH_CHECK("layernorm backward");
      ColSums(dxh.p, n, Hh, Hh, gr + b[0]);
      ColSums(du.p, n, Hh, Hh, gr + b[1]);
      std::swap(dhc, dhn);
      std::swap(gc, gn);
    }
    Gemm(true, false, Ee, Hh, n, zd, Ee, gc, Hh, gr + in_W, Hh, 0.0f);  // dW_in = z^T g
    ColSums(gc, n, Hh, Hh, gr + in_b);
  }

  void Upload(float* dst, const float* src, size_t count_) {
    Check(cudaMemcpyAsync(dst, src, count_ * sizeof(float), cudaMemcpyHostToDevice, stream), "upload");
  }

  void Sync() { Check(cudaStreamSynchronize(stream), "synchronize"); }

  double ReadLoss() {
    double l = 0;
    Check(cudaMemcpyAsync(&l, loss_d.p, sizeof l, cudaMemcpyDeviceToHost, stream), "loss");
    Sync();
    return l;
  }

  // Forward of m rows of gz (on the device) with generation buffers -> glog (logits, biased).
  void ForwardGen(const float* zd, int64_t mrows) {
    const int64_t Ee = E(), Hh = H(), Ll = L(), Dd = D();
    const int64_t mH = mrows * Hh;
    const float* P = params.p;
    Gemm(false, false, mrows, Hh, Ee, zd, Ee, P + in_W, Hh, gh.p, Hh, 0.0f);
    BiasActKernel<<<Blocks(mH), 256, 0, stream>>>(gh.p, P + in_b, mrows, Hh, 1, nullptr, nullptr);
    LAUNCH_CHECK("bias");
    for (int64_t l = 0; l < Ll; ++l) {
      const int64_t* b = &blk[static_cast<size_t>(4 * l)];
      LayerNormKernel<<<static_cast<unsigned>((mrows + 7) / 8), 256, 0, stream>>>(gh.p, mrows, static_cast<int>(Hh),
                                                                                  P + b[0], P + b[1], nullptr,
                                                                                  nullptr, gu.p);
      LAUNCH_CHECK("layernorm");
      Gemm(false, false, mrows, Hh, Hh, gu.p, Hh, P + b[2], Hh, ga.p, Hh, 0.0f);
      // h += relu(a + b): hl and hn the same buffer (element-wise, in place).
      BiasActKernel<<<Blocks(mH), 256, 0, stream>>>(ga.p, P + b[3], mrows, Hh, 1, gh.p, gh.p);
      LAUNCH_CHECK("bias residual");
    }
    Gemm(false, false, mrows, Dd, Hh, gh.p, Hh, P + out_W, Dd, glog.p, Dd, 0.0f);
    BiasActKernel<<<Blocks(mrows * Dd), 256, 0, stream>>>(glog.p, P + out_b, mrows, Dd, 0, nullptr, nullptr);
    LAUNCH_CHECK("bias");
  }
};

template <typename Fn>
int Guard(Core* c, const Fn& fn) {
  try {
    fn();
    return 0;
  } catch (const std::exception& e) {
    c->error = e.what();
  } catch (...) {
    c->error = "unknown failure";
  }
  return -1;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int sg_abi_version(void) { return SYNTHD_GPU_ABI_VERSION; }

__attribute__((visibility("default"))) int sg_device_info(char* name, size_t cap) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0) {
    std::snprintf(name, cap, "%s", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 0;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::snprintf(name, cap, "cudaGetDeviceProperties failed");
    return 0;
  }
  std::snprintf(name, cap, "%s", prop.name);
  return count;
}

__attribute__((visibility("default"))) void* sg_create(const SgSpec* spec, const SgIndex* index, int tf32, char* err,
                                                       size_t cap) {
  Core* c = new (std::nothrow) Core();
  if (c == nullptr) {
    std::snprintf(err, cap, "out of memory");
    return nullptr;
  }
  const int rc = Guard(c, [&] {
    Check(cudaSetDevice(0), "cudaSetDevice");
    c->spec = *spec;
    c->card.assign(spec->card, spec->card + spec->F);
    c->off.assign(spec->off, spec->off + spec->F + 1);
    c->spec.card = c->card.data();
    c->spec.off = c->off.data();
    c->in_W = index->in_W;
    c->in_b = index->in_b;
    c->out_W = index->out_W;
    c->out_b = index->out_b;
    c->total = index->total;
    c->blk.assign(index->blocks, index->blocks + 4 * spec->L);
    Check(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CheckBlas(cublasCreate(&c->blas), "cublasCreate");
    CheckBlas(cublasSetStream(c->blas, c->stream), "cublasSetStream");
    CheckBlas(cublasSetMathMode(c->blas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    const size_t P = static_cast<size_t>(c->total);
    c->params.Ensure(P);
    c->m.Ensure(P);
    c->v.Ensure(P);
    c->grad.Ensure(P);
    std::vector<float> init(P, 0.0f);
    for (int64_t l = 0; l < spec->L; ++l) std::fill_n(init.begin() + c->blk[static_cast<size_t>(4 * l)], spec->H, 1.0f);
    Check(cudaMemcpy(c->params.p, init.data(), P * sizeof(float), cudaMemcpyHostToDevice), "params");
    Check(cudaMemset(c->m.p, 0, P * sizeof(float)), "memset");
    Check(cudaMemset(c->v.p, 0, P * sizeof(float)), "memset");
    c->off_d.Ensure(c->off.size());
    Check(cudaMemcpy(c->off_d.p, c->off.data(), c->off.size() * sizeof(int64_t), cudaMemcpyHostToDevice), "offsets");
    c->loss_d.Ensure(1);
    c->flag_d.Ensure(1);
    c->first_d.Ensure(1);
    // The copies above ran on the legacy stream, which the core's non-blocking stream does not wait for.
    Check(cudaDeviceSynchronize(), "synchronize");
  });
  if (rc != 0) {
    std::snprintf(err, cap, "%s", c->error.c_str());
    delete c;
    return nullptr;
  }
  return c;
}

__attribute__((visibility("default"))) void sg_destroy(void* h) { delete static_cast<Core*>(h); }

__attribute__((visibility("default"))) const char* sg_last_error(void* h) { return static_cast<Core*>(h)->error.c_str(); }

__attribute__((visibility("default"))) int sg_params(void* h, float* params, int upload) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    const size_t bytes = static_cast<size_t>(c->total) * sizeof(float);
    Check(upload ? cudaMemcpyAsync(c->params.p, params, bytes, cudaMemcpyHostToDevice, c->stream)
                 : cudaMemcpyAsync(params, c->params.p, bytes, cudaMemcpyDeviceToHost, c->stream),
          "params");
    c->Sync();
  });
}

__attribute__((visibility("default"))) int sg_adam(void* h, float* m, float* v, int upload) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    const size_t P = static_cast<size_t>(c->total);
    c->m.Ensure(P);
    c->v.Ensure(P);
    const size_t bytes = P * sizeof(float);
    if (upload) {
      Check(cudaMemcpyAsync(c->m.p, m, bytes, cudaMemcpyHostToDevice, c->stream), "adam m");
      Check(cudaMemcpyAsync(c->v.p, v, bytes, cudaMemcpyHostToDevice, c->stream), "adam v");
    } else {
      Check(cudaMemcpyAsync(m, c->m.p, bytes, cudaMemcpyDeviceToHost, c->stream), "adam m");
      Check(cudaMemcpyAsync(v, c->v.p, bytes, cudaMemcpyDeviceToHost, c->stream), "adam v");
    }
    c->Sync();
  });
}

__attribute__((visibility("default"))) int sg_set_targets(void* h, const float* q1, int64_t nblocks, const int32_t* f,
                                                          const int64_t* c0, const int64_t* c1,
                                                          const float* const* targets, double count,
                                                          double neg_entropy, int dense) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    const int64_t D = c->D();
    c->count = count;
    c->neg_entropy = neg_entropy;
    c->dense = dense != 0 && nblocks > 0;
    c->bf.assign(f, f + nblocks);
    c->bc0.assign(c0, c0 + nblocks);
    c->bc1.assign(c1, c1 + nblocks);
    c->boff.assign(static_cast<size_t>(nblocks), 0);
    int64_t mt = 0;
    for (int64_t b = 0; b < nblocks; ++b) {
      c->boff[static_cast<size_t>(b)] = mt;
      mt += static_cast<int64_t>(c->card[static_cast<size_t>(f[b])]) * (c1[b] - c0[b]);
    }
    c->mt = mt;
    std::vector<float> qp(static_cast<size_t>(std::max<int64_t>(mt, 1)));
    std::vector<int64_t> gi(qp.size()), gm(qp.size());
    for (int64_t b = 0; b < nblocks; ++b) {
      const int64_t kf = c->card[static_cast<size_t>(f[b])];
      const int64_t of = c->off[static_cast<size_t>(f[b])];
      const int64_t w = c1[b] - c0[b];
      for (int64_t r = 0; r < kf; ++r)
        for (int64_t j = 0; j < w; ++j) {
          const size_t at = static_cast<size_t>(c->boff[static_cast<size_t>(b)] + r * w + j);
          qp[at] = targets[b][r * w + j];
          gi[at] = (of + r) * D + c0[b] + j;
          gm[at] = (c0[b] + j) * D + of + r;
        }
    }
    c->q1.Ensure(static_cast<size_t>(D));
    c->s1.Ensure(static_cast<size_t>(D));
    c->g1.Ensure(static_cast<size_t>(D));
    c->qp.Ensure(qp.size());
    c->gidx.Ensure(qp.size());
    c->gmir.Ensure(qp.size());
    c->msum.Ensure(qp.size());
    c->gmat.Ensure(qp.size());
    Check(cudaMemcpy(c->q1.p, q1, static_cast<size_t>(D) * sizeof(float), cudaMemcpyHostToDevice), "targets");
    Check(cudaMemcpy(c->qp.p, qp.data(), qp.size() * sizeof(float), cudaMemcpyHostToDevice), "targets");
    Check(cudaMemcpy(c->gidx.p, gi.data(), gi.size() * sizeof(int64_t), cudaMemcpyHostToDevice), "targets");
    Check(cudaMemcpy(c->gmir.p, gm.data(), gm.size() * sizeof(int64_t), cudaMemcpyHostToDevice), "targets");
    if (c->dense) {
      c->gram.Ensure(static_cast<size_t>(D * D));
      c->S.Ensure(static_cast<size_t>(D * D));
      Check(cudaMemset(c->S.p, 0, static_cast<size_t>(D * D) * sizeof(float)), "memset");  // zero outside the blocks
    } else {
      c->gram.Free();
      c->S.Free();
    }
    Check(cudaDeviceSynchronize(), "synchronize");  // legacy-stream copies before the core's stream reads them
    c->has_targets = true;
  });
}

__attribute__((visibility("default"))) int sg_loss(void* h, const float* z, int64_t n, float* grad, double alpha,
                                                   double* loss) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    c->SizeActs(n);
    c->Upload(c->z.p, z, static_cast<size_t>(n * c->E()));
    c->ForwardTrain(c->z.p, n);
    c->MarginalSums(n, 0.0f);
    c->Loss(n, grad != nullptr);
    if (grad != nullptr) {
      c->Backward(c->z.p, n, c->grad.p, alpha);
      Check(cudaMemcpyAsync(grad, c->grad.p, static_cast<size_t>(c->total) * sizeof(float), cudaMemcpyDeviceToHost,
                            c->stream),
            "grad");
    }
    *loss = c->ReadLoss();
  });
}

__attribute__((visibility("default"))) int sg_train_step(void* h, const float* z, int64_t n, double lr, int64_t t_next,
                                                         double alpha, double* loss, int* applied) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    c->SizeActs(n);
    c->Upload(c->z.p, z, static_cast<size_t>(n * c->E()));
    c->ForwardTrain(c->z.p, n);
    c->MarginalSums(n, 0.0f);
    c->Loss(n, true);
    c->Backward(c->z.p, n, c->grad.p, alpha);
    Check(cudaMemsetAsync(c->flag_d.p, 0, sizeof(int), c->stream), "memset");
    NonFiniteKernel<<<Blocks(c->total), 256, 0, c->stream>>>(c->grad.p, c->total, c->flag_d.p);
    LAUNCH_CHECK("finite");
    const double c1 = 1.0 - std::pow(kAdamBeta1, static_cast<double>(t_next));
    const double c2 = 1.0 - std::pow(kAdamBeta2, static_cast<double>(t_next));
    AdamKernel<<<Blocks(c->total), 256, 0, c->stream>>>(
        c->params.p, c->m.p, c->v.p, c->grad.p, c->total, static_cast<float>(kAdamBeta1),
        static_cast<float>(1.0 - kAdamBeta1), static_cast<float>(kAdamBeta2), static_cast<float>(1.0 - kAdamBeta2),
        static_cast<float>(lr / c1), static_cast<float>(c2), static_cast<float>(kAdamEps), c->flag_d.p, c->loss_d.p);
    LAUNCH_CHECK("adam");
    int flag = 0;
    Check(cudaMemcpyAsync(&flag, c->flag_d.p, sizeof flag, cudaMemcpyDeviceToHost, c->stream), "flag");
    const double l = c->ReadLoss();
    const bool ok = flag == 0 && std::isfinite(l);
    *applied = ok ? 1 : 0;
    *loss = ok ? l : std::numeric_limits<double>::quiet_NaN();
  });
}

__attribute__((visibility("default"))) int sg_eval_loss(void* h, const float* z, int64_t n, double* loss) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    const int64_t chunk = std::min<int64_t>(n, kEvalChunk);
    c->SizeActs(chunk);
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
      const int64_t m = std::min<int64_t>(chunk, n - r0);
      c->Upload(c->z.p, z + r0 * c->E(), static_cast<size_t>(m * c->E()));
      c->ForwardTrain(c->z.p, m);
      c->MarginalSums(m, r0 > 0 ? 1.0f : 0.0f);
    }
    c->Loss(n, false);
    *loss = c->ReadLoss();
  });
}

__attribute__((visibility("default"))) int sg_generate(void* h, const float* z, int64_t n, const double* uniforms,
                                                       double temperature, int truncate, double top_p, int32_t* codes,
                                                       float* logits_out, SgSampleError* err, int64_t* bad_input) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    err->kind = 0;
    *bad_input = -1;
    const int64_t E = c->E(), Hh = c->H(), D = c->D();
    const int F = c->F();
    const int64_t chunk = std::min<int64_t>(n, kGenChunk);
    c->gz.Ensure(static_cast<size_t>(chunk * E));
    c->gh.Ensure(static_cast<size_t>(chunk * Hh));
    c->gu.Ensure(static_cast<size_t>(chunk * Hh));
    c->ga.Ensure(static_cast<size_t>(chunk * Hh));
    c->glog.Ensure(static_cast<size_t>(chunk * D));
    bool wide = false;
    for (int32_t k : c->card) wide = wide || k > kMaxLocalK;
    if (codes != nullptr) {
      c->gun.Ensure(static_cast<size_t>(chunk * F));
      c->gcodes.Ensure(static_cast<size_t>(chunk * F));
      if (wide) c->gscratch.Ensure(static_cast<size_t>(chunk * D));
    }
    const unsigned long long none = ~0ull;
    for (int64_t r0 = 0; r0 < n; r0 += chunk) {
      const int64_t m = std::min<int64_t>(chunk, n - r0);
      c->Upload(c->gz.p, z + r0 * E, static_cast<size_t>(m * E));
      if (codes != nullptr) {
        Check(cudaMemcpyAsync(c->gun.p, uniforms + r0 * F, static_cast<size_t>(m * F) * sizeof(double),
                              cudaMemcpyHostToDevice, c->stream),
              "uniforms");
      }
      // Inputs: the first non-finite latent, else the first uniform outside [0, 1).
      Check(cudaMemcpyAsync(c->first_d.p, &none, sizeof none, cudaMemcpyHostToDevice, c->stream), "flag");
      CheckInputsKernel<<<Blocks(m * E + (codes ? m * F : 0)), 256, 0, c->stream>>>(
          c->gz.p, m * E, c->gun.p, codes ? m * F : 0, r0 * E, n * E + r0 * F, c->first_d.p);
      LAUNCH_CHECK("check inputs");
      c->ForwardGen(c->gz.p, m);
      if (logits_out != nullptr) {
        Check(cudaMemcpyAsync(logits_out + r0 * D, c->glog.p, static_cast<size_t>(m * D) * sizeof(float),
                              cudaMemcpyDeviceToHost, c->stream),
              "logits");
      }
      unsigned long long first_in = none;
      Check(cudaMemcpyAsync(&first_in, c->first_d.p, sizeof first_in, cudaMemcpyDeviceToHost, c->stream), "flag");
      if (codes == nullptr) {
        c->Sync();
        if (first_in != none) {
          *bad_input = static_cast<int64_t>(first_in);
          return;
        }
        continue;
      }
      Check(cudaMemcpyAsync(c->first_d.p, &none, sizeof none, cudaMemcpyHostToDevice, c->stream), "flag");
      SampleKernel<<<Blocks(m * F, 128), 128, 0, c->stream>>>(c->glog.p, m, D, F, c->off_d.p, c->gun.p,
                                                                1.0 / temperature, truncate, top_p, c->gcodes.p,
                                                                r0 * D, c->first_d.p, c->gscratch.p);
      LAUNCH_CHECK("sample");
      unsigned long long first_bad = none;
      Check(cudaMemcpyAsync(&first_bad, c->first_d.p, sizeof first_bad, cudaMemcpyDeviceToHost, c->stream), "flag");
      Check(cudaMemcpy2DAsync(codes + r0, static_cast<size_t>(n) * sizeof(int32_t), c->gcodes.p,
                              static_cast<size_t>(m) * sizeof(int32_t), static_cast<size_t>(m) * sizeof(int32_t),
                              static_cast<size_t>(F), cudaMemcpyDeviceToHost, c->stream),
            "codes");
      c->Sync();
      if (first_in != none) {
        *bad_input = static_cast<int64_t>(first_in);
        return;
      }
      if (first_bad != none) {
        const int64_t idx = static_cast<int64_t>(first_bad);
        float value = 0.0f;
        Check(cudaMemcpy(&value, c->glog.p + (idx - r0 * D), sizeof value, cudaMemcpyDeviceToHost), "logit");
        err->kind = std::isfinite(value) ? 2 : 1;
        err->index = idx;
        err->value = static_cast<double>(value);
        return;
      }
    }
  });
}

__attribute__((visibility("default"))) int sg_release(void* h) {
  Core* c = static_cast<Core*>(h);
  return Guard(c, [&] {
    c->rows = 0;
    for (DevBuf<float>* b : {&c->z, &c->h, &c->xhat, &c->rstd, &c->u, &c->a, &c->p, &c->dp, &c->dh, &c->dh2, &c->g,
                             &c->g2, &c->du, &c->dxh, &c->gz, &c->gh, &c->gu, &c->ga, &c->glog, &c->ones})
      b->Free();
    c->gun.Free();
    c->gscratch.Free();
    c->gcodes.Free();
  });
}

}  // extern "C"
