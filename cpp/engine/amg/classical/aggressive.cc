// Aggressive (two-stage) coarsening: see splitting.h.
#include <omp.h>

#include <algorithm>

#include "amg/classical/splitting.h"
#include "amg/classical/transpose.h"

namespace jaxamg::classical {

namespace {

// Distance-two strength among the first-stage C points, renumbered
// 0..n1-1 in point order. Rows are sorted only with `with_transpose` (the
// HMIS stage); PMIS reads them in any order.
StrengthGraph distance_two_graph(const StrengthGraph& S, const std::vector<Index>& c_points,
                                 const std::vector<Index>& c_number, bool with_transpose) {
  const Index n1 = static_cast<Index>(c_points.size());
  StrengthGraph S2;
  S2.n = n1;
  S2.row_ptr.assign(n1 + 1, 0);
  const int nt = n1 > kSerialBelow ? omp_get_max_threads() : 1;
  std::vector<std::vector<Index>> bcol(nt);
  // Allocated by the calling thread (see assemble.h).
  std::vector<std::vector<Index>> seens(nt, std::vector<Index>(n1, -1));
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int nth = omp_get_num_threads();
    const Index lo = static_cast<Index>(static_cast<int64_t>(n1) * t / nth);
    const Index hi = static_cast<Index>(static_cast<int64_t>(n1) * (t + 1) / nth);
    // seen[c'] == row being built: c' already listed (no reset needed).
    std::vector<Index>& seen = seens[t];
    std::vector<Index>& out = bcol[t];
    std::vector<Index> row;
    for (Index r = lo; r < hi; ++r) {
      const Index c = c_points[r];
      row.clear();
      auto visit = [&](Index j) {
        const Index q = c_number[j];
        if (q >= 0 && q != r && seen[q] != r) {
          seen[q] = r;
          row.push_back(q);
        }
      };
      for (Index k = S.row_ptr[c]; k < S.row_ptr[c + 1]; ++k) {
        const Index m = S.col[k];
        visit(m);
        for (Index l = S.row_ptr[m]; l < S.row_ptr[m + 1]; ++l) visit(S.col[l]);
      }
      // PMIS does not depend on the order of a row; the HMIS stage (which
      // walks S^T, built from these rows) gets them sorted.
      if (with_transpose) std::sort(row.begin(), row.end());
      out.insert(out.end(), row.begin(), row.end());
      S2.row_ptr[r + 1] = static_cast<Index>(row.size());
    }
#pragma omp barrier
    // The calling thread allocates (see assemble.h).
#pragma omp master
    {
      for (Index r = 0; r < n1; ++r) S2.row_ptr[r + 1] += S2.row_ptr[r];
      S2.col.resize(S2.row_ptr[n1]);
    }
#pragma omp barrier
    std::copy(out.begin(), out.end(), S2.col.begin() + S2.row_ptr[lo]);
  }
  transpose_pattern(n1, S2.row_ptr, S2.col, S2.t_row_ptr, S2.t_col, with_transpose);
  return S2;
}

}  // namespace

void aggressive_splitting(const StrengthGraph& S, bool hmis_stages, uint64_t seed,
                          std::vector<int8_t>& cf, std::vector<int8_t>* first_stage) {
  const Index n = S.n;
  cf.assign(n, kUndecided);
  if (hmis_stages) {
    hmis(S, seed, cf);
  } else {
    pmis(S, seed, cf);
  }
  if (first_stage) *first_stage = cf;
  std::vector<Index> c_number;
  coarse_numbering(cf, c_number);
  std::vector<Index> c_points;
  for (Index i = 0; i < n; ++i)
    if (cf[i] == kCoarse) c_points.push_back(i);
  const StrengthGraph S2 = distance_two_graph(S, c_points, c_number, hmis_stages);
  std::vector<int8_t> cf2(c_points.size(), kUndecided);
  // A C point with no other C point within distance two stays C: its F
  // neighbours have nothing else to interpolate from.
  for (std::size_t r = 0; r < c_points.size(); ++r)
    if (S2.num_depends(r) == 0 && S2.num_influences(r) == 0) cf2[r] = kCoarse;
  // A different stream for the second stage, so its ties are independent.
  if (hmis_stages) {
    hmis(S2, seed ^ 0xa5a5a5a5ull, cf2);
  } else {
    pmis(S2, seed ^ 0xa5a5a5a5ull, cf2);
  }
  for (std::size_t r = 0; r < c_points.size(); ++r)
    if (cf2[r] != kCoarse) cf[c_points[r]] = kFine;
}

}  // namespace jaxamg::classical
