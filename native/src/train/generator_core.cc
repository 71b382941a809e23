#include "generator_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "../gpu/gpu_loader.h"
#include "thread_pool.h"
#include "vmath.h"

namespace synthd {
namespace train {

namespace {

// Rows per task of row-wise element work (LayerNorm, softmax, ...).
constexpr int64_t kRowChunk = 32;
// Columns per task of column sums.
constexpr int64_t kColChunk = 128;
// Rows per forward pass when evaluating a large latent set.
constexpr int64_t kEvalChunk = 512;
// Rows per generation task (most).
constexpr int64_t kGenChunk = 256;

template <typename Fn>
void RowTasks(int64_t n, int64_t chunk, const Fn& fn) {
  const int64_t tasks = (n + chunk - 1) / chunk;
  ParallelTasks(static_cast<size_t>(tasks), [&](size_t t, unsigned slot) {
    const int64_t r0 = static_cast<int64_t>(t) * chunk;
    fn(r0, std::min<int64_t>(n, r0 + chunk), slot);
  });
}

struct ColJob {
  const float* x;
  const float* times;  // or null
  int64_t ld;
  int64_t cols;
  float* out;
};

// Column sums of several rows x cols blocks, in one parallel region.
void ColumnSumsParallel(const std::vector<ColJob>& jobs, int64_t rows) {
  struct Task {
    size_t job;
    int64_t c0, c1;
  };
  std::vector<Task> tasks;
  for (size_t j = 0; j < jobs.size(); ++j)
    for (int64_t c = 0; c < jobs[j].cols; c += kColChunk)
      tasks.push_back({j, c, std::min<int64_t>(jobs[j].cols, c + kColChunk)});
  ParallelTasks(tasks.size(), [&](size_t t, unsigned) {
    const Task& k = tasks[t];
    const ColJob& j = jobs[k.job];
    ColumnSums(j.x, j.times, rows, j.ld, k.c0, k.c1, j.out + k.c0);
  });
}

FloatBuffer& ThreadFloats(int which) {
  thread_local FloatBuffer buf[2];
  return buf[which];
}

}  // namespace

bool MakeParamIndex(const CoreSpec& s, int64_t limit, ParamIndex* out) {
  ParamIndex& p = *out;
  p = ParamIndex();
  int64_t at = 0;
  bool ok = true;
  const auto add = [&](const std::string& name, int64_t a, int64_t b) -> int64_t {
    int64_t size = 0;
    if (__builtin_mul_overflow(a, b, &size) || size > limit || at > limit - size) {
      ok = false;
      return 0;
    }
    const int64_t where = at;
    at += size;
    p.names.emplace_back(name, size);
    return where;
  };
  p.in_W = add("in.W", s.E, s.H);
  p.in_b = add("in.b", s.H, 1);
  for (int64_t l = 0; l < s.L && ok; ++l) {
    const std::string b = "block" + std::to_string(l) + ".";
    ParamIndex::Block blk;
    blk.ln_g = add(b + "ln.gamma", s.H, 1);
    blk.ln_b = add(b + "ln.beta", s.H, 1);
    blk.W = add(b + "fc.W", s.H, s.H);
    blk.b = add(b + "fc.b", s.H, 1);
    p.blocks.push_back(blk);
  }
  p.out_W = add("out.W", s.H, s.D);
  p.out_b = add("out.b", s.D, 1);
  p.total = at;
  return ok;
}

double LearningRate(double peak, double total, double warmup, double floor_fraction, double step) {
  const double floor = peak * floor_fraction;
  if (step < warmup) return (peak * (step + 1)) / warmup;
  if (step >= total || total <= warmup) return floor;
  const double x = (step - warmup) / (total - warmup);
  return floor + ((peak - floor) * (1 + std::cos(M_PI * x))) / 2;
}

struct GeneratorCore::Acts {
  int64_t n = 0;
  // h: h_0 .. h_L; xhat, rstd, u: LayerNorm of block l; a: relu output of block l;
  // dh, dh2: dL/dh ping-pong; g, g2: dL/d(pre-activation) ping-pong; du: dL/du.
  FloatBuffer h, xhat, rstd, u, a, p, dp, dh, dh2, g, g2, du;
  void Size(const CoreSpec& s, int64_t rows) {
    if (rows == n) return;
    n = rows;
    const size_t nH = static_cast<size_t>(rows * s.H);
    const size_t L = static_cast<size_t>(std::max<int64_t>(s.L, 1));
    h.Resize(nH * static_cast<size_t>(s.L + 1));
    xhat.Resize(nH * L);
    rstd.Resize(static_cast<size_t>(rows) * L);
    u.Resize(nH * L);
    a.Resize(nH * L);
    p.Resize(static_cast<size_t>(rows * s.D));
    dp.Resize(static_cast<size_t>(rows * s.D));
    dh.Resize(nH);
    dh2.Resize(nH);
    g.Resize(nH);
    g2.Resize(nH);
    du.Resize(nH);
  }
};

struct GeneratorCore::GenScratch {
  int64_t rows = 0;
  FloatBuffer h, u, a, logits;  // a: relu output of a block before it is added to h
  std::vector<int32_t> codes;
  void Size(const CoreSpec& s, int64_t m) {
    if (m <= rows) return;
    rows = m;
    h.Resize(static_cast<size_t>(m * s.H));
    u.Resize(static_cast<size_t>(m * s.H));
    a.Resize(static_cast<size_t>(m * s.H));
    logits.Resize(static_cast<size_t>(m * s.D));
    codes.resize(static_cast<size_t>(m * s.F));
  }
};

GeneratorCore::GeneratorCore(CoreSpec spec, ParamIndex index)
    : spec_(std::move(spec)), idx_(std::move(index)), kern_(ActiveKernel()) {
  params_.Resize(static_cast<size_t>(idx_.total));
  params_.Zero();
  EnsureAdam();
  // LayerNorm gains start at 1 (a usable model before the first setParams).
  for (const auto& b : idx_.blocks) std::fill_n(params_.data() + b.ln_g, spec_.H, 1.0f);
}

GeneratorCore::~GeneratorCore() {
  if (gpu_ != nullptr) gpu_->destroy(gpu_handle_);
}

void GeneratorCore::GpuCheck(int rc) const {
  if (rc != 0) throw std::runtime_error(std::string("GPU: ") + gpu_->last_error(gpu_handle_));
}

void GeneratorCore::UseGpu(bool tf32) {
  if (gpu_ != nullptr) return;
  const gpu::GpuStatus& st = gpu::LoadGpu();
  if (st.api == nullptr) throw std::runtime_error(st.reason);
  std::vector<int64_t> blocks;
  for (const auto& b : idx_.blocks) {
    blocks.insert(blocks.end(), {b.ln_g, b.ln_b, b.W, b.b});
  }
  SgSpec spec{spec_.E, spec_.H, spec_.L, spec_.F, spec_.D, spec_.card.data(), spec_.off.data()};
  SgIndex index{idx_.in_W, idx_.in_b, idx_.out_W, idx_.out_b, idx_.total, blocks.data()};
  char err[512] = {0};
  void* h = st.api->create(&spec, &index, tf32 ? 1 : 0, err, sizeof err);
  if (h == nullptr) throw std::runtime_error(std::string("GPU: ") + err);
  gpu_ = st.api;
  gpu_handle_ = h;
  device_name_ = st.device;
  // The host's parameters, moments and targets go over before the first GPU call.
  device_stale_ = true;
  host_stale_ = false;
  // Host-side training and generation buffers are not used from now on.
  acts_.reset();
  wpack_.clear();
  packed_valid_ = false;
  gen_scratch_.clear();
  if (has_targets_) UploadTargets();
}

// The 1-way targets, the 2-way blocks and the pair mode, as set on the host, to the GPU core.
void GeneratorCore::UploadTargets() {
  std::vector<int32_t> f;
  std::vector<int64_t> c0, c1;
  std::vector<const float*> q;
  for (const auto& b : blocks_) {
    f.push_back(b.f);
    c0.push_back(b.c0);
    c1.push_back(b.c1);
    q.push_back(b.target.data());
  }
  GpuCheck(gpu_->set_targets(gpu_handle_, q1_.data(), static_cast<int64_t>(blocks_.size()), f.data(), c0.data(),
                             c1.data(), q.data(), count_, neg_entropy_, pair_mode_ == PairMode::kDense ? 1 : 0));
}

void GeneratorCore::SyncHost() const {
  if (gpu_ == nullptr || !host_stale_) return;
  auto* self = const_cast<GeneratorCore*>(this);
  self->GpuCheck(gpu_->params(gpu_handle_, self->params_.data(), 0));
  self->EnsureAdam();
  self->GpuCheck(gpu_->adam(gpu_handle_, self->m_.data(), self->v_.data(), 0));
  host_stale_ = false;
}

void GeneratorCore::SyncDevice() {
  if (gpu_ == nullptr || !device_stale_) return;
  GpuCheck(gpu_->params(gpu_handle_, params_.data(), 1));
  EnsureAdam();
  GpuCheck(gpu_->adam(gpu_handle_, m_.data(), v_.data(), 1));
  device_stale_ = false;
}

void GeneratorCore::EnsureTargetBuffers() {
  s1_.Resize(static_cast<size_t>(spec_.D));
  g1_.Resize(static_cast<size_t>(spec_.D));
  msum_.Resize(static_cast<size_t>(m_total_));
  gmat_.Resize(static_cast<size_t>(m_total_));
  if (pair_mode_ == PairMode::kBlocks && g_packed_.size() != blocks_.size()) {
    g_packed_.clear();
    g_packed_.resize(blocks_.size());
    g_packed_t_.clear();
    g_packed_t_.resize(blocks_.size());
  }
}

void GeneratorCore::EnsureAdam() {
  if (m_.size() == static_cast<size_t>(idx_.total) && v_.size() == static_cast<size_t>(idx_.total)) return;
  m_.Resize(static_cast<size_t>(idx_.total));
  m_.Zero();
  v_.Resize(static_cast<size_t>(idx_.total));
  v_.Zero();
  t_ = 0;
}

void GeneratorCore::ReleaseWorkspace() {
  if (gpu_ != nullptr) {
    SyncHost();  // keep the weights; the moments are dropped below (and zeroed on the device at the next call)
    GpuCheck(gpu_->release(gpu_handle_));
    device_stale_ = true;
  }
  acts_.reset();
  grad_ = FloatBuffer();
  s1_ = FloatBuffer();
  msum_ = FloatBuffer();
  g1_ = FloatBuffer();
  gmat_ = FloatBuffer();
  g_packed_.clear();
  g_packed_t_.clear();
  bscratch_ = PackedB();
  wpack_.clear();
  packed_valid_ = false;
  gen_scratch_.clear();
  m_ = FloatBuffer();
  v_ = FloatBuffer();
  t_ = 0;
}

void GeneratorCore::SetTargets(FloatBuffer one_way, std::vector<PairBlockTarget> blocks, double count,
                               double neg_entropy, PairMode mode) {
  q1_ = std::move(one_way);
  blocks_ = std::move(blocks);
  count_ = count;
  neg_entropy_ = neg_entropy;
  m_off_.assign(blocks_.size(), 0);
  m_total_ = 0;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    m_off_[b] = m_total_;
    m_total_ += static_cast<int64_t>(blocks_[b].target.size());
  }
  const double D = static_cast<double>(spec_.D);
  if (mode == PairMode::kAuto) {
    mode = (spec_.D <= 4096 && static_cast<double>(m_total_) >= 0.25 * D * D / 2) ? PairMode::kDense : PairMode::kBlocks;
  }
  if (blocks_.empty()) mode = PairMode::kBlocks;
  pair_mode_ = mode;
  if (pair_mode_ == PairMode::kDense) {
    sym_.Resize(static_cast<size_t>(spec_.D * spec_.D));
    sym_.Zero();  // entries outside the blocks stay 0; Backward rewrites the blocks every step
  } else {
    sym_ = FloatBuffer();
  }
  block_order_.resize(blocks_.size());
  std::iota(block_order_.begin(), block_order_.end(), size_t{0});
  std::stable_sort(block_order_.begin(), block_order_.end(), [&](size_t x, size_t y) {
    return blocks_[x].target.size() > blocks_[y].target.size();
  });
  g_packed_.clear();
  g_packed_t_.clear();
  has_targets_ = true;
  if (gpu_ != nullptr) {
    UploadTargets();
    return;
  }
  EnsureTargetBuffers();
}

void GeneratorCore::ForwardTrain(const float* z, int64_t n) {
  if (!acts_) acts_.reset(new Acts());
  Acts& A = *acts_;
  A.Size(spec_, n);
  const int64_t E = spec_.E, H = spec_.H, L = spec_.L, D = spec_.D;
  const int64_t nH = n * H;
  const float* P = params_.data();
  // LayerNorm of block l over rows [r0, r1) of h_l (nothing after the last block).
  const auto norm_rows = [&](int64_t l, int64_t r0, int64_t r1) {
    if (l >= L) return;
    const ParamIndex::Block& b = idx_.blocks[static_cast<size_t>(l)];
    LayerNormRows(A.h.data() + l * nH + r0 * H, r1 - r0, H, P + b.ln_g, P + b.ln_b, kLnEps,
                  A.xhat.data() + l * nH + r0 * H, A.rstd.data() + l * n + r0, A.u.data() + l * nH + r0 * H);
  };
  Epilogue ep;
  ep.bias = P + idx_.in_b;
  ep.relu = true;
  const RowPost post0 = [&](int64_t r0, int64_t r1) { norm_rows(0, r0, r1); };
  Gemm(kern_, n, H, E, {z, E, 1}, {P + idx_.in_W, H, 1}, A.h.data(), H, ep, &bscratch_, &post0);
  for (int64_t l = 0; l < L; ++l) {
    const ParamIndex::Block& b = idx_.blocks[static_cast<size_t>(l)];
    const float* hl = A.h.data() + l * nH;
    float* hn = A.h.data() + (l + 1) * nH;
    float* al = A.a.data() + l * nH;
    Epilogue e;
    e.bias = P + b.b;
    e.relu = true;
    // Rows of a_l are done: h_{l+1} = h_l + a_l, then the next block's LayerNorm.
    const RowPost post = [&](int64_t r0, int64_t r1) {
      const size_t len = static_cast<size_t>((r1 - r0) * H);
      std::memcpy(hn + r0 * H, hl + r0 * H, len * sizeof(float));
      AddInPlace(al + r0 * H, hn + r0 * H, (r1 - r0) * H);
      norm_rows(l + 1, r0, r1);
    };
    Gemm(kern_, n, H, H, {A.u.data() + l * nH, H, 1}, {P + b.W, H, 1}, al, H, e, &bscratch_, &post);
  }
  Epilogue eo;
  eo.bias = P + idx_.out_b;
  float* p = A.p.data();
  const RowPost softmax = [&](int64_t r0, int64_t r1) {
    thread_local FloatBuffer row;
    row.Resize(static_cast<size_t>(D));
    FeatureSoftmaxRows(p + r0 * D, r1 - r0, D, spec_.off.data(), spec_.F, row.data());
  };
  Gemm(kern_, n, D, H, {A.h.data() + L * nH, H, 1}, {P + idx_.out_W, D, 1}, p, D, eo, &bscratch_, &softmax);
}

void GeneratorCore::MarginalSums(int64_t n, bool accumulate) {
  const int64_t D = spec_.D;
  const float* p = acts_->p.data();
  const size_t nb = blocks_.size();
  const int64_t col_tasks = (D + kColChunk - 1) / kColChunk;
  // Tasks: the pair blocks (largest first), then column chunks of the 1-way sums.
  ParallelTasks(nb + static_cast<size_t>(col_tasks), [&](size_t t, unsigned) {
    if (t < nb) {
      const size_t b = block_order_[t];
      const PairBlockTarget& blk = blocks_[b];
      const int64_t kf = spec_.card[static_cast<size_t>(blk.f)];
      const int64_t w = blk.c1 - blk.c0;
      Epilogue ep;
      ep.accumulate = accumulate;
      // M = P_f^T P[:, c0:c1]: A(i, p) = P[p, off_f + i], B(p, j) = P[p, c0 + j].
      GemmSerial(kern_, kf, w, n, {p + spec_.off[static_cast<size_t>(blk.f)], 1, D}, {p + blk.c0, D, 1},
                 msum_.data() + m_off_[b], w, ep);
      return;
    }
    const int64_t c0 = static_cast<int64_t>(t - nb) * kColChunk;
    const int64_t c1 = std::min<int64_t>(D, c0 + kColChunk);
    if (!accumulate) {
      ColumnSums(p, nullptr, n, D, c0, c1, s1_.data() + c0);
    } else {
      FloatBuffer& tmp = ThreadFloats(0);
      tmp.Resize(static_cast<size_t>(c1 - c0));
      ColumnSums(p, nullptr, n, D, c0, c1, tmp.data());
      AddInPlace(tmp.data(), s1_.data() + c0, c1 - c0);
    }
  });
}

double GeneratorCore::LossFromSums(int64_t n, bool want_grad) {
  const float inv = static_cast<float>(1.0 / static_cast<double>(n));
  const float gscale = static_cast<float>(-1.0 / count_) * inv;
  const size_t nb = blocks_.size();
  std::vector<double> parts(nb + 1, 0.0);
  // Task 0: the 1-way marginals; task 1 + b: pair block b.
  ParallelTasks(nb + 1, [&](size_t t, unsigned) {
    const float* q;
    const float* s;
    float* g;
    int64_t len;
    if (t == 0) {
      q = q1_.data();
      s = s1_.data();
      g = g1_.data();
      len = spec_.D;
    } else {
      const size_t b = t - 1;
      q = blocks_[b].target.data();
      s = msum_.data() + m_off_[b];
      g = gmat_.data() + m_off_[b];
      len = static_cast<int64_t>(blocks_[b].target.size());
    }
    FloatBuffer& arg = ThreadFloats(0);
    FloatBuffer& lg = ThreadFloats(1);
    arg.Resize(static_cast<size_t>(len));
    lg.Resize(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i) arg[i] = s[i] * inv + kLossEps;
    LogArray(arg.data(), lg.data(), len);
    double acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= len; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] += static_cast<double>(q[i + j] * lg[i + j]);
    double cross = 0.0;
    for (int j = 0; j < 8; ++j) cross += acc[j];
    for (; i < len; ++i) cross += static_cast<double>(q[i] * lg[i]);
    parts[t] = cross;
    if (want_grad) {
      for (int64_t k = 0; k < len; ++k) g[k] = (q[k] / arg[k]) * gscale;
    }
  });
  double cross = 0.0;
  for (double c : parts) cross += c;
  return (neg_entropy_ - cross) / count_;
}

