#include "repair.h"

#include <algorithm>

namespace synthd {
namespace repair {

namespace {

// The likelihood products of one broken row's candidates [y0, y1), two at a time: two
// independent chains of multiplications (each in factor order), which the processor overlaps.
inline void RowLikelihoods(const int32_t* cand, size_t y0, size_t y1, const int32_t* code, size_t nf,
                           const int32_t* t_off, const double* table, double* lik) {
  size_t y = y0;
  for (; y + 1 < y1; y += 2) {
    const int32_t* o0 = t_off + static_cast<size_t>(cand[y]) * nf;
    const int32_t* o1 = t_off + static_cast<size_t>(cand[y + 1]) * nf;
    double a = 1.0;
    double b = 1.0;
    for (size_t e = 0; e < nf; ++e) {
      a *= table[o0[e] + code[e]];
      b *= table[o1[e] + code[e]];
    }
    lik[y] = a;
    lik[y + 1] = b;
  }
  if (y < y1) {
    const int32_t* o = t_off + static_cast<size_t>(cand[y]) * nf;
    double a = 1.0;
    for (size_t e = 0; e < nf; ++e) a *= table[o[e] + code[e]];
    lik[y] = a;
  }
}

}  // namespace

RuleScores ScoreRule(const RuleInput& in, double* held) {
  RuleScores out;
  const size_t m = in.columns.size();
  const size_t M = in.M;
  // Classify: every row, in row order.
  size_t judged = 0;
  for (size_t i = 0; i < M; ++i) {
    int64_t key = 0;
    bool unjudged = false;
    for (size_t j = 0; j < m; ++j) {
      const int32_t c = in.columns[j][i];
      if (c < 0 || c >= in.radix[j] || in.open[j][c] != 0) {
        unjudged = true;
        break;
      }
      key = key * in.radix[j] + c;
    }
    if (unjudged) continue;
    const int32_t cls = in.key_class[key];
    if (cls == -2) {
      out.broken.push_back(static_cast<int32_t>(i));
    } else if (cls >= 0) {
      held[cls] += 1;
      ++judged;
    }
  }
  const size_t B = out.broken.size();
  out.judged = static_cast<int64_t>(judged + B);
  if (B == 0) return out;

  // Candidates: the targets sharing a code with the row, rule column by rule column, each once;
  // all of them when none does.
  const size_t T = static_cast<size_t>(in.targets);
  std::vector<int64_t> seen(T, -1);
  out.start.assign(B + 1, 0);
  out.cand.reserve(2 * B);
  for (size_t x = 0; x < B; ++x) {
    const size_t row = static_cast<size_t>(out.broken[x]);
    const size_t first = out.cand.size();
    for (size_t j = 0; j < m; ++j) {
      const int32_t c = in.columns[j][row];  // in [0, K_j): the row was judged
      for (int32_t y = in.code_start[j][c]; y < in.code_start[j][c + 1]; ++y) {
        const int32_t t = in.code_list[j][y];
        if (seen[static_cast<size_t>(t)] != static_cast<int64_t>(x)) {
          seen[static_cast<size_t>(t)] = static_cast<int64_t>(x);
          out.cand.push_back(t);
        }
      }
    }
    if (out.cand.size() == first) {
      for (size_t t = 0; t < T; ++t) out.cand.push_back(static_cast<int32_t>(t));
    }
    out.start[x + 1] = static_cast<int32_t>(out.cand.size());
  }

  // Likelihoods, rows in row order (each row's factor codes read once, the columns forward).
  const size_t nf = in.factor_columns.size();
  std::vector<int32_t> code(nf);
  out.lik.resize(out.cand.size());
  for (size_t x = 0; x < B; ++x) {
    const size_t row = static_cast<size_t>(out.broken[x]);
    for (size_t e = 0; e < nf; ++e) {
      const int32_t c = in.factor_columns[e][row];
      if (c < 0 || c >= in.factor_cards[e]) {
        out.bad_row = static_cast<int64_t>(row);
        out.bad_factor = static_cast<int32_t>(e);
        out.bad_code = c;
        return out;
      }
      code[e] = c;
    }
    RowLikelihoods(out.cand.data(), static_cast<size_t>(out.start[x]), static_cast<size_t>(out.start[x + 1]),
                   code.data(), nf, in.t_off, in.table, out.lik.data());
  }
  return out;
}

}  // namespace repair
}  // namespace synthd
