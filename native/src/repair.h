// The scoring half of the calibration pool's rule repair (src/model/rule-repair.ts), for one
// fixed-combinations rule whose keys fit a dense table: which pool rows break the rule, each
// broken row's candidate combinations, and each candidate's naive-Bayes likelihood before the
// power. The same values as rule-repair.ts's TypeScript passes (`classifyPairs`/`classifyDense`,
// `brokenRows`, `candidates`, `likelihoods`), bit for bit: integer work, and each likelihood the
// same float64 product in the same order (factor e = 0, 1, ... from 1; -ffp-contract=off, so no
// fused multiply-add). What depends on the order rows are repaired in (the quota scores, the power,
// the picks and their draws) stays in TypeScript.

#ifndef SYNTHD_NATIVE_REPAIR_H_
#define SYNTHD_NATIVE_REPAIR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace synthd {
namespace repair {

// One rule over a pool of M rows, checked by the caller (repair_binding.cc).
struct RuleInput {
  size_t M = 0;
  // Rule columns (m): codes of column j, and its code count K_j (= radix of the key).
  std::vector<const int32_t*> columns;
  std::vector<int32_t> radix;
  // Per rule column: K_j flags, 1 for a code that leaves a row unjudged (pooled, blank).
  std::vector<const uint8_t*> open;
  // Per key (mixed radix of the row's codes, column 0 most significant): -2 not a released
  // combination, -1 released but not a target, else the target's index in [0, T).
  const int32_t* key_class = nullptr;
  // Per rule column: code c's targets are list[start[c] .. start[c + 1]), in the index's order.
  std::vector<const int32_t*> code_start;
  std::vector<const int32_t*> code_list;
  int32_t targets = 0;  // T
  // Likelihood factors (nf): the row's code of factor e is factor_columns[e][row], in [0, K_e);
  // the factor's value for target t is table[t_off[t * nf + e] + code].
  std::vector<const int32_t*> factor_columns;
  std::vector<int32_t> factor_cards;
  const int32_t* t_off = nullptr;
  const double* table = nullptr;
};

struct RuleScores {
  std::vector<int32_t> broken;  // rows breaking the rule, ascending
  int64_t judged = 0;           // rows on a target, plus the broken ones
  std::vector<int32_t> start;   // broken row x's candidates: cand[start[x] .. start[x + 1])
  std::vector<int32_t> cand;
  std::vector<double> lik;      // per candidate: the product of its factors, before the power
  // First factor code outside its [0, K_e) (row, factor), or row -1 when none: then nothing above
  // past `broken` is filled and the caller throws.
  int64_t bad_row = -1;
  int32_t bad_factor = -1;
  int32_t bad_code = 0;
};

// Classifies the rows (held[t] += 1 for each row on target t; held has T entries) and scores the
// broken ones. A row with a rule code outside [0, K_j) is left unjudged, as one with a pooled or
// blank code is. Throws std::bad_alloc.
RuleScores ScoreRule(const RuleInput& in, double* held);

}  // namespace repair
}  // namespace synthd

#endif  // SYNTHD_NATIVE_REPAIR_H_