void GeneratorCore::Backward(const float* z, int64_t n, float* grad) {
  Acts& A = *acts_;
  const int64_t E = spec_.E, H = spec_.H, L = spec_.L, D = spec_.D;
  const int64_t nH = n * H;
  const float* P = params_.data();
  float* p = A.p.data();
  float* dp = A.dp.data();
  const size_t nb = blocks_.size();

  const float* g1 = g1_.data();
  // Entropy penalty: dPenalty/dp_k = c_f (ln p_k + 1) with c_f = -alpha / (n F ln K_f) (see the
  // header), added to dL/dp before the softmax backward.
  std::vector<float> ent_c;
  if (entropy_alpha_ > 0) {
    ent_c.resize(static_cast<size_t>(spec_.F));
    for (int64_t f = 0; f < spec_.F; ++f) {
      const double lnk = std::log(std::max(2.0, static_cast<double>(spec_.card[static_cast<size_t>(f)])));
      ent_c[static_cast<size_t>(f)] =
          static_cast<float>(-entropy_alpha_ / (static_cast<double>(n) * static_cast<double>(spec_.F) * lnk));
    }
  }
  const RowPost softmax_back = [&](int64_t r0, int64_t r1) {
    if (!ent_c.empty()) {
      FloatBuffer& lg = ThreadFloats(0);
      lg.Resize(static_cast<size_t>(D));
      for (int64_t r = r0; r < r1; ++r) {
        const float* pr = p + r * D;
        float* dr = dp + r * D;
        for (int64_t k = 0; k < D; ++k) lg[k] = pr[k] + 1e-30f;
        LogArray(lg.data(), lg.data(), D);
        for (int64_t f = 0; f < spec_.F; ++f) {
          const float c = ent_c[static_cast<size_t>(f)];
          for (int64_t k = spec_.off[static_cast<size_t>(f)]; k < spec_.off[static_cast<size_t>(f) + 1]; ++k) {
            dr[k] += c * (lg[k] + 1.0f);
          }
        }
      }
    }
    FeatureSoftmaxBackwardRows(p + r0 * D, dp + r0 * D, r1 - r0, D, spec_.off.data(), spec_.F);
  };
  if (pair_mode_ == PairMode::kDense) {
    // S: every block's G at (rows of f, columns c0..c1) and its transpose at the mirror position.
    float* S = sym_.data();
    ParallelTasks(nb, [&](size_t b, unsigned) {
      const PairBlockTarget& blk = blocks_[b];
      const int64_t off_f = spec_.off[static_cast<size_t>(blk.f)];
      const int64_t kf = spec_.card[static_cast<size_t>(blk.f)];
      const int64_t w = blk.c1 - blk.c0;
      const float* G = gmat_.data() + m_off_[b];
      for (int64_t r = 0; r < kf; ++r) {
        std::memcpy(S + (off_f + r) * D + blk.c0, G + r * w, static_cast<size_t>(w) * sizeof(float));
        for (int64_t j = 0; j < w; ++j) S[(blk.c0 + j) * D + off_f + r] = G[r * w + j];
      }
    });
    // dL/dP = P S + g1 (bias epilogue), then the softmax backward of each row chunk.
    Epilogue eg;
    eg.bias = g1;
    Gemm(kern_, n, D, D, {p, D, 1}, {S, D, 1}, dp, D, eg, &bscratch_, &softmax_back);
  } else {
    // Pack G^T and G of every pair block as B operands (shared by all row tasks).
    ParallelTasks(2 * nb, [&](size_t t, unsigned) {
      const size_t b = t / 2;
      const PairBlockTarget& blk = blocks_[b];
      const int64_t kf = spec_.card[static_cast<size_t>(blk.f)];
      const int64_t w = blk.c1 - blk.c0;
      const float* G = gmat_.data() + m_off_[b];
      if (t % 2 == 0) {
        PackB(kern_, w, kf, {G, 1, w}, &g_packed_t_[b], false);  // G^T: (w x K_f)
      } else {
        PackB(kern_, kf, w, {G, w, 1}, &g_packed_[b], false);  // G: (K_f x w)
      }
    });
    // dL/dP for row chunks: the 1-way term, then each block's two products, then the softmax.
    RowTasks(n, kRowChunk, [&](int64_t r0, int64_t r1, unsigned) {
      for (int64_t r = r0; r < r1; ++r) std::memcpy(dp + r * D, g1, static_cast<size_t>(D) * sizeof(float));
      Epilogue acc;
      acc.accumulate = true;
      for (size_t b = 0; b < nb; ++b) {
        const PairBlockTarget& blk = blocks_[b];
        const int64_t off_f = spec_.off[static_cast<size_t>(blk.f)];
        const int64_t kf = spec_.card[static_cast<size_t>(blk.f)];
        // dP_f += P[:, c0:c1] G^T
        GemmPackedRange(kern_, blk.c1 - blk.c0, {p + blk.c0, D, 1}, g_packed_t_[b], dp + off_f, D, acc, r0, r1, 0,
                        g_packed_t_[b].n_panels);
        // dP[:, c0:c1] += P_f G
        GemmPackedRange(kern_, kf, {p + off_f, D, 1}, g_packed_[b], dp + blk.c0, D, acc, r0, r1, 0,
                        g_packed_[b].n_panels);
      }
      softmax_back(r0, r1);
    });
  }

  // dh holds dL/dh_l and g = dL/d(pre-activation of the layer that made h_l's last term): the
  // ReLU mask of a_{l-1} (l >= 1) or of h_0 (l = 0). Both ping-pong between two buffers so the
  // bias sums can read the current one after the next one is written.
  float* dh = A.dh.data();
  float* dh2 = A.dh2.data();
  float* g = A.g.data();
  float* g2 = A.g2.data();
  float* du = A.du.data();
  const auto mask_rows = [&](int64_t l, const float* dhl, float* out, int64_t r0, int64_t r1) {
    const float* act = l > 0 ? A.a.data() + (l - 1) * nH : A.h.data();
    std::memcpy(out + r0 * H, dhl + r0 * H, static_cast<size_t>((r1 - r0) * H) * sizeof(float));
    ReluMask(act + r0 * H, out + r0 * H, (r1 - r0) * H);
  };
  Epilogue none;

  // Output layer.
  const float* hL = A.h.data() + L * nH;
  Gemm(kern_, H, D, n, {hL, 1, H}, {dp, D, 1}, grad + idx_.out_W, D, none, &bscratch_);  // dW = h_L^T dl
  const RowPost mask_L = [&](int64_t r0, int64_t r1) { mask_rows(L, dh, g, r0, r1); };
  Gemm(kern_, n, H, D, {dp, D, 1}, {P + idx_.out_W, 1, D}, dh, H, none, &bscratch_, &mask_L);  // dh_L = dl W^T
  ColumnSumsParallel({{dp, nullptr, D, D, grad + idx_.out_b}}, n);

  // Residual blocks, last first: dh = dL/dh_{l+1}, g = dL/d(pre of a_l).
  for (int64_t l = L - 1; l >= 0; --l) {
    const ParamIndex::Block& b = idx_.blocks[static_cast<size_t>(l)];
    const float* xh = A.xhat.data() + l * nH;
    const float* rs = A.rstd.data() + l * n;
    const float* ul = A.u.data() + l * nH;
    Gemm(kern_, H, H, n, {ul, 1, H}, {g, H, 1}, grad + b.W, H, none, &bscratch_);  // dW = u^T g
    const RowPost ln_back = [&](int64_t r0, int64_t r1) {
      // dh_l = dh_{l+1} + LayerNorm backward of du, then the mask of the layer below.
      std::memcpy(dh2 + r0 * H, dh + r0 * H, static_cast<size_t>((r1 - r0) * H) * sizeof(float));
      LayerNormBackwardRows(du + r0 * H, xh + r0 * H, rs + r0, r1 - r0, H, P + b.ln_g, dh2 + r0 * H, true);
      mask_rows(l, dh2, g2, r0, r1);
    };
    Gemm(kern_, n, H, H, {g, H, 1}, {P + b.W, 1, H}, du, H, none, &bscratch_, &ln_back);  // du = g W^T
    ColumnSumsParallel({{g, nullptr, H, H, grad + b.b},
                        {du, xh, H, H, grad + b.ln_g},
                        {du, nullptr, H, H, grad + b.ln_b}},
                       n);
    std::swap(dh, dh2);
    std::swap(g, g2);
  }

  // Input layer: g = dL/d(z W_in + b_in).
  Gemm(kern_, E, H, n, {z, 1, E}, {g, H, 1}, grad + idx_.in_W, H, none, &bscratch_);  // dW = z^T g
  ColumnSumsParallel({{g, nullptr, H, H, grad + idx_.in_b}}, n);
}

