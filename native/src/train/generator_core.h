// The generator of DESIGN §2 in C++: forward, backward, the marginal-matching KL loss over 1-way and
// 2-way targets, Adam, the learning-rate schedule, and generation (forward + sampling kernel).
// A transcription of src/model/generator.ts, loss.ts, adam.ts and schedule.ts (the tfjs reference):
// the same architecture, parameter layout, loss and update rule, in float32.
//
// Architecture (an MLP of L + 1 hidden layers of width H, the last L residual and pre-norm;
// D = sum_f K_f):
//   h_0     = relu(z W_in + b_in)
//   h_{l+1} = h_l + relu(LN_l(h_l) W_l + b_l)          (l = 0 .. L-1)
//   logits  = h_L W_out + b_out;  p_f = softmax(logits[f-slice])
// LayerNorm: Ba, Kiros & Hinton 2016, eps 1e-5. Parameters are one flat float32 vector in the
// canonical order of generator.ts `paramShapes` (W row-major [fan_in, fan_out]):
//   in.W, in.b, block{l}.{ln.gamma, ln.beta, fc.W, fc.b}, out.W, out.b.
//
// Loss (loss.ts): for a batch of n latents, s1 = sum_b P[b] (D) and, per pair block (f, [c0, c1)),
// M = P_f^T P[:, c0:c1] (K_f x w); loss = (negEntropy - cross) / count with
//   cross = sum_i q1_i ln(s1_i / n + eps) + sum_blocks sum_ij q_ij ln(M_ij / n + eps),  eps = 1e-10,
// the KL(given || model) averaged over the `count` marginals. Only the given pair blocks are
// multiplied: memory per step is O(n D + sum of block sizes), never D x D per row.
// Gradient: dL/dP[b, i] = g1_i + sum_blocks (P[b, c0:c1] G^T)_i (rows of f) + (P_f[b] G)_j (cols),
// g1_i = -q1_i / (n (s1_i / n + eps) count), G_ij = -q_ij / (n (M_ij / n + eps) count), then
// through the per-feature softmax, the output layer, the residual blocks and the input layer.
//
// Entropy penalty (optional, SetEntropyPenalty; trainer.ts decides the weight): the gradient also
// minimises alpha * (1/n) sum_b (1/F) sum_f H(p_f[b]) / ln(max(K_f, 2)), the mean normalised
// entropy of each row's per-feature distributions (entropy minimisation, Grandvalet & Bengio,
// "Semi-supervised learning by entropy minimization", NIPS 2004). In the gradient it subtracts
// c_f (ln(p_k + 1e-30) + 1), c_f = alpha / (n F ln(max(K_f, 2))), from dL/dp_k before the softmax
// backward (dH/dp_k = -(ln p_k + 1)). The losses returned stay the marginal-matching KL alone.
//
// Adam: Kingma & Ba 2015 (adam.ts, tfjs operation order). Schedule: linear warm-up then cosine
// decay to a floor (Loshchilov & Hutter, "SGDR", ICLR 2017; schedule.ts).
//
// Threads: every parallel region runs on the process-wide pool (thread_pool.h); outputs are
// partitioned across tasks, never a reduction, so results do not depend on the thread count.

#ifndef SYNTHD_NATIVE_TRAIN_GENERATOR_CORE_H_
#define SYNTHD_NATIVE_TRAIN_GENERATOR_CORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../gpu/gpu_api.h"
#include "../sampling.h"
#include "aligned.h"
#include "gemm.h"

namespace synthd {
namespace gpu {
struct GpuApi;
}
namespace train {

constexpr float kLnEps = 1e-5f;
constexpr float kLossEps = 1e-10f;
constexpr double kAdamBeta1 = 0.9;
constexpr double kAdamBeta2 = 0.999;
constexpr double kAdamEps = 1e-8;

struct CoreSpec {
  int64_t E = 0;  // embedding_dim
  int64_t H = 0;  // hidden width
  int64_t L = 0;  // residual blocks (hidden layers - 1)
  std::vector<int32_t> card;  // K_f
  std::vector<int64_t> off;   // offsets, F + 1 entries
  int64_t D = 0;
  int64_t F = 0;
};

// Offsets of every parameter in the flat vector (canonical order).
struct ParamIndex {
  struct Block {
    int64_t ln_g, ln_b, W, b;
  };
  int64_t in_W = 0, in_b = 0;
  std::vector<Block> blocks;
  int64_t out_W = 0, out_b = 0;
  int64_t total = 0;
  // Name and size of each parameter, in order (for messages and the TS wrapper).
  std::vector<std::pair<std::string, int64_t>> names;
};

// Builds the index; returns false when the count overflows `limit` floats.
bool MakeParamIndex(const CoreSpec& s, int64_t limit, ParamIndex* out);

// One group of 2-way targets (targets.ts PairBlock): rows of feature f, columns [c0, c1).
struct PairBlockTarget {
  int32_t f = 0;
  int64_t c0 = 0, c1 = 0;
  FloatBuffer target;  // K_f x (c1 - c0), row-major
};

// lr(step) of schedule.ts: linear warm-up over `warmup` steps, cosine from peak to
// peak * floor_fraction over the remaining steps up to `total`, then the floor.
double LearningRate(double peak, double total, double warmup, double floor_fraction, double step);

class GeneratorCore {
 public:
  GeneratorCore(CoreSpec spec, ParamIndex index);
  ~GeneratorCore();

