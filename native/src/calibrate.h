// Bounded raking of a pool of generated rows (calibrated generation), the native twin of
// `rakingSweeps` in src/model/calibrate.ts: the same float64 operations in the same order, so the
// same weights bit for bit. The method (Deming & Stephan 1940; Deville & Särndal 1992, bounded) and
// its measurements are in calibrate.ts's module comment; this file restates the order.
//
// Order of every sum (fixed, independent of thread count and ISA; calibrate.ts follows it too):
// rows are cut into blocks of `block_rows` consecutive rows (the last one shorter). Each sum over
// rows (a cell's current weight, a cell's clipped and free mass, the total weight, the sum in the
// final normalisation, the sum of the initial weights) is taken per block in row order, starting
// from 0, and the block sums are then added in block order, starting from 0. The total of a step
// continues, per block, from the update pass into the pass that spreads clipped mass. Sums over
// cells run in cell order. So a pool of at most `block_rows` rows is summed in plain row order.
//
// A step is two passes over the rows: the update (weights times the cell's ratio, held at the
// bound; clipped and free mass per cell) and, when a weight was held (every one of the 1,050 steps
// on Adult's pool), the spreading of clipped mass, which also takes the next marginal's cell sums
// so that the next step needs no pass of its own for them.
//
// Parallelism: pairs of consecutive blocks are tasks of the process-wide pool
// (train/thread_pool.h); a task walks its two blocks' rows in turn (two independent chains of
// additions for the processor to overlap) and writes only the blocks' own partial sums, which the
// calling thread then adds in block order. So the weights do not depend on how many threads ran or
// which ran what. The code has no ISA-specific variant (scalar C++ plus SSE2, the x86-64 baseline,
// compiled once with -ffp-contract=off), so SYNTHD_ISA does not change it either.
//
// Memory layout: codes are copied once into the narrowest unsigned type that holds them (uint8 for
// every Adult feature), one contiguous column per feature, and a row's cell `a * kg + b` is
// recomputed at each visit: 2 bytes read per row for a 2-way cell, as many as a precomputed uint16
// cell index (tried: 560-585 against 580-600 ms single-threaded for Adult's pool before counting
// the index's construction, one more pass per marginal, and its M x (number of marginals) table,
// 42 MB for a 200,000-row pool against Adult's 105 marginals; not worth it). Partial
// sums are one array of C doubles per block and kind (cell weight, clipped, free; C: the largest
// marginal's cells): 3 x 13 x 10,000 doubles, 3.1 MB, for that pool. At most kMaxWaveDoubles per
// array are held at once, in waves of blocks when a marginal has so many cells that all blocks'
// arrays would not fit (the order is the same).

#ifndef SYNTHD_NATIVE_CALIBRATE_H_
#define SYNTHD_NATIVE_CALIBRATE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "train/aligned.h"

namespace synthd {
namespace calibrate {

// One marginal to calibrate to (calibrate.ts `CalibrationMarginal`): a row's cell is
// code_f * kg + code_g (2-way), or code_f (1-way: g < 0, kg = 1); probs has kf * kg cells.
struct Marginal {
  int32_t f = 0;
  int32_t g = -1;
  int64_t kg = 1;
  std::vector<double> probs;
};

// The settings of calibrate.ts `RakingOptions`, checked by the caller: sweeps >= 0, bound > 1,
// min_ratio in (0, 1], block_rows >= 1.
struct Settings {
  int64_t sweeps = 10;
  double bound = 2.0;
  double min_ratio = 0.1;
  int64_t block_rows = 16384;
  // The last sweeps whose steps spread clipped mass (calibrate.ts RakingOptions.exactSweeps, in
  // [0, sweeps]); the steps of the sweeps before only clip, in one pass over the rows.
  int64_t exact_sweeps = 10;
  // Whether the passes over the rows run as tasks of the compute pool (else on the calling thread
  // alone); the same bits either way.
  bool parallel = true;
};

// Doubles one array of per-block partial sums may hold (32 MiB): more blocks than fit are summed in
// waves (the order is the same; only the parallelism is smaller).
constexpr size_t kMaxWaveDoubles = size_t{1} << 22;

// x[0] + ... + x[M-1] in the raking's sum order: per block of `block_rows` consecutive values in
// order from 0, block sums added in block order (calibrate.ts `RAKING_BLOCK_ROWS`).
double BlockOrderSum(const double* x, size_t M, size_t block_rows);

class Raking {
 public:
  // columns[f]: the M codes of feature f (M >= 1; codes of feature f in [0, K_f) as the marginals
  // name K_f: kf of marginals with f as rows, kg of those with f as columns), checked by the caller.
  // Features no marginal names may be empty. initial: M weights (sum > 0) or null for uniform.
  // Throws std::bad_alloc.
  Raking(const std::vector<const int32_t*>& columns, int64_t M, std::vector<Marginal> marginals, Settings settings,
         const double* initial);

  // Runs up to max_steps more marginal steps (a sweep is one step per marginal, in order); returns
  // the steps done in all. Uses the compute pool's threads.
  int64_t Run(int64_t max_steps);

  int64_t rows() const { return M_; }
  int64_t steps_done() const { return done_; }
  int64_t steps_total() const { return total_steps_; }

  // The weights once every step is done: normalised to sum 1 and clipped at bound / M (repeated
  // while the normalisation pushes a weight past it, at most 50 times), or uniform when the total
  // weight is not positive. out: M doubles.
  void Finish(double* out);

 private:
  // Codes as uint8 / uint16 / int32 (code_bytes_), feature f's column at slot_[f] * M_.
  template <typename T>
  const T* Column(int32_t f) const {
    return reinterpret_cast<const T*>(codes_.data()) + static_cast<size_t>(slot_[static_cast<size_t>(f)]) * M_;
  }
  // One raking step to m; `next` (the marginal of the step after, or null) gets its cell sums
  // taken in this step's last pass over the rows.
  // exact: whether the step spreads clipped mass (else one pass: update, clip, next cell sums).
  template <typename T>
  void Step(const Marginal& m, const Marginal* next, bool exact);
  // x[0] + ... + x[M-1] in block order.
  double BlockSum(const double* x) const;

  // Calls body(block, part, first_row, end_row) for every block as a task of the compute pool,
  // `part` in [0, wave_) naming the block's partial-sum arrays, and fold(first_block, blocks) on
  // this thread after each wave.
  template <typename Body, typename Fold>
  void ForBlocks(const Body& body, const Fold& fold);

  int64_t M_;
  int code_bytes_;
  std::vector<uint8_t> codes_;
  std::vector<int32_t> slot_;
  std::vector<Marginal> marginals_;
  Settings s_;
  size_t blocks_;
  size_t max_cells_;

  train::AlignedBuffer<double> w_;
  double total_ = 1.0;
  int64_t done_ = 0;
  int64_t total_steps_;
  bool finished_ = false;

  // The current marginal's cell sums, when the step before computed them (fused into its last pass).
  bool cur_ready_ = false;
  std::vector<double> cur_, next_, ratio_, deficit_, free_, boost_;
  // Per-block partial sums: wave_ arrays of max_cells_ doubles each.
  size_t wave_;
  train::AlignedBuffer<double> part_cur_, part_deficit_, part_free_;
  std::vector<double> block_total_;
  std::vector<uint8_t> block_clipped_;
};

}  // namespace calibrate
}  // namespace synthd

#endif  // SYNTHD_NATIVE_CALIBRATE_H_