double GeneratorCore::LossAndGrad(const float* z, int64_t n, float* grad) {
  if (gpu_ != nullptr) {
    SyncDevice();
    double loss = 0.0;
    GpuCheck(gpu_->loss(gpu_handle_, z, n, grad, entropy_alpha_, &loss));
    return loss;
  }
  EnsureTargetBuffers();
  ForwardTrain(z, n);
  MarginalSums(n, false);
  const double loss = LossFromSums(n, grad != nullptr);
  if (grad != nullptr) Backward(z, n, grad);
  return loss;
}

double GeneratorCore::TrainStep(const float* z, int64_t n, double lr) {
  if (gpu_ != nullptr) {
    SyncDevice();
    double loss = 0.0;
    int applied = 0;
    GpuCheck(gpu_->train_step(gpu_handle_, z, n, lr, t_ + 1, entropy_alpha_, &loss, &applied));
    if (!applied) return std::numeric_limits<double>::quiet_NaN();
    t_ += 1;
    host_stale_ = true;
    return loss;
  }
  EnsureAdam();
  grad_.Resize(static_cast<size_t>(idx_.total));
  const double loss = LossAndGrad(z, n, grad_.data());
  if (!std::isfinite(loss)) return std::numeric_limits<double>::quiet_NaN();
  const int64_t total = idx_.total;
  constexpr int64_t kChunk = 1 << 15;
  const int64_t tasks = (total + kChunk - 1) / kChunk;
  std::vector<unsigned char> finite(static_cast<size_t>(tasks), 1);
  ParallelTasks(static_cast<size_t>(tasks), [&](size_t t, unsigned) {
    const int64_t i0 = static_cast<int64_t>(t) * kChunk;
    finite[t] = AllFinite(grad_.data() + i0, std::min<int64_t>(kChunk, total - i0)) ? 1 : 0;
  });
  for (unsigned char f : finite)
    if (!f) return std::numeric_limits<double>::quiet_NaN();

  t_ += 1;
  const double c1 = 1.0 - std::pow(kAdamBeta1, static_cast<double>(t_));
  const double c2 = 1.0 - std::pow(kAdamBeta2, static_cast<double>(t_));
  const float b1 = static_cast<float>(kAdamBeta1);
  const float omb1 = static_cast<float>(1.0 - kAdamBeta1);
  const float b2 = static_cast<float>(kAdamBeta2);
  const float omb2 = static_cast<float>(1.0 - kAdamBeta2);
  const float lr_c1 = static_cast<float>(lr / c1);
  const float c2f = static_cast<float>(c2);
  const float eps = static_cast<float>(kAdamEps);
  ParallelTasks(static_cast<size_t>(tasks), [&](size_t t, unsigned) {
    const int64_t i0 = static_cast<int64_t>(t) * kChunk;
    const int64_t len = std::min<int64_t>(kChunk, total - i0);
    AdamUpdate(params_.data() + i0, m_.data() + i0, v_.data() + i0, grad_.data() + i0, len, b1, omb1, b2, omb2,
               lr_c1, c2f, eps);
  });
  packed_valid_ = false;
  return loss;
}