  const CoreSpec& spec() const { return spec_; }
  const ParamIndex& index() const { return idx_; }
  int64_t param_count() const { return idx_.total; }

  // The host copies of the parameters and of Adam's moments. On the GPU these first bring the
  // device's newer values over (one copy after training steps), and the next GPU call sends them
  // back (a caller may write through them).
  float* params() {
    SyncHost();
    WrittenOnHost();
    return params_.data();
  }
  const float* params() const {
    SyncHost();
    return params_.data();
  }
  float* adam_m() {
    SyncHost();
    WrittenOnHost();
    EnsureAdam();
    return m_.data();
  }
  float* adam_v() {
    SyncHost();
    WrittenOnHost();
    EnsureAdam();
    return v_.data();
  }
  int64_t adam_t() const { return t_; }
  void set_adam_t(int64_t t) { t_ = t; }
  // Call after writing params(): drops weights packed for generation.
  void ParamsChanged() {
    packed_valid_ = false;
    device_stale_ = true;
  }

  // Moves this core's computation to GPU 0 (gpu_api.h): training, evaluation and generation then
  // run there, with the parameters, Adam's moments and the targets on the device; tf32 lets cuBLAS
  // use TF32 tensor cores (else plain FP32). Throws std::runtime_error with the reason when the
  // CUDA core is not built, no driver or no device answers, or the device is out of memory.
  void UseGpu(bool tf32);
  bool on_gpu() const { return gpu_ != nullptr; }
  // Name of the device in use ("cpu" on the CPU path).
  const std::string& device_name() const { return device_name_; }
  // Generation on the GPU with the inputs checked there: *bad_input = the first index of z (flat)
  // that is not finite, or n*E + the first index of uniforms outside [0, 1), or -1; the codes are
  // then incomplete. Otherwise as Generate. codes may be null (logits only).
  SampleError GenerateGpu(const float* z, int64_t n, const double* uniforms, double temperature, bool truncate,
                          double top_p, int32_t* out, float* logits_out, int64_t* bad_input);

  // How the backward pass of the 2-way loss is computed (both give the same gradient):
  // kBlocks: per pair block, dP_f += P[:, c0:c1] G^T and dP[:, c0:c1] += P_f G (work and memory
  //   proportional to the given pairs);
  // kDense: dP += P S with S = the D x D symmetric matrix holding every G and G^T (zero elsewhere),
  //   one large product: faster when the pairs cover much of the table;
  // kAuto: kDense when D <= 4096 and the blocks cover >= 25% of the D x D / 2 entries (the rule
  //   loss.ts uses for its Gram form), so memory stays within 8x the targets; else kBlocks.
  enum class PairMode { kAuto = 0, kDense = 1, kBlocks = 2 };

  // Weight alpha >= 0 of the entropy penalty (0: none; validated by the caller).
  void SetEntropyPenalty(double alpha) { entropy_alpha_ = alpha; }
  double entropy_penalty() const { return entropy_alpha_; }

  // Replaces the targets (validated by the caller).
  void SetTargets(FloatBuffer one_way, std::vector<PairBlockTarget> blocks, double count, double neg_entropy,
                  PairMode mode = PairMode::kAuto);
  // The mode in use (kDense or kBlocks) once targets are set.
  PairMode pair_mode() const { return pair_mode_; }
  bool has_targets() const { return has_targets_; }

  // Loss of the batch z (n x E); when grad is non-null, also the gradient (param_count floats).
  double LossAndGrad(const float* z, int64_t n, float* grad);

  // One optimiser step at rate lr: the batch loss (before the update). When the loss or a gradient
  // is not finite nothing is updated and NaN is returned.
  double TrainStep(const float* z, int64_t n, double lr);

