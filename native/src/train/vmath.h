// Element-wise and row-wise float32 kernels of the compute core: exp/log, LayerNorm forward and
// backward, per-feature softmax and its backward, column sums, Adam.
//
// Each is compiled for AVX-512, AVX2 and the baseline (GCC target_clones, resolved once by the
// dynamic loader), from the same source and with -ffp-contract=off and no reassociation: every
// clone performs the same IEEE operations in the same order, so results are bit-identical on every
// path (only the GEMMs differ between ISAs, by their use of FMA). Reductions use 16 fixed lanes of
// partial sums combined in a fixed order, which the compiler vectorises without reassociating.

#ifndef SYNTHD_NATIVE_TRAIN_VMATH_H_
#define SYNTHD_NATIVE_TRAIN_VMATH_H_

#include <cstdint>

namespace synthd {
namespace train {

// y = exp(x) in float32 (Cephes expf: Moshier, "Methods and Programs for Mathematical Functions",
// 1989; range reduction by ln 2 in two parts, degree-6 polynomial, |rel err| < 2 ulp). Inputs are
// clamped to [-87.3, 88.0]: exp underflows to ~1e-38 instead of 0 below. x and y may alias.
void ExpArray(const float* x, float* y, int64_t n);

// y = ln(x) for finite x > 0 (Cephes logf, |rel err| < 2 ulp). x and y may alias.
void LogArray(const float* x, float* y, int64_t n);

// Sum of x[0, n) in double, through 16 float lanes (fixed order).
double SumFloat(const float* x, int64_t n);

// LayerNorm (Ba, Kiros & Hinton, "Layer Normalization", 2016) of `rows` rows of width H:
// mean and biased variance per row, rstd = 1 / sqrt(var + eps), xhat = (x - mean) * rstd,
// u = gamma * xhat + beta. xhat may be null (inference), then u alone is written.
void LayerNormRows(const float* x, int64_t rows, int64_t H, const float* gamma, const float* beta, float eps,
                   float* xhat, float* rstd, float* u);

// LayerNorm backward for rows: with dxhat = du * gamma,
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),
// written to dx (or added to it when accumulate).
void LayerNormBackwardRows(const float* du, const float* xhat, const float* rstd, int64_t rows, int64_t H,
                           const float* gamma, float* dx, bool accumulate);

// Column sums of a rows x cols block (leading dimension ld), columns [c0, c1): out[j] = sum_r x[r][j]
// (rows in order); with `times`, sums x[r][j] * times[r][j] (same leading dimension).
void ColumnSums(const float* x, const float* times, int64_t rows, int64_t ld, int64_t c0, int64_t c1, float* out);

// Per-feature softmax of `rows` logit rows (width D, features at offsets off[0..F]), in place:
// p = e / sum(e), e = exp(l - max over the feature). `scratch` holds D floats.
void FeatureSoftmaxRows(float* x, int64_t rows, int64_t D, const int64_t* off, int64_t F, float* scratch);

// Softmax backward per feature, in place on dp: dl = p * (dp - sum_feature(p * dp)).
void FeatureSoftmaxBackwardRows(const float* p, float* dp, int64_t rows, int64_t D, const int64_t* off, int64_t F);

// dx *= (a > 0) (ReLU backward through the activation a = relu(pre)).
void ReluMask(const float* a, float* dx, int64_t n);

// y += x.
void AddInPlace(const float* x, float* y, int64_t n);

// One Adam step (Kingma & Ba, ICLR 2015, Algorithm 1) on n parameters, in float32 with the
// operation order of src/model/adam.ts (tfjs): m = m*b1 + g*(1-b1); v = v*b2 + (g*g)*(1-b2);
// w = w - (m * lr_c1) / (sqrt(v / c2) + eps), where lr_c1 = lr / (1 - b1^t), c2 = 1 - b2^t.
void AdamUpdate(float* w, float* m, float* v, const float* g, int64_t n, float b1, float one_minus_b1, float b2,
                float one_minus_b2, float lr_c1, float c2, float eps);

// True when every x[0, n) is finite.
bool AllFinite(const float* x, int64_t n);

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_VMATH_H_