double GeneratorCore::EvalLoss(const float* z, int64_t n) {
  if (gpu_ != nullptr) {
    SyncDevice();
    double loss = 0.0;
    GpuCheck(gpu_->eval_loss(gpu_handle_, z, n, &loss));
    return loss;
  }
  EnsureTargetBuffers();
  for (int64_t r0 = 0; r0 < n; r0 += kEvalChunk) {
    const int64_t m = std::min<int64_t>(kEvalChunk, n - r0);
    ForwardTrain(z + r0 * spec_.E, m);
    MarginalSums(m, r0 > 0);
  }
  return LossFromSums(n, false);
}

void GeneratorCore::EnsurePacked() {
  if (packed_valid_) return;
  const int64_t E = spec_.E, H = spec_.H, L = spec_.L, D = spec_.D;
  const float* P = params_.data();
  wpack_.resize(static_cast<size_t>(L + 2));
  PackB(kern_, E, H, {P + idx_.in_W, H, 1}, &wpack_[0], true);
  for (int64_t l = 0; l < L; ++l) {
    PackB(kern_, H, H, {P + idx_.blocks[static_cast<size_t>(l)].W, H, 1}, &wpack_[static_cast<size_t>(1 + l)], true);
  }
  PackB(kern_, H, D, {P + idx_.out_W, D, 1}, &wpack_[static_cast<size_t>(L + 1)], true);
  packed_valid_ = true;
}

