#include "calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "train/thread_pool.h"

namespace synthd {
namespace calibrate {

namespace {

// Math.max(a, b) and Math.min(a, b) of JavaScript (NaN if either is; +0 above -0), so that odd
// inputs (a weight underflowing to 0 met by an infinite boost) give what calibrate.ts gives.
inline double JsMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double JsMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// A row's cell: code_f (1-way) or code_f * kg + code_g (2-way).
template <typename T, bool kTwoWay>
struct CellOf {
  const T* a;
  const T* b;
  size_t kg;
  size_t operator()(size_t r) const {
    if (kTwoWay) return static_cast<size_t>(a[r]) * kg + b[r];
    return a[r];
  }
};

// The rows of up to kLanes blocks, interleaved: fn(lane, row) for each block's rows in row order,
// the blocks' rows taken in turn. Each block keeps its own sums (lane), so the order of every sum
// is that of one block alone; interleaving only lets the processor overlap the blocks' chains of
// additions (a sum over rows waits for the previous add: 3-4 cycles, or ~10 through memory when
// consecutive rows fall in the same cell). The passes that call it are compiled with `flatten`, so
// `fn` is inlined at each of its call sites here and a lane's total and histogram pointer stay in
// registers: GCC had kept `fn` out of line (called once per row, its captures and the lane's total
// read and written through memory, a store-to-load chain per row), and the raking of raw Adult's
// 200,000-row pool took 230-237 ms single-threaded against 176-182 ms inlined. Four lanes instead
// of two were slower either way (210 against 180 ms inlined).
constexpr int kLanes = 2;
struct Lanes {
  int n = 0;
  size_t r0[kLanes] = {};
  size_t r1[kLanes] = {};
};
template <typename Fn>
inline void Interleaved(const Lanes& l, const Fn& fn) {
  if (l.n == kLanes) {
    size_t common = l.r1[0] - l.r0[0];
    for (int j = 1; j < kLanes; ++j) common = std::min(common, l.r1[j] - l.r0[j]);
    for (size_t i = 0; i < common; ++i) {
      for (int j = 0; j < kLanes; ++j) fn(j, l.r0[j] + i);
    }
    for (int j = 0; j < kLanes; ++j) {
      for (size_t r = l.r0[j] + common; r < l.r1[j]; ++r) fn(j, r);
    }
    return;
  }
  for (int j = 0; j < l.n; ++j) {
    for (size_t r = l.r0[j]; r < l.r1[j]; ++r) fn(j, r);
  }
}

// part[j][c] += w[r] over the rows of lane j, in row order.
template <typename Cell>
__attribute__((flatten)) void HistogramBlocks(const Cell cell, const Lanes& l, const double* __restrict w, double* const* part) {
  double* p[kLanes];
  for (int j = 0; j < kLanes; ++j) p[j] = part[j];
  Interleaved(l, [&](int j, size_t r) { p[j][cell(r)] += w[r]; });
}

// The update of one lane of blocks (calibrate.ts: x = w * ratio, held at cap, clipped and free
// mass per cell); t[j]: block j's total; clipped[j]: whether a weight of block j was held at cap.
template <typename Cell>
__attribute__((flatten)) void UpdateBlocks(const Cell cell, const Lanes& l, double* __restrict w, const double* __restrict ratio, double cap,
                  double* const* deficit, double* const* free, double* t, bool* clipped) {
  double* pd[kLanes];
  double* pf[kLanes];
  double tt[kLanes];
  bool clip[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    pd[j] = deficit[j];
    pf[j] = free[j];
    tt[j] = 0.0;
    clip[j] = false;
  }
#if defined(__SSE2__)
  // Without a branch: after the clip-only sweeps many rows sit at the bound and go over it again,
  // in no pattern a branch predictor learns (the whole raking of raw Adult's 200,000-row pool:
  // 193-199 ms with the branch, 174-179 without, single-threaded). A row adds +0 to the sum it
  // takes no part in (the deficit for a row below the cap, the free mass for a clipped one),
  // which changes no bit of a sum of non-negative values; a NaN x is not over the cap and goes to
  // the free mass, as in the reference.
  const __m128d kCap = _mm_set_sd(cap);
  int over_any[kLanes] = {};
  Interleaved(l, [&](int j, size_t r) {
    const size_t c = cell(r);
    const __m128d x = _mm_mul_sd(_mm_set_sd(w[r]), _mm_set_sd(ratio[c]));
    const __m128d over = _mm_cmpgt_sd(x, kCap);
    const __m128d d = _mm_and_pd(over, _mm_sub_sd(x, kCap));
    const __m128d f = _mm_andnot_pd(over, x);
    const __m128d y = _mm_or_pd(_mm_and_pd(over, kCap), _mm_andnot_pd(over, x));
    pd[j][c] += _mm_cvtsd_f64(d);
    pf[j][c] += _mm_cvtsd_f64(f);
    const double yd = _mm_cvtsd_f64(y);
    w[r] = yd;
    tt[j] += yd;
    over_any[j] |= _mm_movemask_pd(over);
  });
  for (int j = 0; j < kLanes; ++j) clip[j] = over_any[j] != 0;
#else
  Interleaved(l, [&](int j, size_t r) {
    const size_t c = cell(r);
    double x = w[r] * ratio[c];
    if (x > cap) {
      pd[j][c] += x - cap;
      x = cap;
      clip[j] = true;
    } else {
      pf[j][c] += x;
    }
    w[r] = x;
    tt[j] += x;
  });
#endif
  for (int j = 0; j < l.n; ++j) {
    t[j] = tt[j];
    clipped[j] = clip[j];
  }
}

// The spreading of clipped mass over one lane of blocks (calibrate.ts: a row below cap in a cell
// with a boost rises by it, up to cap), continuing each block's total t[j]; with kNext also the
// next marginal's cell sums of the new weights (next[j][ncell(r)] += w[r]).
//
// Which rows rise is data-dependent (on Adult's pool 40% of rows, in no pattern a branch
// predictor learns), so the choice is made with SSE2 masks instead of a branch: 3x faster on the
// target machine. The arithmetic is the reference's: y = Math.min(cap, x * f) (exact JavaScript
// semantics on the rare equal or NaN operands), t += y - x for a row that rises and t + (+0),
// which changes no bit of a sum of non-negative weights, for one that does not.
template <bool kNext, typename Cell, typename NextCell>
__attribute__((flatten)) void SpreadBlocks(const Cell cell, const NextCell ncell, const Lanes& l, double* __restrict w,
                  const double* __restrict boost, double cap, double* t, double* const* next) {
  double* pn[kLanes];
  double tt[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    pn[j] = next[j];
    tt[j] = j < l.n ? t[j] : 0.0;
  }
#if defined(__SSE2__)
  const __m128d kCap = _mm_set_sd(cap);
  const __m128d kOne = _mm_set_sd(1.0);
  Interleaved(l, [&](int j, size_t r) {
    const __m128d f = _mm_set_sd(boost[cell(r)]);
    const __m128d x = _mm_set_sd(w[r]);
    const __m128d v = _mm_mul_sd(x, f);
    const __m128d below = _mm_cmplt_sd(v, kCap);
    __m128d lo = _mm_or_pd(_mm_and_pd(below, v), _mm_andnot_pd(below, kCap));
    if (__builtin_expect(_mm_movemask_pd(_mm_or_pd(below, _mm_cmpgt_sd(v, kCap))) == 0, 0)) {
      lo = _mm_set_sd(JsMin(cap, _mm_cvtsd_f64(v)));  // v == cap or NaN
    }
    const __m128d rise = _mm_and_pd(_mm_cmpneq_sd(f, kOne), _mm_cmplt_sd(x, kCap));
    const __m128d y = _mm_or_pd(_mm_and_pd(rise, lo), _mm_andnot_pd(rise, x));
    const double yd = _mm_cvtsd_f64(y);
    w[r] = yd;
    tt[j] = _mm_cvtsd_f64(_mm_add_sd(_mm_set_sd(tt[j]), _mm_and_pd(rise, _mm_sub_sd(y, x))));
    if (kNext) pn[j][ncell(r)] += yd;
  });
#else
  Interleaved(l, [&](int j, size_t r) {
    const double f = boost[cell(r)];
    const double x = w[r];
    if (f != 1.0 && x < cap) {
      const double y = JsMin(cap, x * f);
      w[r] = y;
      tt[j] += y - x;
    }
    if (kNext) pn[j][ncell(r)] += w[r];
  });
#endif
  for (int j = 0; j < l.n; ++j) t[j] = tt[j];
}

// The update of a clip-only step over one lane of blocks (calibrate.ts, a sweep before the exact
// ones: x = w * ratio, held at cap, no spreading), each block's total in t[j]; with kNext also the
// next marginal's cell sums of the new weights (next[j][ncell(r)] += x).
template <bool kNext, typename Cell, typename NextCell>
__attribute__((flatten)) void ClipBlocks(const Cell cell, const NextCell ncell, const Lanes& l, double* __restrict w,
                const double* __restrict ratio, double cap, double* t, double* const* next) {
  double* pn[kLanes];
  double tt[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    pn[j] = next[j];
    tt[j] = 0.0;
  }
  Interleaved(l, [&](int j, size_t r) {
    double x = w[r] * ratio[cell(r)];
    if (x > cap) x = cap;  // rare (a few rows per step)
    w[r] = x;
    tt[j] += x;
    if (kNext) pn[j][ncell(r)] += x;
  });
  for (int j = 0; j < l.n; ++j) t[j] = tt[j];
}

// Folds of up to kFoldInline partial sums run on the calling thread: a fold of a marginal's
// blocks is short (13 x 10,000 adds for a 200,000-row pool and Adult's largest pair, ~40 us), and
// splitting such folds across the pool made the whole raking slower on the 2-core target machine
// (745 against 330 ms) than running them inline. Larger ones go to tasks of kFoldCellsPerTask cells.
constexpr size_t kFoldInline = size_t{1} << 20;
constexpr size_t kFoldCellsPerTask = size_t{1} << 16;

// acc[c] += parts[i][c] for i in `which` (in that order), c < cells; parts[i] at parts + i * stride.
// Split across tasks by cells, so each cell's sum has one fixed order.
void Fold(double* acc, const double* parts, size_t stride, const std::vector<size_t>& which, size_t cells) {
  if (which.empty() || cells == 0) return;
  const auto run = [&](size_t c0, size_t c1) {
    for (size_t i : which) {
      const double* p = parts + i * stride;
      for (size_t c = c0; c < c1; ++c) acc[c] += p[c];
    }
  };
  if (cells * which.size() <= kFoldInline) {
    run(0, cells);
    return;
  }
  const size_t tasks = (cells + kFoldCellsPerTask - 1) / kFoldCellsPerTask;
  train::ParallelTasks(tasks, [&](size_t t, unsigned) {
    run(train::SplitBegin(cells, tasks, t), train::SplitBegin(cells, tasks, t + 1));
  });
}

// Calls fn(cell) with the cell functor of m over codes of type T.
template <typename T, typename Fn>
void WithCell(const Marginal& m, const T* a, const T* b, const Fn& fn) {
  if (m.g < 0) {
    fn(CellOf<T, false>{a, nullptr, 1});
  } else {
    fn(CellOf<T, true>{a, b, static_cast<size_t>(m.kg)});
  }
}

}  // namespace

Raking::Raking(const std::vector<const int32_t*>& columns, int64_t M, std::vector<Marginal> marginals, Settings settings,
               const double* initial)
    : M_(M), marginals_(std::move(marginals)), s_(settings) {
  const size_t Mz = static_cast<size_t>(M_);
  // Features the marginals name, and the widest code among them.
  slot_.assign(columns.size(), -1);
  int32_t used = 0;
  int32_t max_code = 0;
  max_cells_ = 1;
  for (const Marginal& m : marginals_) {
    max_cells_ = std::max(max_cells_, m.probs.size());
    for (int32_t f : {m.f, m.g}) {
      if (f < 0 || slot_[static_cast<size_t>(f)] >= 0) continue;
      slot_[static_cast<size_t>(f)] = used++;
      const int32_t* col = columns[static_cast<size_t>(f)];
      for (size_t r = 0; r < Mz; ++r) max_code = std::max(max_code, col[r]);
    }
  }
  code_bytes_ = max_code < 256 ? 1 : max_code < 65536 ? 2 : 4;
  codes_.resize(static_cast<size_t>(used) * Mz * static_cast<size_t>(code_bytes_));
  for (size_t f = 0; f < columns.size(); ++f) {
    if (slot_[f] < 0) continue;
    const int32_t* col = columns[f];
    const size_t at = static_cast<size_t>(slot_[f]) * Mz;
    if (code_bytes_ == 1) {
      for (size_t r = 0; r < Mz; ++r) codes_[at + r] = static_cast<uint8_t>(col[r]);
    } else if (code_bytes_ == 2) {
      uint16_t* out = reinterpret_cast<uint16_t*>(codes_.data()) + at;
      for (size_t r = 0; r < Mz; ++r) out[r] = static_cast<uint16_t>(col[r]);
    } else {
      std::memcpy(reinterpret_cast<int32_t*>(codes_.data()) + at, col, Mz * sizeof(int32_t));
    }
  }

  const size_t B = static_cast<size_t>(s_.block_rows);
  blocks_ = (Mz + B - 1) / B;
  wave_ = std::max<size_t>(1, std::min(blocks_, kMaxWaveDoubles / max_cells_));
  total_steps_ = s_.sweeps * static_cast<int64_t>(marginals_.size());

  w_.Resize(Mz);
  if (initial == nullptr) {
    std::fill(w_.data(), w_.data() + Mz, 1.0 / static_cast<double>(M_));
  } else {
    const double s = BlockSum(initial);
    for (size_t r = 0; r < Mz; ++r) w_[r] = initial[r] / s;
  }

  for (auto* v : {&cur_, &next_, &ratio_, &deficit_, &free_, &boost_}) v->resize(max_cells_);
  for (auto* p : {&part_cur_, &part_deficit_, &part_free_}) p->Resize(wave_ * max_cells_);
  block_total_.assign(blocks_, 0.0);
  block_clipped_.assign(blocks_, 0);
}

double BlockOrderSum(const double* x, size_t M, size_t block_rows) {
  double s = 0.0;
  for (size_t b0 = 0; b0 < M; b0 += block_rows) {
    double part = 0.0;
    for (size_t r = b0; r < std::min(M, b0 + block_rows); ++r) part += x[r];
    s += part;
  }
  return s;
}

double Raking::BlockSum(const double* x) const {
  return BlockOrderSum(x, static_cast<size_t>(M_), static_cast<size_t>(s_.block_rows));
}

template <typename Body, typename Fold>
void Raking::ForBlocks(const Body& body, const Fold& fold) {
  const size_t Mz = static_cast<size_t>(M_);
  const size_t B = static_cast<size_t>(s_.block_rows);
  for (size_t k0 = 0; k0 < blocks_; k0 += wave_) {
    const size_t nw = std::min(wave_, blocks_ - k0);
    const size_t tasks = (nw + kLanes - 1) / kLanes;
    const auto run = [&](size_t task, unsigned) {
      Lanes l;
      const size_t i0 = task * kLanes;
      l.n = static_cast<int>(std::min<size_t>(kLanes, nw - i0));
      for (int j = 0; j < l.n; ++j) {
        const size_t k = k0 + i0 + static_cast<size_t>(j);
        l.r0[j] = k * B;
        l.r1[j] = std::min(Mz, (k + 1) * B);
      }
      body(l, k0 + i0, i0);
    };
    if (s_.parallel) {
      train::ParallelTasks(tasks, run);
    } else {
      for (size_t task = 0; task < tasks; ++task) run(task, 0);
    }
    fold(k0, nw);
  }
}

template <typename T>
void Raking::Step(const Marginal& m, const Marginal* next, bool exact) {
  const size_t C = m.probs.size();
  const T* a = Column<T>(m.f);
  const T* b = m.g >= 0 ? Column<T>(m.g) : nullptr;
  double* w = w_.data();
  const size_t stride = max_cells_;
  // Per-block partial sums of a lane group: arrays `part` .. `part + l.n - 1` of `base`, zeroed.
  const auto parts = [stride](train::AlignedBuffer<double>& base, size_t part, int n, size_t cells, double** out) {
    for (int j = 0; j < kLanes; ++j) out[j] = nullptr;
    for (int j = 0; j < n; ++j) {
      out[j] = base.data() + (part + static_cast<size_t>(j)) * stride;
      std::fill(out[j], out[j] + cells, 0.0);
    }
  };
  std::vector<size_t> which;
  const auto all = [&which](size_t nw) -> const std::vector<size_t>& {
    which.clear();
    for (size_t i = 0; i < nw; ++i) which.push_back(i);
    return which;
  };

  if (!cur_ready_) {
    std::fill(cur_.begin(), cur_.begin() + static_cast<std::ptrdiff_t>(C), 0.0);
    WithCell(m, a, b, [&](auto cell) {
      ForBlocks(
          [&](const Lanes& l, size_t, size_t part) {
            double* p[kLanes];
            parts(part_cur_, part, l.n, C, p);
            HistogramBlocks(cell, l, w, p);
          },
          [&](size_t, size_t nw) { Fold(cur_.data(), part_cur_.data(), stride, all(nw), C); });
    });
  }
  cur_ready_ = false;
  const double* cur = cur_.data();
  const double* probs = m.probs.data();

  // Target mass the pool can carry (calibrate.ts: cells no pool row falls in cannot be filled).
  double reachable = 0.0;
  for (size_t c = 0; c < C; ++c)
    if (cur[c] > 0) reachable += probs[c];
  if (!(reachable > 0)) return;
  double* ratio = ratio_.data();
  const double total = total_;
  for (size_t c = 0; c < C; ++c) {
    ratio[c] = cur[c] > 0 ? JsMax(s_.min_ratio, (probs[c] * total) / (reachable * cur[c])) : 0.0;
  }
  const double cap = (s_.bound * total) / static_cast<double>(M_);

  if (!exact) {
    // Clip only (calibrate.ts: no spreading in this sweep): one pass that updates the weights and
    // takes the next marginal's cell sums of the new weights.
    const size_t Cn = next != nullptr ? next->probs.size() : 0;
    if (next != nullptr) std::fill(next_.begin(), next_.begin() + static_cast<std::ptrdiff_t>(Cn), 0.0);
    WithCell(m, a, b, [&](auto cell) {
      const auto pass = [&](auto ncell, auto with_next) {
        ForBlocks(
            [&](const Lanes& l, size_t k, size_t part) {
              double* pn[kLanes];
              parts(part_cur_, part, with_next ? l.n : 0, Cn, pn);
              ClipBlocks<decltype(with_next)::value>(cell, ncell, l, w, ratio, cap, &block_total_[k], pn);
            },
            [&](size_t, size_t nw) {
              if (with_next) Fold(next_.data(), part_cur_.data(), stride, all(nw), Cn);
            });
      };
      if (next == nullptr) {
        pass(cell, std::false_type());
      } else {
        WithCell(*next, Column<T>(next->f), next->g >= 0 ? Column<T>(next->g) : nullptr,
                 [&](auto ncell) { pass(ncell, std::true_type()); });
        cur_.swap(next_);
        cur_ready_ = true;
      }
    });
    double sum = 0.0;
    for (size_t k = 0; k < blocks_; ++k) sum += block_total_[k];
    total_ = sum;
    return;
  }

  // Update: clipped mass (deficit) and free mass per cell; the free mass is needed only when
  // something was clipped, which with one wave of blocks is known before the fold.
  const bool single_wave = wave_ >= blocks_;
  std::fill(deficit_.begin(), deficit_.begin() + static_cast<std::ptrdiff_t>(C), 0.0);
  std::fill(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(C), 0.0);
  bool clipped = false;
  WithCell(m, a, b, [&](auto cell) {
    ForBlocks(
        [&](const Lanes& l, size_t k, size_t part) {
          double* pd[kLanes];
          double* pf[kLanes];
          parts(part_deficit_, part, l.n, C, pd);
          parts(part_free_, part, l.n, C, pf);
          bool clip[kLanes];
          UpdateBlocks(cell, l, w, ratio, cap, pd, pf, &block_total_[k], clip);
          for (int j = 0; j < l.n; ++j) block_clipped_[k + static_cast<size_t>(j)] = clip[j] ? 1 : 0;
        },
        [&](size_t k0, size_t nw) {
          for (size_t i = 0; i < nw; ++i) clipped = clipped || block_clipped_[k0 + i] != 0;
          // A block that clipped nothing has no deficit (all +0, which adds nothing).
          which.clear();
          for (size_t i = 0; i < nw; ++i)
            if (block_clipped_[k0 + i] != 0) which.push_back(i);
          Fold(deficit_.data(), part_deficit_.data(), stride, which, C);
          if (!single_wave || clipped) Fold(free_.data(), part_free_.data(), stride, all(nw), C);
        });
  });

  if (clipped) {
    // The mass clipped in a cell goes to the cell's rows below the bound, in proportion. The
    // next marginal's cell sums are taken in the same pass (in practice every step clips: all
    // 1,050 steps of the default raking of Adult's pool do).
    double* boost = boost_.data();
    for (size_t c = 0; c < C; ++c) boost[c] = deficit_[c] > 0 && free_[c] > 0 ? 1 + deficit_[c] / free_[c] : 1.0;
    const size_t Cn = next != nullptr ? next->probs.size() : 0;
    if (next != nullptr) std::fill(next_.begin(), next_.begin() + static_cast<std::ptrdiff_t>(Cn), 0.0);
    WithCell(m, a, b, [&](auto cell) {
      const auto spread = [&](auto ncell, auto with_next) {
        ForBlocks(
            [&](const Lanes& l, size_t k, size_t part) {
              double* pn[kLanes];
              parts(part_cur_, part, with_next ? l.n : 0, Cn, pn);
              SpreadBlocks<decltype(with_next)::value>(cell, ncell, l, w, boost, cap, &block_total_[k], pn);
            },
            [&](size_t, size_t nw) {
              if (with_next) Fold(next_.data(), part_cur_.data(), stride, all(nw), Cn);
            });
      };
      if (next == nullptr) {
        spread(cell, std::false_type());
      } else {
        WithCell(*next, Column<T>(next->f), next->g >= 0 ? Column<T>(next->g) : nullptr,
                 [&](auto ncell) { spread(ncell, std::true_type()); });
        cur_.swap(next_);
        cur_ready_ = true;
      }
    });
  }

  double sum = 0.0;
  for (size_t k = 0; k < blocks_; ++k) sum += block_total_[k];
  total_ = sum;
}

int64_t Raking::Run(int64_t max_steps) {
  const int64_t nm = static_cast<int64_t>(marginals_.size());
  for (int64_t i = 0; i < max_steps && done_ < total_steps_; ++i) {
    const Marginal& m = marginals_[static_cast<size_t>(done_ % nm)];
    const Marginal* next = done_ + 1 < total_steps_ ? &marginals_[static_cast<size_t>((done_ + 1) % nm)] : nullptr;
    const bool exact = done_ / nm >= s_.sweeps - s_.exact_sweeps;
    switch (code_bytes_) {
      case 1: Step<uint8_t>(m, next, exact); break;
      case 2: Step<uint16_t>(m, next, exact); break;
      default: Step<int32_t>(m, next, exact); break;
    }
    ++done_;
  }
  return done_;
}

void Raking::Finish(double* out) {
  const size_t Mz = static_cast<size_t>(M_);
  double* w = w_.data();
  if (!(total_ > 0)) {
    std::fill(out, out + Mz, 1.0 / static_cast<double>(M_));
    return;
  }
  if (!finished_) {
    finished_ = true;
    // Normalise; the total may have drifted down since a weight was clipped, so clip again at
    // bound / M until no weight passes it.
    const double cap = s_.bound / static_cast<double>(M_);
    for (int pass = 0; pass < 50; ++pass) {
      const double s = BlockSum(w);
      bool over = false;
      for (size_t r = 0; r < Mz; ++r) {
        w[r] /= s;
        if (w[r] > cap) over = true;
      }
      if (!over) break;
      for (size_t r = 0; r < Mz; ++r)
        if (w[r] > cap) w[r] = cap;
    }
  }
  std::copy(w, w + Mz, out);
}

}  // namespace calibrate
}  // namespace synthd
