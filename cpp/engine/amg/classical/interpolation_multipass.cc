// Multipass interpolation (Stueben 1999, section A.4.3; hypre's
// interp_type 4), the companion of aggressive coarsening, where many F
// points have no strong C neighbour. F points are ordered in passes: pass 1
// holds the F points with a strong C neighbour, pass p those with a strong
// neighbour in an earlier pass. A pass-1 row is a direct-interpolation row;
// a later row i takes direct weights w_ik over its strong neighbours k of
// earlier passes and substitutes their rows: P_i = sum_k w_ik P_k. Weights
// of a zero-row-sum row sum to one, and so does every substituted row, so
// constants are interpolated exactly. F points that no pass reaches get an
// empty row.
#include <omp.h>

#include <algorithm>

#include "amg/classical/assemble.h"
#include "amg/classical/direct_weights.h"
#include "amg/classical/interpolation.h"
#include "amg/classical/splitting.h"

namespace jaxamg::classical {

namespace {

// The rows of one pass, in the order of its points.
struct PassRows {
  std::vector<Index> ptr{0};
  std::vector<Index> col;
  std::vector<double> val;
};

// pass[i]: 0 for C points, p >= 1 for F points of pass p, -1 if unreached.
template <class T>
std::vector<std::vector<Index>> assign_passes(const InterpolationInput<T>& in,
                                              std::vector<int>& pass) {
  const CsrMatrix<T>& A = in.A;
  const Index n = A.nrows;
  pass.assign(n, -1);
  std::vector<Index> todo;
  for (Index i = 0; i < n; ++i) {
    if (in.cf[i] == kCoarse) {
      pass[i] = 0;
    } else {
      todo.push_back(i);
    }
  }
  std::vector<std::vector<Index>> points(1);
  std::vector<uint8_t> reach;
  while (!todo.empty()) {
    const Index m = static_cast<Index>(todo.size());
    reach.assign(m, 0);
#pragma omp parallel for schedule(static) if (m > kSerialBelow)
    for (Index u = 0; u < m; ++u) {
      const Index i = todo[u];
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (in.strong[k] && pass[A.col[k]] >= 0) { reach[u] = 1; break; }
    }
    std::vector<Index> next, rest;
    for (Index u = 0; u < m; ++u) (reach[u] ? next : rest).push_back(todo[u]);
    if (next.empty()) break;
    const int p = static_cast<int>(points.size());
    for (Index i : next) pass[i] = p;
    points.push_back(std::move(next));
    todo.swap(rest);
  }
  return points;
}

}  // namespace

template <class T>
void multipass_interpolation(const InterpolationInput<T>& in, const Truncation& trunc,
                             const CsrMatrix<T>* pattern, CsrMatrix<T>& P) {
  const CsrMatrix<T>& A = in.A;
  const Index n = A.nrows, nc = in.n_coarse;
  std::vector<int> pass;
  const std::vector<std::vector<Index>> points = assign_passes(in, pass);
  std::vector<Index> slot(n, -1);  // position of an F point within its pass
  for (std::size_t p = 1; p < points.size(); ++p)
    for (std::size_t u = 0; u < points[p].size(); ++u) slot[points[p][u]] = static_cast<Index>(u);
  std::vector<PassRows> rows(points.size());

  const int nt = n > kSerialBelow ? omp_get_max_threads() : 1;
  std::vector<std::vector<Index>> bcol(nt);
  std::vector<std::vector<double>> bval(nt);
  for (std::size_t p = 1; p < points.size(); ++p) {
    const std::vector<Index>& pts = points[p];
    const Index m = static_cast<Index>(pts.size());
    PassRows& out = rows[p];
    out.ptr.assign(m + 1, 0);
#pragma omp parallel num_threads(nt)
    {
      const int t = omp_get_thread_num();
      const int nth = omp_get_num_threads();
      const Index lo = static_cast<Index>(static_cast<int64_t>(m) * t / nth);
      const Index hi = static_cast<Index>(static_cast<int64_t>(m) * (t + 1) / nth);
      // Dense accumulator over coarse columns, reset through the row itself.
      std::vector<double> acc(nc, 0.0);
      std::vector<uint8_t> used(nc, 0);
      std::vector<std::pair<Index, double>> w;
      std::vector<RowEntry> row, scratch;
      std::vector<Index>& cols = bcol[t];
      std::vector<double>& vals = bval[t];
      cols.clear();
      vals.clear();
      const int pi = static_cast<int>(p);
      for (Index u = lo; u < hi; ++u) {
        const Index i = pts[u];
        w.clear();
        direct_weights(
            A, i, in.diag_pos[i],
            [&](Index k, Index j) { return in.strong[k] && pass[j] >= 0 && pass[j] < pi; }, w);
        row.clear();
        auto add = [&](Index c, double v) {
          if (!used[c]) {
            used[c] = 1;
            row.push_back({c, 0.0});
          }
          acc[c] += v;
        };
        for (auto [j, wj] : w) {
          if (pass[j] == 0) {
            add(in.coarse_index[j], wj);
          } else {
            const PassRows& src = rows[pass[j]];
            for (Index q = src.ptr[slot[j]]; q < src.ptr[slot[j] + 1]; ++q)
              add(src.col[q], wj * src.val[q]);
          }
        }
        for (RowEntry& r : row) {
          r.val = acc[r.col];
          acc[r.col] = 0.0;
          used[r.col] = 0;
        }
        sort_by_column(row);
        if (pattern) {
          restrict_row(row, pattern->col.data() + pattern->row_ptr[i],
                       pattern->col.data() + pattern->row_ptr[i + 1], scratch);
        } else {
          truncate_row(row, trunc, scratch);
        }
        for (const RowEntry& r : row) {
          cols.push_back(r.col);
          vals.push_back(r.val);
        }
        out.ptr[u + 1] = static_cast<Index>(row.size());
      }
#pragma omp barrier
#pragma omp master
      {
        for (Index u = 0; u < m; ++u) out.ptr[u + 1] += out.ptr[u];
        out.col.resize(out.ptr[m]);
        out.val.resize(out.ptr[m]);
      }
#pragma omp barrier
      std::copy(cols.begin(), cols.end(), out.col.begin() + out.ptr[lo]);
      std::copy(vals.begin(), vals.end(), out.val.begin() + out.ptr[lo]);
    }
  }

  P = CsrMatrix<T>(n, nc);
  for (Index i = 0; i < n; ++i) {
    Index len = 0;
    if (pass[i] == 0) {
      len = 1;
    } else if (pass[i] > 0) {
      const PassRows& src = rows[pass[i]];
      len = src.ptr[slot[i] + 1] - src.ptr[slot[i]];
    }
    P.row_ptr[i + 1] = P.row_ptr[i] + len;
  }
  P.col.resize(P.row_ptr[n]);
  P.val.resize(P.row_ptr[n]);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
  for (Index i = 0; i < n; ++i) {
    Index o = P.row_ptr[i];
    if (pass[i] == 0) {
      P.col[o] = in.coarse_index[i];
      P.val[o] = T(1);
    } else if (pass[i] > 0) {
      const PassRows& src = rows[pass[i]];
      for (Index q = src.ptr[slot[i]]; q < src.ptr[slot[i] + 1]; ++q, ++o) {
        P.col[o] = src.col[q];
        P.val[o] = static_cast<T>(src.val[q]);
      }
    }
  }
  // P is rectangular: no diagonal index (an n-sized array nothing reads).
}

template void multipass_interpolation(const InterpolationInput<float>&, const Truncation&,
                                      const CsrMatrix<float>*, CsrMatrix<float>&);
template void multipass_interpolation(const InterpolationInput<double>&, const Truncation&,
                                      const CsrMatrix<double>*, CsrMatrix<double>&);

}  // namespace jaxamg::classical