void GeneratorCore::ForwardRowsPacked(const float* z, int64_t m, GenScratch& s) {
  const int64_t H = spec_.H, L = spec_.L, D = spec_.D;
  const float* P = params_.data();
  Epilogue ei;
  ei.bias = P + idx_.in_b;
  ei.relu = true;
  const PackedB& w0 = wpack_[0];
  GemmPackedRange(kern_, w0.K, {z, spec_.E, 1}, w0, s.h.data(), H, ei, 0, m, 0, w0.n_panels);
  for (int64_t l = 0; l < L; ++l) {
    const ParamIndex::Block& b = idx_.blocks[static_cast<size_t>(l)];
    LayerNormRows(s.h.data(), m, H, P + b.ln_g, P + b.ln_b, kLnEps, nullptr, nullptr, s.u.data());
    Epilogue e;
    e.bias = P + b.b;
    e.relu = true;
    const PackedB& w = wpack_[static_cast<size_t>(1 + l)];
    GemmPackedRange(kern_, H, {s.u.data(), H, 1}, w, s.a.data(), H, e, 0, m, 0, w.n_panels);
    AddInPlace(s.a.data(), s.h.data(), m * H);
  }
  Epilogue eo;
  eo.bias = P + idx_.out_b;
  const PackedB& wo = wpack_[static_cast<size_t>(L + 1)];
  GemmPackedRange(kern_, H, {s.h.data(), H, 1}, wo, s.logits.data(), D, eo, 0, m, 0, wo.n_panels);
}