  // Loss over n latents evaluated in chunks (validation): sums over all rows, then the loss.
  double EvalLoss(const float* z, int64_t n);

  // Logits (n x D) of n latents.
  void Logits(const float* z, int64_t n, float* out);

  // Generation: logits of each latent, then the sampling kernel (sampling.h) with uniforms
  // (n x F) -> out (F x n column-major codes). Returns the first refused logit (row-major order),
  // with its index in the n x D logits of this call. When `logits_out` is not null it also receives
  // the logits (n x D row-major), copied while they are in cache: seeded generation needs both the
  // codes and the fixed features' probabilities from one forward pass (conditional.ts).
  // With extra_draws > 0, each latent also gives that many more rows from the same distributions
  // (sampling.h SampleInput::extra_draws): set j of uniforms at extra_uniforms + j * n * F, its
  // codes at out + (j + 1) * F * n (out then holds (1 + extra_draws) * F * n codes). CPU only.
  SampleError Generate(const float* z, int64_t n, const double* uniforms, double temperature, bool truncate,
                       double top_p, int32_t* out, float* logits_out = nullptr, size_t extra_draws = 0,
                       const double* extra_uniforms = nullptr);

  // Frees every buffer except the parameters and the targets: training and generation buffers,
  // and Adam's moments (t back to 0; a later step starts Adam afresh). For a finished model that
  // is kept for generation.
  void ReleaseWorkspace();

 private:
  struct Acts;
  struct GenScratch;

  // Training forward of n rows into acts_ (probabilities in acts_->p).
  void ForwardTrain(const float* z, int64_t n);
  // s1 (D) and M (pair blocks) of acts_->p, written or accumulated.
  void MarginalSums(int64_t n, bool accumulate);
  // Loss from sums over n rows; fills g1_ / G_ when want_grad.
  double LossFromSums(int64_t n, bool want_grad);
  // Backward of the batch in acts_ into grad.
  void Backward(const float* z, int64_t n, float* grad);
  // Packs the weights for generation when stale.
  void EnsurePacked();
  // Allocates zeroed Adam moments when released.
  void EnsureAdam();
  // (Re)sizes the per-step buffers of the targets (after SetTargets or ReleaseWorkspace).
  void EnsureTargetBuffers();
  // Forward of rows [0, m) of z on the calling thread with packed weights -> logits (m x D).
  void ForwardRowsPacked(const float* z, int64_t m, GenScratch& s);

  // GPU: bring the device's parameters and moments to the host when newer there, or send the
  // host's to the device when newer here.
  void SyncHost() const;
  // A caller may write through a mutable accessor: send the host's values before the next GPU call.
  void WrittenOnHost() {
    if (gpu_ != nullptr) device_stale_ = true;
  }
  void SyncDevice();
  void UploadTargets();
  // Throws std::runtime_error with the CUDA core's message when rc != 0.
  void GpuCheck(int rc) const;

  CoreSpec spec_;
  ParamIndex idx_;
  const KernelInfo& kern_;
  FloatBuffer params_, m_, v_, grad_;
  int64_t t_ = 0;

  // Targets.
  bool has_targets_ = false;
  FloatBuffer q1_;
  std::vector<PairBlockTarget> blocks_;
  std::vector<int64_t> m_off_;   // offset of each block in msum_
  std::vector<size_t> block_order_;  // blocks by size, largest first (load balance)
  int64_t m_total_ = 0;
  PairMode pair_mode_ = PairMode::kBlocks;
  FloatBuffer sym_;  // kDense: D x D
  double count_ = 1.0;
  double neg_entropy_ = 0.0;
  double entropy_alpha_ = 0.0;

  // Per-step buffers.
  std::unique_ptr<Acts> acts_;
  FloatBuffer s1_, msum_, g1_, gmat_;
  std::vector<PackedB> g_packed_t_, g_packed_;  // G^T and G per block, packed as B operands
  PackedB bscratch_;

  // GPU (null on the CPU path): the library's functions and this core's handle.
  const gpu::GpuApi* gpu_ = nullptr;
  void* gpu_handle_ = nullptr;
  std::string device_name_ = "cpu";
  // The device holds newer parameters / moments than the host (after a step), or the reverse.
  mutable bool host_stale_ = false;
  bool device_stale_ = false;

  // Generation.
  bool packed_valid_ = false;
  std::vector<PackedB> wpack_;  // in.W, fc.W per block, out.W
  std::vector<std::unique_ptr<GenScratch>> gen_scratch_;
};

}  // namespace train
}  // namespace synthd

#endif  // SYNTHD_NATIVE_TRAIN_GENERATOR_CORE_H_