namespace {

int64_t GenChunk(int64_t n) {
  const int64_t T = ThreadPool::Instance().Concurrency();
  int64_t c = (n + 4 * T - 1) / (4 * T);
  c = std::max<int64_t>(16, std::min<int64_t>(kGenChunk, c));
  return (c + 7) / 8 * 8;
}

}  // namespace

void GeneratorCore::Logits(const float* z, int64_t n, float* out) {
  if (gpu_ != nullptr) {
    int64_t bad = -1;
    GenerateGpu(z, n, nullptr, 1.0, false, 1.0, nullptr, out, &bad);
    if (bad >= 0) throw std::runtime_error("z[" + std::to_string(bad) + "] is not finite");
    return;
  }
  EnsurePacked();
  const unsigned T = ThreadPool::Instance().Concurrency();
  if (gen_scratch_.size() < T) gen_scratch_.resize(T);
  const int64_t chunk = GenChunk(n);
  const int64_t D = spec_.D;
  RowTasks(n, chunk, [&](int64_t r0, int64_t r1, unsigned slot) {
    auto& sp = gen_scratch_[slot];
    if (!sp) sp.reset(new GenScratch());
    sp->Size(spec_, chunk);
    ForwardRowsPacked(z + r0 * spec_.E, r1 - r0, *sp);
    std::memcpy(out + r0 * D, sp->logits.data(), static_cast<size_t>((r1 - r0) * D) * sizeof(float));
  });
}

SampleError GeneratorCore::GenerateGpu(const float* z, int64_t n, const double* uniforms, double temperature,
                                       bool truncate, double top_p, int32_t* out, float* logits_out,
                                       int64_t* bad_input) {
  SyncDevice();
  SgSampleError e{0, 0, 0.0};
  GpuCheck(gpu_->generate(gpu_handle_, z, n, uniforms, temperature, truncate ? 1 : 0, top_p, out, logits_out, &e,
                          bad_input));
  SampleError err;
  if (e.kind != 0) {
    err.kind = e.kind == 1 ? SampleError::Kind::kNonFinite : SampleError::Kind::kOverflow;
    err.index = static_cast<size_t>(e.index);
    err.value = e.value;
  }
  return err;
}

SampleError GeneratorCore::Generate(const float* z, int64_t n, const double* uniforms, double temperature,
                                    bool truncate, double top_p, int32_t* out, float* logits_out, size_t extra_draws,
                                    const double* extra_uniforms) {
  if (gpu_ != nullptr) {
    if (extra_draws > 0) throw std::invalid_argument("extra draws per latent are not implemented on the GPU");
    int64_t bad = -1;
    const SampleError err = GenerateGpu(z, n, uniforms, temperature, truncate, top_p, out, logits_out, &bad);
    if (bad >= 0) throw std::runtime_error("input " + std::to_string(bad) + " is out of range");
    return err;
  }
  EnsurePacked();
  const unsigned T = ThreadPool::Instance().Concurrency();
  if (gen_scratch_.size() < T) gen_scratch_.resize(T);
  const int64_t chunk = GenChunk(n);
  const int64_t D = spec_.D;
  const int64_t F = spec_.F;
  size_t max_k = 0;
  for (int32_t k : spec_.card) max_k = std::max<size_t>(max_k, static_cast<size_t>(k));
  const int64_t tasks = (n + chunk - 1) / chunk;
  std::vector<SampleError> errors(static_cast<size_t>(tasks));
  RowTasks(n, chunk, [&](int64_t r0, int64_t r1, unsigned slot) {
    auto& sp = gen_scratch_[slot];
    if (!sp) sp.reset(new GenScratch());
    sp->Size(spec_, chunk);
    const int64_t m = r1 - r0;
    const size_t draws = 1 + extra_draws;
    if (sp->codes.size() < draws * static_cast<size_t>(m * F)) sp->codes.resize(draws * static_cast<size_t>(m * F));
    ForwardRowsPacked(z + r0 * spec_.E, m, *sp);
    if (logits_out != nullptr) {
      std::memcpy(logits_out + r0 * D, sp->logits.data(), static_cast<size_t>(m * D) * sizeof(float));
    }
    SampleInput in;
    in.logits = sp->logits.data();
    in.n = static_cast<size_t>(m);
    in.cardinalities = spec_.card;
    in.D = static_cast<size_t>(D);
    in.max_k = max_k;
    in.uniforms = uniforms + r0 * F;
    in.temperature = temperature;
    in.truncate = truncate;
    in.top_p = top_p;
    in.extra_draws = extra_draws;
    in.extra_uniforms = extra_draws > 0 ? extra_uniforms + r0 * F : nullptr;
    in.extra_stride = static_cast<size_t>(n * F);
    SampleError err = SampleCodes(in, sp->codes.data(), 1);
    if (err.failed()) {
      err.index += static_cast<size_t>(r0 * D);
      errors[static_cast<size_t>(r0 / chunk)] = err;
      return;
    }
    for (size_t j = 0; j < draws; ++j)
      for (int64_t f = 0; f < F; ++f)
        std::memcpy(out + (static_cast<int64_t>(j) * F + f) * n + r0, sp->codes.data() + (static_cast<int64_t>(j) * F + f) * m,
                    static_cast<size_t>(m) * sizeof(int32_t));
  });
  for (const SampleError& e : errors)
    if (e.failed()) return e;
  return SampleError{};
}

}  // namespace train
}  // namespace synthd
